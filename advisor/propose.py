"""Candidate designs proposed from the documents and the workload, to be measured beside the configured ones.

The guides' three criteria say where a good key comes from (seeds 000/002): the properties the dominant
queries filter on by equality (alignment), properties with many distinct values (cardinality), and, when
one level is too coarse for the writes, a hierarchical pair (a coarse level the queries filter on, then a
finer one). So three kinds of proposal, taken in turn so each kind is represented within `limit`:

- filter: a property some workload query pins by equality or IN (found by the same routing rule the engine
  uses, `cosmoscore.sql.partition_key_filter`), the queries' summed frequency first;
- pair: `[A, B]` as a hierarchical key, A a filter property with at least `KEYS_PER_PARTITION` values (a
  first level's documents stay together, H4) and B a filter or high-cardinality property with as many
  distinct values or more (coarse level first) that adds keys under A; the frequency of the queries that
  pin both first, then of those that pin A (they stay targeted on A's prefix);
- cardinality: a string property with the most distinct values (at most `HIGH_CARDINALITY` of them).

Decisions, so a proposal is worth measuring:
- a property fewer than 95% of the documents have is skipped (the rest would share the undefined key);
- fewer than `KEYS_PER_PARTITION` distinct values is never proposed (it fails cardinality on any container:
  `/status` with 3 values); configure it to see it measured;
- an id-like property, whose every value appears once (`id`, a timestamp, free text), is proposed only when a
  query filters on it: it spreads writes perfectly but groups nothing, so every other query fans out;
- a number is proposed only from the filters: numbers in documents are more often measures (latencyMs,
  tokens) than entities;
- a date (`2026-12-09`, `2026-12`, an ISO timestamp) is never the first level of a pair: every current write
  shares today's prefix, and a first level's documents are kept together in one physical partition until
  it passes 50 GB (H4, P8 in docs/reference/ru-cost-model.md; seed 000: "/date as partition key: all
  today's writes hit the same partition"). Per full key the measure cannot see that, so it is ruled out
  here; `/date` alone is still proposed from the filters, for its write skew to be shown;
- a value longer than `MAX_KEY_CHARS` is text, not a key (a key value holds at most 2048 bytes, P17 in
  docs/reference/ru-cost-model.md; a shorter cap keeps text out).
Proposals equal to a configured design (same kind and paths) are dropped. Distinct counts are read on at
most `STATS_DOCUMENTS` evenly spaced documents (a proposal needs magnitudes; the measure counts them all),
which keeps proposing under 2 s on 200,000 documents.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.designs import Design, DesignError, parse_design, property_value
from advisor.lint import alias_paths, parameter_map, path_nodes
from advisor.measure import WorkloadQuery
from advisor.verdict import KEYS_PER_PARTITION
from cosmoscore.indexing import SYSTEM_PROPERTIES
from cosmoscore.sql import SqlError, parse_query, partition_key_filter

MAX_PROPOSALS = 6  # designs proposed at most: each costs one in-process load of the sample
HIGH_CARDINALITY = 2  # single keys proposed for cardinality alone
PRESENCE_MIN = 0.95  # share of documents that must have the property
STATS_DOCUMENTS = 20_000  # distinct counts are read on at most this many documents, evenly spaced
MAX_KEY_CHARS = 100  # longer values are text, not keys (see the module docstring)
_DATE = re.compile(r"\d{4}-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:\d{2})?)?)?")
FILTER, PAIR, CARDINALITY = "filter", "pair", "cardinality"


@dataclass(frozen=True)
class Proposal:
    design: Design
    source: str  # FILTER, PAIR or CARDINALITY
    reason: str


@dataclass(frozen=True)
class PropertyStats:
    path: str  # "/tenantId"
    distinct: int
    present: int
    textual: bool  # every value a string
    longest: int  # characters of the longest value
    dated: bool = False  # every value a date or an ISO timestamp (a time bucket)

    @property
    def unique(self) -> bool:
        """Every value appears once: the key would group nothing."""
        return self.distinct == self.present


def property_stats(docs: Sequence[Mapping[str, Any]], path: str) -> PropertyStats | None:
    """Distinct scalar values of one property path; None if some value is an object or an array."""
    values = [property_value(doc, path.strip("/").replace("/", ".")) for doc in docs]
    present = [v for v in values if v is not None]
    if any(isinstance(v, Mapping | list) for v in present):
        return None
    distinct = {_value_key(v) for v in present}
    return PropertyStats(
        path,
        len(distinct),
        len(present),
        all(isinstance(v, str) for v in present),
        max((len(str(v)) for v in present), default=0),
        bool(present) and all(isinstance(v, str) and _DATE.fullmatch(v) for v in present),
    )


def pinned_paths(query: WorkloadQuery) -> list[str]:
    """The property paths a query pins to one or a few values (equality, IN), in the order written."""
    try:
        parsed = parse_query(query.sql)
    except SqlError:
        return []  # the lint reports it
    if parsed.where is None:
        return []
    params = parameter_map(query.parameters)
    out: list[str] = []
    for path, _ in path_nodes(parsed.where, alias_paths(parsed)):
        spelled = "/" + "/".join(path)
        if "[]" in path or spelled in out:
            continue
        if partition_key_filter(parsed, [list(path)], params).keys is not None:
            out.append(spelled)
    return out


def filter_weights(queries: Sequence[WorkloadQuery]) -> dict[str, float]:
    """Each pinned path with the summed frequency of the queries pinning it, most frequent first."""
    weights: dict[str, float] = defaultdict(float)
    for q in sorted(queries, key=lambda q: -q.weight):
        for path in filter(designable, pinned_paths(q)):
            weights[path] += q.weight
    return dict(sorted(weights.items(), key=lambda kv: -kv[1]))  # stable: ties keep first-seen order


def designable(path: str) -> bool:
    """A path a partition key can name (`/a/b`; not `/first-name`, which needs quoting)."""
    try:
        parse_design(path)
    except DesignError:
        return False
    return True


def _keyable(s: PropertyStats | None, docs: int) -> bool:
    return s is not None and s.present >= PRESENCE_MIN * docs and s.longest <= MAX_KEY_CHARS


def _value_key(value: Any) -> tuple[str, Any]:
    """A scalar as a set member the way a key compares: 1 and 1.0 one number, True not 1."""
    if isinstance(value, bool) or value is None:
        return "b", value
    return ("n", float(value)) if isinstance(value, int | float) else ("s", value)


def _pair_distinct(docs: Sequence[Mapping[str, Any]], a: str, b: str) -> int:
    dotted = [p.strip("/").replace("/", ".") for p in (a, b)]
    return len({tuple(_value_key(property_value(d, p)) for p in dotted) for d in docs})


def propose(
    docs: Sequence[Mapping[str, Any]],
    queries: Sequence[WorkloadQuery],
    existing: Sequence[Design] = (),
    limit: int = MAX_PROPOSALS,
) -> list[Proposal]:
    """Up to `limit` designs from the documents and the workload (see the module docstring)."""
    if not docs or limit <= 0:
        return []
    docs = docs[:: max(1, len(docs) // STATS_DOCUMENTS)]  # proposals need magnitudes, not exact counts
    n = len(docs)
    weights = filter_weights(queries)
    total = sum(q.weight for q in queries) or 1.0
    stats = {p: property_stats(docs, p) for p in [*weights, *top_level_paths(docs)]}
    filters = [p for p in weights if _keyable(stats[p], n) and _stat(stats, p).distinct >= KEYS_PER_PARTITION]
    dense = high_cardinality(stats, n)
    by_query = {q.name: set(pinned_paths(q)) for q in queries}
    singles = [
        Proposal(parse_design(p), FILTER, _filter_reason(p, queries, by_query, weights[p] / total)) for p in filters
    ]
    pairs = [
        Proposal(parse_design([a, b]), PAIR, reason)
        for a, b, reason in pair_candidates(docs, stats, weights, dense, queries)
    ]
    cards = [
        Proposal(
            parse_design(p),
            CARDINALITY,
            f"high cardinality: {_stat(stats, p).distinct} distinct values in {n} documents",
        )
        for p in dense[:HIGH_CARDINALITY]
    ]
    return _take_in_turn([singles, pairs, cards], existing, limit)


def _stat(stats: Mapping[str, PropertyStats | None], path: str) -> PropertyStats:
    s = stats[path]
    assert s is not None
    return s


def top_level_paths(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every top-level property of the sample but the system ones, in first-seen order."""
    seen: dict[str, None] = {}
    for doc in docs:
        seen.update((f"/{k}", None) for k in doc if k not in SYSTEM_PROPERTIES and designable(f"/{k}"))
    return list(seen)


