"""Evaluation semantics: three-valued logic, undefined vs null, ordering, aggregates, counters.

Expected values come from cosmos-sql-semantics.md (section named per test) or are decisions on its
open points (§10), marked as such.
"""

from __future__ import annotations

import itertools
import math

import pytest

from cosmoscore.sql import execute, parse_query

T, F, U = "true", "false", "undefined"
AND_TABLE = {
    (T, T): T,
    (T, F): F,
    (T, U): U,
    (F, T): F,
    (F, F): F,
    (F, U): F,
    (U, T): U,
    (U, F): F,
    (U, U): U,
}
OR_TABLE = {(T, T): T, (T, F): T, (T, U): T, (F, T): T, (F, F): F, (F, U): U, (U, T): T, (U, F): U, (U, U): U}
AS_VALUE = {T: [True], F: [False], U: []}


def rows(text: str, docs: list | None = None, params: dict | None = None) -> list:
    return execute(parse_query(text), docs or [], params).rows


@pytest.mark.parametrize(("x", "y"), list(itertools.product((T, F, U), repeat=2)))
def test_and_or_tables(x: str, y: str) -> None:  # §2.2
    assert rows(f"SELECT VALUE ({x} AND {y})") == AS_VALUE[AND_TABLE[(x, y)]]
    assert rows(f"SELECT VALUE ({x} OR {y})") == AS_VALUE[OR_TABLE[(x, y)]]


def test_not_table() -> None:  # §2.2
    assert rows("SELECT VALUE [NOT true, NOT false, NOT undefined]") == [[False, True]]


def test_non_booleans_behave_as_undefined_in_logic() -> None:  # §2.2 (oracle)
    assert rows("SELECT VALUE [1 AND true, false AND 'x', 'x' OR true, null OR false, NOT 0]") == [[False, True]]


def test_where_keeps_only_true() -> None:  # §1.3
    docs = [{"f": True}, {"f": 1}, {"f": "true"}, {"f": None}, {}, {"f": [True]}]
    assert rows("SELECT * FROM c WHERE c.f", docs) == [{"f": True}]


def test_undefined_vs_null_in_projection() -> None:  # §3.4
    docs = [{"a": None}, {}]
    assert rows("SELECT c.a FROM c", docs) == [{"a": None}, {}]
    assert rows("SELECT VALUE c.a FROM c", docs) == [None]
    assert rows("SELECT VALUE IS_DEFINED(c.a) FROM c", docs) == [True, False]


def test_property_of_non_object_and_bad_index_are_undefined() -> None:  # §1.8, §3.2
    docs = [{"s": "text", "arr": [1, 2], "o": {"k": 1}}]
    assert rows("SELECT VALUE [c.s.x, c.arr[2], c.arr[-1], c.o[0], c.arr.x, c.arr[1]] FROM c", docs) == [[2]]


def test_equality_is_type_strict_and_deep() -> None:  # §3.3
    assert rows(
        "SELECT VALUE [1 = 1.0, [1, 2] = [1, 2], [1, 2] = [2, 1], {a: 1, b: 2} = {b: 2, a: 1}, true = 1, null = null]"
    ) == [[True, True, False, True, True]]


def test_ordering_comparisons_of_arrays_objects_and_mixed_types_are_undefined() -> None:  # §3.3
    assert rows("SELECT VALUE [[1] < [2], {} < {}, 1 < 'a', null < null, null <= null, false < true]") == [
        [False, True, True]
    ]


def test_arithmetic_edge_cases() -> None:  # §3.5
    out = rows("SELECT VALUE [1 / 0, -1 / 0, 9223372036854775807 + 1, 7 % 0]")[0]
    assert out[0] == math.inf and out[1] == -math.inf
    assert out[2] == 9.223372036854775808e18 and isinstance(out[2], float)
    assert math.isnan(out[3])


def test_order_by_type_order_and_undefined_first() -> None:  # §3.6
    values = [
        {"i": 6, "v": {"o": 1}},
        {"i": 3, "v": 2},
        {"i": 0},
        {"i": 5, "v": [1]},
        {"i": 2, "v": True},
        {"i": 4, "v": "s"},
        {"i": 1, "v": None},
    ]
    assert rows("SELECT VALUE c.i FROM c ORDER BY c.v", values) == [0, 1, 2, 3, 4, 5, 6]
    assert rows("SELECT VALUE c.i FROM c ORDER BY c.v DESC", values) == [6, 5, 4, 3, 2, 1, 0]


def test_order_by_ties_keep_input_order_in_both_directions() -> None:  # decision (§10.8)
    docs = [{"id": "a", "k": 1}, {"id": "b", "k": 1}, {"id": "c", "k": 0}]
    assert rows("SELECT VALUE c.id FROM c ORDER BY c.k", docs) == ["c", "a", "b"]
    assert rows("SELECT VALUE c.id FROM c ORDER BY c.k DESC", docs) == ["a", "b", "c"]


def test_order_by_strings_ordinal() -> None:  # §3.3
    docs = [{"s": "b"}, {"s": "B"}, {"s": "a"}, {"s": "A"}]
    assert rows("SELECT VALUE c.s FROM c ORDER BY c.s", docs) == ["A", "B", "a", "b"]


