"""What an index can look up for a query: the WHERE conjuncts that bound one document path by constants.

A probe is a necessary condition on the documents a query can match: a row passes WHERE only if every
conjunct of a root AND is true (cosmos-sql-semantics §2.1), so the documents whose value at the probe's
path satisfies it are a superset of the matches. An index answers the probe; the query still runs its
whole WHERE over those documents, so results never depend on the probe being exact.

Recognised conjuncts, with `p` a path under the container's alias and constants literals or parameters:
`p = v` and `p IN (v, ...)` with primitive constants (null, booleans, numbers, strings; type-strict
equality, `hash_key`), `p < v` / `<=` / `>` / `>=` and `p BETWEEN lo AND hi` with a number or string
(comparisons across types are undefined, so only values of the constant's type can pass), and
`STARTSWITH(p, 'prefix')` (case-sensitive). Range probes on one path are intersected.

`ordered_scan` names a query whose rows an index can hand over already in order: one ORDER BY path, a
bound on the rows (TOP, or OFFSET + LIMIT), and a WHERE that is absent, `true` (what the SDK sends on an
ORDER BY fan-out's first page) or range bounds on that same path (its later pages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import ast as a
from .checks import has_aggregate, select_exprs
from .errors import SqlError
from .filters import chain_operands, path_equality
from .scope import constant, constants_context, path_of
from .values import RANK_NUMBER, RANK_STRING, hash_key, is_number, rank

Steps = tuple[str | int, ...]
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_MAX_CHAR = 0x10FFFF
MAX_KEYS = 1_000  # a longer IN list is not a lookup: its per-key searches would cost more than the scan


@dataclass(frozen=True)
class Bound:
    value: Any
    inclusive: bool


@dataclass(frozen=True)
class Probe:
    """Documents whose value at `steps` is one of `keys` (hash_key of each constant), or, with `keys`
    None, a value of type `rank` between `low` and `high` (None: unbounded on that side)."""

    steps: Steps
    keys: frozenset[Any] | None = None
    rank: int = 0
    low: Bound | None = None
    high: Bound | None = None

    @property
    def is_range(self) -> bool:
        return self.keys is None


@dataclass(frozen=True)
class OrderedScan:
    """The first `limit` rows of an ORDER BY on `steps`, among the documents within `bounds` (one range per
    type; bounds of two types leave nothing)."""

    steps: Steps
    descending: bool
    limit: int
    bounds: tuple[Probe, ...]


def ordered_scan(query: a.Query, params: Mapping[str, Any]) -> OrderedScan | None:
    """The index-ordered form of a bounded single-path ORDER BY over plain documents, else None."""
    select = query.select
    if len(query.sources) != 1 or len(query.order_by) != 1 or query.group_by or select.distinct:
        return None
    alias = documents_alias(query)
    if alias is None or any(has_aggregate(e) for e in select_exprs(select)):
        return None
    ctx = constants_context(params)
    try:
        limit = row_bound(query, ctx)
        item = query.order_by[0]
        steps = path_steps(item.expr, alias, ctx)
        bounds: list[Probe] = []
        for conjunct in chain_operands(query.where, "AND") if query.where is not None else []:
            if isinstance(conjunct, a.Literal) and conjunct.value is True:
                continue
            probe = probe_of(conjunct, alias, ctx)
            if probe is None or not probe.is_range or probe.steps != steps:
                return None  # another filter: the first rows in order need not pass it
            bounds.append(probe)
    except SqlError:  # an unresolved parameter: the query itself reports it
        return None
    if limit is None or steps is None:
        return None
    return OrderedScan(steps, item.descending, limit, tuple(_intersected(bounds)))


def row_bound(query: a.Query, ctx: Any) -> int | None:
    """At most how many rows the query returns (OFFSET + LIMIT, or TOP), if it says."""
    values = []
    for node in (query.offset or 0, query.limit, query.select.top):
        if isinstance(node, a.Param):
            node = constant(node, ctx)[1]
        values.append(node)
    offset, limit, top = values
    if offset.__class__ is not int or (limit is None and top is None):
        return None
    bounds = [offset + limit] if limit.__class__ is int else []
    bounds += [offset + top] if top.__class__ is int else []
    return min(bounds) if bounds else None


def index_probes(query: a.Query, params: Mapping[str, Any]) -> list[Probe]:
    """The probes of the WHERE clause's root conjuncts on the container alias (empty when none apply)."""
    alias = documents_alias(query)
    if query.where is None or alias is None:
        return []
    ctx = constants_context(params)
    found: list[Probe] = []
    for conjunct in chain_operands(query.where, "AND"):
        try:
            probe = probe_of(conjunct, alias, ctx)
        except SqlError:  # an unresolved parameter: the query itself reports it
            return []
        if probe is not None:
            found.append(probe)
    return [p for p in found if not p.is_range] + _intersected([p for p in found if p.is_range])


