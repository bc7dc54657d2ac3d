"""Per-minute metric aggregates kept as requests are metered: what the Azure Monitor stand-in serves.

Azure Monitor answers from pre-aggregated minutes, not from raw requests, and so does this: each
request updates a few dict entries keyed by its second and minute (O(1)), and the 2M-record raw log in
`accounting` is never scanned for them (only log queries naming ActivityId read it, `emulator.monitor.request_log`,
checking it against these minutes' request counts). Per UTC minute it keeps:
- per (database, container, pkrange, operation, status): request count and RU sum (`TotalRequests`,
  `TotalRequestUnits`, azure-monitor.md metric table);
- per (database, container, pkrange): the highest per-second RU / budget ratio of the minute, the budget
  being the partition's RU/s in force at that second (throughput changes and splits included), which
  gives `NormalizedRUConsumption` = min(100, 100 x that ratio) (ru-cost-model.md P11);
- per (database, container, pkrange): RU and request count by logical partition key, cut to the top N
  (by RU) when the minute closes (`CDBPartitionKeyRUConsumption`'s view, azure-monitor.md §6.1); the
  operations with no single logical key (queries across keys, feeds of a range) under the empty key "",
  kept beside the top N, as that table leaves PartitionKey empty for them (§7b R22); and, for the keys
  kept, their RU by operation and second of the minute (that table's rows, §7b R24);
- per (database, container, pkrange): RU and request count by query text, top N (by RU) per minute
  (`CDBQueryRuntimeStatistics`, §6.3), of the queries that ran: metering passes no text for a 429 (§7b R53);
- per (database, container, pkrange): the size of the logical keys a write changed, top N (by size)
  per minute (`CDBPartitionKeyStatistics`, §6.2; approximate like Azure's sampled statistics: a key a
  write shrank outside that minute's top N keeps its earlier size);
- storage and throughput change-points per container and physical partition (`changepoints`).

Public query API (`History.series(db, coll, metric, since, until, grain_minutes)`; `History.containers()`):
the catalogue's (`cosmoscore.monitor.metrics`, azure-monitor.md §5) NORMALIZED_RU, TOTAL_REQUEST_UNITS,
TOTAL_REQUESTS; the stand-in's own KEY_RU ("PartitionKeyRUConsumption") and KEY_COUNT
("PartitionKeyRequests"), dims (PartitionKeyRangeId, PartitionKey), summed per interval; KEY_SIZE
("PartitionKeySize", bytes), dims (PartitionKeyRangeId, PartitionKey), forward-filled; QUERY_RU
("QueryRequestUnits") and QUERY_COUNT ("QueryRequests"), dims (PartitionKeyRangeId, QueryText); the
catalogue's storage metrics, forward-filled (the value at each interval's last minute, or now if earlier):
DATA_USAGE ("DataUsage", bytes), INDEX_USAGE ("IndexUsage", always 0: the emulator does not model index
storage, its quota headers report collectionSize = documentsSize), DOCUMENT_COUNT ("DocumentCount"), no dims;
PARTITION_SIZE ("PhysicalPartitionSizeInfo", bytes) and PARTITION_THROUGHPUT
("PhysicalPartitionThroughputInfo", RU/s budget), dim PartitionKeyRangeId (one physical partition per pkrange
in the emulator); PROVISIONED ("ProvisionedThroughput", the container's or its database's offer) and
AUTOSCALE_MAX ("AutoscaleMaxThroughput", only for an autoscale offer), no dims.

Memory is bounded by the retention (93 days, Azure Monitor's) and a cap on minutes kept; within a
minute, by the schema (containers x pkranges x operations x statuses) and the top-N key lists.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosmoscore.monitor.logs import KEY_RU_CATEGORY, PARTITION_KEY, QUERY_TEXT
from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    GRAIN_MINUTES,
    INDEX_USAGE,
    NORMALIZED_RU,
    OPERATION_TYPE,
    PARTITION_KEY_RANGE_ID,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    RETENTION_DAYS,
    STATUS_CODE,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)
from emulator.history import cells as cells_
from emulator.history import on_disk
from emulator.history.cells import Minute, OpKey, PartKey, Point
from emulator.history.changepoints import Coll, Snapshots, top_sizes
from emulator.history.snapshots import SnapshotRecorder

__all__ = ["History", "HistoryConfig", "Point", "OpKey", "PartKey"]

GRAINS_MINUTES = tuple(GRAIN_MINUTES.values())  # PT1M (emitted) and the coarser ones aggregated server-side

# The stand-in's own series, beside the catalogue's metrics: what its Log Analytics rows are made from.
KEY_RU = KEY_RU_CATEGORY  # azure-monitor.md §6.1: CDBPartitionKeyRUConsumption, RU per logical key
KEY_COUNT = "PartitionKeyRequests"  # requests per logical key (the stand-in's own: §6.1's rows are key-seconds)
KEY_SIZE = "PartitionKeySize"  # azure-monitor.md §6.2: CDBPartitionKeyStatistics, bytes per logical key
QUERY_RU = "QueryRequestUnits"  # azure-monitor.md §6.3: CDBQueryRuntimeStatistics, RU per query text
QUERY_COUNT = "QueryRequests"  # query requests per query text
STORAGE_METRICS = (
    DATA_USAGE,
    INDEX_USAGE,
    DOCUMENT_COUNT,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    AUTOSCALE_MAX,
)
METRICS = (
    NORMALIZED_RU,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
    KEY_RU,
    KEY_COUNT,
    KEY_SIZE,
    QUERY_RU,
    QUERY_COUNT,
    *STORAGE_METRICS,
)


@dataclass(frozen=True)
class HistoryConfig:
    """How much history is kept. Defaults follow Azure Monitor; all are configurable."""

    retention_days: float = RETENTION_DAYS  # azure-monitor.md: metrics kept 93 days
    max_minutes: int = RETENTION_DAYS * 1440  # a minute per minute of the retention
    top_keys: int = 10  # logical keys (and query texts) kept per (container, pkrange, minute)
    # Distinct keys tracked in the open minute before the smallest are evicted (bounds a minute that
    # touches millions of keys; past it the top-N becomes approximate). Not from Azure: a memory guard.
    open_keys_cap: int = 10_000


# How often a server saves a changed history (`History.checkpoint`): a crash loses at most this much.
CHECKPOINT_S = 60.0


class History(SnapshotRecorder):
    """Per-minute aggregates, recorded incrementally, queried with `series`; saved to `path` if given."""

    def __init__(
        self,
        config: HistoryConfig | None = None,
        path: str | Path | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.config = config or HistoryConfig()
        self.top_keys, self.open_keys_cap = self.config.top_keys, self.config.open_keys_cap
        self.path = Path(path) if path is not None else None
        self.clock = clock  # "now" for forward-filled series; the engine sets its own when None
        self._minutes: dict[int, Minute] = {}
        self._seconds: dict[PartKey, list[float]] = {}  # [second, RU spent in it so far]
        self._now_minute = -1  # newest minute seen
        self._storage = Snapshots()
        self._key_base: dict[PartKey, dict[str, float]] = {}  # key sizes from minutes past the retention
        self._seen: set[Coll] = set()  # containers of the sealed minutes
        self._lock = threading.Lock()
        self.changes = 0  # recordings so far (SnapshotRecorder.changes)
        self._saved_changes = 0  # `changes` when last saved or loaded
        self._save_lock = threading.Lock()  # one save at a time (a checkpoint and the shutdown's)

    # -- recording -----------------------------------------------------------------------------

    def record(
        self,
        now: float,
        database: str,
        container: str,
        pkrange_id: str,
        operation: str,
        status: int,
        ru: float,
        partition_key: str = "",
        budget: float = 0.0,
        query_text: str = "",
    ) -> None:
        """Add one metered request (`budget`: its partition's RU/s at that moment, 0 when none)."""
        second = int(now // 1)
        minute = second // 60
        with self._lock:
            self.changes += 1
            cell = self._minutes.get(minute) if minute == self._now_minute else None
            if cell is None:
                cell = self._open(minute)
                if cell is None:
                    return  # past the retention or the cap: Azure would not have it either
            op_key = (database, container, pkrange_id, operation, status)
            op = cell.ops.get(op_key)
            if op is None:
                cell.ops[op_key] = [1, ru]
            else:
                op[0] += 1
                op[1] += ru
            if not pkrange_id:
                return
            part = (database, container, pkrange_id)
            sec = self._seconds.get(part)
            if sec is None or sec[0] != second:
                sec = self._seconds[part] = [second, ru]
            else:
                sec[1] += ru
            if budget > 0:
                ratio = sec[1] / budget
                peak = cell.peaks.get(part)
                if peak is None:
                    cell.peaks[part] = [ratio, sec[1], budget]
                elif ratio > peak[0]:
                    peak[0], peak[1], peak[2] = ratio, sec[1], budget
            # an operation with no single logical key (a query across keys, a feed of a range) under the empty
            # key, as CDBPartitionKeyRUConsumption leaves PartitionKey empty for it (azure-monitor.md §7b R22)
            self._add(cell, cell.keys, part, partition_key, ru)
            self._add_second(cell, part, partition_key, operation, second % 60, ru)
            if query_text:
                self._add(cell, cell.queries, part, query_text, ru)

    def _add(
        self, cell: Minute, table: dict[PartKey, dict[str, list[float]]], part: PartKey, key: str, ru: float
    ) -> None:
        keys = table.get(part)
        if keys is None:
            keys = table[part] = {}
        entry = keys.get(key)
        if entry is not None:
            entry[0] += ru
            entry[1] += 1
        elif not cell.sealed or len(keys) < self.config.top_keys or not key:
            keys[key] = [ru, 1]
            if len(keys) > self.config.open_keys_cap:  # amortised: prunes once per cap/2 new keys
                kept = table[part] = cells_.top_ru(keys, self.config.open_keys_cap // 2)
                if table is cell.keys and part in cell.key_ops:  # the evicted keys' seconds go with them
                    cell.key_ops[part] = {k: v for k, v in cell.key_ops[part].items() if k in kept}

    def _add_second(self, cell: Minute, part: PartKey, key: str, operation: str, second: int, ru: float) -> None:
        """A kept key's RU by operation and second: CDBPartitionKeyRUConsumption's rows (§7b R24)."""
        if key not in cell.keys.get(part, {}):
            return
        slots = cell.key_ops.setdefault(part, {}).setdefault(key, {})
        slots[(operation, second)] = slots.get((operation, second), 0.0) + ru

    def _open(self, minute: int) -> Minute | None:
        """The cell of `minute`, opened (and the clock advanced) if need be; None when too old."""
        if minute > self._now_minute:
            self._advance(minute)
        elif minute != self._now_minute and self._too_old(minute):
            return None
        cell = self._minutes.get(minute)
        if cell is None:
            cell = self._minutes[minute] = Minute(sealed=minute < self._now_minute)
            if cell.sealed:  # a late minute (the clock went back): keep time order and the cap
                self._minutes = dict(sorted(self._minutes.items()))
                self._expire()
        return cell

    def _too_old(self, minute: int) -> bool:
        if minute < self._oldest_kept(self._now_minute):
            return True
        full = len(self._minutes) >= self.config.max_minutes
        return full and minute not in self._minutes and minute < next(iter(self._minutes))

    def _oldest_kept(self, newest: int) -> int:
        return newest - int(self.config.retention_days * 1440) + 1

    def _advance(self, minute: int) -> None:
        """A new minute began: close the earlier ones (top-N keys) and drop what retention excludes."""
        cell = self._minutes.get(self._now_minute)  # the only open minute: late ones open sealed
        if cell is not None and not cell.sealed:
            cell.seal(self.config.top_keys)
            self._seen |= cell.containers()
        self._now_minute = minute
        self._expire(room=0 if minute in self._minutes else 1)
        start = minute * 60
        self._seconds = {part: sec for part, sec in self._seconds.items() if sec[0] >= start}
        self._storage.prune(self._oldest_kept(minute))

    def _expire(self, room: int = 0) -> None:
        """Drop minutes past the retention, then the oldest past the cap (leaving `room` for minutes
        about to open); `_minutes` is in time order, so this pops from the front and costs only what
        it drops. Key sizes of a dropped minute fold into the base (sizes are states, not events)."""
        oldest = self._oldest_kept(self._now_minute)
        while self._minutes:
            first = next(iter(self._minutes))
            if first >= oldest and len(self._minutes) + room <= self.config.max_minutes:
                break
            for part, sizes in self._minutes.pop(first).sizes.items():
                base = self._key_base.setdefault(part, {})
                base.update(sizes)
                self._key_base[part] = top_sizes(base, self.config.top_keys)

    # -- queries -------------------------------------------------------------------------------

    def minutes(self) -> list[int]:
        """The minutes kept (minute numbers: epoch seconds // 60), oldest first."""
        with self._lock:
            return sorted(self._minutes)

    def containers(self) -> set[tuple[str, str]]:
        """(database, container) of every container with any history, deleted ones included."""
        with self._lock:
            found = set(self._seen) | set(self._storage.parts) | set(self._storage.offers)
            found |= {(d, c) for d, c, _ in self._key_base}
            cell = self._minutes.get(self._now_minute)
            if cell is not None:
                found |= cell.containers()
        return {(d, c) for d, c in found if d and c}

    def series(
        self,
        database: str,
        container: str,
        metric: str,
        since: float,
        until: float,
        grain_minutes: int = 1,
        *,
        split_pkrange: bool = False,
        now: float | None = None,
        tick: Callable[[], None] | None = None,
    ) -> list[Point]:
        """Values of `metric` for one container over [since, until) (epoch seconds), by interval.

        `split_pkrange` adds `PartitionKeyRangeId` to the totals' dimensions: Azure Monitor's metrics
        do not have it, but the stand-in's `CDBDataPlaneRequests` rows (429s by pkrange) do.

        Intervals start at multiples of the grain, as Azure aligns them; PT5M and coarser are
        aggregated from PT1M as Azure does: the maximum for `NormalizedRUConsumption`, the sum for
        the totals and for key and query RU and counts (whose top N is then taken again per interval
        and pkrange). Storage metrics and KEY_SIZE are states, not events: each interval gets the
        value in force at its last minute (or `now`, default the clock, if earlier), from the first
        snapshot on.

        `tick` is called once per minute read (a caller's deadline check: what it raises ends the read).
        """
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        if grain_minutes not in GRAINS_MINUTES:
            raise ValueError(f"grain_minutes must be one of {GRAINS_MINUTES}")
        if metric in STORAGE_METRICS or metric == KEY_SIZE:
            if now is None:
                now = self.clock() if self.clock is not None else (self._now_minute + 1) * 60 - 1
            since = max(since, self._oldest_kept(int(now // 60)) * 60.0)  # nothing before the retention
            picks = cells_.samples(since, until, grain_minutes, now)
            with self._lock:
                return self._states(database, container, metric, picks)
        acc: dict[tuple[int, tuple[str, ...]], float] = {}
        cells = self._cells(database, container, metric, since, until, grain_minutes, split_pkrange, tick)
        for interval, dims, value in cells:
            slot = (interval, dims)
            if metric == NORMALIZED_RU:
                acc[slot] = max(acc.get(slot, 0.0), value)
            else:
                acc[slot] = acc.get(slot, 0.0) + value
        names = _DIMENSIONS[metric]
        if split_pkrange and metric in (TOTAL_REQUESTS, TOTAL_REQUEST_UNITS):
            names = (*names, PARTITION_KEY_RANGE_ID)
        points = [Point(float(i * 60), dict(zip(names, d, strict=True)), v) for (i, d), v in sorted(acc.items())]
        return cells_.top_points(points, self.config.top_keys) if metric in _TOP_N else points

    def minute_entries(
        self,
        database: str,
        container: str,
        table: str,
        since: float,
        until: float,
        *,
        by_pk: bool = False,
        tick: Callable[[], None] | None = None,
    ) -> Iterator[tuple[float, tuple[str, ...], list[float]]]:
        """One container's cells over [since, until) minute by minute, oldest first, as recorded: (minute
        start in epoch seconds, dimensions, both values, copied) of `table` "ops" ([requests, RU]), "keys" or
        "queries" ([RU, count], their top N per pkrange), or "key_ops" (the top keys' [RU] by operation and
        second of the minute: dimensions pkrange, key, operation, second). What a per-minute log table reads: unlike
        `series`, nothing is aggregated, so one minute is held at a time (through `series`, a 10,000-minute
        history held 40 MB of points). `tick` as for `series`."""
        coll, top = (database, container), self.config.top_keys
        for minute, cell in self._picked(since, until, tick):
            with self._lock:
                found = [(dims, list(values)) for dims, values in cells_.cell_entries(cell, coll, table, by_pk, top)]
            yield from ((minute * 60.0, dims, values) for dims, values in found)

    def _picked(self, since: float, until: float, tick: Callable[[], None] | None) -> Iterator[tuple[int, Minute]]:
        """The minutes overlapping [since, until), oldest first, calling `tick` before each; the lock is taken
        per minute by the caller, so requests are recorded meanwhile."""
        first, last = int(since // 60), int(-(-until // 60))
        with self._lock:
            picked = sorted(((m, c) for m, c in self._minutes.items() if first <= m < last), key=lambda mc: mc[0])
        for minute, cell in picked:
            if tick is not None:
                tick()
            yield minute, cell

    def _cells(
        self,
        database: str,
        container: str,
        metric: str,
        since: float,
        until: float,
        grain: int,
        by_pk: bool,
        tick: Callable[[], None] | None = None,
    ) -> Iterator[tuple[int, tuple[str, ...], float]]:
        if metric == NORMALIZED_RU:
            table, index = "peaks", 0
        elif metric in _TOP_N:
            table, index = (
                ("keys" if metric in (KEY_RU, KEY_COUNT) else "queries"),
                int(metric in (KEY_COUNT, QUERY_COUNT)),
            )
        else:
            table, index = "ops", int(metric != TOTAL_REQUESTS)
        for minute, cell in self._picked(since, until, tick):
            with self._lock:
                found = cells_.cell_values(cell, (database, container), table, index, by_pk, self.config.top_keys)
            interval = minute - minute % grain
            for dims, value in found:
                yield interval, dims, value

    # -- persistence ---------------------------------------------------------------------------

    def save(self) -> None:
        """Write the history to `path` (atomically); nothing to do without one. The lock is taken one
        minute at a time, so the requests being recorded meanwhile wait for one minute's line at most."""
        if self.path is None:
            return
        with self._save_lock:
            with self._lock:
                changes, minutes = self.changes, list(self._minutes)
            lines = []
            for i, minute in enumerate(minutes):
                if i % 64 == 0:
                    time.sleep(0)  # a checkpoint runs beside the server: its requests take the GIL first
                with self._lock:
                    c = self._minutes.get(minute)
                    if c is not None:
                        line = on_disk.minute_line(minute, c.ops, c.peaks, c.keys, c.queries, c.sizes)
                        lines.append({**line, "key_ops": on_disk.key_ops_field(c.key_ops)})
            with self._lock:
                lines += self._storage.to_lines()
                lines += [{"keybase": [*part, list(sizes.items())]} for part, sizes in self._key_base.items()]
            on_disk.write_lines(self.path, lines)
            self._saved_changes = changes

    def checkpoint(self) -> bool:
        """Save if anything was recorded since the last save (what a crash may lose is what came after
        it); whether it saved. Called every `CHECKPOINT_S` by the server."""
        if self.path is None or self.changes == self._saved_changes:
            return False
        self.save()
        return True

    @classmethod
    def open(cls, path: str | Path, config: HistoryConfig | None = None) -> History:
        """The history saved at `path` (empty if none), saving back there."""
        history = cls(config, path)
        history.load(on_disk.read_lines(Path(path)))
        return history

    def load(self, lines: Iterable[dict[str, Any]]) -> None:
        """Add saved minutes (closed) and series. Retention applies from the newest minute."""
        with self._lock:
            for line in lines:
                if self._storage.load_line(line):
                    continue
                if "keybase" in line:
                    d, c, p, sizes = line["keybase"]
                    self._key_base[(d, c, p)] = dict(sizes)
                    continue
                minute, cell = int(line["m"]), Minute(sealed=True)
                cell.ops, cell.peaks, cell.keys, cell.queries, cell.sizes = on_disk.parse_minute(line)
                cell.key_ops = on_disk.parse_key_ops(line)
                self._minutes[minute] = cell
                self._seen |= cell.containers()
                self._now_minute = max(self._now_minute, minute)
            self._minutes = dict(sorted(self._minutes.items()))
            self._expire()
            self._storage.prune(self._oldest_kept(self._now_minute))
            self._saved_changes = self.changes


_DIMENSIONS: dict[str, tuple[str, ...]] = {
    NORMALIZED_RU: (PARTITION_KEY_RANGE_ID,),
    TOTAL_REQUEST_UNITS: (OPERATION_TYPE, STATUS_CODE),
    TOTAL_REQUESTS: (OPERATION_TYPE, STATUS_CODE),
    KEY_RU: (PARTITION_KEY_RANGE_ID, PARTITION_KEY),
    KEY_COUNT: (PARTITION_KEY_RANGE_ID, PARTITION_KEY),
    KEY_SIZE: (PARTITION_KEY_RANGE_ID, PARTITION_KEY),
    QUERY_RU: (PARTITION_KEY_RANGE_ID, QUERY_TEXT),
    QUERY_COUNT: (PARTITION_KEY_RANGE_ID, QUERY_TEXT),
    DATA_USAGE: (),
    INDEX_USAGE: (),
    DOCUMENT_COUNT: (),
    PARTITION_SIZE: (PARTITION_KEY_RANGE_ID,),
    PARTITION_THROUGHPUT: (PARTITION_KEY_RANGE_ID,),
    PROVISIONED: (),
    AUTOSCALE_MAX: (),
}
_TOP_N = (KEY_RU, KEY_COUNT, QUERY_RU, QUERY_COUNT)
