"""SQL conformance cases: a data table, free of engine imports, runnable by any executor.

Each Case names a dataset (tests/conformance/dataset.py), a query, its parameters, and either the
expected rows or the expected error (service code and a message fragment). Expected rows are written
by hand from cosmos-sql-semantics.md (its §9 worked examples verbatim where they apply), or computed
by a small reference expression over the dataset written inline for that case (`expected` is then a
callable taking the dataset). Rows are JSON values; compare order-insensitively unless `ordered`.

Decisions on the reference's open points (§10) are marked "decision:" in the case names' comments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .dataset import MAIN

Expected = list | Callable[[list[dict]], list]


class Case(NamedTuple):
    name: str
    sql: str
    expected: Expected | None
    params: dict[str, Any] | None = None
    ordered: bool = False
    dataset: str = "main"
    error: tuple[str | int, str] | None = None  # (code, message fragment)


def case(
    name: str,
    sql: str,
    expected: Expected,
    *,
    params: dict | None = None,
    ordered: bool = False,
    dataset: str = "main",
) -> Case:
    return Case(name, sql, expected, params, ordered, dataset)


def error(name: str, sql: str, code: str | int, fragment: str, *, params: dict | None = None) -> Case:
    return Case(name, sql, None, params, False, "main", (code, fragment))


# -- tiny reference helpers (plain Python over the dataset; never the engine) -------------------
def isnum(v: Any) -> bool:
    return type(v) in (int, float)


def ids(pred: Callable[[dict], bool]) -> Callable[[list[dict]], list]:
    return lambda docs: [d["id"] for d in docs if pred(d)]


def where_pk(pk: str) -> Callable[[list[dict]], list]:
    return lambda docs: [d for d in docs if d["pk"] == pk]


def pick(d: dict, **names: str) -> dict:
    """A projection: output name -> source key, leaving out keys the document lacks."""
    return {out: d[src] for out, src in names.items() if src in d}


def tag_list(d: dict) -> list:
    return d["tags"] if type(d.get("tags")) is list else []


P1 = [d for d in MAIN if d["pk"] == "p1"]

CASES: list[Case] = [
    # -- SELECT, FROM, naming ------------------------------------------------------------------
    case("select_star_where_pk", "SELECT * FROM c WHERE c.pk = 'p1'", where_pk("p1")),
    case(
        "select_fields",
        "SELECT c.id, c.name FROM c WHERE c.pk = 'p2'",
        lambda D: [pick(d, id="id", name="name") for d in D if d["pk"] == "p2"],
    ),
    case("select_value_id", "SELECT VALUE c.id FROM c WHERE c.pk = 'p3'", ids(lambda d: d["pk"] == "p3")),
    case(
        "alias_as",
        "SELECT c.id AS ident FROM c WHERE c.pk = 'p8'",
        lambda D: [{"ident": d["id"]} for d in D if d["pk"] == "p8"],
    ),
    case("alias_without_as", "SELECT c.name n FROM c WHERE c.id = 'd01'", [{"n": "Ada"}]),
    case("root_container_name", "SELECT VALUE r.id FROM root r WHERE r.n = 1", ["d01"]),
    case("any_container_name", "SELECT VALUE x.id FROM products x WHERE x.id = 'd02'", ["d02"]),
    case("keywords_case_insensitive", "select value C.id from C where C.id = 'd02'", ["d02"]),
    case(
        "nested_path",
        "SELECT VALUE c.address.city FROM c WHERE c.pk = 'p1'",
        ["Oslo", "Paris", "Rome", "Oslo", "Paris", "Rome"],
    ),
    case(
        "missing_nested_property_omitted",
        "SELECT c.id, c.address.city FROM c WHERE c.pk = 'p2'",
        lambda D: [
            {"id": d["id"], **({"city": d["address"]["city"]} if "address" in d else {})} for d in D if d["pk"] == "p2"
        ],
    ),
    case("bracket_reserved_word", 'SELECT VALUE c["order"] FROM c WHERE IS_DEFINED(c["order"])', [3, 1]),
    case("bracket_projection_named", "SELECT c[\"name\"] FROM c WHERE c.id = 'd01'", [{"name": "Ada"}]),
    case("array_index", "SELECT VALUE c.tags[0] FROM c WHERE c.pk = 'p1'", ["red", "green", "red"]),
    case("array_index_projection_unnamed", "SELECT c.tags[1] FROM c WHERE c.id = 'd01'", [{"$1": "blue"}]),
    case("array_index_out_of_range", "SELECT c.id, c.tags[5] AS t FROM c WHERE c.id = 'd01'", [{"id": "d01"}]),
    case("from_subroot_alias", "SELECT VALUE a.city FROM c.address a WHERE a.zip = '0150'", ["Oslo"]),
    case(
        "from_subroot_inferred_alias",
        "SELECT VALUE address.zip FROM c.address WHERE address.city = 'Rome' AND address.zip < '00103'",
        ["00100", "00101", "00102"],
    ),
    case(
        "select_star_subroot",
        "SELECT * FROM c.address a WHERE a.zip = '75001'",
        [{"city": "Paris", "zip": "75001"}],
    ),
    case(
        "from_in_count",
        "SELECT VALUE COUNT(1) FROM t IN c.tags",
        lambda D: [sum(len(tag_list(d)) for d in D)],
    ),
    case(
        "from_in_filter",
        "SELECT VALUE t FROM t IN c.tags WHERE t = 'green'",
        lambda D: [t for d in D for t in tag_list(d) if t == "green"],
    ),
    case("E1_unnamed_literals", 'SELECT "Adventure", "Works"', [{"$1": "Adventure", "$2": "Works"}]),
    case(
        "E1_object_unnamed",
        'SELECT {department: "Sales", team: "Field sales"}',
        [{"$1": {"department": "Sales", "team": "Field sales"}}],
    ),
    case(
        "E1_object_value",
        'SELECT VALUE {department: "Sales", team: "Field sales"}',
        [{"department": "Sales", "team": "Field sales"}],
    ),
    case(
        "E2_named_and_unnamed_aggregates",
        "SELECT MIN(c.n) AS min_n, MAX(c.n) FROM c WHERE c.pk = 'p2'",
        [{"min_n": None, "$1": 12}],
    ),
    case(
        "E2_two_unnamed_aggregates",
        "SELECT MIN(c.price), MAX(c.price) FROM c WHERE c.pk = 'p1'",
        [{"$1": 3.5, "$2": 30.0}],
    ),
    case(
        "naming_counts_only_unnamed",
        "SELECT c.id, 1 + 1, c.name, \"x\" AS k, [c.n] FROM c WHERE c.id = 'd02'",
        [{"id": "d02", "$1": 2, "name": "Bob", "k": "x", "$2": [2]}],
    ),
    case(
        "bare_alias_projection_named",
        "SELECT a FROM c.address a WHERE a.zip = '0150'",
        [{"a": {"city": "Oslo", "zip": "0150"}}],
    ),
    # -- undefined and null ----------------------------------------------------------------------
    case("E3_value_undefined", "SELECT VALUE undefined", []),
    case("E3_non_value_undefined", "SELECT undefined", [{}]),
    case("E3_exists_value_undefined", "SELECT EXISTS (SELECT VALUE undefined)", [{"$1": False}]),
    case("E3_exists_undefined", "SELECT EXISTS (SELECT undefined)", [{"$1": True}]),
    case("value_missing_no_rows", "SELECT VALUE c.missing FROM c", []),
    case("non_value_missing_empty_objects", "SELECT c.missing FROM c WHERE c.pk = 'p1'", [{}] * 6),
    case("not_is_defined", "SELECT VALUE c.id FROM c WHERE NOT IS_DEFINED(c.n)", ["d05"]),
    case("is_null", "SELECT VALUE c.id FROM c WHERE IS_NULL(c.n)", ["d10"]),
    case("equals_null", "SELECT VALUE c.id FROM c WHERE c.n = null", ["d10"]),
    case("null_object_vs_missing", "SELECT VALUE c.id FROM c WHERE c.address = null", ["d18"]),
    case("is_defined_false", "SELECT VALUE c.id FROM c WHERE IS_DEFINED(c.address) = false", ["d09"]),
    case("where_bare_boolean", "SELECT VALUE c.id FROM c WHERE c.flag AND c.pk = 'p1'", ["d01", "d03", "d05"]),
    # decision (§10.2): NOT binds tighter than AND and comparisons, as in the SDK grammar.
    case("not_is_unary", "SELECT VALUE c.id FROM c WHERE NOT c.flag AND c.pk = 'p1'", ["d02", "d06"]),
    case(
        "or_with_undefined",
        "SELECT VALUE c.id FROM c WHERE (c.flag OR c.n = 4) AND c.pk = 'p1'",
        ["d01", "d03", "d04", "d05"],
    ),
    case("E9_mixed_type_equality_string", 'SELECT VALUE c.id FROM c WHERE c.n = "15"', ["d15"]),
    case("E9_mixed_type_equality_number", "SELECT VALUE c.id FROM c WHERE c.n = 15", []),
    case("boolean_not_equal_to_one", "SELECT VALUE c.id FROM c WHERE c.n = true", ["d25"]),
    case("number_not_equal_to_true", "SELECT VALUE c.id FROM c WHERE c.n = 1", ["d01"]),
    # decision (§10.1): mixed-type `=` is undefined (the docs), not false (oracle/vq).
    case(
        "mixed_equality_projects_undefined",
        "SELECT (c.n = 1) AS r FROM c WHERE c.id IN ('d01', 'd02', 'd15')",
        [{"r": True}, {"r": False}, {}],
    ),
    case(
        "not_of_mixed_equality_drops",
        "SELECT VALUE c.id FROM c WHERE NOT (c.n = 15) AND c.pk = 'p3'",
        ["d13", "d14", "d16", "d17", "d18"],
    ),
    case("coalesce_undefined", "SELECT VALUE c.n ?? -1 FROM c WHERE c.pk = 'p1'", [1, 2, 3, 4, -1, 6]),
    case("coalesce_keeps_null", "SELECT VALUE c.n ?? -1 FROM c WHERE c.id = 'd10'", [None]),
    case(
        "ternary",
        'SELECT VALUE (c.n > 40 ? "big" : "small") FROM c WHERE c.pk = \'p7\'',
        ["small", "small", "small", "small", "big", "big"],
    ),
    case(
        "ternary_undefined_condition",
        "SELECT VALUE (c.flag ? 1 : 0) FROM c WHERE c.pk = 'p1'",
        [1, 0, 1, 0, 1, 0],
    ),
    case(
        "E12_iif",
        "SELECT VALUE {evalTrue: IIF(true, 123, 456), evalFalse: IIF(false, 123, 456), "
        'evalNumberNotTrue: IIF(123, 123, 456), evalStringNotTrue: IIF("ABC", 123, 456)}',
        [{"evalTrue": 123, "evalFalse": 456, "evalNumberNotTrue": 456, "evalStringNotTrue": 456}],
    ),
    case(
        "object_ctor_omits_undefined",
        "SELECT VALUE {a: c.n, b: c.missing} FROM c WHERE c.id = 'd01'",
        [{"a": 1}],
    ),
    case("array_ctor_skips_undefined", "SELECT VALUE [1, undefined, 2]", [[1, 2]]),
    case(
        "array_ctor_skips_missing_path",
        "SELECT VALUE [c.n, c.missing, c.name] FROM c WHERE c.id = 'd05'",
        [["Eve"]],
    ),
    # -- operators -------------------------------------------------------------------------------
    case("arithmetic", "SELECT VALUE c.n * 2 + 1 FROM c WHERE c.pk = 'p1'", [3, 5, 7, 9, 13]),
    case(
        "arithmetic_non_number_undefined",
        "SELECT c.id, c.n + 1 AS m FROM c WHERE c.pk = 'p3'",
        lambda D: [{"id": d["id"], **({"m": d["n"] + 1} if isnum(d.get("n")) else {})} for d in D if d["pk"] == "p3"],
    ),
    case("division_is_double", "SELECT VALUE 7 / 2", [3.5]),
    case("modulo", "SELECT VALUE [7 % 3, -7 % 3]", [[1, -1]]),
    case("string_concat_operator", "SELECT VALUE c.name || \"-\" || c.pk FROM c WHERE c.id = 'd01'", ["Ada-p1"]),
    case("string_concat_non_string", "SELECT VALUE c.n || \"x\" FROM c WHERE c.id = 'd01'", []),
    case("plus_does_not_concatenate", 'SELECT VALUE "a" + "b"', []),
    case(
        "bitwise",
        "SELECT VALUE [100 >> 2, 100 << 2, 100 >>> 0, 100 & 1000, 100 | 1000, 100 ^ 1000]",
        [[25, 400, 100, 96, 1004, 908]],
    ),
    case("string_less_than_ordinal", 'SELECT VALUE c.id FROM c WHERE c.name < "B"', ["d01", "d27"]),
    case(
        "not_equal_diamond",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' AND c.n <> 2",
        ["d01", "d03", "d04", "d06"],
    ),
    case(
        "not_equal_bang",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' AND c.n != 2",
        ["d01", "d03", "d04", "d06"],
    ),
    case("between", "SELECT VALUE c.id FROM c WHERE c.n BETWEEN 20 AND 22", ["d20", "d21", "d22"]),
    case(
        "not_between",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p4' AND (c.n NOT BETWEEN 20 AND 22)",
        ["d19", "d23", "d24"],
    ),
    case("between_strings", 'SELECT VALUE c.id FROM c WHERE c.name BETWEEN "A" AND "B"', ["d01", "d27"]),
    case(
        "in_type_strict",
        'SELECT VALUE c.id FROM c WHERE c.n IN (1, 2, "15", true)',
        ["d01", "d02", "d15", "d25"],
    ),
    case("not_in", "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' AND c.n NOT IN (1, 2)", ["d03", "d04", "d06"]),
    case(
        "in_array_parameter_is_one_value",
        "SELECT VALUE c.id FROM c WHERE c.tags IN (@t)",
        ["d01", "d21"],
        params={"@t": ["red", "blue"]},
    ),
    case(
        "array_contains_parameter",
        "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(@ids, c.id)",
        ["d03", "d07"],
        params={"@ids": ["d03", "d07", "d99"]},
    ),
    case("like_prefix", "SELECT VALUE c.id FROM c WHERE c.name LIKE 'A%'", ["d01", "d27"]),
    case(
        "like_underscore",
        "SELECT VALUE c.id FROM c WHERE c.name LIKE '_o_'",
        ids(lambda d: len(d["name"]) == 3 and d["name"][1] == "o"),
    ),
    case("like_set", "SELECT VALUE c.id FROM c WHERE c.name LIKE '[AB]%'", ["d01", "d02", "d27", "d28"]),
    case(
        "like_negated_range",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' AND c.name LIKE '[^A-D]%'",
        ["d03", "d05", "d06"],
    ),
    case(
        "like_escape",
        'SELECT VALUE ["20-30%" LIKE "20-30^%" ESCAPE "^", "20-30x" LIKE "20-30^%" ESCAPE "^"]',
        [[True, False]],
    ),
    case("like_bracket_literal", 'SELECT VALUE "20-30%" LIKE "20-30[%]"', [True]),
    case(
        "not_like",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' AND c.name NOT LIKE '%e%'",
        ["d01", "d02", "d03", "d06"],
    ),
    case("unary_minus", "SELECT VALUE -c.n FROM c WHERE c.id = 'd02'", [-2]),
    case("precedence_arithmetic", "SELECT VALUE [2 + 3 * 4, (2 + 3) * 4]", [[14, 20]]),
    case(
        "precedence_and_over_or",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' OR c.pk = 'p2' AND c.n = 7",
        ["d01", "d02", "d03", "d04", "d05", "d06", "d07"],
    ),
    case("hex_and_exponent_literals", "SELECT VALUE [0x1F, 1.5e3, 0.5]", [[31, 1500, 0.5]]),
    case("string_escapes", 'SELECT VALUE ["a\\"b", \'it\\\'s\', "\\u0041\\t"]', [['a"b', "it's", "A\t"]]),
    # -- built-in functions ------------------------------------------------------------------------
    case(
        "E11_length_wrong_types",
        'SELECT VALUE {stringValue: LENGTH("AdventureWorks"), emptyString: '
        'LENGTH(""), nullValue: LENGTH(null), numberValue: LENGTH(0), arrayValue: '
        'LENGTH(["Adventure", "Works"])}',
        [{"stringValue": 14, "emptyString": 0}],
    ),
    case("E11_is_number_of_missing", "SELECT VALUE IS_NUMBER({}.category)", [False]),
    case("E11_floor_null_omitted", "SELECT FLOOR(null) AS f, 1 AS one", [{"one": 1}]),
    case(
        "E13_array_contains_partial",
        'SELECT VALUE [ARRAY_CONTAINS([{category: "shirts", color: "blue"}], {category: "shirts"}), '
        'ARRAY_CONTAINS([{category: "shirts", color: "blue"}], {category: "shirts"}, true), '
        'ARRAY_CONTAINS([{category: "shirts", color: "blue"}], {category: "shorts", color: "blue"}, true)]',
        [[False, True, False]],
    ),
    case(
        "array_contains_partial_items",
        "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.items, {sku: \"C\"}, true) AND c.pk = 'p1'",
        ["d04", "d06"],
    ),
    case(
        "array_contains_full_object",
        'SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.items, {sku: "A", qty: 5})',
        ["d02"],
    ),
    case(
        "array_contains_tags",
        "SELECT VALUE c.id FROM c WHERE ARRAY_CONTAINS(c.tags, \"green\") AND c.tenant = 't1'",
        ["d05", "d06", "d09", "d12", "d13", "d16"],
    ),
    case(
        "array_length",
        "SELECT c.id, ARRAY_LENGTH(c.tags) AS k FROM c WHERE c.pk = 'p1'",
        [
            {"id": "d01", "k": 2},
            {"id": "d02", "k": 0},
            {"id": "d03"},
            {"id": "d04"},
            {"id": "d05", "k": 1},
            {"id": "d06", "k": 2},
        ],
    ),
    case(
        "array_slice_samples",
        "SELECT VALUE [ARRAY_SLICE([70, 86, 92, 99, 85, 90, 82], -2, 1), "
        "ARRAY_SLICE([70, 86, 92, 99, 85, 90, 82], 0, 12), ARRAY_SLICE([70, 86, 92, 99, 85, 90, 82], 3, 5)]",
        [[[90], [70, 86, 92, 99, 85, 90, 82], [99, 85, 90, 82]]],
    ),
    case("array_slice_two_args", 'SELECT VALUE ARRAY_SLICE(["a", "b", "c"], 1)', [["b", "c"]]),
    case(
        "array_concat",
        "SELECT VALUE ARRAY_CONCAT(c.tags, [\"x\"]) FROM c WHERE c.id = 'd01'",
        [["red", "blue", "x"]],
    ),
    case("startswith_case_sensitive", 'SELECT VALUE c.id FROM c WHERE STARTSWITH(c.name, "a")', []),
    case(
        "startswith_ignore_case",
        'SELECT VALUE c.id FROM c WHERE STARTSWITH(c.name, "a", true)',
        ["d01", "d27"],
    ),
    case(
        "endswith",
        'SELECT VALUE c.id FROM c WHERE ENDSWITH(c.name, "y")',
        ids(lambda d: d["name"].endswith("y")),
    ),
    case(
        "contains_case_sensitive",
        "SELECT VALUE c.id FROM c WHERE CONTAINS(c.name, \"A\") AND c.pk = 'p1'",
        ["d01"],
    ),
    case(
        "contains_ignore_case",
        "SELECT VALUE c.id FROM c WHERE CONTAINS(c.name, \"A\", true) AND c.pk = 'p1'",
        ["d01", "d06"],
    ),
    case("lower_upper", "SELECT VALUE [LOWER(c.name), UPPER(c.name)] FROM c WHERE c.id = 'd03'", [["cy", "CY"]]),
    case("length_of_names", "SELECT VALUE LENGTH(c.name) FROM c WHERE c.pk = 'p3'", [3, 3, 3, 3, 4, 3]),
    case(
        "substring",
        'SELECT VALUE [SUBSTRING("AdventureWorks", 9, 5), SUBSTRING("abc", 1, 0)]',
        [["Works", ""]],
    ),
    case("concat", "SELECT VALUE CONCAT(c.name, \"@\", c.pk) FROM c WHERE c.id = 'd02'", ["Bob@p1"]),
    case("concat_non_string_undefined", 'SELECT VALUE CONCAT("a", 1)', []),
    case(
        "left_right",
        'SELECT VALUE [LEFT("AdventureWorks", 9), RIGHT("AdventureWorks", 5), LEFT("abc", 10), RIGHT("abc", 0)]',
        [["Adventure", "Works", "abc", ""]],
    ),
    case(
        "trim_family",
        'SELECT VALUE [TRIM("  x  "), LTRIM("  x  "), RTRIM("  x  "), '
        'TRIM("-_-AdventureWorks-_-", "-_"), LTRIM("AdventureWorks", "Adventure"), '
        'RTRIM("AdventureWorks", "Works"), TRIM("-- AdventureWorks --", "-")]',
        [["x", "x  ", "  x", "AdventureWorks", "Works", "Adventure", " AdventureWorks "]],
    ),
    case("replace", 'SELECT VALUE REPLACE("AdventureWorksLT", "LT", "LT2")', ["AdventureWorksLT2"]),
    case(
        "index_of",
        'SELECT VALUE [INDEX_OF("AdventureWorks", "Works", 5), INDEX_OF("abc", "z"), INDEX_OF("abc", "b")]',
        [[9, -1, 1]],
    ),
    case(
        "tostring",
        "SELECT VALUE [ToString(1), ToString(1.5), ToString(true), ToString(null), "
        'ToString([1, 2, 3]), ToString({"department": "Bicycles"})]',
        [["1", "1.5", "true", "null", "[1,2,3]", '{"department":"Bicycles"}']],
    ),
    case(
        "string_to_number",
        'SELECT VALUE [StringToNumber("1.5"), StringToNumber(" 2e2 "), StringToNumber("Hello")]',
        [[1.5, 200]],
    ),
    case(
        "string_to_json_types",
        'SELECT VALUE [StringToBoolean("true"), StringToNull("null"), '
        'StringToArray("[1,2]"), StringToObject("{\\"a\\":1}"), StringToNull("NULL")]',
        [[True, None, [1, 2], {"a": 1}]],
    ),
    case("reverse_replicate", 'SELECT VALUE [REVERSE("abc"), REPLICATE("ab", 3)]', [["cba", "ababab"]]),
    case(
        "regexmatch",
        "SELECT VALUE c.id FROM c WHERE RegexMatch(c.name, \"^[A-C][a-z]+$\") AND c.pk = 'p1'",
        ["d01", "d02"],
    ),
    case(
        "stringequals",
        'SELECT VALUE [StringEquals("abc", "ABC"), StringEquals("abc", "ABC", true)]',
        [[False, True]],
    ),
    case(
        "math_basics",
        "SELECT VALUE [ABS(-5), CEILING(1.2), FLOOR(-1.2), ROUND(2.5), ROUND(-2.5), ROUND(-0.5), "
        "POWER(2, 10), SQRT(16), SQUARE(3), SIGN(-3), TRUNC(-2.7)]",
        [[5, 2, -2, 3, -3, -1, 1024, 4, 9, -1, -2]],
    ),
    case(
        "math_null_undefined",
        "SELECT VALUE [POWER(null, 3), POWER(2, null), FLOOR(null), SQUARE(null)]",
        [[]],
    ),
    case("exp_log_pi", "SELECT VALUE [EXP(0), LOG(1), LOG10(100), PI() > 3.14]", [[1, 0, 2, True]]),
    case(
        "is_finite_number",
        "SELECT VALUE [IS_FINITE_NUMBER(8.9 / 0.0), IS_FINITE_NUMBER(SQRT(-1.0)), IS_FINITE_NUMBER(1)]",
        [[False, False, True]],
    ),
    case(
        "is_integer",
        "SELECT VALUE [IS_INTEGER(3454.123), IS_INTEGER(9223372036854775807), "
        "IS_INTEGER(18446744073709551615), IS_INTEGER(5)]",
        [[False, True, False, True]],
    ),
    case(
        "type_checks",
        "SELECT c.id, IS_NUMBER(c.n) AS num, IS_STRING(c.n) AS str, IS_BOOL(c.n) AS b, "
        'IS_ARRAY(c.n) AS arr, IS_PRIMITIVE(c.n) AS prim FROM c WHERE c.id IN ("d05", "d10", "d15", "d25", "d30")',
        [
            {"id": "d05", "num": False, "str": False, "b": False, "arr": False, "prim": False},
            {"id": "d10", "num": False, "str": False, "b": False, "arr": False, "prim": True},
            {"id": "d15", "num": False, "str": True, "b": False, "arr": False, "prim": True},
            {"id": "d25", "num": False, "str": False, "b": True, "arr": False, "prim": True},
            {"id": "d30", "num": False, "str": False, "b": False, "arr": True, "prim": False},
        ],
    ),
    case("not_is_object", "SELECT VALUE c.id FROM c WHERE NOT IS_OBJECT(c.address)", ["d09", "d18"]),
    case(
        "int_functions",
        "SELECT VALUE [IntAdd(20, 5), IntAdd(20, 0.10), IntDiv(7, 2), IntDiv(7, 0), "
        "IntMod(-7, 3), IntMul(3, 4), IntSub(3, 5)]",
        [[25, 3, -1, 12, -2]],
    ),
    case(
        "number_bin",
        "SELECT VALUE [NumberBin(37.752, 10), NumberBin(37.752, -100), NumberBin(37.752, 0)]",
        [[30, 100]],
    ),
    case("choose", 'SELECT VALUE [CHOOSE(2, "a", "b", "c"), CHOOSE(0, "a"), CHOOSE(4, "a")]', [["b"]]),
    case(
        "object_to_array",
        'SELECT VALUE ObjectToArray({"a": 1, "b": "x"})',
        [[{"k": "a", "v": 1}, {"k": "b", "v": "x"}]],
    ),
    case(
        "set_intersect_union",
        "SELECT VALUE [SetIntersect([1, 2, 3, 2], [2, 3, 4]), SetUnion([1, 2], [2, 3])]",
        [[[2, 3], [1, 2, 3]]],
    ),
    case("function_names_case_insensitive", 'SELECT VALUE [upper("abc"), Array_Length([1, 2])]', [["ABC", 2]]),
    case(
        "datetime_add",
        'SELECT VALUE [DateTimeAdd("mm", 1, "2020-07-03T00:00:00.0000000"), '
        'DateTimeAdd("ss", 5 * -5, "2020-07-03T00:00:00.0000000")]',
        [["2020-08-03T00:00:00.0000000Z", "2020-07-02T23:59:35.0000000Z"]],
    ),
    case(
        "datetime_part",
        'SELECT VALUE [DateTimePart("ms", "2016-05-29T08:30:00.1301617"), '
        'DateTimePart("mcs", "2016-05-29T08:30:00.1301617"), DateTimePart("ns", "2016-05-29T08:30:00.1301617"), '
        'DateTimePart("yyyy", "2016-05-29T08:30:00.1301617")]',
        [[130, 130161, 130161700, 2016]],
    ),
    case(
        "datetime_diff",
        'SELECT VALUE [DateTimeDiff("yyyy", "2019-02-04T16:00:00.0000000", '
        '"2018-03-05T05:00:00.0000000"), DateTimeDiff("mm", "2019-02-04T16:00:00.0000000", '
        '"2018-03-05T05:00:00.0000000"), DateTimeDiff("dd", "2019-02-04T16:00:00.0000000", '
        '"2018-03-05T05:00:00.0000000")]',
        [[-1, -11, -336]],
    ),
    case(
        "datetime_from_parts",
        "SELECT VALUE [DateTimeFromParts(2017, 4, 20), "
        "DateTimeFromParts(2017, 4, 20, 13, 15, 20, 3456789), DateTimeFromParts(2017, 13, 1)]",
        [["2017-04-20T00:00:00.0000000Z", "2017-04-20T13:15:20.3456789Z"]],
    ),
    case(
        "datetime_ticks_timestamps",
        'SELECT VALUE [DateTimeToTimestamp("1970-01-01T00:00:01.0000000Z"), '
        'TimestampToDateTime(1000), DateTimeToTicks("1970-01-01T00:00:00.0000010Z"), TicksToDateTime(10)]',
        [[1000, "1970-01-01T00:00:01.0000000Z", 10, "1970-01-01T00:00:00.0000010Z"]],
    ),
    case(
        "datetime_bin",
        'SELECT VALUE DateTimeBin("2021-06-28T17:24:29.2991234Z", "hh")',
        ["2021-06-28T17:00:00.0000000Z"],
    ),
    case("date_strings_compare", 'SELECT VALUE c.id FROM c WHERE c.created >= "2024-08-05"', ["d47", "d48"]),
    case("current_datetime_format", "SELECT VALUE LENGTH(GetCurrentDateTime())", [28]),
    # -- aggregates --------------------------------------------------------------------------------
    case(
        "E6_count_skips_undefined",
        'SELECT VALUE COUNT(p.name) FROM products p WHERE p.category = "socks"',
        [2],
        dataset="people",
    ),
    case(
        "E6_sum_skips_undefined",
        'SELECT VALUE SUM(p.quantity) FROM products p WHERE p.category = "hiking-bags"',
        [50],
        dataset="people",
    ),
    case("count_all", "SELECT VALUE COUNT(1) FROM c", lambda D: [len(D)]),
    case("count_field_null_counts", "SELECT VALUE COUNT(c.n) FROM c", lambda D: [sum(1 for d in D if "n" in d)]),
    case("E7_sum_with_non_numbers_undefined", "SELECT VALUE SUM(c.n) FROM c", []),
    case("sum_numbers", "SELECT VALUE SUM(c.n) FROM c WHERE c.pk = 'p1'", [16]),
    case("E7_sum_all_missing_zero", "SELECT VALUE SUM(c.missing) FROM c", [0]),
    case("E7_avg_all_missing_empty", "SELECT VALUE AVG(c.missing) FROM c", []),
    case("avg", "SELECT VALUE AVG(c.price) FROM c WHERE c.pk = 'p1'", [13.875]),
    case(
        "E7_min_primitives_null_lowest",
        "SELECT VALUE MIN(c.v) FROM c WHERE IS_PRIMITIVE(c.v)",
        [None],
        dataset="types",
    ),
    case(
        "E7_max_primitives_greatest_string",
        "SELECT VALUE MAX(c.v) FROM c WHERE IS_PRIMITIVE(c.v)",
        ["alpha"],
        dataset="types",
    ),
    case("E7_min_with_array_undefined", "SELECT VALUE MIN(c.v) FROM c", [], dataset="types"),
    case("E7_count_null", "SELECT VALUE COUNT(c.v) FROM c WHERE c.i = 1", [1], dataset="types"),
    case("count_empty_input_zero", "SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'nope'", [0]),
    case("max_empty_input_no_row", "SELECT VALUE MAX(c.n) FROM c WHERE c.pk = 'nope'", []),
    case(
        "non_value_aggregates",
        "SELECT COUNT(1) AS n, SUM(c.price) AS total FROM c WHERE c.pk = 'p2'",
        [{"n": 6, "total": 100.25}],
    ),
    case(
        "non_value_undefined_aggregate_omitted",
        "SELECT AVG(c.missing) AS a, COUNT(1) AS n FROM c WHERE c.pk = 'p2'",
        [{"n": 6}],
    ),
    case("count_expression_no_from", "SELECT VALUE COUNT(2 + 3)", [1]),
    case("sum_over_join", "SELECT VALUE SUM(i.qty) FROM c JOIN i IN c.items WHERE c.pk = 'p1'", [18]),
    case("partial_count_shape", "SELECT VALUE [{\"item\": COUNT(1)}] FROM c WHERE c.pk = 'p1'", [[{"item": 6}]]),
    case(
        "partial_avg_shape",
        'SELECT VALUE [{"item": {"sum": SUM(c.price), "count": COUNT(c.price)}}] FROM c WHERE c.pk = \'p1\'',
        [[{"item": {"sum": 83.25, "count": 6}}]],
    ),
    case(
        "partial_min_shape",
        'SELECT VALUE [{"item": MIN(c.n), "item2": {"min": MIN(c.n), "count": COUNT(c.n)}}] FROM c WHERE c.pk = \'p1\'',
        [[{"item": 1, "item2": {"min": 1, "count": 5}}]],
    ),
    case("partial_sum_undefined_shape", 'SELECT VALUE [{"item": SUM(c.n)}] FROM c', [[{}]]),
    # -- GROUP BY ----------------------------------------------------------------------------------
    case(
        "E5_group_by_missing_key",
        "SELECT COUNT(1) AS trainedEmployees, e.capabilities.softwareDevelopment AS developmentLang "
        'FROM employees e WHERE e.team = "Cloud software engineering" GROUP BY e.capabilities.softwareDevelopment',
        [
            {"trainedEmployees": 1},
            {"trainedEmployees": 1, "developmentLang": "c-sharp"},
            {"trainedEmployees": 3, "developmentLang": "javascript"},
            {"trainedEmployees": 2, "developmentLang": "python"},
        ],
        dataset="people",
    ),
    case(
        "group_by_pk",
        "SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
        [{"pk": f"p{i}", "n": 6} for i in range(1, 9)],
    ),
    case("group_by_value", "SELECT VALUE c.tenant FROM c GROUP BY c.tenant", ["t1", "t2", "t3"]),
    case(
        "group_by_two_keys",
        "SELECT c.tenant, c.user, COUNT(1) AS n FROM c WHERE c.tenant = 't1' GROUP BY c.tenant, c.user",
        [
            {"tenant": "t1", "user": "u1", "n": 6},
            {"tenant": "t1", "user": "u2", "n": 6},
            {"tenant": "t1", "user": "u3", "n": 4},
        ],
    ),
    case("group_by_each_type_own_group", "SELECT VALUE COUNT(1) FROM c GROUP BY c.v", [1] * 10, dataset="types"),
    case(
        "group_by_undefined_value_dropped",
        "SELECT VALUE c.v FROM c GROUP BY c.v",
        [None, False, True, -1.5, 42, "Zeta", "alpha", [10, 20], {"type": "object"}],
        dataset="types",
    ),
    case(
        "group_by_with_sum_max",
        "SELECT c.tenant, SUM(c.price) AS s, MAX(c.price) AS mx FROM c GROUP BY c.tenant",
        lambda D: [
            {
                "tenant": t,
                "s": sum(d["price"] for d in D if d["tenant"] == t),
                "mx": max(d["price"] for d in D if d["tenant"] == t),
            }
            for t in ("t1", "t2", "t3")
        ],
    ),
    case(
        "group_by_function",
        "SELECT UPPER(c.address.city) AS city, COUNT(1) AS n FROM c WHERE c.pk = 'p1' GROUP BY UPPER(c.address.city)",
        [{"city": "OSLO", "n": 2}, {"city": "PARIS", "n": 2}, {"city": "ROME", "n": 2}],
    ),
    case(
        "group_by_undefined_key_row",
        "SELECT c.flag, COUNT(1) AS n FROM c WHERE c.pk = 'p1' GROUP BY c.flag",
        [{"flag": True, "n": 3}, {"flag": False, "n": 2}, {"n": 1}],
    ),
    # -- DISTINCT ----------------------------------------------------------------------------------
    case("E4_distinct_value", "SELECT DISTINCT VALUE c.address.city FROM c", ["Oslo", "Paris", "Rome"]),
    case(
        "E4_distinct_non_value",
        "SELECT DISTINCT c.flag FROM c WHERE c.pk = 'p1'",
        [{"flag": True}, {"flag": False}, {}],
    ),
    case(
        "distinct_objects",
        "SELECT DISTINCT VALUE {a: c.tenant, b: c.user} FROM c WHERE c.pk = 'p1'",
        [{"a": "t1", "b": "u1"}, {"a": "t1", "b": "u2"}, {"a": "t1", "b": "u3"}],
    ),
    case("distinct_type_strict", "SELECT DISTINCT VALUE c.n FROM c WHERE c.id IN ('d01', 'd25')", [1, True]),
    case(
        "distinct_order_by",
        "SELECT DISTINCT VALUE c.tenant FROM c ORDER BY c.tenant DESC",
        ["t3", "t2", "t1"],
        ordered=True,
    ),
    case(
        "distinct_top_order_by",
        "SELECT DISTINCT TOP 2 VALUE c.tenant FROM c ORDER BY c.tenant",
        ["t1", "t2"],
        ordered=True,
    ),
    # -- ORDER BY ----------------------------------------------------------------------------------
    case(
        "order_by_asc",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p2' ORDER BY c.price",
        ["d10", "d07", "d11", "d08", "d09", "d12"],
        ordered=True,
    ),
    case(
        "order_by_desc",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p2' ORDER BY c.price DESC",
        ["d12", "d09", "d08", "d11", "d07", "d10"],
        ordered=True,
    ),
    case(
        "E8_order_by_type_order",
        "SELECT VALUE c.i FROM c ORDER BY c.v",
        list(range(10)),
        ordered=True,
        dataset="types",
    ),
    case(
        "E8_order_by_type_order_desc",
        "SELECT VALUE c.i FROM c ORDER BY c.v DESC",
        list(range(9, -1, -1)),
        ordered=True,
        dataset="types",
    ),
    case(
        "E8_order_by_undefined_non_value",
        "SELECT c.missing FROM c ORDER BY c.missing",
        [{}] * 10,
        ordered=True,
        dataset="types",
    ),
    case(
        "E8_order_by_undefined_value",
        "SELECT VALUE c.missing FROM c ORDER BY c.missing",
        [],
        ordered=True,
        dataset="types",
    ),
    case(
        "order_by_mixed_types_main",
        "SELECT VALUE c.id FROM c WHERE c.pk IN ('p1', 'p3', 'p5') ORDER BY c.n",
        [
            "d05",
            "d25",
            "d01",
            "d02",
            "d03",
            "d04",
            "d06",
            "d13",
            "d14",
            "d16",
            "d17",
            "d18",
            "d26",
            "d27",
            "d28",
            "d29",
            "d15",
            "d30",
        ],
        ordered=True,
    ),
    case(
        "order_by_undefined_last_desc",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' ORDER BY c.n DESC",
        ["d06", "d04", "d03", "d02", "d01", "d05"],
        ordered=True,
    ),
    case(
        "order_by_two_keys",
        "SELECT VALUE c.id FROM c WHERE c.tenant = 't1' ORDER BY c.user, c.n DESC",
        [
            "d15",
            "d13",
            "d09",
            "d07",
            "d03",
            "d01",
            "d16",
            "d14",
            "d08",
            "d04",
            "d02",
            "d10",
            "d12",
            "d11",
            "d06",
            "d05",
        ],
        ordered=True,
    ),
    case(
        "order_by_nested_desc",
        "SELECT VALUE c.id FROM c WHERE c.pk = 'p1' ORDER BY c.address.zip DESC",
        ["d05", "d02", "d04", "d01", "d06", "d03"],
        ordered=True,
    ),
    case(
        "order_by_bracket",
        'SELECT VALUE c.id FROM c WHERE IS_DEFINED(c["order"]) ORDER BY c["order"]',
        ["d02", "d01"],
        ordered=True,
    ),
    case(
        "order_by_string_ordinal",
        "SELECT VALUE c.name FROM c WHERE c.pk = 'p1' ORDER BY c.name",
        ["Ada", "Bob", "Dee", "Eve", "Fay", "cy"],
        ordered=True,
    ),
    case(
        "order_by_join_element",
        "SELECT VALUE i.qty FROM c JOIN i IN c.items WHERE c.pk = 'p1' ORDER BY i.qty",
        [1, 1, 2, 2, 3, 4, 5],
        ordered=True,
    ),
    case(
        "order_by_rewritten_shape",
        'SELECT c.id, [{"item": c.price}] AS orderByItems, {"name": c.name} AS payload '
        "FROM c WHERE (c.pk = 'p1') AND (true) ORDER BY c.price",
        [
            {"id": i, "orderByItems": [{"item": p}], "payload": {"name": n}}
            for i, p, n in [
                ("d05", 3.5, "Eve"),
                ("d03", 7.25, "cy"),
                ("d01", 10.5, "Ada"),
                ("d04", 12.0, "Dee"),
                ("d02", 20.0, "Bob"),
                ("d06", 30.0, "Fay"),
            ]
        ],
        ordered=True,
    ),
    case(
        "order_by_value_rewritten_shape",
        'SELECT c.id, [{"item": c.n}] AS orderByItems, c.n AS payload FROM c '
        "WHERE ((c.pk = 'p1') AND (true)) AND IS_DEFINED(c.n) ORDER BY c.n",
        [{"id": f"d0{i}", "orderByItems": [{"item": i}], "payload": i} for i in (1, 2, 3, 4, 6)],
        ordered=True,
    ),
    # -- TOP, OFFSET/LIMIT -------------------------------------------------------------------------
    case(
        "top_order_by",
        "SELECT TOP 3 VALUE c.id FROM c ORDER BY c.price DESC",
        ["d48", "d47", "d46"],
        ordered=True,
    ),
    case("top_zero", "SELECT TOP 0 * FROM c", []),
    case(
        "top_parameter",
        "SELECT TOP @k VALUE c.id FROM c WHERE c.pk = 'p8' ORDER BY c.id",
        ["d43", "d44"],
        params={"@k": 2},
        ordered=True,
    ),
    case(
        "offset_limit",
        "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 10 LIMIT 3",
        ["d11", "d12", "d13"],
        ordered=True,
    ),
    case("offset_beyond_end", "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 100 LIMIT 3", [], ordered=True),
    case("limit_zero", "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET 0 LIMIT 0", [], ordered=True),
    case(
        "offset_limit_parameters",
        "SELECT VALUE c.id FROM c ORDER BY c.id OFFSET @o LIMIT @l",
        ["d47", "d48"],
        params={"@o": 46, "@l": 5},
        ordered=True,
    ),
    case("offset_limit_with_count", "SELECT VALUE COUNT(1) FROM c OFFSET 0 LIMIT 1", [48]),
    case(
        "E14_offset_limit_after_order",
        'SELECT VALUE {name: e.name} FROM employees e WHERE e.team = "Leadership team" '
        "ORDER BY e.name OFFSET 1 LIMIT 3",
        [{"name": "Isaac Talbot"}, {"name": "Jennifer Wilkins"}, {"name": "Riley Johnson"}],
        ordered=True,
        dataset="people",
    ),
    # -- JOIN ----------------------------------------------------------------------------------------
    case(
        "E10_join_drops_empty_missing_non_array",
        'SELECT p.id, t FROM p JOIN t IN p.tags WHERE p.category = "gloves"',
        [{"id": "g1", "t": "x"}, {"id": "g1", "t": "y"}],
        dataset="people",
    ),
    case(
        "join_items",
        "SELECT c.id, i.sku FROM c JOIN i IN c.items WHERE c.pk = 'p1'",
        [
            {"id": "d01", "sku": "A"},
            {"id": "d01", "sku": "B"},
            {"id": "d02", "sku": "A"},
            {"id": "d04", "sku": "C"},
            {"id": "d05", "sku": "B"},
            {"id": "d06", "sku": "A"},
            {"id": "d06", "sku": "C"},
        ],
    ),
    case(
        "join_filter_on_element",
        "SELECT VALUE c.id FROM c JOIN i IN c.items WHERE i.qty >= 8",
        ["d25", "d30", "d47"],
    ),
    case(
        "double_join_multiplies",
        "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags JOIN i IN c.items WHERE c.pk = 'p1'",
        [9],
    ),
    case("join_distinct_elements", "SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags", ["red", "blue", "green"]),
    case(
        "join_subquery_filter",
        "SELECT VALUE c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = \"green\") g WHERE c.pk = 'p1'",
        ["d05", "d06"],
    ),
    case(
        "join_constant_array_subquery",
        'SELECT c.id, m FROM c JOIN m IN (SELECT VALUE ["x", "y"]) WHERE c.id = \'d01\'',
        [{"id": "d01", "m": "x"}, {"id": "d01", "m": "y"}],
    ),
    case("join_subroot_value", "SELECT VALUE a.zip FROM c JOIN c.address a WHERE c.id = 'd02'", ["75001"]),
    # -- subqueries ------------------------------------------------------------------------------------
    case(
        "exists_in_where",
        "SELECT VALUE c.id FROM c WHERE EXISTS (SELECT VALUE i FROM i IN c.items WHERE i.qty > 6)",
        ["d12", "d25", "d30", "d47"],
    ),
    case(
        "array_subquery",
        "SELECT c.id, ARRAY(SELECT VALUE i.sku FROM i IN c.items) AS skus FROM c WHERE c.pk = 'p1'",
        [
            {"id": "d01", "skus": ["A", "B"]},
            {"id": "d02", "skus": ["A"]},
            {"id": "d03", "skus": []},
            {"id": "d04", "skus": ["C"]},
            {"id": "d05", "skus": ["B"]},
            {"id": "d06", "skus": ["A", "C"]},
        ],
    ),
    case(
        "scalar_subquery_aggregate",
        "SELECT c.id, (SELECT VALUE SUM(i.qty) FROM i IN c.items) AS q FROM c WHERE c.pk = 'p1'",
        [
            {"id": "d01", "q": 3},
            {"id": "d02", "q": 5},
            {"id": "d03", "q": 0},
            {"id": "d04", "q": 1},
            {"id": "d05", "q": 3},
            {"id": "d06", "q": 6},
        ],
    ),
    case(
        "E15_scalar_subquery_without_rows",
        'SELECT p.id, (SELECT p.name WHERE CONTAINS(p.name, "glove")).name FROM products p WHERE p.category = "gloves"',
        [{"id": "g1", "name": "Winter glove"}, {"id": "g2"}, {"id": "g3", "name": "Work glove"}],
        dataset="people",
    ),
    case(
        "scalar_subquery_in_where",
        "SELECT VALUE c.id FROM c WHERE (SELECT VALUE COUNT(1) FROM t IN c.tags) >= 3",
        ["d13"],
    ),
    case(
        "exists_projected",
        "SELECT c.id, EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = \"red\") AS hasRed FROM c WHERE c.pk = 'p1'",
        [
            {"id": "d01", "hasRed": True},
            {"id": "d02", "hasRed": False},
            {"id": "d03", "hasRed": False},
            {"id": "d04", "hasRed": False},
            {"id": "d05", "hasRed": False},
            {"id": "d06", "hasRed": True},
        ],
    ),
    case("from_subquery", "SELECT VALUE x FROM (SELECT VALUE c.n FROM c WHERE c.pk = 'p1') x", [1, 2, 3, 4, 6]),
    # -- parameters ------------------------------------------------------------------------------------
    case(
        "parameters_compare",
        "SELECT VALUE c.id FROM c WHERE c.pk = @pk AND c.n > @min",
        ["d11", "d12"],
        params={"@pk": "p2", "@min": 10},
    ),
    case(
        "parameter_object_equality",
        "SELECT VALUE c.id FROM c WHERE c.address = @addr",
        ["d01"],
        params={"@addr": {"zip": "0150", "city": "Oslo"}},
    ),
    case("parameter_in_bracket", "SELECT VALUE c[@f] FROM c WHERE c.id = 'd01'", ["Ada"], params={"@f": "name"}),
    case("parameter_null", "SELECT VALUE c.id FROM c WHERE c.n = @v", ["d10"], params={"@v": None}),
    case(
        "parameter_in_list",
        "SELECT VALUE c.id FROM c WHERE c.pk IN (@a, @b) AND c.n < 9",
        ["d01", "d02", "d03", "d04", "d06", "d07", "d08"],
        params={"@a": "p1", "@b": "p2"},
    ),
    # -- errors ----------------------------------------------------------------------------------------
    error(
        "syntax_keyword_as_property",
        "SELECT c.Group FROM c",
        "SC1001",
        "Syntax error, incorrect syntax near 'Group'.",
    ),
    error("syntax_top_negative", "SELECT TOP -1 c.name FROM c", "SC1001", "incorrect syntax near '-'."),
    error("syntax_offset_negative", "SELECT c.name FROM c OFFSET -1 LIMIT 10", "SC1001", "near '-'"),
    error("syntax_as_value", "SELECT c.n AS Value FROM c", "SC1001", "near 'Value'"),
    error("syntax_trailing_comma", "SELECT c.id, FROM c", "SC1001", "near 'FROM'"),
    error("syntax_parameter_in_from", "SELECT * FROM @modules", "SC1001", "near '@modules'"),
    error("syntax_value_keyword_property", "SELECT c.value FROM c", "SC1001", "near 'value'"),
    error("syntax_unterminated_string", "SELECT * FROM c WHERE c.x = 'abc", "SC1001", "Syntax error"),
    error(
        "unknown_function",
        "SELECT BADFUNC(r.age) FROM Root r",
        "SC2005",
        "'BADFUNC' is not a recognized built-in function name.",
    ),
    error(
        "function_arity",
        "SELECT * FROM Root r WHERE STARTSWITH(r.key, 'a', 'b', 'c')",
        "SC2050",
        "The STARTSWITH function requires 2 to 3 argument(s).",
    ),
    error(
        "unresolved_identifier",
        "SELECT * FROM c WHERE a = 1",
        "SC2001",
        "Identifier 'a' could not be resolved.",
    ),
    error(
        "unqualified_property",
        "SELECT id FROM products p",
        "SC2001",
        "Identifier 'id' could not be resolved.",
    ),
    error("original_name_after_alias", "SELECT products.id FROM products p", "SC2001", "'products'"),
    error("select_alias_in_order_by", "SELECT c.n AS x FROM c ORDER BY x", "SC2001", "Identifier 'x'"),
    error(
        "duplicate_alias",
        "SELECT * FROM c JOIN c IN c.tags",
        "SC2021",
        "The input set name or alias 'c' is specified more than once in the FROM clause.",
    ),
    error(
        "select_star_group_by",
        "SELECT * FROM c GROUP BY c.pk",
        "SC2041",
        "'SELECT *' is not allowed with GROUP BY.",
    ),
    error(
        "ungrouped_property",
        "SELECT c.name, COUNT(1) AS n FROM c GROUP BY c.pk",
        "SC2102",
        "Property reference 'c.name' is invalid in the select list",
    ),
    error(
        "nested_aggregate",
        "SELECT VALUE MAX(MIN(r)) From r",
        "SC2101",
        "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.",
    ),
    error(
        "top_too_large",
        "SELECT TOP 4294967296 c.name FROM c",
        "SC2060",
        "The count value provided for a TOP clause must be an integer.",
    ),
    error(
        "offset_too_large",
        "SELECT c.name FROM c OFFSET 4294967296 LIMIT 10",
        "SC2062",
        "The OFFSET count value exceeds the maximum allowed value.",
    ),
    error(
        "limit_too_large",
        "SELECT c.name FROM c OFFSET 1 LIMIT 4294967296",
        "SC2061",
        "The LIMIT count value exceeds the maximum allowed value.",
    ),
    error(
        "order_by_function",
        'SELECT * FROM root WHERE root.key = "key" ORDER BY LOWER(root.field) ASC',
        2206,
        "ORDER BY item expression could not be mapped to a document path.",
    ),
    error(
        "subquery_order_by",
        "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags ORDER BY t) FROM c",
        "SC2202",
        "'ORDER BY' is not supported in subqueries.",
    ),
    error(
        "subquery_top",
        "SELECT VALUE ARRAY(SELECT TOP 1 VALUE t FROM t IN c.tags) FROM c",
        "SC2203",
        "'TOP' is not supported in subqueries.",
    ),
    error(
        "subquery_offset_limit",
        "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags OFFSET 0 LIMIT 1) FROM c",
        "SC2204",
        "'OFFSET LIMIT' clause is not supported in subqueries.",
    ),
    # decision (§10.5): a referenced but unsupplied parameter is an unresolved identifier.
    error("missing_parameter", "SELECT * FROM c WHERE c.pk = @nope", "SC2001", "'@nope'"),
]
