"""Storage and throughput snapshots for the Azure Monitor stand-in: change-points, forward-filled.

Storage changes only through metered requests (writes, splits, offer replaces, container creates and
deletes), so instead of sampling every container every minute the history keeps, per series, the
minutes at which its value changed (a write overwrites its minute's value: O(1)). The value at minute m
is the latest change-point at or before m; `None` marks the end of a series (the container was deleted,
or the physical partition split: its children's series start at that minute).

Series kept: per (database, container, pkrange) `(bytes, documents, RU/s budget)` and per (database,
container) `(provisioned RU/s, autoscale max RU/s or 0)`.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any

Value = tuple[float, ...]
Coll = tuple[str, str]  # database, container


class Series:
    """The change-points of one value, oldest first."""

    __slots__ = ("minutes", "values")

    def __init__(self) -> None:
        self.minutes: list[int] = []
        self.values: list[Value | None] = []

    def set(self, minute: int, value: Value | None) -> None:
        """The value from `minute` on; the same value again is no change, an earlier minute counts as the
        last one (the clock went back)."""
        if self.values and self.values[-1] == value:
            return
        if not self.minutes and value is None:
            return
        if self.minutes and minute <= self.minutes[-1]:
            self.values[-1] = value
        else:
            self.minutes.append(minute)
            self.values.append(value)

    def at(self, minute: int) -> Value | None:
        i = bisect_right(self.minutes, minute) - 1
        return self.values[i] if i >= 0 else None

    def sampled(self, minutes: list[int]) -> Iterator[tuple[int, Value]]:
        """(minute, value) for each of the increasing `minutes` at which the series has a value."""
        i, n = -1, len(self.minutes)
        for minute in minutes:
            while i + 1 < n and self.minutes[i + 1] <= minute:
                i += 1
            value = self.values[i] if i >= 0 else None
            if value is not None:
                yield minute, value

    @property
    def live(self) -> bool:
        return bool(self.values) and self.values[-1] is not None

    def prune(self, oldest: int) -> None:
        """Forget change-points superseded before `oldest` (the one in force then is kept)."""
        cut = bisect_right(self.minutes, oldest) - 1
        if cut > 0:
            del self.minutes[:cut], self.values[:cut]
        if len(self.values) == 1 and self.values[0] is None:
            self.minutes.clear()
            self.values.clear()

    def to_json(self) -> list[list[float]]:
        return [[m] if v is None else [m, *v] for m, v in zip(self.minutes, self.values, strict=True)]

    @classmethod
    def from_json(cls, points: Iterable[list[float]]) -> Series:
        series = cls()
        for m, *v in points:
            series.minutes.append(int(m))
            series.values.append(tuple(v) if v else None)
        return series


class Snapshots:
    """The storage and throughput series of every container."""

    def __init__(self) -> None:
        self.parts: dict[Coll, dict[str, Series]] = {}
        self.offers: dict[Coll, Series] = {}

    def set_partition(self, minute: int, coll: Coll, pkrange: str, value: Value | None) -> None:
        parts = self.parts.get(coll)
        if parts is None:
            parts = self.parts[coll] = {}
        series = parts.get(pkrange)
        if series is None:
            series = parts[pkrange] = Series()
        series.set(minute, value)

    def set_offer(self, minute: int, coll: Coll, value: Value | None) -> None:
        series = self.offers.get(coll)
        if series is None:
            series = self.offers[coll] = Series()
        series.set(minute, value)

    def live_partitions(self, coll: Coll) -> set[str]:
        return {pk for pk, s in self.parts.get(coll, {}).items() if s.live}

    def end_container(self, minute: int, coll: Coll) -> None:
        for series in self.parts.get(coll, {}).values():
            series.set(minute, None)
        if coll in self.offers:
            self.offers[coll].set(minute, None)

    def prune(self, oldest: int) -> None:
        for parts in self.parts.values():
            for series in parts.values():
                series.prune(oldest)
        for series in self.offers.values():
            series.prune(oldest)

    def to_lines(self) -> Iterator[dict[str, Any]]:
        for (db, coll), parts in self.parts.items():
            for pk, series in parts.items():
                if series.minutes:
                    yield {"part": [db, coll, pk, series.to_json()]}
        for (db, coll), series in self.offers.items():
            if series.minutes:
                yield {"offer": [db, coll, series.to_json()]}

    def load_line(self, line: dict[str, Any]) -> bool:
        """Add a saved series line; False when the line is not one."""
        if "part" in line:
            db, coll, pk, points = line["part"]
            self.parts.setdefault((db, coll), {})[pk] = Series.from_json(points)
        elif "offer" in line:
            db, coll, points = line["offer"]
            self.offers[(db, coll)] = Series.from_json(points)
        else:
            return False
        return True


def top_sizes(sizes: dict[str, float], n: int) -> dict[str, float]:
    """The `n` largest non-zero sizes (a key of size 0 was deleted)."""
    live = {k: v for k, v in sizes.items() if v > 0}
    return live if len(live) <= n else dict(heapq.nlargest(n, live.items(), key=itemgetter(1)))
