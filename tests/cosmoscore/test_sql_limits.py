"""The engine's bounds (issue 14 §1, §5): linear LIKE, bounded RegexMatch, strings sized before they are
built, and the service's limits as 400 SqlErrors. Counted in steps or sizes, never timed."""

from __future__ import annotations

import re

import pytest

from cosmoscore.sql import SqlError, execute, parse_query
from cosmoscore.sql.patterns import like_pattern


def run(sql: str, docs: list | None = None, params: dict | None = None) -> list:
    return execute(parse_query(sql), docs or [], params).rows


def _reference_like(text: str, pattern: str) -> bool:
    """LIKE as a full-match regex (exact, but backtracking): the oracle for small inputs."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "[" and "]" in pattern[i + 1 :]:
            close = pattern.index("]", i + 1)
            out.append(pattern[i : close + 1])
            i = close + 1
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(out), text, re.DOTALL) is not None


@pytest.mark.parametrize(
    "pattern",
    ["a%c", "%b%", "a_c", "[a-c]%[^x]", "a%b%", "a%%b", "%ab", "%ab%ab", "%", "", "_%_", "%a_a%", "ab%ba"],
)
@pytest.mark.parametrize("text", ["", "a", "ab", "abc", "abab", "aba", "aXb", "abba", "aaaa", "ab\nba"])
def test_like_agrees_with_a_full_match_regex(text: str, pattern: str) -> None:
    assert like_pattern(pattern, None).matches(text) is _reference_like(text, pattern)


def test_like_with_many_wildcards_does_not_backtrack() -> None:
    # was exponential: 73.5 s per document at 4.8 KB; now a handful of segment searches
    pat = like_pattern("%foo%bar%foo%baz%", None)
    assert len(pat.segments) == 6
    assert not pat.matches("x" * 200_000)
    assert pat.matches("x" * 1000 + "foo" + "bar" + "foo" + "baz")
    assert run("SELECT VALUE c.id FROM c WHERE c.s LIKE '%foo%bar%foo%baz%'", [{"id": "1", "s": "foo" * 5000}]) == []


def test_like_with_an_escape_character() -> None:
    assert run("SELECT VALUE ['a%b' LIKE 'a!%b' ESCAPE '!', 'axb' LIKE 'a!%b' ESCAPE '!']") == [[True, False]]


@pytest.mark.parametrize("pattern", ["[z-a]", "a%[9-0]"])
def test_an_invalid_like_set_is_a_400(pattern: str) -> None:
    with pytest.raises(SqlError, match="LIKE pattern"):
        run(f"SELECT VALUE 'abc' LIKE '{pattern}'")
    with pytest.raises(SqlError, match="LIKE pattern"):
        run("SELECT VALUE c.s LIKE @p FROM c", [{"s": "a"}], {"@p": pattern})


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a*)*b", "(a|aa)+", "(x|y)*z", "(a)\\\\1", "((ab)+c)*"])
def test_regexmatch_refuses_exponential_patterns(pattern: str) -> None:
    with pytest.raises(SqlError, match="RegexMatch pattern"):
        run(f"SELECT VALUE RegexMatch(CONCAT(REPLICATE('a', 26), '!'), '{pattern}')")


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [("^a+!$", True), ("^(?:ab){2}", False), ("(a|b){2}", True), ("[ab]+!", True), ("(?i)^A", True), ("(", None)],
)
def test_regexmatch_still_runs_ordinary_patterns(pattern: str, expected: bool | None) -> None:
    rows = run(f"SELECT VALUE RegexMatch('aaa!', '{pattern}')")
    assert rows == ([] if expected is None else [expected])


def test_regexmatch_input_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    from cosmoscore.sql import bounds

    monkeypatch.setattr(bounds, "LIMITS", bounds.SqlLimits(max_regex_input_chars=10))
    assert run("SELECT VALUE RegexMatch('0123456789', '9$')") == [True]
    with pytest.raises(SqlError, match="exceeds the emulator's limit of 10 characters"):
        run("SELECT VALUE RegexMatch('0123456789x', 'x$')")


def test_replicate_is_sized_before_it_is_built() -> None:
    # 1e15 characters would exhaust memory before a check on the result
    assert run("SELECT VALUE REPLICATE('a', 1e15)") == []
    assert run("SELECT VALUE LENGTH(REPLICATE('ab', 5000))") == [10000]
    assert run("SELECT VALUE REPLICATE('ab', 5001)") == []


def test_string_builders_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    from cosmoscore.sql import bounds

    monkeypatch.setattr(bounds, "LIMITS", bounds.SqlLimits(max_string_chars=8))
    assert run("SELECT VALUE CONCAT('abcd', 'efgh')") == ["abcdefgh"]
    assert run("SELECT VALUE CONCAT('abcd', 'efgh', 'i')") == []
    assert run("SELECT VALUE 'abcde' || 'efgh'") == []
    assert run("SELECT VALUE REPLACE('aaaa', 'a', 'bbb')") == []
    assert run("SELECT VALUE REPLACE('aaaa', 'a', 'bb')") == ["bbbbbbbb"]
