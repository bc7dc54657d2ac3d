"""Per-minute metric aggregates kept as requests are metered: what the Azure Monitor stand-in serves.

Azure Monitor answers from pre-aggregated minutes, not from raw requests, and so does this: each
request updates a few dict entries keyed by its second and minute (O(1)), and the 2M-record raw log in
`accounting` is never scanned. Per UTC minute it keeps:
- per (database, container, pkrange, operation, status): request count and RU sum (`TotalRequests`,
  `TotalRequestUnits`, azure-monitor.md metric table);
- per (database, container, pkrange): the highest per-second RU / budget ratio of the minute, the budget
  being the partition's RU/s in force at that second (throughput changes and splits included), which
  gives `NormalizedRUConsumption` = min(100, 100 x that ratio) (ru-cost-model.md P11);
- per (database, container, pkrange): RU by logical partition key, cut to the top N when the minute
  closes (`CDBPartitionKeyRUConsumption`'s view, azure-monitor.md).

Memory is bounded by the retention (93 days, Azure Monitor's) and a cap on minutes kept; within a
minute, by the schema (containers x pkranges x operations x statuses) and the top-N key lists.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from emulator import history_store

# azure-monitor.md, metric table notes: "Platform metrics are kept for 93 days."
AZURE_MONITOR_RETENTION_DAYS = 93
# azure-monitor.md: query intervals PT1M (the emitted grain) and the coarser ones aggregated server-side
# (PT5M, PT15M, PT30M, PT1H, PT6H, PT12H, P1D).
GRAINS_MINUTES = (1, 5, 15, 30, 60, 360, 720, 1440)

NORMALIZED_RU = "NormalizedRUConsumption"  # azure-monitor.md: Percent, Maximum, by PartitionKeyRangeId
TOTAL_REQUEST_UNITS = "TotalRequestUnits"  # azure-monitor.md: Count, Total, by OperationType, StatusCode
TOTAL_REQUESTS = "TotalRequests"  # azure-monitor.md: Count, Count, by OperationType, StatusCode
KEY_RU = "PartitionKeyRUConsumption"  # azure-monitor.md: CDBPartitionKeyRUConsumption, RU per logical key
METRICS = (NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS, KEY_RU)

OpKey = tuple[str, str, str, str, int]  # database, container, pkrange, operation, status
PartKey = tuple[str, str, str]  # database, container, pkrange


@dataclass(frozen=True)
class HistoryConfig:
    """How much history is kept. Defaults follow Azure Monitor; all are configurable."""

    retention_days: float = AZURE_MONITOR_RETENTION_DAYS  # azure-monitor.md: metrics kept 93 days
    max_minutes: int = AZURE_MONITOR_RETENTION_DAYS * 1440  # a minute per minute of the retention
    top_keys: int = 10  # logical keys kept per (container, pkrange, minute); the default
    # Distinct keys tracked in the open minute before the smallest are evicted (bounds a minute that
    # touches millions of keys; past it the top-N becomes approximate). Not from Azure: a memory guard.
    open_keys_cap: int = 10_000


@dataclass(frozen=True)
class Point:
    """One value of a metric for one interval (start time, epoch seconds) and one set of dimensions."""

    time: float
    dimensions: Mapping[str, str]
    value: float


@dataclass
class _Minute:
    ops: dict[OpKey, list[float]] = field(default_factory=dict)  # [count, RU]
    peaks: dict[PartKey, list[float]] = field(default_factory=dict)  # [ratio, RU of that second, budget]
    keys: dict[PartKey, dict[str, float]] = field(default_factory=dict)  # logical key -> RU
    sealed: bool = False


class History:
    """Per-minute aggregates, recorded incrementally, queried with `series`; saved to `path` if given."""

    def __init__(self, config: HistoryConfig | None = None, path: str | Path | None = None) -> None:
        self.config = config or HistoryConfig()
        self.path = Path(path) if path is not None else None
        self._minutes: dict[int, _Minute] = {}
        self._seconds: dict[PartKey, list[float]] = {}  # [second, RU spent in it so far]
        self._now_minute = -1  # newest minute seen
        self._lock = threading.Lock()

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
    ) -> None:
        """Add one metered request (`budget`: its partition's RU/s at that moment, 0 when none)."""
        second = int(now // 1)
        minute = second // 60
        with self._lock:
            if minute != self._now_minute:
                if minute > self._now_minute:
                    self._advance(minute)
                elif self._too_old(minute):
                    return  # past the retention or the cap: Azure would not have it either
            cell = self._minutes.get(minute)
            if cell is None:
                cell = self._minutes[minute] = _Minute(sealed=minute < self._now_minute)
                if cell.sealed:  # a late minute (the clock went back): keep time order and the cap
                    self._minutes = dict(sorted(self._minutes.items()))
                    self._expire()
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
            if partition_key:
                self._add_key(cell, part, partition_key, ru)

    def _add_key(self, cell: _Minute, part: PartKey, key: str, ru: float) -> None:
        keys = cell.keys.get(part)
        if keys is None:
            keys = cell.keys[part] = {}
        if key in keys:
            keys[key] += ru
        elif not cell.sealed or len(keys) < self.config.top_keys:
            keys[key] = ru
            if len(keys) > self.config.open_keys_cap:  # amortised: prunes once per cap/2 new keys
                cell.keys[part] = _top(keys, self.config.open_keys_cap // 2)

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
            cell.sealed = True
            cell.keys = {part: _top(keys, self.config.top_keys) for part, keys in cell.keys.items()}
        self._now_minute = minute
        self._expire(room=0 if minute in self._minutes else 1)
        start = minute * 60
        self._seconds = {part: sec for part, sec in self._seconds.items() if sec[0] >= start}

    def _expire(self, room: int = 0) -> None:
        """Drop minutes past the retention, then the oldest past the cap (leaving `room` for minutes
        about to open); `_minutes` is in time order, so this pops from the front and costs only what
        it drops."""
        oldest = self._oldest_kept(self._now_minute)
        while self._minutes:
            first = next(iter(self._minutes))
            if first >= oldest and len(self._minutes) + room <= self.config.max_minutes:
                break
            del self._minutes[first]

    # -- queries -------------------------------------------------------------------------------

    def minutes(self) -> list[int]:
        """The minutes kept (minute numbers: epoch seconds // 60), oldest first."""
        with self._lock:
            return sorted(self._minutes)

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
    ) -> list[Point]:
        """Values of `metric` for one container over [since, until) (epoch seconds), by interval.

        `split_pkrange` adds `PartitionKeyRangeId` to the totals' dimensions: Azure Monitor's metrics
        do not have it, but the stand-in's `CDBDataPlaneRequests` rows (429s by pkrange) do.

        Intervals start at multiples of the grain, as Azure aligns them; PT5M and coarser are
        aggregated from PT1M as Azure does: the maximum for `NormalizedRUConsumption`, the sum for
        the totals and for key RU (whose top N is then taken again per interval and pkrange).
        """
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
        if grain_minutes not in GRAINS_MINUTES:
            raise ValueError(f"grain_minutes must be one of {GRAINS_MINUTES}")
        acc: dict[tuple[int, tuple[str, ...]], float] = {}
        cells = self._cells(database, container, metric, since, until, grain_minutes, split_pkrange)
        for interval, dims, value in cells:
            slot = (interval, dims)
            if metric == NORMALIZED_RU:
                acc[slot] = max(acc.get(slot, 0.0), value)
            else:
                acc[slot] = acc.get(slot, 0.0) + value
        names = _DIMENSIONS[metric]
        if split_pkrange and metric in (TOTAL_REQUESTS, TOTAL_REQUEST_UNITS):
            names = (*names, "PartitionKeyRangeId")
        points = [Point(float(i * 60), dict(zip(names, d, strict=True)), v) for (i, d), v in sorted(acc.items())]
        return _top_points(points, self.config.top_keys) if metric == KEY_RU else points

    def _cells(
        self, database: str, container: str, metric: str, since: float, until: float, grain: int, by_pk: bool
    ) -> Iterator[tuple[int, tuple[str, ...], float]]:
        first, last = int(since // 60), int(-(-until // 60))  # minutes overlapping [since, until)
        with self._lock:
            picked = [(m, c) for m, c in self._minutes.items() if first <= m < last]
            for minute, cell in picked:
                interval = minute - minute % grain
                if metric == NORMALIZED_RU:
                    for (db, coll, pk), peak in cell.peaks.items():
                        if db == database and coll == container:
                            yield interval, (pk,), min(100.0, 100.0 * peak[0])
                elif metric == KEY_RU:
                    for (db, coll, pk), keys in cell.keys.items():
                        if db == database and coll == container:
                            for key, ru in _top(keys, self.config.top_keys).items():
                                yield interval, (pk, key), ru
                else:
                    index = 0 if metric == TOTAL_REQUESTS else 1
                    for (db, coll, pk, op, status), values in cell.ops.items():
                        if db == database and coll == container:
                            yield interval, (op, str(status), pk) if by_pk else (op, str(status)), values[index]

    # -- persistence ---------------------------------------------------------------------------

    def save(self) -> None:
        """Write the history to `path` (atomically); nothing to do without one."""
        if self.path is None:
            return
        with self._lock:
            lines = [_to_line(m, cell, self.config.top_keys) for m, cell in self._minutes.items()]
        history_store.write_lines(self.path, lines)

    @classmethod
    def open(cls, path: str | Path, config: HistoryConfig | None = None) -> History:
        """The history saved at `path` (empty if none), saving back there."""
        history = cls(config, path)
        history.load(history_store.read_lines(Path(path)))
        return history

    def load(self, lines: Iterable[dict[str, Any]]) -> None:
        """Add saved minutes; they count as closed. Retention applies from the newest one."""
        with self._lock:
            for line in lines:
                minute = int(line["m"])
                cell = _Minute(sealed=True)
                cell.ops = {(d, c, p, o, int(s)): [n, ru] for d, c, p, o, s, n, ru in line["ops"]}
                cell.peaks = {(d, c, p): [r, ru, b] for d, c, p, r, ru, b in line["peaks"]}
                cell.keys = {(d, c, p): dict(keys) for d, c, p, keys in line["keys"]}
                self._minutes[minute] = cell
                self._now_minute = max(self._now_minute, minute)
            self._minutes = dict(sorted(self._minutes.items()))
            self._expire()


_DIMENSIONS = {
    NORMALIZED_RU: ("PartitionKeyRangeId",),
    TOTAL_REQUEST_UNITS: ("OperationType", "StatusCode"),
    TOTAL_REQUESTS: ("OperationType", "StatusCode"),
    KEY_RU: ("PartitionKeyRangeId", "PartitionKey"),
}


def _top(keys: dict[str, float], n: int) -> dict[str, float]:
    return keys if len(keys) <= n else dict(heapq.nlargest(n, keys.items(), key=itemgetter(1)))


def _top_points(points: list[Point], n: int) -> list[Point]:
    """The N largest key points per (interval, pkrange), largest first."""
    groups: dict[tuple[float, str], list[Point]] = {}
    for p in points:
        groups.setdefault((p.time, p.dimensions["PartitionKeyRangeId"]), []).append(p)
    return [p for _, group in sorted(groups.items()) for p in heapq.nlargest(n, group, key=lambda p: p.value)]


def _to_line(minute: int, cell: _Minute, top_keys: int) -> dict[str, Any]:
    return {
        "m": minute,
        "ops": [[*k, int(v[0]), v[1]] for k, v in cell.ops.items()],
        "peaks": [[*k, *v] for k, v in cell.peaks.items()],
        "keys": [[*k, list(_top(v, top_keys).items())] for k, v in cell.keys.items()],
    }
