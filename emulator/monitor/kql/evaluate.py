"""A parsed KQL query run over a table's rows: each operator checked, then streamed.

Rows of a *weighted* table stand for many requests each (a minute's aggregate, with its request count
in `WEIGHT`). On them the stand-in answers only what the aggregates make exact: `where`/`extend`/
`project` on dimensions and time, then `summarize` with count() (the sum of the weights), sum() of a
measure (the sum of the minutes' sums), avg() (their ratio), max/min/dcount/arg_max over dimensions, or
`count`. Everything else before a summarize (a filter or max on RequestCharge, `take`, `top`, `order`,
returning the rows themselves) would answer about minutes instead of requests, so it is refused with
the service's 400 shape and a message saying why. After a summarize the rows are ordinary rows.
A `join` takes ordinary rows on both sides (`join`: why weighted ones are refused); a `let` name or a
join's right side is planned by `tabular`, which hands `plan` its `resolve`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from emulator.monitor.kql.ast import Call, Col, Expr, Operator, Star, not_supported, semantic
from emulator.monitor.kql.expr import (
    ADDITIVE,
    AGGREGATES,
    NONE,
    NUMERIC,
    PER_MINUTE,
    Column,
    Compiled,
    Row,
    Scope,
    compile_expr,
    constant,
)
from emulator.monitor.kql.join import left_filters, plan_join
from emulator.monitor.kql.shape import WEIGHT, Resolve, Shape, Stage, Tick

__all__ = ["WEIGHT", "Shape", "check_answer", "plan", "run"]  # WEIGHT and Shape: also `tables`' (defined in `shape`)


def _refuse(what: str) -> Exception:
    return not_supported(f"{what}: {PER_MINUTE} (summarize them first: count(), sum(RequestCharge) by ...)")


def _name_of(expr: Expr, fallback: str) -> str:
    """The column name Kusto derives for an unnamed expression: the (first) column it is about."""
    if isinstance(expr, Col):
        return expr.name
    if isinstance(expr, Call) and expr.args:
        for arg in expr.args:
            if isinstance(arg, Col | Call):
                return _name_of(arg, fallback)
    return fallback


def _unique(name: str, taken: dict[str, Any]) -> str:
    if name not in taken:
        return name
    n = 1
    while f"{name}{n}" in taken:
        n += 1
    return f"{name}{n}"


def plan(
    operators: Iterable[Operator], shape: Shape, now: dt.datetime, resolve: Resolve | None = None, final: bool = True
) -> Shape:
    """Check every operator in order (KqlError on the first refusal) and collect the stages. `resolve`
    plans a join's right side; `final`: the rows are the answer (not a `let` body or a join's side, which
    may still be weighted for the operators that take them)."""
    queue = list(operators)
    while queue:
        op = queue.pop(0)
        scope = Scope(shape.columns, now, op.kind, shape.resolution)
        if op.kind == "where":
            assert op.expr is not None
            pred = compile_expr(op.expr, scope)
            if pred.type != "bool":
                raise semantic(f"'where' operator: the predicate is a {pred.type}, not a bool", "SEM0025")
            if shape.weighted and pred.measure != NONE:
                raise _refuse("'where' on a per-request value such as RequestCharge")
            shape.stages.append(_filter(pred))
        elif op.kind in ("project", "extend"):
            _project(op, shape, scope)
        elif op.kind == "summarize":
            _summarize(op, shape, scope)
        elif op.kind in ("take", "top", "order"):
            if shape.weighted:
                raise _refuse(f"'{op.kind}' before a summarize")
            _ordering(op, shape, scope, now)
        elif op.kind == "count":
            if shape.weighted and not shape.weight_known:
                raise not_supported("count: this table's rows carry no request count in the ruscope stand-in")
            shape.stages.append(_count(shape.weighted))
            shape.columns, shape.weighted = {"Count": Column("long")}, False
        elif op.kind == "join":
            assert op.join is not None and resolve is not None
            plan(left_filters(op.join, queue, shape.columns), shape, now, final=False)
            plan_join(op.join, shape, resolve, now)
    return check_answer(shape) if final else shape


def check_answer(shape: Shape) -> Shape:
    """`shape` as a query's answer: refused while its rows are still per-minute cells."""
    if shape.weighted:
        raise _refuse("returning a log table's rows")
    return shape


