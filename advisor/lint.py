"""Query lint: what in a query's text costs RU or fails, found by the same parser and routing rule the
engine serves queries with (cosmoscore.sql), before the query runs.

Pure functions, no I/O. One query: `lint_query(sql, parameters, partition_key_paths=..., indexing_policy=...)`;
a workload (the `[[queries]]` of a config, as plain values): `lint_queries([QueryToLint(...), ...])`.
Each `Finding` has a code, a severity (`error`: the service rejects the query; `warning`: it costs RU;
`info`: it may cost RU), a plain-words message, the fix, the reference it rests on and a character span.

To add a rule: a function from the parsed query (and its context) to findings, called from `lint_query`,
with its code, severity and reference in `RULES` and a test that it fires and that a near miss does not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cosmoscore.indexing import IndexPolicy
from cosmoscore.keys import split_path
from cosmoscore.sql import Query, SqlError, parse_query, partition_key_filter
from cosmoscore.sql import ast as a
from cosmoscore.sql.checks import has_aggregate, select_exprs
from cosmoscore.sql.indexing import INDEXED_FUNCTIONS

ERROR, WARNING, INFO = "error", "warning", "info"
# code -> (severity, the reference the finding rests on)
# fmt: off
RULES: dict[str, tuple[str, str]] = {
    "parse-error": (ERROR, "docs/reference/cosmos-sql-semantics.md §8.2 (compile errors)"),
    "reserved-word": (ERROR, 'docs/reference/cosmos-sql-semantics.md §1.13 (reserved words), §1.8 (c["a"] is c.a)'),
    "cross-partition-unbounded": (WARNING, "docs/reference/ru-cost-model.md Q3, Q4, H3 (per-partition minimum)"),
    "composite-index-missing": (ERROR, "docs/reference/cosmos-sql-semantics.md §1.5, §8.3; ru-cost-model.md Q11"),
    "order-by-excluded": (ERROR, "docs/reference/cosmos-sql-semantics.md §8.3"),
    "function-in-filter": (WARNING, "docs/reference/cosmos-sql-semantics.md §5.8; ru-cost-model.md Q13, Q9"),
    "computed-filter": (WARNING, "docs/reference/ru-cost-model.md §3 n_loaded, Q9; cosmoscore/sql/indexing.py"),
    "unindexed-filter": (WARNING, "docs/reference/ru-cost-model.md Q9, §3 n_loaded"),
    "negated-filter": (INFO, "docs/reference/cosmos-sql-semantics.md §5.8 (seeks: equality and IN only)"),
    "like-leading-wildcard": (WARNING, "docs/reference/cosmos-sql-semantics.md §5.8 (LIKE: full index scan), §2.3"),
}
# fmt: on
CODES = tuple(RULES)

# The keyword tokens of the service grammar (cosmos-sql-semantics.md §1.13): none may be a dotted property.
# fmt: off
RESERVED_WORDS = frozenset((
    "ALL", "AND", "ARRAY", "AS", "ASC", "BETWEEN", "BY", "DESC", "DISTINCT", "ESCAPE", "EXISTS", "FALSE",
    "FIRST", "FROM", "GROUP", "IN", "JOIN", "LAST", "LEFT", "LIKE", "LIMIT", "NOT", "NULL", "OFFSET", "OR",
    "ORDER", "RANK", "RIGHT", "SELECT", "TOP", "TRUE", "UDF", "UNDEFINED", "VALUE", "WHERE",
))
# fmt: on
ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "||", "|", "&", "^", "<<", ">>", ">>>"})
MAX_REWRITES = 20  # reserved words bracketed per query before giving up (a query has few)
Path = tuple[str, ...]


@dataclass(frozen=True)
class Finding:
    """One problem in one query. `span` is (start, end) in the linted text: the query as given, or, when
    reserved words were bracketed, the rewrite the last reserved-word finding's fix shows."""

    code: str
    severity: str
    message: str
    fix: str
    reference: str
    span: tuple[int, int] | None = None
    query: str = ""


@dataclass(frozen=True)
class QueryToLint:
    """One `[[queries]]` entry as plain values: its container's key paths and indexing policy included.
    `partition_key` is the request-option key the entry sends (then the query does not fan out)."""

    name: str
    sql: str
    parameters: Mapping[str, Any] | Sequence[Mapping[str, Any]] = field(default_factory=dict)
    partition_key_paths: Sequence[str] = ()
    indexing_policy: Mapping[str, Any] | None = None
    partition_key: Any = None


