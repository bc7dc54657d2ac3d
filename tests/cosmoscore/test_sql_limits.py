"""The engine's bounds: linear LIKE, bounded RegexMatch, strings sized before they are
built, and the service's limits as 400 SqlErrors. Counted in steps or sizes, never timed."""

from __future__ import annotations

import dataclasses
import re

import pytest

from cosmoscore.sql import SqlError, bounds, execute, parse_query
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


# -- recursion and the service's limits ------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT VALUE " + "-(" * 1000 + "1" + ")" * 1000,
        "SELECT VALUE " + "ABS(" * 1000 + "1" + ")" * 1000,
        "SELECT VALUE " + "[" * 1000 + "1" + "]" * 1000,
        "SELECT VALUE " + "(SELECT VALUE " * 200 + "1" + ")" * 200,
        "SELECT VALUE " + " + ".join("1" for _ in range(2000)),
    ],
)
def test_deep_nesting_is_a_400_not_a_recursion_error(sql: str) -> None:
    with pytest.raises(SqlError, match="nested deeper than the emulator's limit of 128 levels"):
        parse_query(sql)


def test_parentheses_alone_do_not_nest() -> None:
    assert run("SELECT VALUE " + "(" * 1000 + "1" + ")" * 1000) == [1]


def test_query_text_over_512_kb_is_sc3020() -> None:
    sql = "SELECT * FROM c WHERE " + " OR ".join(f"c.n = {i}" for i in range(60000))
    assert len(sql) > 512 * 1024
    with pytest.raises(SqlError) as info:
        parse_query(sql)
    assert info.value.code == "SC3020"
    assert info.value.message == "The SQL query text exceeded the maximum limit of 524288 characters."


def test_a_long_or_chain_compiles_and_matches() -> None:
    # 5,000 terms: far beyond the interpreter's recursion limit had the chain stayed left-deep
    sql = "SELECT VALUE c.n FROM c WHERE " + " OR ".join(f"c.n = {i * 3}" for i in range(5000))
    docs = [{"n": i} for i in range(30)]
    assert run(sql, docs) == [i for i in range(30) if i % 3 == 0]


def test_read_items_shape_with_many_terms() -> None:
    """What the SDK's read_items sends: one (id AND pk) term per item, joined by OR."""
    n = 2000
    sql = "SELECT * FROM c WHERE " + " OR ".join(f"(c.id=@id{i} AND c.pk=@pk{i})" for i in range(n))
    params = {f"@id{i}": f"d{i}" for i in range(n)} | {f"@pk{i}": f"p{i % 7}" for i in range(n)}
    docs = [{"id": f"d{i}", "pk": f"p{i % 7}"} for i in range(0, 3 * n, 3)] + [{"id": "d1", "pk": "wrong"}]
    rows = run(sql, docs, params)
    assert [d["id"] for d in rows] == [f"d{i}" for i in range(0, n, 3)]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (" OR ".join(["false"] * 9 + ["true"]), True),
        (" OR ".join(["false"] * 12), False),
        (" OR ".join(["false"] * 9 + ["c.missing"]), "undefined"),
        (" OR ".join(["c.missing"] * 9 + ["true"]), True),
        (" AND ".join(["true"] * 9 + ["c.missing"]), "undefined"),
        (" AND ".join(["c.missing"] * 9 + ["false"]), False),
        (" AND ".join(["true"] * 12), True),
    ],
)
def test_balanced_chains_keep_three_valued_logic(expr: str, expected: object) -> None:
    rows = run(f"SELECT VALUE {{'v': {expr}}} FROM c", [{}])
    assert rows == ([{}] if expected == "undefined" else [{"v": expected}])


def test_more_than_ten_joins_is_a_400() -> None:
    ten = "SELECT VALUE 1 FROM c" + "".join(f" JOIN t{i} IN c.a" for i in range(10))
    assert run(ten, [{"a": [1]}]) == [1]
    with pytest.raises(SqlError, match="maximum number of joins. The allowed limit is 10"):
        parse_query(ten + " JOIN t10 IN c.a")


def test_a_limit_is_configurable_and_restored() -> None:
    """The JOIN limit "can be raised through support" (cosmos-sql-semantics.md §7): an embedder raises it with
    `bounds.configure`, which returns the settings to put back."""
    eleven = "SELECT VALUE 1 FROM c" + "".join(f" JOIN t{i} IN c.a" for i in range(11))
    previous = bounds.configure(max_joins=11)
    try:
        assert run(eleven, [{"a": [1]}]) == [1]
    finally:
        bounds.configure(**dataclasses.asdict(previous))
    with pytest.raises(SqlError, match="The allowed limit is 10"):
        parse_query(eleven)


# -- caches bounded by bytes ---------------------------------------------------------


