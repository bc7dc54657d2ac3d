"""Index metrics: the indexes a query uses and the ones that would help it, in the service's four lists
(cosmos-wire-protocol.md W71-W72; learn.microsoft.com/azure/cosmos-db/index-metrics).

- Utilized / potential single indexes: one entry per path a WHERE conjunct filters on, utilized when the
  policy indexes the path, potential when it excludes it, with the conjunct as the service prints it
  (`(ROOT.name = "Julien")`: the container alias as `ROOT`, parameters bound). A conjunct the index serves
  only in part (`CONTAINS` in an aggregate) and an ORDER BY path have an empty filter expression; one it
  does not serve at all (`UPPER(c.a) = 'A'`, `c.a = c.b`) lists no index, as the RU model charges it a scan.
- Utilized composite indexes: the policy's composite a query reads: for a multi-key ORDER BY, for a filter
  with ORDER BY (`loading.order_composite`), or for equality filters followed by a range; paths a utilized
  composite covers are not listed as single indexes too.
- Potential composite indexes: with no such composite, the one that would serve the query: the filter's
  equality paths then the ORDER BY's (Q11), or, without ORDER BY, the equality paths then each range path
  in turn (the docs' `name = ... AND age > ... AND town = ... AND timestamp > ...` example names
  `(/name ASC, /town ASC, /age ASC)` and `(/name ASC, /town ASC, /timestamp ASC)`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cosmoscore.indexing import Composite

from . import ast as a
from . import formatter as f
from .errors import SqlError
from .filters import chain_operands
from .indexing import index_use
from .loading import is_rewrite_conjunct, order_composite, order_items
from .probes import documents_alias, probe_of
from .scope import constants_context

Path = tuple[str, ...]
ROOT = "ROOT"  # how the service names the container alias in a filter expression


@dataclass(frozen=True)
class SingleIndex:
    path: Path
    filter_expression: str  # "" for an ORDER BY path or a conjunct the index cannot serve


@dataclass(frozen=True)
class Utilization:
    utilized_single: tuple[SingleIndex, ...] = ()
    potential_single: tuple[SingleIndex, ...] = ()
    utilized_composite: tuple[Composite, ...] = ()
    potential_composite: tuple[Composite, ...] = ()


def index_utilization(
    query: a.Query, params: Mapping[str, Any], is_indexed: Callable[[Path], bool], composites: tuple[Composite, ...]
) -> Utilization:
    """A query's index metrics under a policy (see the module docstring)."""
    singles = _singles(query, params, is_indexed)
    try:
        used, potential = _composites(query, params, composites)
    except SqlError:  # an unresolved parameter: the query itself reports it
        used, potential = (), ()
    covered = {path for composite in used for path, _ in composite}
    return Utilization(
        tuple(s for s, indexed in singles if indexed and s.path not in covered),
        tuple(s for s, indexed in singles if not indexed),
        used,
        potential,
    )


def _conjuncts(query: a.Query) -> list[Any]:
    """The root AND's operands that filter (not the cross-partition rewrite's own `true`, `IS_DEFINED`)."""
    if query.where is None:
        return []
    return [c for c in chain_operands(query.where, "AND") if not is_rewrite_conjunct(c)]


def _singles(
    query: a.Query, params: Mapping[str, Any], is_indexed: Callable[[Path], bool]
) -> list[tuple[SingleIndex, bool]]:
    """(entry, indexed) for each path of each filtering conjunct, then for each ORDER BY path."""
    found: dict[SingleIndex, bool] = {}
    for conjunct in _conjuncts(query):
        alone = dataclasses.replace(query, where=conjunct, group_by=(), order_by=())
        use = index_use(alone, is_indexed)
        text = _service_text(conjunct, query, params) if index_use(alone, _always).served_by_index else ""
        for path in use.indexed_paths + use.unindexed_paths:
            found.setdefault(SingleIndex(path, text), path in use.indexed_paths)
    filtered = {s.path for s in found}
    ordered = index_use(dataclasses.replace(query, where=None, group_by=()), is_indexed)
    for path in ordered.indexed_paths + ordered.unindexed_paths:
        if path not in filtered:
            found.setdefault(SingleIndex(path, ""), path in ordered.indexed_paths)
    return list(found.items())


