"""Which partition key values a WHERE clause pins, for routing a query to its partitions.

The analysis is conservative: a predicate it cannot prove restricts the key makes the whole query
fan out. Equalities and IN lists on key paths combine through AND (intersection) and OR (union);
for a hierarchical key only a prefix from level 1 counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import ast as a
from .cache import BoundedCache, cached
from .errors import SqlError
from .scope import Context, constant, constants_context, path_of
from .values import canonical_json, deep_equal, hash_key, rank

Assignment = dict[int, Any]  # key level -> pinned value


@dataclass(frozen=True)
class KeyFilter:
    """`keys` is None when the query must fan out; otherwise each tuple is a full key or a prefix of a
    hierarchical key (an empty tuple of keys: the filter is contradictory and matches nothing)."""

    keys: tuple[tuple[Any, ...], ...] | None


UNCONSTRAINED = KeyFilter(None)


def _level(node: Any, alias: str, key_paths: Sequence[Sequence[str]], ctx: Context) -> int | None:
    path = path_of(node, ctx)
    if path is None or path[0] != alias:
        return None
    steps = list(path[1])
    return next((i for i, kp in enumerate(key_paths) if list(kp) == steps), None)


def _key_constant(node: Any, ctx: Context) -> tuple[bool, Any]:
    ok, value = constant(node, ctx)
    return (ok and 1 <= rank(value) <= 4), value


def _leaf(node: Any, alias: str, key_paths: Sequence[Sequence[str]], ctx: Context) -> list[Assignment] | None:
    if isinstance(node, a.Binary) and node.op == "=":
        for path_side, value_side in ((node.left, node.right), (node.right, node.left)):
            level = _level(path_side, alias, key_paths, ctx)
            ok, value = _key_constant(value_side, ctx)
            if level is not None and ok:
                return [{level: value}]
        return None
    if isinstance(node, a.In) and not node.negated:
        level = _level(node.value, alias, key_paths, ctx)
        values = [_key_constant(item, ctx) for item in node.items]
        if level is None or not all(ok for ok, _ in values):
            return None
        return [{level: v} for _, v in values]
    return None


def _merge(x: Assignment, y: Assignment) -> Assignment | None:
    out = dict(x)
    for level, value in y.items():
        if level in out and not deep_equal(out[level], value):
            return None
        out[level] = value
    return out


def _constraints(node: Any, alias: str, key_paths: Sequence[Sequence[str]], ctx: Context) -> list[Assignment] | None:
    """Disjunction of per-level assignments the predicate implies, or None if unknown."""
    if isinstance(node, a.Binary) and node.op == "AND":
        left = _constraints(node.left, alias, key_paths, ctx)
        right = _constraints(node.right, alias, key_paths, ctx)
        if left is None or right is None:
            return left if right is None else right
        merged = (_merge(x, y) for x in left for y in right)
        return [m for m in merged if m is not None]
    if isinstance(node, a.Binary) and node.op == "OR":
        left = _constraints(node.left, alias, key_paths, ctx)
        right = _constraints(node.right, alias, key_paths, ctx)
        return None if left is None or right is None else left + right
    return _leaf(node, alias, key_paths, ctx)


def _prefix(assignment: Assignment, levels: int) -> tuple[Any, ...]:
    out = []
    for level in range(levels):
        if level not in assignment:
            break
        out.append(assignment[level])
    return tuple(out)


_FILTERS: BoundedCache[KeyFilter] = BoundedCache(max_entries=256, max_bytes=8 * 1024 * 1024)


def partition_key_filter(
    query: a.Query, key_paths: list[list[str]], parameters: Mapping[str, Any] | None = None
) -> KeyFilter:
    """What the WHERE clause pins the partition key to (key paths split into segments); cached, since
    every page of a query routes it again (a 70,000-item IN list took 17 ms a page)."""
    try:
        params_key = canonical_json(dict(parameters or {}))
    except TypeError:
        return _partition_key_filter(query, key_paths, parameters)
    key = (query, tuple(tuple(p) for p in key_paths), params_key)
    return cached(
        _FILTERS,
        key,
        lambda: _partition_key_filter(query, key_paths, parameters),
        lambda f: 16 * len(query.text) + len(params_key) + 64 * len(f.keys or ()),
    )


def _partition_key_filter(
    query: a.Query, key_paths: list[list[str]], parameters: Mapping[str, Any] | None = None
) -> KeyFilter:
    if query.where is None or not query.sources or not key_paths:
        return UNCONSTRAINED
    first = query.sources[0]
    if first.iterate or first.collection.path or first.collection.subquery is not None:
        return UNCONSTRAINED
    ctx = constants_context(parameters or {})
    try:
        options = _constraints(query.where, first.alias, key_paths, ctx)
    except SqlError:  # an unresolved parameter: the query fails later; do not route on it
        return UNCONSTRAINED
    if options is None:
        return UNCONSTRAINED
    keys: dict[Any, tuple[Any, ...]] = {}
    for assignment in options:
        prefix = _prefix(assignment, len(key_paths))
        if not prefix:
            return UNCONSTRAINED
        keys.setdefault(hash_key(list(prefix)), prefix)
    return KeyFilter(tuple(keys.values()))