def test_bounded_cache_evicts_by_bytes_and_keeps_the_latest() -> None:
    from cosmoscore.sql.cache import BoundedCache

    cache: BoundedCache[str] = BoundedCache(max_entries=10, max_bytes=100)
    for i in range(5):
        cache.put(i, f"v{i}", 30)
    assert len(cache) == 3 and cache.bytes == 90
    assert cache.get(0) is None and cache.get(4) == "v4"
    cache.put("huge", "h", 1000)  # larger than the budget: kept alone, so it can still be paged
    assert len(cache) == 1 and cache.get("huge") == "h"
    cache.pop("huge")
    assert len(cache) == 0 and cache.bytes == 0


def test_the_parse_cache_is_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from cosmoscore.sql import parser
    from cosmoscore.sql.cache import BoundedCache

    monkeypatch.setattr(parser, "_PARSED", BoundedCache(max_entries=1024, max_bytes=1_000_000))
    for i in range(20):
        parse_query(f"SELECT * FROM c WHERE c.n IN ({','.join(str(n) for n in range(i, i + 500))})")
    assert parser._PARSED.bytes <= 1_000_000
    assert len(parser._PARSED) < 20


# -- long OR chains of equalities filter by set lookup (same rows as term by term) ---------------

MIXED = [
    {"id": str(i), "n": v, "k": k}
    for i, (v, k) in enumerate(
        [(1, "a"), (1.0, "b"), ("1", "a"), (True, "a"), (None, "a"), (2, None), (3, "c"), (7, "a"), ({"x": 1}, "a")]
    )
] + [{"id": "missing"}]


@pytest.mark.parametrize(
    "chain",
    [
        " OR ".join(f"c.n = {v}" for v in ["1", "'1'", "true", "null", "2", "4", "5", "6", "8"]),
        " OR ".join(f"({v} = c.n AND c.k = 'a')" for v in range(10)),
        " OR ".join(f"(c.n = {v} AND c.k = {k})" for v, k in [(1, "'a'"), (2, "null")] + [(9, "'z'")] * 8),
    ],
)
def test_an_equality_chain_filters_like_its_terms(chain: str) -> None:
    fast = run(f"SELECT VALUE c.id FROM c WHERE {chain}", MIXED)
    slow = run(f"SELECT VALUE c.id FROM c WHERE NOT (NOT ({chain}))", MIXED)  # compiled term by term
    assert fast == slow and fast


def test_an_equality_chain_in_a_projection_keeps_undefined() -> None:
    chain = " OR ".join(f"c.n = {v}" for v in range(10))
    assert run(f"SELECT VALUE {{'v': {chain}}} FROM c WHERE c.id = 'missing'", MIXED) == [{}]


# -- long literal IN lists are read without the grammar (same AST) --------------------------------


def _items(n: int) -> list[str]:
    kinds = ["{i}", "-{i}", "- {i}.5", "{i}e2", "'s{i}'", '"d\\"{i}"', r"'it\'s'", "true", "FALSE", "null", "'IN (1)'"]
    return [kinds[i % len(kinds)].format(i=i) for i in range(n)]


@pytest.mark.parametrize(
    "template",
    [
        "SELECT * FROM c WHERE c.n IN ({items})",
        "SELECT * FROM c WHERE c.n NOT IN ({items}) AND c.s = 'x IN (1, 2)'",
        "SELECT VALUE [c.a in ( {items} ), c.b IN ({items})] FROM c",
        "SELECT * FROM c WHERE c.n IN ({items}, c.x)",
        "SELECT * FROM c WHERE c.n IN ({items}, 0x10)",
    ],
)
def test_long_in_lists_parse_to_the_same_query(monkeypatch: pytest.MonkeyPatch, template: str) -> None:
    from cosmoscore.sql import inlists, parser

    sql = template.format(items=", ".join(_items(200)))
    fast = parser._parse(sql)
    monkeypatch.setattr(inlists, "MIN_ITEMS", 10**9)
    slow = parser._parse(sql)
    assert fast == slow
    spans = [[n.span for n in a_walk(q.where or q.select.value)] for q in (fast, slow)]
    assert spans[0] == spans[1]


def a_walk(node):
    from cosmoscore.sql import ast

    return list(ast.walk(node))


def test_an_error_after_a_long_in_list_is_located_in_the_text_as_written() -> None:
    sql = "SELECT * FROM c WHERE c.n IN (" + ", ".join(str(i) for i in range(100)) + ") AND AND"
    with pytest.raises(SqlError) as info:
        parse_query(sql)
    assert info.value.start == sql.rindex("AND")
    bad = "SELECT * FROM c WHERE c.n IN (" + ", ".join(str(i) for i in range(100)) + ", )"
    with pytest.raises(SqlError, match="incorrect syntax near '\\)'"):
        parse_query(bad)


# -- queries run in steps give the whole run's rows and counts -------------------------------------