def test_aggregates_over_undefined_and_bad_types() -> None:  # §4.1, E7
    docs = [{"x": 1}, {"x": 2.5}, {}]
    assert rows("SELECT VALUE [COUNT(c.x), SUM(c.x), AVG(c.x), MIN(c.x), MAX(c.x)] FROM c", docs) == [
        [2, 3.5, 1.75, 1, 2.5]
    ]
    assert rows("SELECT VALUE SUM(c.x) FROM c", docs + [{"x": "a"}]) == []
    assert rows("SELECT VALUE AVG(c.x) FROM c", docs + [{"x": None}]) == []
    assert rows("SELECT VALUE MIN(c.x) FROM c", docs + [{"x": {}}]) == []
    assert rows("SELECT VALUE MAX(c.x) FROM c", docs + [{"x": "a"}, {"x": True}]) == ["a"]
    assert rows("SELECT VALUE COUNT(c.x) FROM c", [{"x": None}, {"x": []}, {"x": {}}, {}]) == [3]


def test_aggregates_over_no_rows() -> None:  # §4.2
    assert rows("SELECT VALUE COUNT(1) FROM c") == [0]
    assert rows("SELECT VALUE SUM(c.x) FROM c") == [0]
    assert rows("SELECT VALUE AVG(c.x) FROM c") == []
    assert rows("SELECT COUNT(1) AS n, MIN(c.x) AS m FROM c") == [{"n": 0}]


def test_group_keys_compare_by_type_and_value() -> None:  # §4.3
    docs = [{"k": 1}, {"k": 1.0}, {"k": True}, {"k": "1"}, {"k": [1]}, {}, {"k": None}]
    got = rows("SELECT c.k, COUNT(1) AS n FROM c GROUP BY c.k", docs)
    assert sorted(map(str, got)) == sorted(
        map(
            str,
            [
                {"k": 1, "n": 2},
                {"k": True, "n": 1},
                {"k": "1", "n": 1},
                {"k": [1], "n": 1},
                {"n": 1},
                {"k": None, "n": 1},
            ],
        )
    )


def test_distinct_objects_ignore_property_order() -> None:  # §4.4
    docs = [{"o": {"a": 1, "b": 2}}, {"o": {"b": 2, "a": 1}}, {"o": {"a": 1}}]
    assert rows("SELECT DISTINCT VALUE c.o FROM c", docs) == [{"a": 1, "b": 2}, {"a": 1}]


def test_counters_loaded_and_output() -> None:
    docs = [{"id": str(i), "tags": ["a", "b"]} for i in range(10)]
    result = execute(parse_query("SELECT * FROM c WHERE c.id = '3'"), docs)
    assert (result.loaded, len(result.rows)) == (10, 1)
    result = execute(parse_query("SELECT c.id, t FROM c JOIN t IN c.tags"), docs)
    assert (result.loaded, len(result.rows)) == (10, 20)
    result = execute(parse_query("SELECT TOP 2 * FROM c"), iter(docs))
    assert (result.loaded, len(result.rows)) == (2, 2)
    result = execute(parse_query("SELECT VALUE 1"), docs)
    assert (result.loaded, len(result.rows)) == (0, 1)


def test_select_star_returns_the_documents_themselves() -> None:
    docs = [{"id": "a", "nested": {"x": 1}}]
    assert execute(parse_query("SELECT * FROM c"), docs).rows[0] is docs[0]
    assert execute(parse_query("SELECT VALUE c.nested FROM c"), docs).rows[0] is docs[0]["nested"]


def test_parameter_names_with_or_without_at() -> None:
    docs = [{"pk": "a"}, {"pk": "b"}]
    assert rows("SELECT VALUE c.pk FROM c WHERE c.pk = @p", docs, {"@p": "a"}) == ["a"]
    assert rows("SELECT VALUE c.pk FROM c WHERE c.pk = @p", docs, {"p": "b"}) == ["b"]


def test_compiled_plans_are_per_parameter_value() -> None:
    q = parse_query("SELECT VALUE c.pk FROM c WHERE c.pk = @p")
    docs = [{"pk": 1}, {"pk": True}]
    assert execute(q, docs, {"@p": 1}).rows == [1]
    assert execute(q, docs, {"@p": True}).rows == [True]


def test_decisions_on_open_string_points() -> None:  # decisions (§10.6, §10.7)
    assert rows(
        "SELECT VALUE ['ABC' LIKE 'abc', REPLACE('aXbX', 'X', '-'), LENGTH('\U0001f600'), "
        "ARRAY_SLICE([1, 2, 3], 1, -1), SUBSTRING('abc', 10, 2), 1 LIKE '1']"
    ) == [[False, "a-b-", 1, [], ""]]


def test_duplicate_projection_names_last_wins() -> None:  # decision (§10.4)
    assert rows("SELECT c.name, c.m.name FROM c", [{"name": "a", "m": {"name": "b"}}]) == [{"name": "b"}]


def test_scalar_subquery_cardinality() -> None:
    from cosmoscore.sql import SqlError

    with pytest.raises(SqlError):
        rows("SELECT (SELECT VALUE t FROM t IN c.tags) FROM c", [{"tags": [1, 2]}])


def test_top_with_order_by_keeps_ties_and_type_order() -> None:  # decision (§10.8) with a TOP bound
    docs = [{"id": "a", "k": 1}, {"id": "b", "k": "s"}, {"id": "c", "k": 1}, {"id": "d"}, {"id": "e", "k": 0}]
    assert rows("SELECT TOP 3 VALUE c.id FROM c ORDER BY c.k", docs) == ["d", "e", "a"]
    assert rows("SELECT TOP 3 VALUE c.id FROM c ORDER BY c.k DESC", docs) == ["b", "a", "c"]
    assert rows("SELECT VALUE c.id FROM c ORDER BY c.k DESC OFFSET 1 LIMIT 2", docs) == ["a", "c"]
    numbers = [{"id": str(i), "k": k} for i, k in enumerate([3, 1.5, 2, 1.5])]
    assert rows("SELECT TOP 2 VALUE c.id FROM c ORDER BY c.k", numbers) == ["1", "3"]
