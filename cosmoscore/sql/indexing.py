"""Whether a query's filter is served from the range index (documents loaded = documents output)
or forces a scan (cosmos-sql-semantics §5.8, ru-cost-model §3.3).

A predicate is index-served when it compares a document path with constants using an operator or
built-in the index supports, and `is_indexed` says the path is indexed. Anything else (UPPER/LOWER
and other no-index functions, path-to-path comparisons, arithmetic on paths, subqueries, GROUP BY)
makes the engine load documents. Array elements bound by `t IN c.tags` appear as ("tags", "[]").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from . import ast as a
from .checks import has_aggregate, select_exprs
from .functions import PREDICATE_FUNCTIONS, TYPE_CHECK_FUNCTIONS

Path = tuple[str, ...]

# Built-ins the range index serves when their first argument is a path and the rest are constants.
INDEXED_FUNCTIONS = (
    TYPE_CHECK_FUNCTIONS
    | PREDICATE_FUNCTIONS
    | {
        "ARRAY_LENGTH",
        "ROUND",
        "SUBSTRING",
        "ABS",
        "CEILING",
        "FLOOR",
        "TRUNC",
        "LEFT",
        "LENGTH",
        "IIF",
    }
)
# Index-served but may give false positives: an aggregate query falls back to a full scan.
FALSE_POSITIVE_FUNCTIONS = frozenset({"CONTAINS", "ENDSWITH", "REGEXMATCH"})


@dataclass(frozen=True)
class IndexUse:
    """`served_by_index`: loaded == output. `scan_reasons` say why not (empty when served)."""

    served_by_index: bool
    indexed_paths: tuple[Path, ...]
    unindexed_paths: tuple[Path, ...]
    scan_reasons: tuple[str, ...]


def _alias_paths(query: a.Query) -> dict[str, Path] | None:
    """Document path each alias stands for, or None if the FROM source is not the container."""
    paths: dict[str, Path] = {}
    for i, src in enumerate(query.sources):
        coll = src.collection
        if coll.subquery is not None or any(not isinstance(s, str) for s in coll.path):
            return None
        base = () if i == 0 else paths.get(coll.root or "")
        if base is None:
            return None
        path = base + cast(Path, tuple(coll.path)) + (("[]",) if src.iterate else ())  # all str: checked above
        paths[src.alias] = path
    return paths


def _doc_path(node: Any, aliases: dict[str, Path]) -> Path | None:
    steps: list[str] = []
    while isinstance(node, a.Prop) or (isinstance(node, a.Index) and isinstance(node.index, a.Literal)):
        steps.append(node.name if isinstance(node, a.Prop) else "[]")
        node = node.target
    if isinstance(node, a.Ident) and node.name in aliases:
        return aliases[node.name] + tuple(reversed(steps))
    return None


def _constant(node: Any) -> bool:
    if isinstance(node, (a.Literal, a.Param)):
        return True
    if isinstance(node, a.ArrayCtor):
        return all(_constant(i) for i in node.items)
    if isinstance(node, a.ObjectCtor):
        return all(_constant(v) for _, v in node.props)
    return False


class _Walker:
    def __init__(self, aliases: dict[str, Path], aggregate: bool) -> None:
        self.aliases = aliases
        self.aggregate = aggregate
        self.paths: list[Path] = []
        self.reasons: list[str] = []

    def predicate(self, node: Any) -> None:
        if isinstance(node, a.Binary) and node.op in ("AND", "OR"):
            self.predicate(node.left)
            self.predicate(node.right)
        elif isinstance(node, a.Unary) and node.op == "NOT":
            self.predicate(node.operand)
        elif isinstance(node, a.Binary) and node.op in ("=", "!=", "<", "<=", ">", ">="):
            self._compare(node.left, node.right)
        elif isinstance(node, (a.In, a.Between, a.Like)):
            self._compare(node.value, *(a.children(node)[1:]))
            if isinstance(node, a.Like) and self.aggregate:
                self.reasons.append("LIKE in an aggregate query")
        elif isinstance(node, a.Call):
            self._call(node)
        elif (path := _doc_path(node, self.aliases)) is not None:
            self.paths.append(path)
        elif not _constant(node):
            self.reasons.append(f"predicate {type(node).__name__} is not index-served")

    def _operand(self, node: Any) -> bool:
        """True if the node is a path or an index-served function of a path (recorded)."""
        path = _doc_path(node, self.aliases)
        if path is not None:
            self.paths.append(path)
            return True
        if isinstance(node, a.Call):
            return self._call(node)
        return False

    def _compare(self, left: Any, *others: Any) -> None:
        if not all(_constant(o) for o in others):
            if not (_constant(left) and len(others) == 1 and self._operand(others[0])):
                self.reasons.append("comparison between non-constant expressions")
            return
        if not self._operand(left) and not isinstance(left, a.Call):
            self.reasons.append("comparison on a computed expression")

    def _call(self, node: a.Call) -> bool:
        if node.name not in INDEXED_FUNCTIONS or not node.args:
            self.reasons.append(f"{node.spelled or node.name} has no index support")
            return False
        if self.aggregate and node.name in FALSE_POSITIVE_FUNCTIONS:
            self.reasons.append(f"{node.name} in an aggregate query")
        first, rest = node.args[0], node.args[1:]
        if node.name == "IIF":
            first, rest = node.args[0], ()
        if not all(_constant(r) for r in rest) or not self._operand(first):
            self.reasons.append(f"{node.spelled or node.name} over a computed expression")
            return False
        return True


def index_use(query: a.Query, is_indexed: Callable[[Path], bool]) -> IndexUse:
    """Classify the WHERE filter; ORDER BY paths are reported too but never force a scan."""
    aliases = _alias_paths(query)
    aggregate = any(has_aggregate(e) for e in select_exprs(query.select))
    walker = _Walker(aliases or {}, aggregate)
    if aliases is None and query.where is not None:
        walker.reasons.append("FROM source is not the container")
    elif query.where is not None:
        walker.predicate(query.where)
    if query.group_by:
        walker.reasons.append("GROUP BY")
    filter_paths = list(dict.fromkeys(walker.paths))
    order_paths = [p for p in (_doc_path(i.expr, aliases or {}) for i in query.order_by) if p is not None]
    unindexed = [p for p in filter_paths if not is_indexed(p)]
    reasons = walker.reasons + [f"path /{'/'.join(p)} is not indexed" for p in unindexed]
    every = list(dict.fromkeys(filter_paths + order_paths))
    indexed = tuple(p for p in every if is_indexed(p))
    return IndexUse(not reasons, indexed, tuple(p for p in every if p not in indexed), tuple(reasons))


def counts_from_index(query: a.Query, use: IndexUse) -> bool:
    """A COUNT the index answers alone (the service reports retrievedDocumentCount 0
    for it): one container source, no GROUP BY, an index-served filter, and a select list made only of
    COUNTs of constants or paths (inside array/object constructors, as the cross-partition rewrite has them)."""
    if len(query.sources) != 1 or query.sources[0].iterate or query.group_by or not use.served_by_index:
        return False
    aliases = _alias_paths(query) or {}
    pending: list[Any] = list(select_exprs(query.select))
    counts = 0
    while pending:
        node = pending.pop()
        if isinstance(node, a.Call) and node.name == "COUNT" and not node.udf:
            if not all(_constant(arg) or _doc_path(arg, aliases) is not None for arg in node.args):
                return False
            counts += 1
        elif isinstance(node, (a.ArrayCtor, a.ObjectCtor)):
            pending.extend(a.children(node))
        elif not isinstance(node, a.Literal):
            return False
    return counts > 0