def _w(row: Row) -> Any:
    weight = row[WEIGHT]
    if weight is None:  # a key in a minute's top-N by RU whose request count was not kept
        raise not_supported("count: a row of this table carries no request count in the ruscope stand-in")
    return weight


def _count(weighted: bool) -> Stage:
    return lambda rows, tick: iter([{"Count": sum(_w(r) if weighted else 1 for r in rows)}])


def _filter(pred: Compiled) -> Stage:
    test = pred.fn
    return lambda rows, tick: (r for r in rows if test(r))


def _project(op: Operator, shape: Shape, scope: Scope) -> None:
    out: dict[str, Column] = {} if op.kind == "project" else dict(shape.columns)
    fns: list[tuple[str, Callable[[Row], Any]]] = []
    for i, (name, expr) in enumerate(op.items):
        compiled = compile_expr(expr, scope)
        if compiled.measure not in (NONE, ADDITIVE) and shape.weighted:
            raise _refuse(f"'{op.kind}' computing from a per-request value")
        column = name or _name_of(expr, f"Column{i + 1}")
        out[column] = Column(compiled.type, compiled.measure == ADDITIVE)
        fns.append((column, compiled.fn))
    keep = op.kind == "extend"

    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        for r in rows:
            new = dict(r) if keep else ({WEIGHT: r[WEIGHT]} if WEIGHT in r else {})
            for column, fn in fns:
                new[column] = fn(r)
            yield new

    shape.columns = out
    shape.stages.append(stage)


def _sort_key(value: Any, descending: bool) -> tuple[int, Any]:
    # nulls last when descending, first when ascending (Kusto's defaults)
    if value is None:
        return (0 if descending else -1, 0)
    return (1 if descending else 0, value)


def _ordering(op: Operator, shape: Shape, scope: Scope, now: dt.datetime) -> None:
    limit: int | None = None
    if op.kind in ("take", "top"):
        assert op.expr is not None
        value = constant(op.expr, now)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise semantic(f"'{op.kind}' operator: the row count must be a non-negative long", "SEM0025")
        limit = value
    keys = [(compile_expr(e, scope).fn, desc) for e, desc in op.keys]

    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        listed = list(rows) if keys else rows
        if keys:
            assert isinstance(listed, list)
            for fn, desc in reversed(keys):  # the key is computed once a row: the deadline is checked there

                def key(r: Row, fn: Callable[[Row], Any] = fn, desc: bool = desc) -> tuple[int, Any]:
                    tick()
                    return _sort_key(fn(r), desc)

                listed.sort(key=key, reverse=desc)
        for i, r in enumerate(listed):
            if limit is not None and i >= limit:
                return
            yield r

    shape.stages.append(stage)


@dataclass
class _Agg:
    """One aggregate's output columns, a fresh state per group, and how a row updates it."""

    columns: dict[str, Column]
    start: Callable[[], list[Any]]
    add: Callable[[list[Any], Row], None]
    finish: Callable[[list[Any]], list[Any]]


def _summarize(op: Operator, shape: Shape, scope: Scope) -> None:
    out: dict[str, Column] = {}
    by: list[tuple[str, Callable[[Row], Any]]] = []
    for i, (name, expr) in enumerate(op.by):
        compiled = compile_expr(expr, scope)
        if compiled.measure != NONE and shape.weighted:
            raise _refuse("'summarize ... by' a per-request value")
        column = _unique(name or _name_of(expr, f"Column{i + 1}"), out)
        out[column] = Column(compiled.type)
        by.append((column, compiled.fn))
    aggs = []
    for name, expr in op.items:  # one at a time, so a repeated name gets a suffix as in Kusto
        aggs.append(_aggregate(name, expr, shape, scope, out))
        out.update(aggs[-1].columns)
    groups_fns = [fn for _, fn in by]
    by_names = [n for n, _ in by]
    grand_total = not by

    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        groups: dict[tuple[Any, ...], list[list[Any]]] = {}
        for r in rows:
            key = tuple(fn(r) for fn in groups_fns)
            states = groups.get(key)
            if states is None:
                states = groups[key] = [a.start() for a in aggs]
            for agg, state in zip(aggs, states, strict=True):
                agg.add(state, r)
        if grand_total and not groups:
            groups[()] = [a.start() for a in aggs]
        names = [*by_names, *(c for a in aggs for c in a.columns)]
        for key, states in groups.items():
            values = [*key, *(v for a, s in zip(aggs, states, strict=True) for v in a.finish(s))]
            yield dict(zip(names, values, strict=True))

    shape.columns, shape.weighted = out, False
    shape.stages.append(stage)


