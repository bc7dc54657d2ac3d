"""Everything after FROM, for one partition's rows: WHERE, GROUP BY and aggregates, ORDER BY, projection,
DISTINCT and OFFSET/LIMIT/TOP. `compile_tail` builds the closures once per (query, parameters);
`run_tail` streams rows through them.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, cast

from . import ast as a
from .aggregates import ACCUMULATORS, Accumulator, Count
from .checks import has_aggregate, output_names, select_exprs
from .compiler import compile_expr, is_boolean
from .errors import SqlError
from .filters import compile_filter
from .scope import Context, Fn, Scope, constant, param_value
from .values import hash_key, sort_key

U = a.UNDEFINED
Rows = Iterable[Any]
# (aggregate function, compiled argument, the argument is a defined constant)
_Spec = tuple[str, Fn, bool]


@dataclass(frozen=True)
class Tail:
    """Everything after FROM: filter, aggregate/group, sort, project, dedupe, page."""

    where: Fn | None
    where_is_bool: bool  # the filter returns only true/false/undefined: `filter()` may run it
    project: Fn | None  # row -> output value; None: SELECT * in single mode (the row itself)
    skip_undefined: bool  # SELECT VALUE drops undefined outputs
    group: Grouping | None  # aggregate/group stage producing output values
    order: Callable[[list[Any], int | None], list[Any]] | None  # (rows, keep at most) -> sorted rows
    distinct: bool
    start: int
    stop: int | None


def _projector(q: a.Query, scope: Scope, ctx: Context) -> Fn | None:
    sel = q.select
    if sel.kind == "star":
        return None if scope.single else _last_alias(scope)
    if sel.kind == "value":
        return compile_expr(sel.value, scope, ctx)
    pairs = list(zip(output_names(sel.items), (compile_expr(i.expr, scope, ctx) for i in sel.items)))

    def project(r: Any) -> dict[str, Any]:
        out = {}
        for name, fn in pairs:
            v = fn(r)
            if v is not U:
                out[name] = v
        return out

    return project


def _last_alias(scope: Scope) -> Fn:
    i = len(scope.names) - 1
    return lambda r: r[i]


def as_tuple(scope: Scope) -> Callable[[Any], tuple[Any, ...]]:
    if not scope.single:
        return lambda r: r
    if scope.names:
        return lambda r: (r,)
    return lambda r: ()


def _grouping(q: a.Query, scope: Scope, ctx: Context) -> tuple[Grouping, bool]:
    """Aggregate/group stage: rows -> output values. Returns (stage, skip_undefined)."""
    specs: list[_Spec] = []
    slot = len(scope.names)
    proj_scope = Scope(scope.names, False, slot)

    def register(call: a.Call, _: Scope) -> Fn:
        is_const, value = constant(call.args[0], ctx)
        specs.append((call.name, compile_expr(call.args[0], scope, ctx), is_const and value is not U))
        i = len(specs) - 1
        return lambda r: r[slot][i]

    agg_ctx = Context(ctx.params, ctx.subquery, register)
    project = _projector(q, proj_scope, agg_ctx)
    assert project is not None  # proj_scope is never single: SELECT * projects the last alias
    keys = [compile_expr(g, scope, ctx) for g in q.group_by]
    to_tuple = as_tuple(scope)
    empty_row = (U if scope.names else None) if scope.single else (U,) * len(scope.names)

    return Grouping(keys, specs, project, to_tuple, bool(q.group_by), empty_row), q.select.kind == "value"


@dataclass(frozen=True)
class Grouping:
    """The aggregate/group stage: rows -> output values, in one call or fed batch by batch (`start`,
    `feed`, `finish`), so a long aggregation can pause between pages."""

    keys: list[Fn]
    specs: list[_Spec]
    project: Fn
    to_tuple: Callable[[Any], tuple[Any, ...]]
    grouped: bool
    empty_row: Any

    def __call__(self, rows: Rows) -> list[Any]:
        if self.grouped:
            return self.finish(_accumulate(rows, self.keys, self.specs))
        return self.finish({None: (self.empty_row, _accumulate_all(rows, self.specs), [])})

    def start(self) -> dict[Any, Any]:
        return {}

    def feed(self, state: dict[Any, Any], rows: list[Any]) -> None:
        if self.grouped:
            _accumulate(rows, self.keys, self.specs, state)
            return
        entry = state.get(None)
        if entry is None:
            state[None] = (self.empty_row, _accumulate_all(rows, self.specs), [])
        else:
            _accumulate_all(rows, self.specs, entry[1])

    def finish(self, state: dict[Any, Any]) -> list[Any]:
        if not self.grouped and None not in state:
            state[None] = (self.empty_row, _accumulate_all([], self.specs), [])
        return [
            self.project(self.to_tuple(rep) + (tuple(acc.result() for acc in accs),))
            for rep, accs, *_ in state.values()
        ]


_Groups = dict[Any, tuple[Any, list[Accumulator], list[tuple[Callable[[Any], None], Fn]]]]


def _accumulate(rows: Rows, keys: list[Fn], specs: list[_Spec], groups: _Groups | None = None) -> _Groups:
    """Group rows by their key values (into `groups`, to continue a grouping); each group keeps its first
    row, its accumulators and their bound adders."""
    groups = {} if groups is None else groups
    single = keys[0] if len(keys) == 1 else None
    for r in rows:
        key = hash_key(single(r)) if single is not None else tuple(hash_key(k(r)) for k in keys)
        entry = groups.get(key)
        if entry is None:
            accs = [ACCUMULATORS[name]() for name, _, _ in specs]
            entry = groups[key] = (r, accs, [(acc.add, arg) for acc, (_, arg, _) in zip(accs, specs)])
        for add, arg in entry[2]:
            add(arg(r))
    return groups


def _accumulate_all(rows: Rows, specs: list[_Spec], accs: list[Accumulator] | None = None) -> list[Accumulator]:
    """One group over all rows (added to `accs`, to continue it); COUNT of a defined constant just counts rows."""
    accs = [ACCUMULATORS[name]() for name, _, _ in specs] if accs is None else accs
    if all(name == "COUNT" and const for name, _, const in specs):
        n = len(rows) if isinstance(rows, (list, tuple)) else len(list(rows))
        for acc in accs:
            cast(Count, acc).n += n
        return accs
    if len(specs) == 1:
        add, arg = accs[0].add, specs[0][1]
        for r in rows:
            add(arg(r))
        return accs
    pairs = [(acc.add, arg) for acc, (_, arg, _) in zip(accs, specs)]
    for r in rows:
        for add, arg in pairs:
            add(arg(r))
    return accs


def _sort_single(rows: list[Any], fn: Fn, desc: bool, limit: int | None) -> list[Any]:
    """One sort key: raw values when they are all numbers or all strings, else type-ranked keys; a
    TOP/LIMIT bound uses a heap (heapq.nsmallest/nlargest order ties like a stable sort)."""
    values = [fn(r) for r in rows]
    kinds = set(map(type, values))
    uniform = kinds <= {int, float} or kinds == {str}
    key = (values if uniform else [sort_key(v) for v in values]).__getitem__
    indexes = range(len(rows))
    if limit is not None and limit < len(rows):
        order = (heapq.nlargest if desc else heapq.nsmallest)(limit, indexes, key=key)
    else:
        order = sorted(indexes, key=key, reverse=desc)
    return [rows[i] for i in order]


def _orderer(q: a.Query, scope: Scope, ctx: Context) -> Callable[[list[Any], int | None], list[Any]] | None:
    if not q.order_by:
        return None
    keys = [(compile_expr(item.expr, scope, ctx), item.descending) for item in q.order_by]
    if len(keys) == 1:
        fn, desc = keys[0]
        return lambda rows, limit: _sort_single(rows, fn, desc, limit)

    def order(rows: list[Any], limit: int | None) -> list[Any]:
        if limit is not None and limit < len(rows):
            # top-k: one composite key, descending parts inverted; nsmallest keeps ties in
            # input order, as the stable sorts below do
            ranked = [
                tuple(_Descending(sort_key(fn(r))) if desc else sort_key(fn(r)) for fn, desc in keys) for r in rows
            ]
            return [rows[i] for i in heapq.nsmallest(limit, range(len(rows)), key=ranked.__getitem__)]
        decorated = [([fn(r) for fn, _ in keys], r) for r in rows]
        for i in range(len(keys) - 1, -1, -1):
            decorated.sort(key=lambda d: sort_key(d[0][i]), reverse=keys[i][1])
        return [r for _, r in decorated]

    return order


class _Descending:
    """A sort key ordered backwards, for the descending parts of a composite ORDER BY key."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __lt__(self, other: _Descending) -> bool:
        return other.key < self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and other.key == self.key


