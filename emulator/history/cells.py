"""The per-minute cell of `emulator.history.aggregates` and the pure functions that read cells and series.

Kept apart from `History` (recording, locking, retention) so each stays small; nothing here locks.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from cosmoscore.monitor.logs import PARTITION_KEY
from cosmoscore.monitor.metrics import PARTITION_KEY_RANGE_ID
from emulator.history.changepoints import Coll, Series, top_sizes

OpKey = tuple[str, str, str, str, int]  # database, container, pkrange, operation, status
PartKey = tuple[str, str, str]  # database, container, pkrange


@dataclass(frozen=True)
class Point:
    """One value of a metric for one interval (start time, epoch seconds) and one set of dimensions."""

    time: float
    dimensions: Mapping[str, str]
    value: float


@dataclass
class Minute:
    ops: dict[OpKey, list[float]] = field(default_factory=dict)  # [count, RU]
    peaks: dict[PartKey, list[float]] = field(default_factory=dict)  # [ratio, RU of that second, budget]
    keys: dict[PartKey, dict[str, list[float]]] = field(default_factory=dict)  # logical key -> [RU, count]
    queries: dict[PartKey, dict[str, list[float]]] = field(default_factory=dict)  # query text -> [RU, count]
    sizes: dict[PartKey, dict[str, float]] = field(default_factory=dict)  # logical key -> bytes after a write
    # logical key -> (operation, second of the minute) -> RU: a CDBPartitionKeyRUConsumption row each
    key_ops: dict[PartKey, dict[str, dict[tuple[str, int], float]]] = field(default_factory=dict)
    sealed: bool = False

    def seal(self, top: int) -> None:
        """The minute closed: keep the top N keys and query texts (by RU) and key sizes (by size)."""
        self.sealed = True
        self.keys = {part: top_ru(keys, top) for part, keys in self.keys.items()}
        self.key_ops = {
            part: {k: slots for k, slots in per_key.items() if k in self.keys.get(part, {})}
            for part, per_key in self.key_ops.items()
        }
        self.queries = {part: top_ru(texts, top) for part, texts in self.queries.items()}
        self.sizes = {part: _largest(sizes, top) for part, sizes in self.sizes.items()}

    def containers(self) -> set[Coll]:
        return {(k[0], k[1]) for k in self.ops} | {(k[0], k[1]) for k in self.sizes}


def cell_values(
    cell: Minute, coll: Coll, table: str, index: int, by_pk: bool, top_keys: int
) -> list[tuple[tuple[str, ...], float]]:
    """(dimensions, value) of one container in one minute's cell: `table` "peaks" (normalized RU per pkrange,
    in percent), "keys" or "queries" (their top `top_keys` per pkrange; `index` 0: RU, 1: count) or "ops"
    (per operation and status, `by_pk` adding the pkrange; `index` 0: requests, 1: RU)."""
    database, container = coll
    if table == "peaks":
        return [
            ((pk,), min(100.0, 100.0 * peak[0]))
            for (db, c, pk), peak in cell.peaks.items()
            if db == database and c == container
        ]
    return [(dims, values[index]) for dims, values in cell_entries(cell, coll, table, by_pk, top_keys)]


def cell_entries(
    cell: Minute, coll: Coll, table: str, by_pk: bool, top_keys: int
) -> list[tuple[tuple[str, ...], list[float]]]:
    """(dimensions, both values) of one container in one minute's cell: `table` "keys" or "queries" (their
    top `top_keys` per pkrange by RU; [RU, count]) or "ops" (per operation and status, `by_pk` adding the
    pkrange; [requests, RU])."""
    database, container = coll
    if table == "key_ops":
        return key_op_entries(cell, coll, top_keys)
    if table in ("keys", "queries"):
        entries = cell.keys if table == "keys" else cell.queries
        return [
            ((pk, key), values)
            for (db, c, pk), keys in entries.items()
            if db == database and c == container
            for key, values in top_ru(keys, top_keys).items()
        ]
    return [
        ((op, str(status), pk) if by_pk else (op, str(status)), values)
        for (db, c, pk, op, status), values in cell.ops.items()
        if db == database and c == container
    ]


def key_op_entries(cell: Minute, coll: Coll, top_keys: int) -> list[tuple[tuple[str, ...], list[float]]]:
    """((pkrange, key, operation, second of the minute), [RU]) of one container's top keys in one minute's
    cell, by second; a key kept without that detail (a minute saved before it was recorded) is one entry of
    the whole minute at its second 0 with no operation."""
    database, container = coll
    found: list[tuple[tuple[str, ...], list[float]]] = []
    for (db, c, pk), keys in cell.keys.items():
        if db != database or c != container:
            continue
        detail = cell.key_ops.get((db, c, pk), {})
        for key, values in top_ru(keys, top_keys).items():
            slots = detail.get(key)
            if not slots:
                found.append(((pk, key, "", "0"), [values[0]]))
                continue
            ordered = sorted(slots.items(), key=lambda kv: (kv[0][1], kv[0][0]))
            found.extend(((pk, key, op, str(second)), [ru]) for (op, second), ru in ordered)
    return found


def top_ru(keys: dict[str, list[float]], n: int) -> dict[str, list[float]]:
    """The N entries with the most RU; the empty key (operations with no single logical key) is kept beside
    them, so it never takes a key's place."""
    if len(keys) <= n:
        return keys
    top = dict(heapq.nlargest(n, ((k, v) for k, v in keys.items() if k), key=lambda kv: kv[1][0]))
    if "" in keys:
        top[""] = keys[""]
    return top


