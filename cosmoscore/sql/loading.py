"""What an index-served query loads, for the RU model (ru-cost-model.md §3.3, Q8, Q11, Q20).

An index hands a query its documents already filtered and, for an ORDER BY it serves, already in order,
so a bounded query (TOP n, OFFSET o LIMIT n) stops loading at o + n documents in each partition (Q20:
"OFFSET LIMIT still loads each item, including those items that are skipped"), whatever the partition
holds; Q8 measured such a load: one retrieved document, 3.19 RU. `Loading.cap` is that bound, set only
for a query that can stop there: one plain container source, a WHERE the index serves (`IndexUse`), no
aggregate, GROUP BY or DISTINCT, and every ORDER BY path indexed. Anything else loads every match (an
index-served filter) or every document (a scan), as before.

`Loading.order_without_composite`: a filter on other properties than the ORDER BY's, with no composite
index that serves the filter and the order together (the filter's equality paths first, then the ORDER BY
paths, in either direction set), which Q11 measured at 5x the charge (44.28 RU against 8.86 RU with the
composite index). The cross-partition rewrite's own conjuncts (`true`, `IS_DEFINED(payload)`) are not a
filter. `composite` is the index that would serve it, when one can (equality filters only).
`order_composite` also names the composite the query does read (index metrics, `utilization`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cosmoscore.indexing import Composite

from . import ast as a
from .checks import has_aggregate, select_exprs
from .errors import SqlError
from .filters import chain_operands
from .indexing import IndexUse
from .probes import documents_alias, path_steps, probe_of, row_bound
from .scope import constants_context

Path = tuple[str, ...]


@dataclass(frozen=True)
class Loading:
    cap: int | None = None  # documents a partition loads at most (OFFSET + LIMIT, or TOP); None: no bound
    order_without_composite: bool = False  # Q11: a filter + ORDER BY no composite index serves together
    composite: Composite | None = None  # the composite index that would serve it (equality filters only)


def loading(
    query: a.Query,
    params: Mapping[str, Any],
    use: IndexUse,
    is_indexed: Callable[[Path], bool],
    composites: tuple[Composite, ...],
) -> Loading:
    """How much of a partition an index-served query loads (see the module docstring)."""
    alias = documents_alias(query)
    if alias is None or len(query.sources) != 1 or not use.served_by_index:
        return Loading()
    ctx = constants_context(params)
    try:
        order = order_items(query, alias, ctx)
        if order is None or not all(is_indexed(path) for path, _ in order):
            return Loading()  # ORDER BY on no document path, or on an unindexed one: nothing streams in order
        need = order_composite(query, alias, ctx, order, composites) if order else OrderComposite(False, None, None)
        select = query.select
        plain = not query.group_by and not select.distinct and not any(has_aggregate(e) for e in select_exprs(select))
        return Loading(row_bound(query, ctx) if plain else None, need.missing, need.wanted)
    except SqlError:  # an unresolved parameter: the query itself reports it
        return Loading()


def order_items(query: a.Query, alias: str, ctx: Any) -> list[tuple[Path, bool]] | None:
    items = []
    for item in query.order_by:
        steps = path_steps(item.expr, alias, ctx)
        if steps is None or not all(s.__class__ is str for s in steps):
            return None
        items.append((tuple(str(s) for s in steps), item.descending))
    return items


@dataclass(frozen=True)
class OrderComposite:
    """A filter + ORDER BY against the policy's composite indexes."""

    missing: bool  # no composite index serves the filter and the order together: charged Q11's factor
    wanted: Composite | None  # the one that would (equality filters only): a potential index of the metrics
    serving: Composite | None  # the policy's composite the query reads: with its filter, or the ORDER BY alone


def order_composite(
    query: a.Query, alias: str, ctx: Any, order: list[tuple[Path, bool]], composites: tuple[Composite, ...]
) -> OrderComposite:
    """Which composite index serves a query's filter and ORDER BY together, or would (see the docstring)."""
    alone = _serving(composites, (), order) if len(order) > 1 else None
    equalities = _order_equalities(query, alias, ctx, {path for path, _ in order})
    if equalities is None:
        return OrderComposite(True, None, alone)  # no composite index serves this filter in the ORDER BY's order
    if not equalities:
        return OrderComposite(False, None, alone)
    serving = _serving(composites, equalities, order)
    if serving is not None:
        return OrderComposite(False, None, serving)
    return OrderComposite(True, tuple((p, False) for p in equalities) + tuple(order), alone)


def _order_equalities(query: a.Query, alias: str, ctx: Any, order_paths: set[Path]) -> tuple[Path, ...] | None:
    """The paths other than the ORDER BY's that the filter pins to one value; None when it also filters
    otherwise (a function, a range or an IN list on another path: not in the ORDER BY's order)."""
    equalities: list[Path] = []
    for conjunct in chain_operands(query.where, "AND") if query.where is not None else []:
        if is_rewrite_conjunct(conjunct):
            continue
        probe = probe_of(conjunct, alias, ctx)
        if probe is None:
            return None
        path = tuple(str(s) for s in probe.steps)
        if path in order_paths:
            continue  # a bound on an ORDER BY path: the same index serves it in order
        if probe.keys is None or len(probe.keys) != 1:
            return None
        equalities.append(path)
    return tuple(dict.fromkeys(equalities))


def _serving(
    composites: tuple[Composite, ...], equalities: tuple[Path, ...], order: list[tuple[Path, bool]]
) -> Composite | None:
    return next((c for c in composites if _serves(c, equalities, order)), None)


def _serves(composite: Composite, equalities: tuple[Path, ...], order: list[tuple[Path, bool]]) -> bool:
    """The equality paths lead (in any order and direction), then the ORDER BY's paths, all in its
    directions or all inverted."""
    head, tail = composite[: len(equalities)], composite[len(equalities) :]
    if {p for p, _ in head} != set(equalities) or [p for p, _ in tail] != [p for p, _ in order]:
        return False
    same = [d for _, d in tail] == [d for _, d in order]
    return same or [not d for _, d in tail] == [d for _, d in order]


def is_rewrite_conjunct(node: Any) -> bool:
    """`true` and `IS_DEFINED(...)`: what the cross-partition ORDER BY rewrite adds, not a filter."""
    if isinstance(node, a.Literal) and node.value is True:
        return True
    return isinstance(node, a.Call) and node.name == "IS_DEFINED" and not node.udf
