"""Index metrics of a query under a policy (cosmoscore.sql.utilization; cosmos-wire-protocol.md W71-W72)."""

from __future__ import annotations

from cosmoscore.indexing import IndexPolicy
from cosmoscore.sql import parse_query
from cosmoscore.sql.utilization import SingleIndex, Utilization, index_utilization


def policy(*composites: list[tuple[str, str]], excluded: tuple[str, ...] = ()) -> IndexPolicy:
    return IndexPolicy.from_json(
        {
            "indexingMode": "consistent",
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": p} for p in excluded],
            "compositeIndexes": [[{"path": p, "order": o} for p, o in c] for c in composites],
        }
    )


def metrics(sql: str, under: IndexPolicy | None = None, **params: object) -> Utilization:
    chosen = under or policy()
    return index_utilization(
        parse_query(sql), {f"@{k}": v for k, v in params.items()}, chosen.is_indexed, chosen.composites
    )


def test_each_conjunct_is_printed_as_the_service_prints_it_with_its_parameters_bound() -> None:
    got = metrics("SELECT * FROM people p WHERE p.name = @name AND STARTSWITH(p.town, 'Red')", name="Julien")
    assert got.utilized_single == (
        SingleIndex(("name",), '(ROOT.name = "Julien")'),
        SingleIndex(("town",), 'STARTSWITH(ROOT.town, "Red")'),
    )
    assert got.potential_composite == (((("name",), False), (("town",), False)),)  # STARTSWITH is a range


def test_a_function_the_index_does_not_serve_lists_no_index_and_a_partial_one_no_expression() -> None:
    got = metrics("SELECT * FROM c WHERE UPPER(c.name) = 'A' AND c.age > 1")  # UPPER scans (ru-cost-model §3.3)
    assert got.utilized_single == (SingleIndex(("age",), "(ROOT.age > 1)"),) and got.potential_single == ()
    counted = metrics("SELECT VALUE COUNT(1) FROM c WHERE CONTAINS(c.name, 'a')")  # CONTAINS scans the index
    assert counted.utilized_single == (SingleIndex(("name",), ""),)


def test_an_excluded_path_is_a_potential_single_index() -> None:
    got = metrics("SELECT * FROM c WHERE c.status = 'open'", policy(excluded=("/status/?",)))
    assert got.potential_single == (SingleIndex(("status",), '(ROOT.status = "open")'),) and not got.utilized_single


def test_equalities_alone_use_a_composite_when_there_is_one_and_never_ask_for_one() -> None:
    sql = "SELECT * FROM c WHERE c.a = 1 AND c.b = 2"
    assert metrics(sql).utilized_composite == () and metrics(sql).potential_composite == ()
    served = metrics(sql, policy([("/b", "descending"), ("/a", "ascending")]))
    assert served.utilized_composite == (((("b",), True), (("a",), False)),) and served.utilized_single == ()


def test_an_in_list_and_a_join_name_no_composite() -> None:
    assert metrics("SELECT * FROM c WHERE c.a IN (1, 2) AND c.b > 2").potential_composite == ()
    joined = metrics("SELECT VALUE t FROM c JOIN t IN c.tags WHERE c.a = 1 AND t > 'x'")
    assert [s.path for s in joined.utilized_single] == [("a",), ("tags", "[]")] and joined.potential_composite == ()


def test_a_single_order_by_uses_its_path_and_a_multi_key_one_its_composite() -> None:
    assert metrics("SELECT * FROM c ORDER BY c.n DESC").utilized_single == (SingleIndex(("n",), ""),)
    sorted_by = policy([("/a", "ascending"), ("/b", "descending")])
    got = metrics("SELECT * FROM c WHERE c.a > 1 ORDER BY c.a DESC, c.b ASC", sorted_by)
    assert got.utilized_composite == sorted_by.composites and got.utilized_single == ()


def test_the_cross_partition_rewrite_of_an_order_by_is_the_query_it_rewrites() -> None:
    rewritten = (
        'SELECT c._rid, [{"item": c.n}] AS orderByItems, c AS payload FROM c '
        "WHERE ((c.t = 'x') AND (true)) ORDER BY c.n"
    )
    assert metrics(rewritten) == metrics("SELECT * FROM c WHERE c.t = 'x' ORDER BY c.n")
    assert metrics(rewritten).potential_composite == (((("t",), False), (("n",), False)),)