def _largest(sizes: dict[str, float], n: int) -> dict[str, float]:
    """The N largest sizes a minute's writes left (a key emptied in the minute may drop out)."""
    return sizes if len(sizes) <= n else dict(heapq.nlargest(n, sizes.items(), key=lambda kv: kv[1]))


def top_points(points: list[Point], n: int) -> list[Point]:
    """The N largest points per (interval, pkrange), largest first."""
    groups: dict[tuple[float, str], list[Point]] = {}
    for p in points:
        groups.setdefault((p.time, p.dimensions[PARTITION_KEY_RANGE_ID]), []).append(p)
    return [p for _, group in sorted(groups.items()) for p in heapq.nlargest(n, group, key=lambda p: p.value)]


def samples(since: float, until: float, grain: int, now: float) -> list[tuple[int, int]]:
    """(interval start, sample minute) per interval of [since, until) begun by `now`: a state's value
    for an interval is the one in force at its last minute, or now if earlier."""
    current = int(now // 60)
    first = int(since // 60)
    first -= first % grain
    out = []
    for start in range(first, int(-(-until // 60)), grain):
        if start > current:
            break
        out.append((start, min(start + grain - 1, current)))
    return out


def partition_points(parts: Mapping[str, Series], picks: list[tuple[int, int]], index: int) -> list[Point]:
    """One point per interval and live partition: value `index` of (bytes, documents, budget)."""
    minutes, start_of = [m for _, m in picks], {m: s for s, m in picks}
    points = [
        Point(start_of[m] * 60.0, {PARTITION_KEY_RANGE_ID: pk}, v[index])
        for pk, series in parts.items()
        for m, v in series.sampled(minutes)
    ]
    return sorted(points, key=lambda p: (p.time, p.dimensions[PARTITION_KEY_RANGE_ID]))


def total_points(parts: Mapping[str, Series], picks: list[tuple[int, int]], index: int | None) -> list[Point]:
    """One point per interval with a live partition: the sum of value `index` (None: 0, IndexUsage)."""
    minutes, start_of = [m for _, m in picks], {m: s for s, m in picks}
    totals: dict[int, float] = {}
    for series in parts.values():
        for m, v in series.sampled(minutes):
            totals[m] = totals.get(m, 0.0) + (0.0 if index is None else v[index])
    return [Point(start_of[m] * 60.0, {}, v) for m, v in sorted(totals.items())]


def offer_points(series: Series | None, picks: list[tuple[int, int]], index: int) -> list[Point]:
    """One point per interval: value `index` of (provisioned, autoscale max), when positive."""
    if series is None:
        return []
    start_of = {m: s for s, m in picks}
    return [Point(start_of[m] * 60.0, {}, v[index]) for m, v in series.sampled(list(start_of)) if v[index] > 0]


def key_size_points(
    base: Mapping[str, Mapping[str, float]],
    cells: Iterable[tuple[int, Mapping[str, Mapping[str, float]]]],
    alive: Mapping[str, Series],
    picks: list[tuple[int, int]],
    top: int,
) -> Iterator[Point]:
    """The latest size per key at each sample minute (the base, then the minutes' sizes in order),
    top N per pkrange while the pkrange lives; `cells`: (minute, pkrange -> key -> bytes), in order."""
    running = {pk: dict(sizes) for pk, sizes in base.items()}
    pending = iter(cells)
    nxt = next(pending, None)
    for start, minute in picks:
        while nxt is not None and nxt[0] <= minute:
            for pk, sizes in nxt[1].items():
                running.setdefault(pk, {}).update(sizes)
            nxt = next(pending, None)
        for pk in sorted(running):
            series = alive.get(pk)
            if series is None or series.at(minute) is not None:
                ranked = sorted(top_sizes(running[pk], top).items(), key=lambda kv: -kv[1])
                for key, size in ranked:
                    yield Point(start * 60.0, {PARTITION_KEY_RANGE_ID: pk, PARTITION_KEY: key}, size)
