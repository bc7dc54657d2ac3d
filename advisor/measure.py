"""Measure one candidate design on the sample and the workload, in-process with the emulator's engine.

The same hashing, placement, routing and RU code as the server (one code path, no HTTP): a fresh engine
per design, a container with the design's key at the configured throughput, the sample loaded, each
workload query run (with the design's key when its equality filters give it), and the placement of every
document read back from the container's routing map.

Writes are the sample's documents, each weighted by its entity's write rate (1 by default): the sample
is taken to be what the container receives. "Now" is the last `recent_days` of the sample by its time
property: a key that takes all of today's writes (`/date`) is hot whatever the whole sample says.
Sizes are the documents' JSON bytes times `scale` (the projected container size over the sample's). The
queries run on the sample loaded `load_copies()` times (each copy a new id, the same keys): `scale` copies,
at most `max_load_copies` (1 by default: loading costs time), so RU can be measured nearer the projected size.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.definition import composite_indexes
from advisor.designs import (
    SYNTHETIC,
    Design,
    DesignError,
    as_datetime,
    property_value,
    render_template,
    validate_design,
)
from cosmoscore.epk import epk_for
from cosmoscore.keys import key_json
from cosmoscore.limits import GB, Limits
from cosmoscore.routing import routing_class
from cosmoscore.sql import parse_query, partition_key_filter
from emulator.engine.facade import Context, Engine, ThroughputSpec

_DB = "advisor"


@dataclass(frozen=True)
class WorkloadQuery:
    """A query of the workload with its relative frequency."""

    name: str
    sql: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0


@dataclass(frozen=True)
class Workload:
    """What the designs are measured against. `growth_gb_per_day`: the container's growth;
    `entity_rates`: write weight per value of `entity_property` (absent: 1); `horizon_days`: how far ahead
    the 20 GB projection is a finding (a heuristic of ours, a capacity plan's usual three years)."""

    queries: tuple[WorkloadQuery, ...] = ()
    throughput: int = 18_000
    growth_gb_per_day: float = 0.0
    scale: float = 1.0
    max_load_copies: int = 1
    time_property: str = "createdAt"
    recent_days: float = 1.0
    entity_property: str | None = None
    entity_rates: Mapping[str, float] = field(default_factory=dict)
    horizon_days: float = 3 * 365  # the planning horizon: a key reaching 20 GB later is not flagged (ours)


@dataclass(frozen=True)
class QueryMeasure:
    name: str
    weight: float
    request_charge: float
    partitions: int
    total_partitions: int
    routing: str  # cosmoscore.routing class: single / targeted / fan-out
    partition_key: tuple[Any, ...] | None  # the design's key the query was pinned to, when derivable


@dataclass(frozen=True)
class DesignMeasure:
    design: Design
    queries: tuple[QueryMeasure, ...]
    partitions: int
    write_shares: tuple[float, ...]  # per physical partition, in EPK order
    hottest_logical_share: float  # of all sampled writes
    recent_hottest_logical_share: float  # of the last `recent_days` writes
    largest_logical_bytes: float  # projected (times `scale`)
    loaded_documents: int
    days_to_limit: float | None  # until the largest-growing logical partition reaches 20 GB; None: never
    cardinality: tuple[int, ...]  # distinct values per level (prefix), the full key last
    logical_limit_bytes: int

    @property
    def workload_ru(self) -> float:
        """RU per query of the mix, weighted by frequency."""
        total = sum(q.weight for q in self.queries)
        return sum(q.request_charge * q.weight for q in self.queries) / total if total else 0.0

    @property
    def hottest_share(self) -> float:
        return max(self.write_shares, default=0.0)

    @property
    def even_share(self) -> float:
        return 1 / self.partitions if self.partitions else 0.0

    @property
    def gini(self) -> float:
        return gini(self.write_shares)

    @property
    def throttle_multiplier(self) -> float:
        """The container demand, as a fraction of its provisioned RU/s, at which the hottest partition
        reaches its even budget (RU/P, P4 in docs/reference/ru-cost-model.md) and throttles: 1.0 is even."""
        return self.even_share / self.hottest_share if self.hottest_share else 0.0


def gini(shares: Sequence[float]) -> float:
    """Gini coefficient of the shares: 0 perfectly even, towards 1 when one partition takes everything."""
    values = sorted(shares)
    n, total = len(values), sum(values)
    if n < 2 or total <= 0:
        return 0.0
    weighted = sum((i + 1) * v for i, v in enumerate(values))
    return (2 * weighted) / (n * total) - (n + 1) / n


def measure_design(
    design: Design, docs: Sequence[Mapping[str, Any]], workload: Workload, *, limits: Limits | None = None
) -> DesignMeasure:
    """Every figure of one design (see the module docstring); raises `DesignError` for bad inputs."""
    limits = limits or Limits()
    validate_design(design, docs)
    engine = Engine(throttling=False, limits=limits)
    copies = load_copies(workload)
    indexes = order_by_indexes(workload.queries)
    throughput = layout_throughput(docs, workload, limits)
    container_id = load_container(engine, design, docs, throughput, copies, composite_indexes=indexes)
    queries = tuple(measure_query(engine, container_id, design, q) for q in workload.queries)
    keys = [design.key_of(doc) for doc in docs]
    weights = [write_weight(doc, workload) for doc in docs]
    coll = engine.container(_DB, container_id)
    kind = design.definition()["kind"]
    placement = [coll.routing.range_for(epk_for(kind, key)).id for key in keys]
    order = [r.id for r in coll.routing.ranges]
    days = write_days(docs, workload)
    recent = recent_mask(days, len(docs), workload.recent_days)
    life = design.key_life_days() or observed_life_days(keys, days)
    largest, reach = project_growth(docs, keys, weights, recent, workload, limits, life)
    return DesignMeasure(
        design=design,
        queries=queries,
        partitions=len(order),
        write_shares=shares_by(placement, weights, order),
        hottest_logical_share=hottest_share(keys, weights),
        recent_hottest_logical_share=hottest_share(
            [k for k, r in zip(keys, recent, strict=True) if r], [w for w, r in zip(weights, recent, strict=True) if r]
        ),
        largest_logical_bytes=largest,
        loaded_documents=len(docs) * copies,
        days_to_limit=reach,
        cardinality=cardinality(keys),
        logical_limit_bytes=limits.logical_partition_max_bytes,
    )


_JOB: tuple[Sequence[Design], Sequence[Mapping[str, Any]], Workload, Limits | None] | None = None


def measure_designs(
    designs: Sequence[Design],
    docs: Sequence[Mapping[str, Any]],
    workload: Workload,
    *,
    limits: Limits | None = None,
    workers: int | None = None,
) -> list[DesignMeasure]:
    """`measure_design` for every design, in order, in up to `workers` forked processes (default: one per
    CPU, at most one per design): each design has its own engine, so the figures are the same as one by one,
    and loading the sample is most of the time. One worker, no `fork` on this platform, or a process running
    other threads: in this process. A fork copies only the calling thread, so a lock another thread held at
    that moment (the in-process emulator's server, its index builder, logging) stays locked for ever in the
    child: `ruscope demo`, which serves the emulator while it advises, hung so under load."""
    workers = min(len(designs), workers or os.cpu_count() or 1)
    if workers < 2 or not can_fork_safely():
        return [measure_design(d, docs, workload, limits=limits) for d in designs]
    for design in designs:
        validate_design(design, docs)  # a bad design fails here, in words, not inside a worker
    global _JOB
    _JOB = (designs, docs, workload, limits)  # inherited by the forked workers, never pickled
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_leave_interrupts_to_parent) as pool:
            return pool.map(_measure_nth, range(len(designs)), chunksize=1)
    finally:
        _JOB = None