def high_cardinality(stats: Mapping[str, PropertyStats | None], docs: int) -> list[str]:
    """String properties that group documents (not id-like), most distinct values first."""
    ok = [
        s
        for s in stats.values()
        if s is not None and _keyable(s, docs) and s.textual and not s.unique and s.distinct >= KEYS_PER_PARTITION
    ]
    return [s.path for s in sorted(ok, key=lambda s: -s.distinct)]


def pair_candidates(
    docs: Sequence[Mapping[str, Any]],
    stats: Mapping[str, PropertyStats | None],
    weights: Mapping[str, float],
    dense: Sequence[str],
    queries: Sequence[WorkloadQuery],
) -> list[tuple[str, str, str]]:
    """(A, B, reason) for the hierarchical pairs, best first (see the module docstring)."""
    n = len(docs)
    total = sum(q.weight for q in queries) or 1.0
    pinned = [(q.weight, set(pinned_paths(q))) for q in queries]
    keyable = [p for p in weights if _keyable(stats[p], n)]
    firsts = [p for p in keyable if _stat(stats, p).distinct >= KEYS_PER_PARTITION and not _stat(stats, p).dated]
    seconds = list(dict.fromkeys([*keyable, *dense]))
    scored = []
    for a in firsts:
        for b in seconds:
            da, db = _stat(stats, a).distinct, _stat(stats, b).distinct
            if b == a or db < da or (db == da and b in firsts and firsts.index(b) < firsts.index(a)):
                continue  # the coarser level first; of two as coarse, the one more queries pin
            full = _pair_distinct(docs, a, b)
            if full <= da or full < KEYS_PER_PARTITION:
                continue
            both = sum(w for w, ps in pinned if {a, b} <= ps)
            reason = (
                f"hierarchical: {a} ({da} values; {weights[a] / total:.0%} of the executions filter on it) as the "
                f"prefix, then {b}: {full} full keys"
                + (f"; {both / total:.0%} of the executions pin both" if both else "")
            )
            scored.append((-both, -weights[a], -full, a, b, reason))
    return [(a, b, reason) for *_, a, b, reason in sorted(scored)]


