"""Recording and reading the storage and throughput snapshots: the part of `History` that sees state.

A mixin of `emulator.history.aggregates.History` (which owns the lock, the minute cells and the retention), so the
facade stays one object for the engine's sampler (`emulator.engine.sampler`) and the stand-ins.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
)
from emulator.history import cells as cells_
from emulator.history.cells import Minute, PartKey, Point
from emulator.history.changepoints import Snapshots, Value, top_sizes

KEY_SIZE = "PartitionKeySize"  # emulator.history.aggregates.KEY_SIZE
_OFFER = {PROVISIONED: 0, AUTOSCALE_MAX: 1}  # index in (provisioned, autoscale max)
_PARTITION = {PARTITION_SIZE: 0, PARTITION_THROUGHPUT: 2}  # in (bytes, docs, budget)
_TOTAL = {DATA_USAGE: 0, DOCUMENT_COUNT: 1, INDEX_USAGE: None}  # IndexUsage: no index storage, always 0


class SnapshotRecorder:
    """Change-points of storage and throughput, and the key sizes writes leave, per minute."""

    _lock: threading.Lock
    changes: int  # bumped by every recording, under the lock: a checkpoint saves only a changed history
    _storage: Snapshots
    _minutes: dict[int, Minute]
    _key_base: dict[PartKey, dict[str, float]]
    top_keys: int
    open_keys_cap: int

    def _open(self, minute: int) -> Minute | None:
        raise NotImplementedError

    def snapshot(
        self,
        now: float,
        database: str,
        container: str,
        pkrange_id: str,
        size: float,
        documents: float,
        budget: float,
        key: str = "",
        key_size: float = 0.0,
    ) -> None:
        """A write changed this physical partition (and, with `key`, that logical key's size)."""
        minute = int(now // 60)
        with self._lock:
            self.changes += 1
            self._storage.set_partition(minute, (database, container), pkrange_id, (size, documents, budget))
            if key:
                cell = self._open(minute)
                if cell is not None:
                    sizes = cell.sizes.setdefault((database, container, pkrange_id), {})
                    if cell.sealed and key not in sizes and len(sizes) >= self.top_keys:
                        return
                    sizes[key] = key_size
                    if len(sizes) > self.open_keys_cap:
                        cell.sizes[(database, container, pkrange_id)] = top_sizes(sizes, self.open_keys_cap // 2)

    def snapshot_container(
        self,
        now: float,
        database: str,
        container: str,
        partitions: Mapping[str, Value],
        throughput: float,
        autoscale_max: float,
        keys: Mapping[str, Mapping[str, float]] | None = None,
    ) -> None:
        """The whole container after a metadata change: `partitions` (pkrange -> (bytes, documents,
        budget)) replace the live ones (a partition not among them has split); `keys`: top key sizes of
        partitions that just appeared (children of a split)."""
        minute, coll = int(now // 60), (database, container)
        with self._lock:
            self.changes += 1
            for pk in self._storage.live_partitions(coll) - set(partitions):
                self._storage.set_partition(minute, coll, pk, None)
            for pk, value in partitions.items():
                self._storage.set_partition(minute, coll, pk, value)
            self._storage.set_offer(minute, coll, (throughput, autoscale_max))
            cell = self._open(minute) if keys else None
            for pk, sizes in (keys or {}).items():
                if cell is not None:
                    cell.sizes.setdefault((database, container, pk), {}).update(sizes)

    def end_container(self, now: float, database: str, container: str) -> None:
        """The container was deleted: its series end at this minute."""
        with self._lock:
            self.changes += 1
            self._storage.end_container(int(now // 60), (database, container))

    def live_partitions(self, database: str, container: str) -> set[str]:
        with self._lock:
            return self._storage.live_partitions((database, container))

    def _states(self, database: str, container: str, metric: str, picks: list[tuple[int, int]]) -> list[Point]:
        coll = (database, container)
        parts = self._storage.parts.get(coll, {})
        if metric == KEY_SIZE:
            base = {p: s for (d, c, p), s in self._key_base.items() if (d, c) == coll}
            changes = (
                (m, {p: s for (d, c, p), s in cell.sizes.items() if (d, c) == coll})
                for m, cell in self._minutes.items()
            )
            return list(cells_.key_size_points(base, changes, parts, picks, self.top_keys))
        if metric in _OFFER:
            return cells_.offer_points(self._storage.offers.get(coll), picks, _OFFER[metric])
        if metric in _PARTITION:
            return cells_.partition_points(parts, picks, _PARTITION[metric])
        return cells_.total_points(parts, picks, _TOTAL[metric])
