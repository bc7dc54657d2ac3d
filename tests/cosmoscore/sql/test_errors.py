"""Compile errors: codes, exact wording and locations, as recorded from the service compiler."""

from __future__ import annotations

import json

import pytest

from cosmoscore.sql import SqlError, execute, parse_query

GROUP_BY_JOIN = """
                SELECT c.name, s.score, s.repeat, Count(1) AS count
                FROM c
                JOIN (
                    SELECT score, Count(1) AS repeat
                    FROM score IN c.scores
                    GROUP BY score
                ) s
                GROUP BY c.name"""


def error_of(text: str) -> SqlError:
    with pytest.raises(SqlError) as info:
        parse_query(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "code", "message", "span"),
    [
        # plan:Top, plan:OffsetLimit, plan:Negative
        ("SELECT TOP -1 c.name FROM c", "SC1001", "Syntax error, incorrect syntax near '-'.", (11, 12)),
        (
            "SELECT c.name FROM c OFFSET -1 LIMIT 10",
            "SC1001",
            "Syntax error, incorrect syntax near '-'.",
            (28, 29),
        ),
        (
            "SELECT c.name FROM c OFFSET 10 LIMIT -1",
            "SC1001",
            "Syntax error, incorrect syntax near '-'.",
            (37, 38),
        ),
        (
            "SELECT TOP 4294967296 c.name FROM c",
            "SC2060",
            "The count value provided for a TOP clause must be an integer.",
            (11, 21),
        ),
        (
            "SELECT c.name FROM c OFFSET 4294967296 LIMIT 10",
            "SC2062",
            "The OFFSET count value exceeds the maximum allowed value.",
            (28, 38),
        ),
        (
            "SELECT BADFUNC(r.age) FROM Root r",
            "SC2005",
            "'BADFUNC' is not a recognized built-in function name.",
            (7, 14),
        ),
        (
            "\n                SELECT *\n                FROM c\n                GROUP BY c.age",
            "SC2041",
            "'SELECT *' is not allowed with GROUP BY.",
            (24, 25),
        ),
        (
            GROUP_BY_JOIN,
            "SC2102",
            "Property reference 's.score' is invalid in the select list because it is not "
            "contained in either an aggregate function or the GROUP BY clause.",
            (32, 39),
        ),
        # tapir#515: a parameter as the container name
        ("SELECT * FROM @modules", "SC1001", "Syntax error, incorrect syntax near '@modules'.", (14, 22)),
        ("SELECT c.name AS Value FROM c", "SC1001", "Syntax error, incorrect syntax near 'Value'.", (17, 22)),
        ("SELECT c.Group FROM c", "SC1001", "Syntax error, incorrect syntax near 'Group'.", (9, 14)),
        ("SELECT * FROM c WHERE x = 1", "SC2001", "Identifier 'x' could not be resolved.", (22, 23)),
        (
            "SELECT * FROM c JOIN c IN c.tags",
            "SC2021",
            "The input set name or alias 'c' is specified more than once in the FROM clause.",
            (21, 32),
        ),
    ],
)
def test_error_code_message_and_location(text: str, code: str, message: str, span: tuple[int, int]) -> None:
    err = error_of(text)
    assert (err.code, err.message, (err.start, err.end)) == (code, message, span)


def test_end_of_input_is_sc1002() -> None:
    """cosmos-errors-and-stats.md §1.4: SC1002 "Syntax error, unexpected end-of-file.", at the end."""
    err = error_of("SELECT * FROM  ")
    assert (err.code, err.message, err.start, err.end) == ("SC1002", "Syntax error, unexpected end-of-file.", 13, 13)


def test_trailing_comma_before_from() -> None:
    assert error_of("SELECT c.a, FROM c").message == "Syntax error, incorrect syntax near 'FROM'."


def test_arity_messages() -> None:
    assert error_of("SELECT VALUE STARTSWITH('a')").message == "The STARTSWITH function requires 2 to 3 argument(s)."
    assert error_of("SELECT VALUE CONCAT('a')").message == "The CONCAT function requires at least 2 argument(s)."
    assert error_of("SELECT VALUE LOWER()").message == "The LOWER function requires 1 argument(s)."


def test_service_message_layout_d() -> None:
    err = error_of("SELECT TOP -1 c.name FROM c")
    assert err.to_service_message() == (
        '{"errors":[{"severity":"Error","location":{"start":11,"end":12},"code":"SC1001",'
        '"message":"Syntax error, incorrect syntax near \'-\'."}]}'
    )


def test_order_by_non_path_has_numeric_code_and_no_location() -> None:
    err = error_of('SELECT * FROM root WHERE root.key = "key" ORDER BY LOWER(root.field) ASC')
    assert json.loads(err.to_service_message()) == {
        "errors": [
            {
                "severity": "Error",
                "code": 2206,
                "message": "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.",
            }
        ]
    }


def test_legacy_form_without_code() -> None:
    assert (
        SqlError(None, "Compositions of aggregates and other expressions are not allowed.").to_service_message()
        == '{"Errors":["Compositions of aggregates and other expressions are not allowed."]}'
    )


def test_subquery_restrictions() -> None:
    assert error_of("SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.x ORDER BY t) FROM c").code == "SC2202"
    assert error_of("SELECT VALUE ARRAY(SELECT TOP 1 VALUE t FROM t IN c.x) FROM c").code == "SC2203"
    assert error_of("SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.x OFFSET 0 LIMIT 1) FROM c").code == "SC2204"


def test_nested_aggregates() -> None:
    err = error_of("SELECT VALUE MAX(MIN(r)) From r")
    assert err.code == "SC2101"


def test_unknown_parameter_is_reported_at_execution() -> None:
    with pytest.raises(SqlError) as info:
        execute(parse_query("SELECT * FROM c WHERE c.pk = @nope"), [{"pk": 1}], {"@other": 1})
    assert (info.value.code, info.value.message) == ("SC2001", "Identifier '@nope' could not be resolved.")
    assert (info.value.start, info.value.end) == (29, 34)


def test_parameter_count_must_be_a_non_negative_integer() -> None:
    with pytest.raises(SqlError) as info:
        execute(parse_query("SELECT TOP @n * FROM c"), [], {"@n": "5"})
    assert info.value.code == "SC2060"