def _filter_reason(path: str, queries: Sequence[WorkloadQuery], by_query: Mapping[str, set[str]], share: float) -> str:
    names = ", ".join(repr(q.name) for q in queries if path in by_query[q.name])
    return f"in the equality filters of {names} ({share:.0%} of the workload's executions)"


def _identity(design: Design) -> tuple[str, tuple[str, ...], str]:
    return design.kind, design.paths, design.template


def _take_in_turn(groups: Sequence[Sequence[Proposal]], existing: Sequence[Design], limit: int) -> list[Proposal]:
    """One of each kind in turn, skipping what is configured or already taken, up to `limit`; a design
    proposed for several reasons carries them all."""
    reasons: dict[tuple[str, tuple[str, ...], str], list[str]] = defaultdict(list)
    for group in groups:
        for p in group:
            reasons[_identity(p.design)].append(p.reason)
    taken = {_identity(d) for d in existing}
    names = {d.name for d in existing}
    out: list[Proposal] = []
    queues = [list(g) for g in groups]
    while len(out) < limit and any(queues):
        for queue in queues:
            while queue and len(out) < limit:
                p = queue.pop(0)
                if _identity(p.design) in taken:
                    continue
                taken.add(_identity(p.design))
                design = p.design
                if design.name in names:
                    design = Design(f"{design.name} (proposed)", design.kind, design.paths)
                names.add(design.name)
                out.append(Proposal(design, p.source, "; ".join(reasons[_identity(p.design)])))
                break
    return out