def lint_queries(queries: Iterable[QueryToLint]) -> list[Finding]:
    """Every finding of every query, each tagged with its query's name, in input order."""
    return [
        finding
        for q in queries
        for finding in lint_query(
            q.sql,
            q.parameters,
            partition_key_paths=q.partition_key_paths,
            indexing_policy=q.indexing_policy,
            partition_key=q.partition_key,
            name=q.name,
        )
    ]


def lint_query(
    sql: str,
    parameters: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    *,
    partition_key_paths: Sequence[str] = (),
    indexing_policy: Mapping[str, Any] | None = None,
    partition_key: Any = None,
    name: str = "",
) -> list[Finding]:
    """The findings of one query. `partition_key_paths` like ["/tenantId", "/sessionId"] (empty: routing is
    not judged); `indexing_policy` as the container's JSON (None: the default policy, everything indexed)."""
    params = parameter_map(parameters)
    query, findings = parse_with_brackets(sql)
    if query is not None:
        policy = IndexPolicy.from_json(dict(indexing_policy) if indexing_policy is not None else None)
        key_paths = [split_path(p) for p in partition_key_paths]
        if partition_key is None:
            findings += find_unbounded_fan_out(query, key_paths, params)
        findings += find_order_by_index_problems(query, policy)
        findings += find_filter_index_problems(query, policy, params)
    return [Finding(f.code, f.severity, f.message, f.fix, f.reference, f.span, name) for f in findings]


def _finding(code: str, message: str, fix: str, span: tuple[int, int] | None) -> Finding:
    severity, reference = RULES[code]
    return Finding(code, severity, message, fix, reference, span)