def _count(value: int | a.Param, ctx: Context, code: str, message: str) -> int:
    if isinstance(value, a.Param):
        number: int = param_value(value, ctx)
        if number.__class__ is not int or not 0 <= number <= 4294967295:
            raise SqlError(code, message)
        return number
    return value


def compile_tail(q: a.Query, scope: Scope, ctx: Context) -> Tail:
    where = compile_filter(q.where, scope, ctx) if q.where is not None else None
    has_agg = any(has_aggregate(e) for e in select_exprs(q.select))
    group, skip = _grouping(q, scope, ctx) if (q.group_by or has_agg) else (None, q.select.kind == "value")
    project = None if group else _projector(q, scope, ctx)
    start = 0
    if q.offset is not None:
        start = _count(q.offset, ctx, "SC2062", "The OFFSET count value exceeds the maximum allowed value.")
    stop = None
    if q.limit is not None:
        stop = start + _count(q.limit, ctx, "SC2061", "The LIMIT count value exceeds the maximum allowed value.")
    if q.select.top is not None:
        top = _count(q.select.top, ctx, "SC2060", "The count value provided for a TOP clause must be an integer.")
        stop = start + top if stop is None else min(stop, start + top)
    order = None if group else _orderer(q, scope, ctx)
    where_bool = q.where is not None and is_boolean(q.where)
    return Tail(where, where_bool, project, skip, group, order, q.select.distinct, start, stop)