def can_fork_safely() -> bool:
    """True when this platform forks and this process runs no thread but the calling one."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _leave_interrupts_to_parent() -> None:
    """In a worker: ignore SIGINT. Ctrl+C reaches the terminal's whole process group; the parent's
    KeyboardInterrupt ends the pool (its exit terminates the workers), where each worker would otherwise
    print its own `ForkPoolWorker ... KeyboardInterrupt` traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _measure_nth(index: int) -> DesignMeasure:
    assert _JOB is not None
    designs, docs, workload, limits = _JOB
    return measure_design(designs[index], docs, workload, limits=limits)


def layout_throughput(docs: Sequence[Mapping[str, Any]], workload: Workload, limits: Limits) -> int:
    """The RU/s the measuring container is created with, so it has the physical partitions the service
    would give the container to be: ceil(RU/s / 6,000) at creation (P6), but at least one per 50 GB of
    the projected data (sample bytes x scale; P2, P8: a partition splits past 50 GB). The split points are
    even EPK halves here, where the service splits at a partition's median."""
    projected = sum(len(json.dumps(doc, default=str).encode()) for doc in docs) * workload.scale
    for_storage = -(-int(projected) // limits.physical_partition_max_bytes)
    return max(workload.throughput, for_storage * limits.manual_ru_per_partition_at_creation)


def load_copies(workload: Workload) -> int:
    """How many times the sample is loaded: the projected scale, within `max_load_copies`."""
    return max(1, min(round(workload.scale), workload.max_load_copies))


def order_by_indexes(queries: Sequence[WorkloadQuery]) -> list[list[dict[str, str]]]:
    """The composite indexes the workload's multi-property ORDER BY queries need (the service rejects them
    without one): the container they are measured on declares them, as the recommended definition does
    (`advisor.definition.composite_indexes`, the one place that works them out)."""
    return composite_indexes(queries)[0]


def load_container(
    engine: Engine,
    design: Design,
    docs: Sequence[Mapping[str, Any]],
    throughput: int,
    copies: int = 1,
    *,
    composite_indexes: Sequence[Sequence[Mapping[str, str]]] = (),
) -> str:
    """A database and a container with the design's key (and `composite_indexes`, if any), the sample
    written into it `copies` times."""
    ctx = Context()
    engine.create_database(ctx, {"id": _DB})
    coll = "design"
    definition: dict[str, Any] = {"id": coll, "partitionKey": design.definition()}
    if composite_indexes:
        definition["indexingPolicy"] = {"compositeIndexes": [list(map(dict, c)) for c in composite_indexes]}
    engine.create_container(ctx, _DB, definition, ThroughputSpec(throughput))
    for copy in range(copies):
        for doc in docs:
            stored = design.stored(doc)
            if copy:
                stored["id"] = f"{stored.get('id', '')}~{copy}"
            engine.create_item(ctx, _DB, coll, stored, upsert=True)
    return coll


def derived_key(design: Design, query: WorkloadQuery) -> tuple[Any, ...] | None:
    """The synthetic key a query pins when its equality filters fix every property of the template (one
    value only); single and hierarchical keys are routed from the filter by the engine itself."""
    if design.kind != SYNTHETIC:
        return None
    props = design.properties
    pinned = partition_key_filter(parse_query(query.sql), [p.split(".") for p in props], query.parameters).keys
    if pinned is None or len(pinned) != 1 or len(pinned[0]) != len(props):
        return None
    doc: dict[str, Any] = {}
    for prop, value in zip(props, pinned[0], strict=True):
        _set_nested(doc, prop, value)
    return (render_template(design.template, doc),)


def _set_nested(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for step in parents:
        doc = doc.setdefault(step, {})
    doc[last] = value


def measure_query(engine: Engine, container_id: str, design: Design, query: WorkloadQuery) -> QueryMeasure:
    """One execution of a workload query under the design: RU, partitions reached, routing class."""
    key = derived_key(design, query)
    result = engine.run_query(_DB, container_id, query.sql, dict(query.parameters), partition_key=key)
    total = len(engine.container(_DB, container_id).ranges)
    hit = len(result.pkranges)
    return QueryMeasure(query.name, query.weight, result.request_charge, hit, total, routing_class(hit, total), key)


def write_weight(doc: Mapping[str, Any], workload: Workload) -> float:
    if workload.entity_property is None:
        return 1.0
    return float(workload.entity_rates.get(str(property_value(doc, workload.entity_property)), 1.0))


def write_days(docs: Sequence[Mapping[str, Any]], workload: Workload) -> list[float] | None:
    """Each document's write time in epoch days, from the time property; None if a document lacks it."""
    stamps = [property_value(doc, workload.time_property) for doc in docs]
    if any(s is None for s in stamps):
        return None
    try:
        return [as_datetime(s).timestamp() / 86400 for s in stamps]
    except ValueError as err:
        raise DesignError(f"time property {workload.time_property!r}: {err}") from err


def recent_mask(days: Sequence[float] | None, count: int, recent_days: float) -> list[bool]:
    """Which documents were written in the sample's last `recent_days` (all, without write times)."""
    if not days:
        return [True] * count
    newest = max(days)
    return [d > newest - recent_days for d in days]


def observed_life_days(keys: Sequence[tuple[Any, ...]], days: Sequence[float] | None) -> float | None:
    """How long a key keeps taking writes, when the sample shows keys that end (a session, a date): the
    longest span one key was written over, if under half the sample's span; None (for ever) otherwise."""
    if not days:
        return None
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for key, day in zip(keys, days, strict=True):
        label = key_json(key)
        first[label] = min(first.get(label, day), day)
        last[label] = max(last.get(label, day), day)
    longest = max(last[k] - first[k] for k in last)
    return longest if longest < (max(days) - min(days)) / 2 else None


def shares_by(labels: Sequence[str], weights: Sequence[float], order: Sequence[str]) -> tuple[float, ...]:
    totals: dict[str, float] = defaultdict(float)
    for label, weight in zip(labels, weights, strict=True):
        totals[label] += weight
    whole = sum(totals.values()) or 1.0
    return tuple(totals[label] / whole for label in order)


def hottest_share(keys: Sequence[tuple[Any, ...]], weights: Sequence[float]) -> float:
    totals: dict[str, float] = defaultdict(float)
    for key, weight in zip(keys, weights, strict=True):
        totals[key_json(key)] += weight
    whole = sum(totals.values())
    return max(totals.values()) / whole if whole else 0.0


def cardinality(keys: Sequence[tuple[Any, ...]]) -> tuple[int, ...]:
    """Distinct values per level: level 1, levels 1-2, ... (the full key last)."""
    levels = max((len(k) for k in keys), default=0)
    return tuple(len({key_json(k[: i + 1]) for k in keys}) for i in range(levels))


def project_growth(
    docs: Sequence[Mapping[str, Any]],
    keys: Sequence[tuple[Any, ...]],
    weights: Sequence[float],
    recent: Sequence[bool],
    workload: Workload,
    limits: Limits,
    life: float | None,
) -> tuple[float, float | None]:
    """The largest logical partition projected (bytes x scale) and the days until one reaches the 20 GB
    limit (P1, docs/reference/ru-cost-model.md) when the container grows `growth_gb_per_day`, shared by
    the keys as their recent writes are; a key stops growing after `life` days (a month's bucket, a session)."""
    size: dict[str, float] = defaultdict(float)
    growth: dict[str, float] = defaultdict(float)
    for doc, key, weight, now in zip(docs, keys, weights, recent, strict=True):
        label = key_json(key)
        size[label] += len(json.dumps(doc, default=str).encode()) * workload.scale
        growth[label] += weight if now else 0.0
    largest = max(size.values(), default=0.0)
    whole = sum(growth.values())
    if workload.growth_gb_per_day <= 0 or whole <= 0:
        return largest, None
    days = [
        (limits.logical_partition_max_bytes - size[label]) / (workload.growth_gb_per_day * GB * share / whole)
        for label, share in growth.items()
        if share > 0
    ]
    reach = [max(d, 0.0) for d in days if life is None or d <= life]
    return largest, min(reach) if reach else None
