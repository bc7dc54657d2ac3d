"""Parser: AST shapes, precedence, literals, spans, leniencies (expected trees written by hand)."""

from __future__ import annotations

import math

import pytest

from cosmoscore.sql import UNDEFINED, parse_query
from cosmoscore.sql import ast as a


def where(text: str) -> a.Expr:
    query = parse_query(f"SELECT * FROM c WHERE {text}")
    assert query.where is not None
    return query.where


def c(*path: str) -> a.Expr:
    node: a.Expr = a.Ident("c")
    for name in path:
        node = a.Prop(node, name)
    return node


def test_clauses_in_order() -> None:
    q = parse_query(
        "SELECT DISTINCT TOP 5 c.a AS x FROM c JOIN t IN c.tags WHERE c.b = 1 ORDER BY c.a DESC, c.b OFFSET 1 LIMIT 2"
    )
    assert q.select.distinct and q.select.top == 5
    assert q.select.items == (a.SelectItem(c("a"), "x"),)
    assert [s.alias for s in q.sources] == ["c", "t"]
    assert q.sources[1].iterate and q.sources[1].collection == a.Collection("c", ("tags",))
    assert [(i.expr, i.descending) for i in q.order_by] == [(c("a"), True), (c("b"), False)]
    assert (q.offset, q.limit) == (1, 2)


def test_multiplication_binds_tighter_than_addition() -> None:
    assert where("c.a + 1 * 2 = 3") == a.Binary(
        "=", a.Binary("+", c("a"), a.Binary("*", a.Literal(1), a.Literal(2))), a.Literal(3)
    )


def test_and_binds_tighter_than_or() -> None:
    x, y, z = (a.Binary("=", c(n), a.Literal(1)) for n in "xyz")
    assert where("c.x = 1 OR c.y = 1 AND c.z = 1") == a.Binary("OR", x, a.Binary("AND", y, z))


def test_not_is_a_tight_unary_operator_as_in_the_sdk_grammar() -> None:
    assert where("NOT c.a = c.b") == a.Binary("=", a.Unary("NOT", c("a")), c("b"))


def test_between_combines_with_and() -> None:
    assert where("c.a BETWEEN 1 AND 2 AND c.b") == a.Binary(
        "AND", a.Between(c("a"), a.Literal(1), a.Literal(2)), c("b")
    )


def test_in_like_and_negations() -> None:
    assert where("c.a NOT IN (1, 'x')") == a.In(c("a"), (a.Literal(1), a.Literal("x")), negated=True)
    assert where("c.a NOT LIKE 'a^%' ESCAPE '^'") == a.Like(c("a"), a.Literal("a^%"), "^", negated=True)


def test_ternary_nests_to_the_right_and_coalesce() -> None:
    assert where("c.x ? 1 : c.y ? 2 : 3") == a.Ternary(
        c("x"), a.Literal(1), a.Ternary(c("y"), a.Literal(2), a.Literal(3))
    )
    assert where("c.x ?? c.y") == a.Coalesce(c("x"), c("y"))


def test_brackets_with_string_are_properties_and_others_indexes() -> None:
    assert where('c["order"]') == a.Prop(a.Ident("c"), "order", bracket=True)
    assert where("c.tags[0]") == a.Index(c("tags"), a.Literal(0))
    assert where("c.bag[@name]") == a.Index(c("bag"), a.Param("@name"))


def test_keywords_and_functions_are_case_insensitive() -> None:
    q = parse_query("select value upper(c.a) from c where c.b = TRUE and NOT IS_defined(c.x)")
    assert q.select.value == a.Call("UPPER", (c("a"),), "upper")
    assert where("c.b = TRUE") == where("c.b = true")


def test_number_literals() -> None:
    values = parse_query("SELECT VALUE [1, 1.5, 1e3, 0x1F, -2, 18446744073709551615, 9223372036854775807]")
    items = [lit.value for lit in values.select.value.items]
    assert items == [1, 1.5, 1000.0, 31, -2, 18446744073709551615.0, 9223372036854775807]
    assert [type(v) for v in items] == [int, float, float, int, int, float, int]


def test_nan_and_infinity_tokens() -> None:
    value = parse_query("SELECT VALUE [NaN, Infinity]").select.value
    assert math.isnan(value.items[0].value) and value.items[1].value == math.inf


def test_string_escapes() -> None:
    value = parse_query(r"""SELECT VALUE ['it\'s', "a\"b", "\\ \/ \b\f\n\r\t", "\u00e9\ud83d\ude00"]""").select.value
    assert [i.value for i in value.items] == ["it's", 'a"b', "\\ / \b\f\n\r\t", "\u00e9\U0001f600"]


def test_literals_keep_their_type_in_equality() -> None:
    assert parse_query("SELECT VALUE 1") != parse_query("SELECT VALUE true")
    assert where("c.n = 1") != where("c.n = true")


def test_undefined_null_literals() -> None:
    value = parse_query("SELECT VALUE [undefined, null, false]").select.value
    assert [i.value for i in value.items] == [UNDEFINED, None, False]


def test_object_keys_quoted_or_not() -> None:
    value = parse_query("SELECT VALUE {a: 1, \"b c\": 2, 'd': 3}").select.value
    assert [k for k, _ in value.props] == ["a", "b c", "d"]


def test_inferred_aliases() -> None:
    q = parse_query("SELECT * FROM c.address")
    assert q.sources[0].alias == "address" and not q.sources[0].explicit_alias
    assert parse_query("SELECT * FROM root").sources[0].alias == "root"


def test_spans_are_character_offsets() -> None:
    q = parse_query("SELECT c.name FROM c")
    item = q.select.items[0]
    assert item.expr.span == (7, 13)
    assert q.text == "SELECT c.name FROM c"


def test_parse_is_cached_by_text() -> None:
    assert parse_query("SELECT * FROM c") is parse_query("SELECT * FROM c")


def test_line_comments_are_ignored() -> None:
    assert parse_query("SELECT * -- all\nFROM c") == parse_query("SELECT * FROM c")


def test_orderby_filter_placeholder_is_true() -> None:
    assert where("{documentdb-formattableorderbyquery-filter}") == a.Literal(True)


@pytest.mark.parametrize(
    "text",
    [
        'SELECT VALUE [{"item": COUNT(1)}] FROM c',
        'SELECT c._rid, [{"item": c.n}] AS orderByItems, c AS payload FROM c WHERE (true) ORDER BY c.n',
        'SELECT [{"item": c.age}] AS groupByItems, {"age": c.age, "n": {"item": COUNT(1)}} AS payload '
        "FROM c GROUP BY c.age",
        "SELECT VALUE c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = 'x')",
        "SELECT udf_like_name FROM c JOIN udf_like_name IN c.x",
    ],
)
def test_service_and_sdk_query_shapes_parse(text: str) -> None:
    assert parse_query(text).select is not None
