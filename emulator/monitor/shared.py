"""A shared-throughput database's own metric series, as Azure Monitor reports them (azure-monitor.md §7b R2,
R30-R32): the containers that spend their database's offer have no partition or throughput series under
their names; the database has them, under `CollectionName` `<empty>` (NormalizedRUConsumption,
PhysicalPartitionSizeInfo, PhysicalPartitionThroughputInfo) or `__Empty` (ProvisionedThroughput,
AutoscaleMaxThroughput): `cosmoscore.monitor.metrics.SHARED_DATABASE_COLLECTION`. The request and storage
totals (TotalRequestUnits, TotalRequests, DataUsage, IndexUsage, DocumentCount) keep the container names:
`emulator.monitor.metrics` serves those as for any container.

Computed from the history, never invented. The engine lays out partitions per container, so the
database's partition with a given id is the union of its containers' ranges of that id: sizes add up,
while utilisation and budgets take the largest (the engine meters each container's range against the one
shared offer); the offer's throughput is the one every sharing container recorded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from cosmoscore.monitor.metrics import (
    COLLECTION_NAME,
    DATABASE_NAME,
    NORMALIZED_RU,
    PARTITION_KEY_RANGE_ID,
    PARTITION_SIZE,
    PHYSICAL_PARTITION_ID,
    SHARED_DATABASE_COLLECTION,
)
from emulator.engine.facade import Engine
from emulator.history.cells import Point
from emulator.monitor.query import Filter

Group = tuple[str, ...]
Cells = dict[Group, dict[int, list[float]]]  # per split group and minute: the values `metrics._value` reads


def shared_offer_containers(engine: Engine) -> set[tuple[str, str]]:
    """(database, container) of the live containers that spend their database's offer: created without
    throughput of their own in a database that has some. Read from the engine's state as the rest of the
    stand-in reads it (`Engine.databases`), each dict copied in one step before it is walked."""
    return {
        (db_id, coll_id)
        for db_id, db in list(engine.databases.items())
        if db.offer_rid is not None
        for coll_id, coll in list(db.containers.items())
        if coll.offer_rid is None
    }


def shared_database_minutes(
    engine: Engine,
    metric: str,
    window: tuple[float, float, int],
    filt: Filter,
    split: list[str],
    tick: Callable[[], None],
    shared: set[tuple[str, str]],
    out: Cells,
) -> None:
    """Add to `out` the series of `metric` of every shared database the filter selects, under its
    `CollectionName` label; `window`: (since, until, the metric's emitted grain in minutes)."""
    label = SHARED_DATABASE_COLLECTION[metric]
    by_database: dict[str, list[str]] = defaultdict(list)
    for db, coll in sorted(shared):
        if filt.matches({DATABASE_NAME: db, COLLECTION_NAME: label}, (DATABASE_NAME, COLLECTION_NAME)):
            by_database[db].append(coll)
    for db, colls in by_database.items():
        cells: dict[tuple[Group, int], float] = {}
        for coll in colls:
            for p in _points(engine, db, coll, metric, window, tick):
                dims = _dimensions(db, label, metric, p)
                if filt.matches(dims):
                    slot = (tuple(dims[d] for d in split), int(p.time // 60))
                    old = cells.get(slot)
                    summed = metric == PARTITION_SIZE
                    cells[slot] = p.value if old is None else (old + p.value if summed else max(old, p.value))
        for (group, minute), value in cells.items():
            cell = out[group].setdefault(minute, [])
            if metric == NORMALIZED_RU:  # one value per minute, combined by maximum
                cell[:] = [max([*cell, value])]
            else:  # one sample per database and minute
                cell.append(value)


def _points(
    engine: Engine, db: str, coll: str, metric: str, window: tuple[float, float, int], tick: Callable[[], None]
) -> list[Point]:
    since, until, grain = window
    if metric == NORMALIZED_RU:
        return engine.history.series(db, coll, NORMALIZED_RU, since, until, tick=tick)
    return engine.history.series(db, coll, metric, since, until, grain, now=engine.clock())


def _dimensions(db: str, label: str, metric: str, point: Point) -> dict[str, str]:
    """The series' dimensions: the database, its label, and the physical partition (NormalizedRUConsumption:
    also the pkrange, the same id in the emulator)."""
    dims = {DATABASE_NAME: db, COLLECTION_NAME: label}
    pk = point.dimensions.get(PARTITION_KEY_RANGE_ID)
    if pk is not None:
        dims[PHYSICAL_PARTITION_ID] = pk
        if metric == NORMALIZED_RU:
            dims[PARTITION_KEY_RANGE_ID] = pk
    return dims
