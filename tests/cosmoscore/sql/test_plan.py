"""describe / rewrite_for_cross_partition against the service compiler's recorded plans
(azure-cosmos-dotnet-v3 QueryPlanBaselineTests.*.xml), and the rewritten queries' per-partition rows
against what azure-cosmos' aggregators and ORDER BY merge read."""

from __future__ import annotations

import pytest

from cosmoscore.sql import SqlError, describe, execute, parse_query, rewrite_for_cross_partition

FILTER = "{documentdb-formattableorderbyquery-filter}"


def rewrite(text: str, params: dict | None = None) -> str:
    query = parse_query(text)
    return rewrite_for_cross_partition(query, describe(query, params))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "SELECT VALUE AVG(c.blah) FROM c",
            'SELECT VALUE [{"item": {"sum": SUM(c.blah), "count": COUNT(c.blah)}}]\nFROM c',
        ),
        (
            "SELECT VALUE MIN(c.blah) FROM c",
            'SELECT VALUE [{"item": MIN(c.blah), "item2": {"min": MIN(c.blah), "count": COUNT(c.blah)}}]\nFROM c',
        ),
        (
            "SELECT VALUE MAX(c.blah) FROM c",
            'SELECT VALUE [{"item": MAX(c.blah), "item2": {"max": MAX(c.blah), "count": COUNT(c.blah)}}]\nFROM c',
        ),
        ("SELECT VALUE SUM(c.blah) FROM c", 'SELECT VALUE [{"item": SUM(c.blah)}]\nFROM c'),
        ("SELECT VALUE COUNT(1) FROM c", 'SELECT VALUE [{"item": COUNT(1)}]\nFROM c'),
        (
            "SELECT VALUE MIN(c.blah + 1) FROM c",
            'SELECT VALUE [{"item": MIN((c.blah + 1)), "item2": {"min": MIN((c.blah + 1)), "count": COUNT((c.blah + 1))}}]'
            "\nFROM c",
        ),
        (
            "SELECT VALUE MIN(c.blah) FROM c WHERE c.key > 1",
            'SELECT VALUE [{"item": MIN(c.blah), "item2": {"min": MIN(c.blah), "count": COUNT(c.blah)}}]\nFROM c\n'
            "WHERE (c.key > 1)",
        ),
        (  # plan:Aggregates "Aggregate With JOIN": the ORDER BY stays in the rewrite (W70)
            "SELECT VALUE AVG(c.age + 1) FROM Root r JOIN c in r.children WHERE c.age > 1 ORDER BY c.name",
            'SELECT VALUE [{"item": {"sum": SUM((c.age + 1)), "count": COUNT((c.age + 1))}}]\nFROM Root AS r\n'
            "JOIN c IN r.children\nWHERE (c.age > 1)\nORDER BY c.name",
        ),
        (
            "SELECT TOP 5 VALUE AVG(c.name) FROM c",
            'SELECT VALUE [{"item": {"sum": SUM(c.name), "count": COUNT(c.name)}}]\nFROM c',
        ),
        ("SELECT COUNT(r) From r", 'SELECT {"$1": {"item": COUNT(r)}} AS payload\nFROM r'),
        (
            "SELECT AVG(c.blah) as avg_blah FROM c",
            'SELECT {"avg_blah": {"item": {"sum": SUM(c.blah), "count": COUNT(c.blah)}}} AS payload\nFROM c',
        ),
        (
            "SELECT * FROM Root r ORDER BY r.blah",
            f'SELECT r._rid, [{{"item": r.blah}}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({FILTER})\n'
            "ORDER BY r.blah",
        ),
        (
            "SELECT * FROM Root r ORDER BY r.key DESC",
            f'SELECT r._rid, [{{"item": r.key}}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({FILTER})\n'
            "ORDER BY r.key DESC",
        ),
        (
            "SELECT * FROM Root r WHERE r.key IN (1, 2, 3, 4, 5, 6, 7, 8, 9) ORDER BY r.key",
            f'SELECT r._rid, [{{"item": r.key}}] AS orderByItems, r AS payload\nFROM Root AS r\n'
            f"WHERE ((r.key IN (1, 2, 3, 4, 5, 6, 7, 8, 9)) AND ({FILTER}))\nORDER BY r.key",
        ),
        (
            "SELECT TOP 10 * FROM Root r ORDER BY r.key",
            f'SELECT TOP 10 r._rid, [{{"item": r.key}}] AS orderByItems, r AS payload\nFROM Root AS r\nWHERE ({FILTER})\n'
            "ORDER BY r.key",
        ),
        (
            "SELECT c.blah, c.blah2 FROM Root c ORDER BY c.key",
            f'SELECT c._rid, [{{"item": c.key}}] AS orderByItems, {{"blah": c.blah, "blah2": c.blah2}} AS payload\n'
            f"FROM Root AS c\nWHERE ({FILTER})\nORDER BY c.key",
        ),
        (
            "SELECT VALUE c.blah FROM Root c ORDER BY c.key",
            f'SELECT c._rid, [{{"item": c.key}}] AS orderByItems, c.blah AS payload\nFROM Root AS c\n'
            f"WHERE (({FILTER}) AND IS_DEFINED(c.blah))\nORDER BY c.key",
        ),
        (
            "SELECT TOP 50 r[0] FROM r ORDER BY r.key ASC",
            f'SELECT TOP 50 r._rid, [{{"item": r.key}}] AS orderByItems, {{"$1": r[0]}} AS payload\nFROM r\n'
            f"WHERE ({FILTER})\nORDER BY r.key ASC",
        ),
        (
            'SELECT TOP 70 r["a"] FROM Root r ORDER BY r.key DESC',
            f'SELECT TOP 70 r._rid, [{{"item": r.key}}] AS orderByItems, {{"a": r["a"]}} AS payload\nFROM Root AS r\n'
            f"WHERE ({FILTER})\nORDER BY r.key DESC",
        ),
        (
            "SELECT VALUE r.a FROM r WHERE r.d = true ORDER BY r.b",
            f'SELECT r._rid, [{{"item": r.b}}] AS orderByItems, r.a AS payload\nFROM r\n'
            f"WHERE (((r.d = true) AND ({FILTER})) AND IS_DEFINED(r.a))\nORDER BY r.b",
        ),
        (
            "SELECT VALUE 1 FROM r ORDER BY r._ts",
            f'SELECT r._rid, [{{"item": r._ts}}] AS orderByItems, 1 AS payload\nFROM r\n'
            f"WHERE (({FILTER}) AND IS_DEFINED(1))\nORDER BY r._ts",
        ),
        (
            "SELECT DISTINCT VALUE c.blah FROM c ORDER BY c.blah",
            f'SELECT c._rid, [{{"item": c.blah}}] AS orderByItems, c.blah AS payload\nFROM c\n'
            f"WHERE (({FILTER}) AND IS_DEFINED(c.blah))\nORDER BY c.blah",
        ),
        ("SELECT * FROM c OFFSET 1 LIMIT 2", "SELECT *\nFROM c\nOFFSET 0 LIMIT 3"),
        (
            "SELECT * FROM c WHERE c.blah = 5 OFFSET 1 LIMIT 2",
            "SELECT *\nFROM c\nWHERE (c.blah = 5)\nOFFSET 0 LIMIT 3",
        ),
        (
            "SELECT c.name FROM c OFFSET 2147483647 LIMIT 10",
            "SELECT c.name\nFROM c\nOFFSET 0 LIMIT 2147483657",
        ),
        ("SELECT DISTINCT TOP 5 VALUE c.name FROM c", "SELECT DISTINCT VALUE c.name\nFROM c"),
        ("SELECT TOP 5 * FROM c", ""),
        ("SELECT DISTINCT c.blah FROM c", ""),
        ("SELECT DISTINCT * FROM c OFFSET 1 LIMIT 2", "SELECT DISTINCT *\nFROM c"),
        ("SELECT * FROM c WHERE c.x = 1", ""),
        (
            "SELECT c.age, c.name FROM c GROUP BY c.age, c.name",
            'SELECT [{"item": c.age}, {"item": c.name}] AS groupByItems, {"age": c.age, "name": c.name} AS payload\n'
            "FROM c\nGROUP BY c.age, c.name",
        ),
        (
            "SELECT VALUE AVG(c.age) FROM c GROUP BY c.age",
            'SELECT [{"item": c.age}] AS groupByItems, [{"item": {"sum": SUM(c.age), "count": COUNT(c.age)}}] AS payload\n'
            "FROM c\nGROUP BY c.age",
        ),
    ],
)
def test_rewritten_query_matches_the_service(text: str, expected: str) -> None:
    assert rewrite(text) == expected