def _aggregate(name: str | None, expr: Expr, shape: Shape, scope: Scope, taken: dict[str, Column]) -> _Agg:
    if not isinstance(expr, Call) or expr.name not in AGGREGATES:
        raise not_supported("summarize: the ruscope stand-in evaluates bare aggregate calls (sum(x), count(), ...)")
    fn_name, args = expr.name, expr.args
    if fn_name in ("arg_max", "arg_min"):
        return _arg_extreme(name, expr, shape, scope, taken)
    if fn_name == "sumif":
        return _sumif(name, expr, shape, scope, taken)
    if fn_name == "dcountif":
        return _dcountif(name, expr, shape, scope, taken)
    if fn_name == "count" and args or fn_name != "count" and len(args) != 1:
        raise semantic(f"'{fn_name}' takes {'no' if fn_name == 'count' else 'one'} argument", "SEM0219")
    arg = compile_expr(args[0], scope) if args else None
    column = _unique(name or (f"{fn_name}_" + (_name_of(args[0], "") if args else "")), taken)
    weighted, known = shape.weighted, shape.weight_known
    if weighted and fn_name in ("count", "countif", "avg") and not known:
        raise not_supported(f"{fn_name}(): this table's rows carry no request count in the ruscope stand-in")
    if (
        arg is not None
        and weighted
        and arg.measure != NONE
        and not (fn_name in ("sum", "avg") and arg.measure == ADDITIVE)
    ):
        raise _refuse(f"{fn_name}() of a per-request value")
    if arg is not None and fn_name in ("sum", "avg") and arg.type not in NUMERIC:
        raise semantic(f"{fn_name}(): expects a numeric argument, not {arg.type}", "SEM0219")
    if fn_name == "countif" and arg is not None and arg.type != "bool":
        raise semantic("countif(): expects a bool predicate", "SEM0219")
    if weighted and fn_name == "sum" and arg is not None and arg.measure == NONE and not known:
        raise not_supported("sum() of a dimension: this table's rows carry no request count in the ruscope stand-in")
    get = arg.fn if arg is not None else (lambda r: None)
    scale = weighted and not (arg is not None and arg.measure == ADDITIVE)  # count requests, not rows
    return _simple(fn_name, column, arg.type if arg else "long", get, weighted, scale)


def _sumif(name: str | None, expr: Call, shape: Shape, scope: Scope, taken: dict[str, Column]) -> _Agg:
    """`sumif(expr, predicate)`: sum() of the rows whose predicate holds (0 where none does, as countif);
    on weighted rows the predicate may read dimensions only, as a `where` before `sum`."""
    if len(expr.args) != 2:
        raise semantic("'sumif' takes two arguments: sumif(expr, predicate)", "SEM0219")
    predicate = compile_expr(expr.args[1], scope)
    if predicate.type != "bool":
        raise semantic("sumif(): expects a bool predicate", "SEM0219")
    if shape.weighted and predicate.measure != NONE:
        raise _refuse("sumif() with a predicate on a per-request value")
    summed = _aggregate(
        name or f"sumif_{_name_of(expr.args[0], '')}", Call("sum", (expr.args[0],)), shape, scope, taken
    )
    test, add = predicate.fn, summed.add

    def add_if(s: list[Any], r: Row) -> None:
        if test(r):
            add(s, r)

    return _Agg(summed.columns, summed.start, add_if, lambda s: [s[0]])