def documents_alias(query: a.Query) -> str | None:
    """The alias of the first FROM source when it is the container's documents themselves, else None."""
    if not query.sources:
        return None
    source = query.sources[0]
    coll = source.collection
    if coll.subquery is not None or coll.path or source.iterate:
        return None
    return source.alias


def _intersected(ranges: list[Probe]) -> list[Probe]:
    """Range probes with one per path and type: those on the same ones intersected."""
    merged: dict[tuple[Steps, int], Probe] = {}
    for probe in ranges:
        key = (probe.steps, probe.rank)
        merged[key] = _intersect(merged[key], probe) if key in merged else probe
    return list(merged.values())


def probe_of(node: Any, alias: str, ctx: Any) -> Probe | None:
    if isinstance(node, a.Binary) and node.op == "=":
        eq = path_equality(node, ctx)
        if eq is not None and eq[0][0] == alias:
            return Probe(eq[0][1], frozenset({hash_key(eq[1])}))
        return None
    if isinstance(node, a.Binary) and node.op in _MIRROR:
        return _comparison(node, alias, ctx)
    if isinstance(node, a.In) and not node.negated:
        return _in_list(node, alias, ctx)
    if isinstance(node, a.Between) and not node.negated:
        return _between(node, alias, ctx)
    if isinstance(node, a.Call) and node.name == "STARTSWITH" and not node.udf:
        return _starts_with(node, alias, ctx)
    return None


def path_steps(node: Any, alias: str, ctx: Any) -> Steps | None:
    path = path_of(node, ctx)
    return path[1] if path is not None and path[0] == alias and path[1] else None


def _ordered_rank(value: Any) -> int | None:
    return RANK_NUMBER if is_number(value) else RANK_STRING if value.__class__ is str else None


def _comparison(node: a.Binary, alias: str, ctx: Any) -> Probe | None:
    op, left, right = node.op, node.left, node.right
    steps = path_steps(left, alias, ctx)
    if steps is None:
        steps, op, left, right = path_steps(right, alias, ctx), _MIRROR[op], right, left
    is_const, value = constant(right, ctx)
    kind = _ordered_rank(value) if is_const else None
    if steps is None or kind is None:
        return None
    bound = Bound(value, op in ("<=", ">="))
    return Probe(steps, None, kind, low=bound if op[0] == ">" else None, high=bound if op[0] == "<" else None)


def _in_list(node: a.In, alias: str, ctx: Any) -> Probe | None:
    steps = path_steps(node.value, alias, ctx)
    if steps is None or len(node.items) > MAX_KEYS:
        return None
    keys = set()
    for item in node.items:
        is_const, value = constant(item, ctx)
        if not is_const or rank(value) > RANK_STRING:
            return None  # an array or object constant (or a non-constant): not a lookup
        keys.add(hash_key(value))
    return Probe(steps, frozenset(keys))


def _between(node: a.Between, alias: str, ctx: Any) -> Probe | None:
    steps = path_steps(node.value, alias, ctx)
    (low_const, low), (high_const, high) = constant(node.low, ctx), constant(node.high, ctx)
    if steps is None or not (low_const and high_const):
        return None
    kind = _ordered_rank(low)
    if kind is None:
        return None
    if _ordered_rank(high) != kind:
        return Probe(steps, frozenset())  # bounds of two types: comparisons across types never hold
    return Probe(steps, None, kind, Bound(low, True), Bound(high, True))


def _starts_with(node: a.Call, alias: str, ctx: Any) -> Probe | None:
    if len(node.args) not in (2, 3):
        return None
    steps = path_steps(node.args[0], alias, ctx)
    is_const, prefix = constant(node.args[1], ctx)
    if len(node.args) == 3:
        flag_const, flag = constant(node.args[2], ctx)
        if not flag_const or flag is not False:
            return None  # case-insensitive (or unknown): not a range of the ordinal order
    if steps is None or not is_const or prefix.__class__ is not str:
        return None
    if not prefix:
        return Probe(steps, None, RANK_STRING)
    last = ord(prefix[-1])
    if last == _MAX_CHAR:
        return Probe(steps, None, RANK_STRING, Bound(prefix, True))
    return Probe(steps, None, RANK_STRING, Bound(prefix, True), Bound(prefix[:-1] + chr(last + 1), False))


def _intersect(x: Probe, y: Probe) -> Probe:
    return Probe(x.steps, None, x.rank, _tighter(x.low, y.low, 1), _tighter(x.high, y.high, -1))


def _tighter(x: Bound | None, y: Bound | None, direction: int) -> Bound | None:
    """The stricter of two lower (`direction` 1) or upper (-1) bounds."""
    if x is None or y is None:
        return x or y
    if x.value == y.value:
        return Bound(x.value, x.inclusive and y.inclusive)
    return x if (x.value > y.value) == (direction == 1) else y