STEP_DOCS = [
    {"id": f"d{i}", "pk": f"p{i % 3}", "n": i % 7, "s": f"s{i % 5}", "tags": ["a", "b"][: i % 3]} for i in range(40)
]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM c WHERE c.n > 2",
        "SELECT VALUE c.id FROM c",
        "SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.n != 3",
        "SELECT VALUE COUNT(1) FROM c WHERE c.n > 2",
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT SUM(c.n) AS total, AVG(c.n) AS mean, MIN(c.s) AS lo, MAX(c.n) AS hi FROM c WHERE c.n > 0",
        "SELECT c.s, COUNT(1) AS k, MAKESET(c.n) AS ns FROM c GROUP BY c.s",
        "SELECT * FROM c ORDER BY c.n DESC, c.id",
        "SELECT c.id FROM c WHERE c.n > 1 ORDER BY c.n OFFSET 3 LIMIT 5",
        "SELECT DISTINCT VALUE c.n FROM c",
        "SELECT DISTINCT c.s FROM c WHERE c.n < 5",
        "SELECT TOP 4 c.id FROM c ORDER BY c.id DESC",
        "SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags",
        "SELECT VALUE MAX(c.missing) FROM c",
    ],
)
@pytest.mark.parametrize("size", [1, 3, 100])
def test_a_stepped_run_matches_the_whole_run(sql: str, size: int) -> None:
    from cosmoscore.sql.executor import plan_for

    whole = execute(parse_query(sql), STEP_DOCS, count_matches=True)
    steps = plan_for(parse_query(sql), None).stream(STEP_DOCS, [size])
    assert steps is not None
    done = list(steps)
    assert [row for out, _, _ in done for row in out] == whole.rows
    assert done[-1][1:] == (whole.loaded, whole.matched)


def test_early_stopping_and_subquery_sources_run_whole() -> None:
    from cosmoscore.sql.executor import plan_for

    for sql in [
        "SELECT TOP 3 * FROM c",
        "SELECT * FROM c OFFSET 2 LIMIT 3",
        "SELECT VALUE x FROM (SELECT VALUE c.n FROM c) x",
    ]:
        assert plan_for(parse_query(sql), None).stream(STEP_DOCS, [5]) is None


# -- long equality OR chains are read without the grammar (same AST, same spans) -------------------


def _chain(n: int, shape: str) -> str:
    values = ["{i}", "-{i}", "- {i}.5", "'s{i}'", '"q\\"{i}"', "true", "NULL", "@p{i}"]
    return " OR ".join(shape.format(i=i, v=values[i % len(values)].format(i=i)) for i in range(n))


CHAIN_SHAPES = [
    "SELECT * FROM c WHERE {chain}",
    "SELECT * FROM c WHERE {chain} ORDER BY c.n",
    "SELECT * FROM c WHERE c.x = 1 AND ({chain})",
    "SELECT * FROM c WHERE NOT ({chain}) OR c.y = 2",
    "SELECT VALUE ABS({chain}) FROM c",
    "SELECT VALUE (SELECT VALUE 1 FROM t IN c.tags WHERE {chain}) FROM c",
    "SELECT * FROM c WHERE {chain} AND c.z = 1",
    "SELECT * FROM c WHERE {chain} ? 1 : 2",
    "SELECT * FROM c WHERE ({chain}) = true",
]


@pytest.mark.parametrize("template", CHAIN_SHAPES)
@pytest.mark.parametrize(
    "shape", ["c.n = {v}", "(c.id = {v} AND c.pk = @k{i})", 'c["a b"].x = {v}', "(c.a = {v} AND c.b = 1 AND c.c = 2)"]
)
def test_long_equality_chains_parse_to_the_same_query(
    monkeypatch: pytest.MonkeyPatch, template: str, shape: str
) -> None:
    from cosmoscore.sql import chains, parser

    sql = template.format(chain=_chain(100, shape))
    fast = parser._parse(sql)
    monkeypatch.setattr(chains, "MIN_TERMS", 10**9)
    slow = parser._parse(sql)
    assert fast == slow
    exprs = [[n.span for n in a_walk(q.where if q.where is not None else q.select.value)] for q in (fast, slow)]
    assert exprs[0] == exprs[1]


def test_equality_chains_are_read_by_the_fast_path() -> None:
    from cosmoscore.sql.chains import extract_chains

    text = "SELECT * FROM c WHERE " + _chain(100, "(c.id = {v} AND c.pk = @k{i})")
    scanned, found = extract_chains(text)
    assert len(found) == 1 and len(scanned) == len(text)
    assert extract_chains("SELECT * FROM c WHERE " + _chain(100, "c.value = {v}"))[1] == {}  # a keyword


def test_an_error_after_a_long_chain_is_located_in_the_text_as_written() -> None:
    sql = "SELECT * FROM c WHERE (" + _chain(50, "c.n = {i}") + ") AND AND"
    with pytest.raises(SqlError) as info:
        parse_query(sql)
    assert info.value.start == sql.rindex("AND")