def _simple(fn_name: str, column: str, arg_type: str, get: Callable[[Row], Any], weighted: bool, scale: bool) -> _Agg:
    def weight(r: Row) -> Any:
        return _w(r) if weighted else 1

    if fn_name in ("count", "countif"):
        cond = fn_name == "countif"

        def add_count(s: list[Any], r: Row) -> None:
            if not cond or get(r):
                s[0] += weight(r)

        return _Agg({column: Column("long")}, lambda: [0], add_count, lambda s: [int(s[0])])
    if fn_name in ("sum", "avg"):
        need_weight = scale or fn_name == "avg"

        def add_sum(s: list[Any], r: Row) -> None:
            x = get(r)
            if x is not None:
                w = weight(r) if need_weight else 1
                s[0] += x * w if scale else x
                s[1] += w

        kind = "real" if arg_type == "real" or fn_name == "avg" else "long"
        if fn_name == "sum":
            return _Agg({column: Column(kind)}, lambda: [0, 0], add_sum, lambda s: [s[0] if s[1] else None])
        return _Agg({column: Column(kind)}, lambda: [0, 0], add_sum, lambda s: [s[0] / s[1] if s[1] else None])
    if fn_name == "dcount":

        def add_distinct(s: list[Any], r: Row) -> None:
            x = get(r)
            if x is not None:
                s[0].add(x)

        return _Agg({column: Column("long")}, lambda: [set()], add_distinct, lambda s: [len(s[0])])
    bigger = fn_name == "max"

    def add_extreme(s: list[Any], r: Row) -> None:
        x = get(r)
        if x is not None and (s[0] is None or (x > s[0] if bigger else x < s[0])):
            s[0] = x

    return _Agg({column: Column(arg_type)}, lambda: [None], add_extreme, lambda s: [s[0]])


def _arg_extreme(name: str | None, expr: Call, shape: Shape, scope: Scope, taken: dict[str, Column]) -> _Agg:
    if name is not None or len(expr.args) < 2:
        raise not_supported(f"{expr.name}: the ruscope stand-in takes {expr.name}(column, columns...) unnamed")
    target = compile_expr(expr.args[0], scope)
    picks: list[tuple[str, Compiled]] = [(_unique(_name_of(expr.args[0], "max"), taken), target)]
    for i, arg in enumerate(expr.args[1:]):
        if isinstance(arg, Star):
            for col, kind in shape.columns.items():
                if not kind.unbacked and col not in taken and col not in {p for p, _ in picks}:
                    picks.append((col, compile_expr(Col(col), scope)))
            continue
        picks.append((_unique(_name_of(arg, f"Column{i + 1}"), taken), compile_expr(arg, scope)))
    if shape.weighted and any(c.measure != NONE for _, c in picks):
        raise _refuse(f"{expr.name}() returning a per-request value")
    bigger, key, fns = expr.name == "arg_max", target.fn, [c.fn for _, c in picks]

    def add(s: list[Any], r: Row) -> None:
        x = key(r)
        if x is not None and (s[0] is None or (x > s[0] if bigger else x < s[0])):
            s[0], s[1] = x, [fn(r) for fn in fns]

    return _Agg(
        {n: Column(c.type) for n, c in picks},
        lambda: [None, [None] * len(fns)],
        add,
        lambda s: list(s[1]),
    )


def _dcountif(name: str | None, expr: Call, shape: Shape, scope: Scope, taken: dict[str, Column]) -> _Agg:
    """dcountif(x, predicate): the distinct values of x among the rows the predicate keeps (R45's throttled
    operations); exact, as dcount is here."""
    if len(expr.args) != 2:
        raise semantic("'dcountif' takes two arguments", "SEM0219")
    value, cond = (compile_expr(arg, scope) for arg in expr.args)
    if cond.type != "bool":
        raise semantic("dcountif(): expects a bool predicate", "SEM0219")
    if shape.weighted and (value.measure != NONE or cond.measure != NONE):
        raise _refuse("dcountif() of a per-request value")
    get, test = value.fn, cond.fn

    def add(s: list[Any], r: Row) -> None:
        x = get(r)
        if x is not None and test(r):
            s[0].add(x)

    column = _unique(name or f"dcountif_{_name_of(expr.args[0], '')}", taken)
    return _Agg({column: Column("long")}, lambda: [set()], add, lambda s: [len(s[0])])


def run(shape: Shape, rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
    """The planned stages applied to the table's rows, lazily; `tick` is called for every row each stage
    takes and every sort key (a stage after a summarize or a sort works on rows the table no longer
    yields: its time counts against the deadline too)."""
    for stage in shape.stages:
        rows = stage(_ticking(rows, tick), tick)
    return rows


def _ticking(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
    for r in rows:
        tick()
        yield r
