"""advisor.lint on the real cosmoscore parser and routing rule: each finding fires, and a near miss does not.
Where a finding says the service rejects a query or scans, the in-process engine is asked too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advisor.lint import CODES, QueryToLint, composite_index, lint_queries, lint_query
from emulator.engine.errors import CosmosError
from emulator.engine.facade import Context, Engine, ThroughputSpec

ROOT = Path(__file__).resolve().parents[2]
KEY = ["/tenantId"]
HPK = ["/tenantId", "/sessionId"]
EXCLUDING_BODY = {
    "indexingMode": "consistent",
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": "/body/*"}],
}


def codes(sql: str, parameters: dict[str, Any] | None = None, **kwargs: Any) -> list[str]:
    kwargs.setdefault("partition_key_paths", KEY)
    return [f.code for f in lint_query(sql, parameters, **kwargs)]


def engine_with(policy: dict[str, Any] | None) -> Engine:
    """A 2-partition container keyed on /tenantId with 40 small documents, under `policy`."""
    engine, ctx = Engine(), Context()
    engine.create_database(ctx, {"id": "d"})
    definition: dict[str, Any] = {"id": "c", "partitionKey": {"paths": KEY, "kind": "Hash", "version": 2}}
    if policy is not None:
        definition["indexingPolicy"] = policy
    engine.create_container(ctx, "d", definition, ThroughputSpec(12_000))
    for i in range(40):
        doc = {"id": str(i), "tenantId": f"t{i % 4}", "status": "open", "ts": i, "body": {"text": f"m{i}"}}
        engine.create_item(ctx, "d", "c", doc)
    return engine


# --- cross-partition without TOP or a limit ---------------------------------------------------------------


def test_an_unbounded_query_without_a_key_filter_fans_out() -> None:
    [finding] = lint_query("SELECT * FROM c WHERE c.status = 'open'", partition_key_paths=KEY)
    assert (finding.code, finding.severity) == ("cross-partition-unbounded", "warning")
    assert "/tenantId" in finding.message and "c.tenantId = @tenantId" in finding.fix and "TOP" in finding.fix
    assert codes("SELECT * FROM c") == ["cross-partition-unbounded"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT TOP 10 * FROM c WHERE c.status = 'open'",
        "SELECT * FROM c WHERE c.status = 'open' OFFSET 0 LIMIT 10",
        "SELECT * FROM c WHERE c.tenantId = @t AND c.status = 'open'",
        "SELECT * FROM c WHERE c.tenantId IN ('a', 'b')",
    ],
)
def test_a_bounded_or_routed_query_is_not_flagged(sql: str) -> None:
    assert codes(sql, {"@t": "a"}) == []


def test_a_request_option_key_routes_the_query() -> None:
    assert codes("SELECT * FROM c WHERE c.status = 'open'", partition_key="t1") == []


def test_a_hierarchical_key_routes_on_a_prefix_only() -> None:
    assert codes("SELECT * FROM c WHERE c.tenantId = 'a'", partition_key_paths=HPK) == []
    [finding] = lint_query("SELECT * FROM c WHERE c.sessionId = 's'", partition_key_paths=HPK)
    assert finding.code == "cross-partition-unbounded" and "prefix" in finding.fix


def test_an_aggregate_is_told_to_filter_on_the_key_and_a_missing_parameter_is_named() -> None:
    [count] = lint_query("SELECT VALUE COUNT(1) FROM c", partition_key_paths=KEY)
    assert count.code == "cross-partition-unbounded" and "TOP" not in count.fix
    [unset] = lint_query("SELECT * FROM c WHERE c.tenantId = @t", partition_key_paths=KEY)
    assert unset.code == "cross-partition-unbounded" and "no value given for @t" in unset.message


def test_no_key_paths_means_routing_is_not_judged() -> None:
    assert codes("SELECT * FROM c", partition_key_paths=[]) == []


# --- ORDER BY and composite indexes --------------------------------------------------------------------------


ORDER_2 = "SELECT * FROM c WHERE c.tenantId = 't1' ORDER BY c.status, c.ts DESC"


def test_a_two_key_order_by_without_a_composite_index_is_an_error_the_engine_agrees_with() -> None:
    [finding] = lint_query(ORDER_2, partition_key_paths=KEY)
    assert (finding.code, finding.severity) == ("composite-index-missing", "error")
    entry = [{"path": "/status", "order": "ascending"}, {"path": "/ts", "order": "descending"}]
    assert json.dumps(entry) in finding.fix
    with pytest.raises(CosmosError, match="composite index"):
        engine_with(None).run_query("d", "c", ORDER_2)


def test_the_composite_index_the_fix_gives_serves_the_query() -> None:
    keys = ((("status",), False), (("ts",), True))
    policy = {"includedPaths": [{"path": "/*"}], "compositeIndexes": [composite_index(keys)]}
    assert codes(ORDER_2, indexing_policy=policy) == []
    assert len(engine_with(policy).run_query("d", "c", ORDER_2).rows) == 10
    inverted = [[{"path": "/status", "order": "descending"}, {"path": "/ts", "order": "ascending"}]]
    assert codes(ORDER_2, indexing_policy={"compositeIndexes": inverted}) == []


def test_a_single_key_order_by_needs_no_composite_index() -> None:
    assert codes("SELECT * FROM c WHERE c.tenantId = 'a' ORDER BY c.ts DESC") == []


def test_an_order_by_on_an_excluded_path_is_an_error_the_engine_agrees_with() -> None:
    sql = "SELECT * FROM c WHERE c.tenantId = 't1' ORDER BY c.body.text"
    assert codes(sql, indexing_policy=EXCLUDING_BODY) == ["order-by-excluded"]
    assert codes(sql) == []
    with pytest.raises(CosmosError, match="excluded"):
        engine_with(EXCLUDING_BODY).run_query("d", "c", sql)


# --- reserved words and parse errors -------------------------------------------------------------------------


def test_a_reserved_word_as_a_dotted_property_is_found_bracketed_and_the_rest_still_linted() -> None:
    sql = "SELECT * FROM c WHERE c.order = 1"
    reserved, fan_out = lint_query(sql, partition_key_paths=KEY)
    assert (reserved.code, reserved.severity, reserved.span) == ("reserved-word", "error", (23, 32))
    assert '["order"] in place of .order' in reserved.fix and 'SELECT * FROM c WHERE c["order"] = 1' in reserved.fix
    assert fan_out.code == "cross-partition-unbounded"


def test_every_reserved_property_is_reported_once() -> None:
    found = lint_query("SELECT c.value FROM c WHERE c.tenantId = 'a' AND c.Top = 2", partition_key_paths=KEY)
    assert [f.code for f in found] == ["reserved-word", "reserved-word"]
    rewritten = found[-1].fix.split("The query with brackets: ")[1]
    assert rewritten == 'SELECT c["value"] FROM c WHERE c.tenantId = \'a\' AND c["Top"] = 2'
    assert [rewritten[slice(*f.span)] for f in found if f.span] == ['["value"]', '["Top"]']  # spans: that text


def test_a_bracketed_reserved_word_is_fine() -> None:
    assert codes('SELECT c["value"] FROM c WHERE c.tenantId = \'a\' AND c["order"] = 1') == []


def test_a_syntax_error_gives_its_position_and_stops_the_lint() -> None:
    [finding] = lint_query("SELECT * FROM c WHERE c.x = ", partition_key_paths=KEY)
    assert (finding.code, finding.severity, finding.span) == ("parse-error", "error", (27, 27))
    assert "SC1002" in finding.message and "end of the query" in finding.fix
    [near] = lint_query("SELECT * FROM c WHERE c.x = = 1", partition_key_paths=KEY)
    assert near.code == "parse-error" and "SC1001" in near.message and "near '='" in near.fix


# --- filters that will not use the index -----------------------------------------------------------------------


ROUTED = "SELECT * FROM c WHERE c.tenantId = 'a' AND "


def test_a_function_of_a_property_in_the_filter_scans() -> None:
    [finding] = lint_query(ROUTED + "UPPER(c.status) = 'OPEN'", partition_key_paths=KEY)
    assert (finding.code, finding.severity) == ("function-in-filter", "warning")
    assert "UPPER" in finding.message and "STRINGEQUALS" in finding.fix
    assert codes(ROUTED + "STARTSWITH(c.status, 'op')") == []  # index-served built-in
    assert codes(ROUTED + "c.status = UPPER(@v)", {"@v": "open"}) == []  # a function of a constant


def test_arithmetic_on_a_property_in_the_filter_scans() -> None:
    assert codes(ROUTED + "c.ts * 2 > 10") == ["computed-filter"]
    assert codes(ROUTED + "c.ts > 10 / 2") == []


def test_a_filter_on_an_excluded_path_scans_and_costs_more_on_the_engine() -> None:
    sql = "SELECT * FROM c WHERE c.body.text = 'm5'"
    found = lint_query(sql, partition_key_paths=KEY, indexing_policy=EXCLUDING_BODY)
    assert [f.code for f in found] == ["cross-partition-unbounded", "unindexed-filter"]
    assert "/body/text" in found[1].message
    assert codes(sql, partition_key_paths=[], indexing_policy=None) == []
    unindexed = engine_with(EXCLUDING_BODY).run_query("d", "c", sql).request_charge
    indexed = engine_with(None).run_query("d", "c", sql).request_charge
    assert unindexed > indexed


@pytest.mark.parametrize(
    "condition", ["c.status != 'x'", "NOT (c.status = 'x')", "c.status NOT IN ('x', 'y')", "NOT IS_DEFINED(c.ts)"]
)
def test_a_negation_on_a_property_is_noted(condition: str) -> None:
    [finding] = lint_query(ROUTED + condition, partition_key_paths=KEY)
    assert (finding.code, finding.severity) == ("negated-filter", "info")


def test_an_indexed_equality_filter_is_fine() -> None:
    assert codes(ROUTED + "c.status = 'x' AND c.ts >= 3 AND c.status IN ('x', 'y')") == []


def test_like_with_a_leading_wildcard_scans() -> None:
    assert codes(ROUTED + "c.status LIKE '%pen'") == ["like-leading-wildcard"]
    assert codes(ROUTED + "c.status LIKE @p", {"@p": "_pen"}) == ["like-leading-wildcard"]
    assert codes(ROUTED + "c.status LIKE 'op%'") == []


# --- a workload ----------------------------------------------------------------------------------------------


def test_lint_queries_tags_each_finding_with_its_query() -> None:
    queries = [
        QueryToLint("by-tenant", "SELECT * FROM c WHERE c.tenantId = @t", [{"name": "@t", "value": "a"}], KEY),
        QueryToLint("recent", "SELECT * FROM c ORDER BY c.status, c.ts", {}, KEY),
        QueryToLint("search", "SELECT TOP 5 * FROM c WHERE c.body.text LIKE '%x'", {}, KEY, EXCLUDING_BODY),
    ]
    found = [(f.query, f.code) for f in lint_queries(queries)]
    assert found == [
        ("recent", "cross-partition-unbounded"),
        ("recent", "composite-index-missing"),
        ("search", "like-leading-wildcard"),
        ("search", "unindexed-filter"),
    ]


def test_every_finding_names_a_known_code_and_an_existing_reference() -> None:
    sql = "SELECT * FROM c WHERE c.order = 1 AND LOWER(c.x) = 'a' AND c.n + 1 > 2 AND c.s != 1 ORDER BY c.a, c.b"
    found = lint_query(sql, partition_key_paths=KEY)
    assert {f.code for f in found} == {
        "reserved-word",
        "cross-partition-unbounded",
        "composite-index-missing",
        "function-in-filter",
        "computed-filter",
        "negated-filter",
    }
    for finding in found:
        assert finding.code in CODES and finding.severity in ("error", "warning", "info")
        assert finding.message and finding.fix
        assert (ROOT / finding.reference.split()[0]).is_file()