def test_offset_limit_parameters_resolve() -> None:  # plan:OffsetLimit "Parameterized OFFSET and LIMIT"
    query = parse_query("SELECT * FROM c OFFSET @OFFSETCOUNT LIMIT @LIMITCOUNT")
    shape = describe(query, {"@OFFSETCOUNT": 42, "@LIMITCOUNT": 1337})
    assert (shape.offset, shape.limit) == (42, 1337)
    assert rewrite_for_cross_partition(query, shape) == "SELECT *\nFROM c\nOFFSET 0 LIMIT 1379"


def test_describe_fields() -> None:
    shape = describe(parse_query("SELECT DISTINCT TOP 3 VALUE c.a FROM c ORDER BY c.a DESC, c.b"))
    assert shape.has_select_value and shape.top == 3
    assert shape.order_by == ["Descending", "Ascending"] and shape.order_by_expressions == ["c.a", "c.b"]
    assert shape.distinct_type == "Ordered" and not shape.is_streamable
    assert describe(parse_query("SELECT DISTINCT c.a FROM c")).distinct_type == "Unordered"
    plain = describe(parse_query("SELECT c.a FROM c JOIN t IN c.tags WHERE t = 'x' AND c.b LIKE 'a%'"))
    assert plain.is_streamable and plain.distinct_type == "None" and plain.aggregates == []


