"""Storage and throughput change-points, taken from the engine's state after a metered request that
changed it (a write, a split, an offer replace, a container create or delete): never on reads.

A write costs O(1): its partition's running size and document count (`PkRange`, kept incrementally by
`emulator.engine.state`) and its logical key's size. A metadata change, a split (the container's range version
moved) or a first sight of a container re-snapshots the whole container: every range, its throughput,
and the top logical keys of ranges the history has not seen yet (a split's children).
"""

from __future__ import annotations

import heapq

from emulator.engine.metering import Meter
from emulator.engine.model import Container
from emulator.engine.state import State
from emulator.history.aggregates import History


class StorageSampler:
    """Called by `Metering` (under its lock) with a request's `Meter` when `meter.changed` is set."""

    def __init__(self, state: State, history: History) -> None:
        self.state = state
        self.history = history
        self._versions: dict[tuple[str, str], tuple[Container, int]] = {}  # range layout last snapshotted

    def __call__(self, now: float, meter: Meter) -> None:
        for coll in meter.changed:
            name = (coll.db_id, coll.id)
            db = self.state.databases.get(coll.db_id)
            if db is None or db.containers.get(coll.id) is not coll:  # deleted
                self.history.end_container(now, *name)
                self._versions.pop(name, None)
                continue
            seen = self._versions.get(name)
            if meter.changed_epk is not None and seen is not None and seen[0] is coll and seen[1] == coll.range_version:
                self._write(now, coll, meter.changed_epk, meter.partition_key)
            else:
                self.sync(now, coll)

    def _write(self, now: float, coll: Container, epk: str, key: str) -> None:
        rng = coll.range_for(epk)
        lp = rng.logical.get(epk)
        budget = self.state.partition_budget(coll)
        key_size = lp.size if lp is not None else 0
        self.history.snapshot(now, coll.db_id, coll.id, rng.id, rng.size, rng.docs, budget, key, key_size)

    def sync(self, now: float, coll: Container) -> None:
        """Snapshot the whole container (its ranges' storage and budget, its throughput)."""
        budget = self.state.partition_budget(coll)
        db = self.state.databases[coll.db_id]
        offer = self.state.offers.get(coll.offer_rid or db.offer_rid or "")
        throughput = offer.throughput if offer is not None else self.state.limits.default_throughput
        autoscale_max = offer.throughput if offer is not None and offer.autoscale else 0
        known = self.history.live_partitions(coll.db_id, coll.id)
        top = self.history.top_keys
        keys = {
            r.id: {lp.key_json: lp.size for lp in heapq.nlargest(top, r.logical.values(), key=lambda lp: lp.size)}
            for r in coll.ranges
            if r.id not in known and r.logical
        }
        parts = {r.id: (float(r.size), float(r.docs), budget) for r in coll.ranges}
        self.history.snapshot_container(now, coll.db_id, coll.id, parts, throughput, autoscale_max, keys)
        self._versions[(coll.db_id, coll.id)] = (coll, coll.range_version)

    def sync_all(self, now: float) -> None:
        """Every container, and the end of those the history holds but the state no longer has (at
        start: a journal replayed past the last saved history)."""
        live = set()
        for db in self.state.databases.values():
            for coll in db.containers.values():
                self.sync(now, coll)
                live.add((db.id, coll.id))
        for db_id, coll_id in self.history.containers() - live:
            if self.history.live_partitions(db_id, coll_id):
                self.history.end_container(now, db_id, coll_id)