def _dedupe(values: Iterable[Any]) -> Iterator[Any]:
    seen: set[Any] = set()
    for v in values:
        key = hash_key(v)
        if key not in seen:
            seen.add(key)
            yield v


def run_tail(tail: Tail, rows: Rows, counter: list[int] | None = None) -> Iterable[Any]:
    """Apply the tail stages lazily where possible (so TOP can stop reading early); `counter[0]` counts
    the rows that pass WHERE."""
    if tail.where is not None:
        rows = filtered(tail, rows)
    if counter is not None:
        rows = counted(rows, counter)
    if tail.group is not None:
        out: Iterable[Any] = tail.group(rows)
    else:
        if tail.order is not None:
            rows = tail.order(list(rows), None if tail.distinct else tail.stop)
        project = tail.project
        out = rows if project is None else map(project, rows)
    return finish_outputs(tail, out)


def finish_outputs(tail: Tail, out: Iterable[Any]) -> Iterable[Any]:
    """The stages after projection: SELECT VALUE drops undefined, DISTINCT, OFFSET/LIMIT/TOP."""
    if tail.skip_undefined:
        out = (v for v in out if v is not U)
    if tail.distinct:
        out = _dedupe(out)
    if tail.start or tail.stop is not None:
        out = islice(out, tail.start, tail.stop)
    return out


def filtered(tail: Tail, rows: Rows) -> Rows:
    where = tail.where
    assert where is not None  # callers filter only when there is a WHERE
    if tail.where_is_bool:
        return filter(where, rows)
    return (r for r in rows if where(r) is True)


def counted(documents: Iterable[Any], counter: list[int]) -> Iterator[Any]:
    for doc in documents:
        counter[0] += 1
        yield doc