def test_describe_aggregates_and_group_by() -> None:
    assert describe(parse_query("SELECT VALUE COUNT(1) FROM c")).aggregates == ["Count"]
    shape = describe(parse_query("SELECT MIN(c.age) AS min_age, MAX(c.age), AVG(c.x), SUM(c.y) FROM c"))
    assert shape.aggregates == ["Min", "Max", "Average", "Sum"] and not shape.has_select_value
    assert shape.group_by_aliases == ["min_age", "$1", "$2", "$3"]
    grouped = describe(parse_query("SELECT c.team, COUNT(1) AS count FROM c GROUP BY c.team"))
    assert grouped.aggregates == [] and grouped.group_by_expressions == ["c.team"]
    assert grouped.group_by_alias_to_aggregate_type == {"team": None, "count": "Count"}


def test_an_aggregate_with_order_by_plans_no_order_by() -> None:  # plan:Aggregates "Aggregate With JOIN"
    shape = describe(parse_query("SELECT VALUE AVG(c.age) FROM c ORDER BY c.name"))
    assert (shape.order_by, shape.order_by_expressions, shape.aggregates) == ([], [], ["Average"])
    assert not shape.is_streamable


def test_query_info_json_layout() -> None:
    info = describe(parse_query("SELECT * FROM c ORDER BY c.n")).query_info("rw")
    assert info["orderBy"] == ["Ascending"] and info["rewrittenQuery"] == "rw" and info["hasSelectValue"] is False


def test_composed_aggregates_are_rejected_by_the_plan() -> None:  # plan:Negative, plan:GroupBy
    for text in (
        "SELECT VALUE FLOOR(AVG(r)) From r",
        "SELECT VALUE [SUM(r)] From r",
        "SELECT c.name, ABS(AVG(c.age)) as abs_avg_age FROM c GROUP BY c.name",
    ):
        with pytest.raises(SqlError) as info:
            describe(parse_query(text))
        assert (
            info.value.to_service_message()
            == '{"Errors":["Compositions of aggregates and other expressions are not allowed."]}'
        )


DOCS = [{"_rid": f"r{i}", "id": str(i), "n": n} for i, n in enumerate([5, None, 3, "x", 8])] + [
    {"_rid": "r9", "id": "9"}
]


def run_rewritten(text: str) -> list:
    query = parse_query(text)
    rewritten = rewrite_for_cross_partition(query, describe(query)).replace(FILTER, "true")
    return execute(parse_query(rewritten), DOCS).rows


def test_rewritten_order_by_rows_carry_rid_items_and_payload() -> None:
    out = run_rewritten("SELECT VALUE c.id FROM c ORDER BY c.n")
    assert [r["orderByItems"] for r in out] == [
        [{}],
        [{"item": None}],
        [{"item": 3}],
        [{"item": 5}],
        [{"item": 8}],
        [{"item": "x"}],
    ]
    assert [r["payload"] for r in out] == ["9", "1", "2", "0", "4", "3"]
    assert out[0]["_rid"] == "r9"


def test_rewritten_aggregate_partials() -> None:
    assert run_rewritten("SELECT VALUE COUNT(1) FROM c") == [[{"item": 6}]]
    assert run_rewritten("SELECT VALUE SUM(c.n) FROM c WHERE IS_NUMBER(c.n)") == [[{"item": 16}]]
    assert run_rewritten("SELECT VALUE AVG(c.n) FROM c WHERE IS_NUMBER(c.n)") == [[{"item": {"sum": 16, "count": 3}}]]
    assert run_rewritten("SELECT VALUE MAX(c.n) FROM c WHERE IS_NUMBER(c.n)") == [
        [{"item": 8, "item2": {"max": 8, "count": 3}}]
    ]
    assert run_rewritten("SELECT VALUE SUM(c.n) FROM c") == [[{}]]


def test_rewritten_offset_limit_keeps_enough_rows() -> None:
    assert len(run_rewritten("SELECT * FROM c OFFSET 2 LIMIT 2")) == 4


def test_formatted_queries_mean_the_same() -> None:
    """The formatter feeds every rewrite: printing a query and parsing it back must not change results."""
    from cosmoscore.sql.formatter import query as format_query
    from tests.conformance.cases import CASES
    from tests.conformance.dataset import DATASETS

    checked = 0
    for case in CASES:
        if case.error is not None or "GetCurrent" in case.sql:
            continue
        original = parse_query(case.sql)
        printed = format_query(original)
        docs = DATASETS[case.dataset]
        assert execute(parse_query(printed), docs, case.params).rows == execute(original, docs, case.params).rows, (
            printed
        )
        checked += 1
    assert checked > 150