def parameter_map(parameters: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """`{"@p": 1}` or the SDK's `[{"name": "@p", "value": 1}]`, as one dict."""
    if parameters is None or isinstance(parameters, Mapping):
        return dict(parameters or {})
    return {p["name"]: p.get("value") for p in parameters}


def parse_with_brackets(sql: str) -> tuple[Query | None, list[Finding]]:
    """Parse; a reserved word used as a dotted property (`c.order`) is reported and bracketed
    (`c["order"]`) so the rest of the query is still linted; any other syntax error stops the lint."""
    findings: list[Finding] = []
    text = sql
    for _ in range(MAX_REWRITES):
        try:
            return parse_query(text), findings
        except SqlError as err:
            dot = _reserved_property_dot(text, err)
            if dot is None:
                return None, [*findings, _parse_error(text, err)]
            assert err.end is not None  # set by _reserved_property_dot
            word = text[err.start : err.end]
            text = f'{text[:dot]}["{word}"]{text[err.end :]}'
            findings.append(_reserved_finding(word, (dot, dot + len(word) + 4), text))
    return None, findings


def _reserved_property_dot(text: str, err: SqlError) -> int | None:
    """Where the `.` before a reserved word the parser stopped at is, if that is what it stopped at."""
    if err.code != "SC1001" or err.start is None or err.end is None:
        return None
    word = text[err.start : err.end]
    before = text[: err.start].rstrip()
    if word.upper() not in RESERVED_WORDS or not before.endswith(".") or not re.fullmatch(r"\w+", word):
        return None
    return len(before) - 1


def _reserved_finding(word: str, span: tuple[int, int], rewritten: str) -> Finding:
    return _finding(
        "reserved-word",
        f"'{word}' is a reserved word of the query language, so `.{word}` is a syntax error (SC1001): "
        f"the service rejects the query before it runs.",
        f'Write the property with brackets: ["{word}"] in place of .{word}. The query with brackets: {rewritten}',
        span,
    )


def _parse_error(text: str, err: SqlError) -> Finding:
    where, near = "", ""
    if err.start is not None and err.end is not None:
        where = f" (characters {err.start}-{err.end})"
        near = f" near '{text[err.start : err.end]}'" if err.end > err.start else " at the end of the query"
    span = (err.start, err.end) if err.start is not None and err.end is not None else None
    return _finding(
        "parse-error",
        f"The service rejects this query{where}: {err.code} {err.message}",
        f'Correct the syntax{near}; a property named like a keyword is written c["name"].',
        span,
    )


def find_unbounded_fan_out(query: Query, key_paths: list[list[str]], params: Mapping[str, Any]) -> list[Finding]:
    """A query no key filter routes (cosmoscore.sql.partition_key_filter) and no TOP/LIMIT bounds."""
    if not key_paths or query.select.top is not None or query.limit is not None:
        return []
    if partition_key_filter(query, key_paths, params).keys is not None:
        return []
    spelled = ", ".join("/" + "/".join(p) for p in key_paths)
    first = "c" + "".join(f".{s}" if s.upper() not in RESERVED_WORDS else f'["{s}"]' for s in key_paths[0])
    prefix = " (or a prefix from the first level of the hierarchical key)" if len(key_paths) > 1 else ""
    unset = sorted({n.name for n in a.walk(query.where) if isinstance(n, a.Param)} - set(params)) if query.where else []
    note = f" (no value given for {', '.join(unset)}, so a filter on it cannot route)" if unset else ""
    one_row = not query.group_by and any(has_aggregate(e) for e in select_exprs(query.select))
    bound = "" if one_row else "; or bound the result with SELECT TOP n or OFFSET 0 LIMIT n"
    return [
        _finding(
            "cross-partition-unbounded",
            f"No filter pins the partition key ({spelled}){note}, so the query runs in every physical partition "
            "(at least about 2.5 RU each, even where nothing matches)"
            + ("." if one_row else " and, with no TOP or OFFSET/LIMIT, pages through every match."),
            f"Filter on the key: WHERE {first} = @{key_paths[0][-1]}{prefix}{bound}.",
            query.where.span if query.where is not None else query.select.span,
        )
    ]


def find_order_by_index_problems(query: Query, policy: IndexPolicy) -> list[Finding]:
    """A multi-key ORDER BY without a matching composite index; an ORDER BY on an excluded path."""
    aliases = alias_paths(query)
    items = [(doc_path(item.expr, aliases), item) for item in query.order_by]
    if any(path is None for path, _ in items):
        return []  # not a document path: the parser's own ORDER BY rules apply
    out = [_order_excluded(path, item.span) for path, item in items if path and not policy.is_indexed(path)]
    keys = tuple((path, item.descending) for path, item in items if path is not None)
    if len(keys) >= 2 and not policy.serves_order_by(keys):
        out.append(_composite_missing(keys, query.span_of("order")))
    return out


def composite_index(keys: Sequence[tuple[Path, bool]]) -> list[dict[str, str]]:
    """The `compositeIndexes` entry an ORDER BY needs, in the JSON the SDK and ARM accept."""
    return [{"path": _policy_path(p), "order": "descending" if d else "ascending"} for p, d in keys]


def _composite_missing(keys: Sequence[tuple[Path, bool]], span: tuple[int, int] | None) -> Finding:
    entry = json.dumps(composite_index(keys))
    return _finding(
        "composite-index-missing",
        f"ORDER BY on {len(keys)} properties needs a composite index on the same paths in the same order "
        "(every direction the same or every one inverted); the indexing policy has none, so the service "
        "rejects the query, in one partition or across all of them.",
        f'Add to the indexing policy: "compositeIndexes": [{entry}]',
        span,
    )


def _order_excluded(path: Path, span: tuple[int, int]) -> Finding:
    return _finding(
        "order-by-excluded",
        f"ORDER BY on {_policy_path(path)}, a path the indexing policy excludes: the service rejects it.",
        f"Remove {_policy_path(path)} from excludedPaths (or sort on an indexed property).",
        span,
    )


def find_filter_index_problems(query: Query, policy: IndexPolicy, params: Mapping[str, Any]) -> list[Finding]:
    """Functions of a property, arithmetic on a property, negations, leading-% LIKE, unindexed paths."""
    if query.where is None:
        return []
    aliases = alias_paths(query)
    out = list(_filter_findings(query.where, aliases, params))
    seen: set[Path] = set()
    for path, span in path_nodes(query.where, aliases):
        if path not in seen and not policy.is_indexed(path):
            seen.add(path)
            out.append(_unindexed(path, span))
    return out


def _filter_findings(node: Any, aliases: Mapping[str, Path], params: Mapping[str, Any]) -> Iterator[Finding]:
    """Walk the WHERE clause; stop below a node already reported as a scan (one finding per cause)."""
    if isinstance(node, a.Call) and node.name not in INDEXED_FUNCTIONS and _has_path(node, aliases):
        yield _function_finding(node)
        return
    if isinstance(node, a.Binary) and node.op in ARITHMETIC and _has_path(node, aliases):
        yield _computed_finding(node)
        return
    negated = (isinstance(node, a.Unary) and node.op == "NOT") or (isinstance(node, a.Binary) and node.op == "!=")
    negated = negated or (isinstance(node, (a.In, a.Like, a.Between)) and node.negated)
    if negated and _has_path(node, aliases):
        yield _negated_finding(node)
    if isinstance(node, a.Like) and _has_path(node.value, aliases) and _leading_wildcard(node.pattern, params):
        yield _like_finding(node)
    for child in a.children(node):
        yield from _filter_findings(child, aliases, params)


def _leading_wildcard(pattern: Any, params: Mapping[str, Any]) -> bool:
    value = pattern.value if isinstance(pattern, a.Literal) else None
    if isinstance(pattern, a.Param):
        value = params.get(pattern.name)
    return isinstance(value, str) and value[:1] in ("%", "_", "[")


def _function_finding(node: a.Call) -> Finding:
    spelled = node.spelled or node.name
    case = node.name in ("UPPER", "LOWER")
    fix = (
        f"Compare case-insensitively with STRINGEQUALS(c.x, @v, true) or STARTSWITH(c.x, @v, true), or store a "
        f"copy of the property as {spelled}(...) returns it and filter on that copy."
        if case
        else f"Filter on the stored property itself: compute the other side in the application, or store the "
        f"value of {spelled}(...) in the document and filter on that."
    )
    return _finding(
        "function-in-filter",
        f"{spelled}(...) of a property in the filter has no index support: the engine loads and evaluates "
        "every document the other filters leave, instead of seeking the index.",
        fix,
        node.span,
    )


def _computed_finding(node: a.Binary) -> Finding:
    return _finding(
        "computed-filter",
        f"Arithmetic on a property in the filter (operator {node.op}): the index holds the stored values, "
        "not computed ones, so the engine loads documents to evaluate it.",
        "Move the arithmetic to the constant side (c.price * 2 > @x becomes c.price > @x / 2, computed by "
        "the application), or store the computed value in the document.",
        node.span,
    )


def _negated_finding(node: Any) -> Finding:
    return _finding(
        "negated-filter",
        "A negation (NOT, !=, NOT IN, NOT LIKE, NOT BETWEEN) on a property matches every other value, so "
        "the index cannot seek to it: at best the engine scans the index, and the cost grows with the "
        "number of matches.",
        "Filter on the values you want (=, IN, a range) instead of the ones you do not; for a boolean, "
        "c.done = false rather than NOT c.done.",
        node.span,
    )


def _like_finding(node: a.Like) -> Finding:
    return _finding(
        "like-leading-wildcard",
        "LIKE with a leading wildcard cannot seek the index: it is a full index scan whose cost grows with "
        "the number of distinct values of the property.",
        "For a prefix, use STARTSWITH(c.x, @prefix) or LIKE 'abc%'; for a word search, store the words in "
        "an array and use ARRAY_CONTAINS.",
        node.span,
    )


def _unindexed(path: Path, span: tuple[int, int]) -> Finding:
    return _finding(
        "unindexed-filter",
        f"The filter uses {_policy_path(path)}, which the indexing policy excludes: the engine loads every "
        "document the other filters leave (a published case: 409.51 RU unindexed against 2.98 RU indexed).",
        f"Remove {_policy_path(path)} (or its parent) from excludedPaths, or filter on an indexed property.",
        span,
    )


def alias_paths(query: Query) -> dict[str, Path]:
    """The document path each FROM/JOIN alias stands for (`t IN c.tags` -> ("tags", "[]"))."""
    paths: dict[str, Path] = {}
    for i, src in enumerate(query.sources):
        coll = src.collection
        if coll.subquery is not None or not all(isinstance(s, str) for s in coll.path):
            continue
        base = () if i == 0 else paths.get(coll.root or "")
        if base is not None:
            steps = tuple(str(s) for s in coll.path)
            paths[src.alias] = base + steps + (("[]",) if src.iterate else ())
    return paths


def doc_path(node: Any, aliases: Mapping[str, Path]) -> Path | None:
    """`c.a.b` / `c["a"]["b"]` -> ("a", "b"); an array index is "[]"; None if not a document path."""
    steps: list[str] = []
    while isinstance(node, a.Prop) or (isinstance(node, a.Index) and isinstance(node.index, a.Literal)):
        steps.append(node.name if isinstance(node, a.Prop) else "[]")
        node = node.target
    if isinstance(node, a.Ident) and node.name in aliases and (steps or aliases[node.name]):
        return aliases[node.name] + tuple(reversed(steps))
    return None


def path_nodes(node: Any, aliases: Mapping[str, Path]) -> Iterator[tuple[Path, tuple[int, int]]]:
    """The whole document paths in an expression (`c.a.b`, not also its prefix `c.a`), with spans."""
    path = doc_path(node, aliases)
    if path is not None:
        yield path, node.span
        return
    for child in a.children(node):
        yield from path_nodes(child, aliases)


def _has_path(node: Any, aliases: Mapping[str, Path]) -> bool:
    return next(path_nodes(node, aliases), None) is not None


def _policy_path(path: Path) -> str:
    """A path as an indexing policy spells it: `/a/b`, quoting a segment that is not a plain name."""
    return "".join("/" + (s if re.fullmatch(r"[A-Za-z_]\w*|\[\]", s) else json.dumps(s)) for s in path)