def _always(_: Path) -> bool:
    return True


def _service_text(conjunct: Any, query: a.Query, params: Mapping[str, Any]) -> str:
    """The conjunct as the service's index metrics print it: the container alias as ROOT, parameters bound."""
    alias = documents_alias(query)

    def leaf(node: Any) -> Any:
        if isinstance(node, a.Ident) and node.name == alias:
            return a.Ident(ROOT, node.span)
        if isinstance(node, a.Param) and node.name in params:
            return a.Literal(params[node.name])
        return None

    try:
        return f.expr(a.substituted(conjunct, leaf))
    except TypeError:  # a bound value that is not JSON (never from the wire): print the query's own text
        return f.expr(conjunct)


def _composites(
    query: a.Query, params: Mapping[str, Any], composites: tuple[Composite, ...]
) -> tuple[tuple[Composite, ...], tuple[Composite, ...]]:
    """(utilized, potential) composite indexes; only for one plain container source."""
    alias = documents_alias(query)
    if alias is None or len(query.sources) != 1:
        return (), ()
    ctx = constants_context(params)
    order = order_items(query, alias, ctx)
    if order is None:
        return (), ()
    if order:
        need = order_composite(query, alias, ctx, order, composites)
        return _some(need.serving), _some(need.wanted)
    return _filter_composites(_filter_paths(query, alias, ctx), composites)


def _some(composite: Composite | None) -> tuple[Composite, ...]:
    return () if composite is None else (composite,)


def _filter_paths(query: a.Query, alias: str, ctx: Any) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """(equality paths, range paths) of the filter, in query order; IN lists and functions are neither."""
    equalities: list[Path] = []
    ranges: list[Path] = []
    for conjunct in _conjuncts(query):
        probe = probe_of(conjunct, alias, ctx)
        if probe is None or not all(s.__class__ is str for s in probe.steps):
            continue
        path = tuple(str(s) for s in probe.steps)
        if probe.is_range:
            ranges.append(path)
        elif probe.keys is not None and len(probe.keys) == 1:
            equalities.append(path)
    eq = tuple(dict.fromkeys(equalities))
    return eq, tuple(p for p in dict.fromkeys(ranges) if p not in eq)


def _filter_composites(
    paths: tuple[tuple[Path, ...], tuple[Path, ...]], composites: tuple[Composite, ...]
) -> tuple[tuple[Composite, ...], tuple[Composite, ...]]:
    """Equality paths lead (any order and direction), then one range path: each range's composite is
    utilized when the policy has one, else potential (ascending); equalities alone only utilize one."""
    equalities, ranges = paths
    if not equalities or (not ranges and len(equalities) < 2):
        return (), ()
    used: list[Composite] = []
    potential: list[Composite] = []
    tails: list[tuple[Path, ...]] = [(r,) for r in ranges] or [()]
    for tail in tails:
        serving = next((c for c in composites if _leads(c, equalities, tail)), None)
        if serving is not None:
            used.append(serving)
        elif tail:
            potential.append(tuple((p, False) for p in equalities + tail))
    return tuple(dict.fromkeys(used)), tuple(potential)


def _leads(composite: Composite, equalities: tuple[Path, ...], tail: tuple[Path, ...]) -> bool:
    """The composite starts with the equality paths (in any order), then the tail's paths."""
    n = len(equalities)
    if len(composite) < n + len(tail):
        return False
    head = {p for p, _ in composite[:n]}
    return head == set(equalities) and [p for p, _ in composite[n : n + len(tail)]] == list(tail)
