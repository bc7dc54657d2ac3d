"""Where a point operation reads and writes its logical partition: straight into the state (`LiveWrites`,
each write journaled and applied as it is made) or into a transactional batch's staging (`StagedWrites`:
later operations of the batch see earlier ones' writes, nothing reaches the state until the batch commits
them as one journal entry).

`emulator.engine.items` defines what each operation does and charges against a `Writes`; the two kinds
differ only in throttling (a batch is admitted and charged to the partition's budget as a whole) and in
when the writes land.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from cosmoscore.keys import Key, key_to_json
from emulator.engine.metering import Meter, Metering
from emulator.engine.model import Container, PkRange, StoredItem
from emulator.engine.state import State


class Writes(Protocol):
    def admit(self, coll: Container, rng: PkRange, meter: Meter) -> None:
        """Throttle before any work (429 when the partition's budget is spent)."""

    def consume(self, coll: Container, rng: PkRange, meter: Meter, ru: float) -> None:
        """Charge the operation `ru`."""

    def item(self, rng: PkRange, epk: str, item_id: str) -> StoredItem | None:
        """The item as this operation sees it (None: absent)."""

    def partition_bytes(self, rng: PkRange, epk: str) -> int:
        """The logical partition's stored bytes as this operation sees them."""

    def partition_items(self, rng: PkRange, epk: str) -> Iterator[StoredItem]:
        """The logical partition's items as this operation sees them (for its unique keys)."""

    def put(self, coll: Container, key: Key, epk: str, stored: StoredItem, replaces: str | None = None) -> PkRange:
        """Store an item; the range holding it afterwards. `replaces`: the id of the item it replaces, which
        goes when it differs from the new one's (a replace that renames it, cosmos-wire-protocol.md W86)."""

    def delete(self, coll: Container, key: Key, epk: str, item_id: str) -> PkRange:
        """Delete an item; the range that held it."""


def put_entry(coll: Container, key: Key, stored: StoredItem) -> dict[str, Any]:
    return {
        "op": "put",
        "db": coll.db_id,
        "coll": coll.id,
        "key": key_to_json(key),
        "doc": stored.doc,
        "size": stored.size,
    }


def delete_entry(coll: Container, key: Key, item_id: str) -> dict[str, Any]:
    return {"op": "delete", "db": coll.db_id, "coll": coll.id, "key": key_to_json(key), "id": item_id}


class LiveWrites:
    """One operation on its own: throttled per request, each write journaled, then applied."""

    def __init__(self, state: State, metering: Metering) -> None:
        self.state = state
        self.metering = metering

    def admit(self, coll: Container, rng: PkRange, meter: Meter) -> None:
        self.metering.admit(coll, rng, meter)

    def consume(self, coll: Container, rng: PkRange, meter: Meter, ru: float) -> None:
        self.metering.consume(coll, rng, meter, ru)

    def item(self, rng: PkRange, epk: str, item_id: str) -> StoredItem | None:
        lp = rng.logical.get(epk)
        return lp.items.get(item_id) if lp else None

    def partition_bytes(self, rng: PkRange, epk: str) -> int:
        lp = rng.logical.get(epk)
        return lp.size if lp else 0

    def partition_items(self, rng: PkRange, epk: str) -> Iterator[StoredItem]:
        lp = rng.logical.get(epk)
        return iter(lp.items.values()) if lp else iter(())

    def put(self, coll: Container, key: Key, epk: str, stored: StoredItem, replaces: str | None = None) -> PkRange:
        """A rename's delete and put go in one journal entry, so no restart sees one without the other
        (applied as a batch: the partition's log sequence number advances once)."""
        entry = put_entry(coll, key, stored)
        if replaces is not None and replaces != stored.doc["id"]:
            batch = {"op": "batch", "entries": [delete_entry(coll, key, replaces), entry]}
            self.state.commit(batch)
            return self.state.apply_batch(batch) or coll.range_for(epk)
        self.state.commit(entry)
        return self.state.apply_put(entry)

    def delete(self, coll: Container, key: Key, epk: str, item_id: str) -> PkRange:
        entry = delete_entry(coll, key, item_id)
        self.state.commit(entry)
        self.state.apply_delete(entry)
        return coll.range_for(epk)


class StagedWrites:
    """A batch's operations: they see each other's writes in `staged` (id -> item, None once deleted) over
    the live partition, and leave the state untouched; `entries` are the writes, in order, for one commit."""

    def __init__(self, live: Writes) -> None:
        self.live = live
        self.staged: dict[str, StoredItem | None] = {}
        self.entries: list[dict[str, Any]] = []
        self.size_change = 0

    def admit(self, coll: Container, rng: PkRange, meter: Meter) -> None:
        meter.served_by(coll, rng)  # the batch as a whole was admitted

    def consume(self, coll: Container, rng: PkRange, meter: Meter, ru: float) -> None:
        meter.charge = ru  # the batch consumes the sum once
        meter.served_by(coll, rng)

    def item(self, rng: PkRange, epk: str, item_id: str) -> StoredItem | None:
        if item_id in self.staged:
            return self.staged[item_id]
        return self.live.item(rng, epk, item_id)

    def partition_bytes(self, rng: PkRange, epk: str) -> int:
        return self.live.partition_bytes(rng, epk) + self.size_change

    def partition_items(self, rng: PkRange, epk: str) -> Iterator[StoredItem]:
        for item in self.live.partition_items(rng, epk):
            if item.doc["id"] not in self.staged:
                yield item
        yield from (item for item in self.staged.values() if item is not None)

    def put(self, coll: Container, key: Key, epk: str, stored: StoredItem, replaces: str | None = None) -> PkRange:
        if replaces is not None and replaces != stored.doc["id"]:
            self.delete(coll, key, epk, replaces)
        rng = coll.range_for(epk)
        old = self.item(rng, epk, stored.doc["id"])
        self.size_change += stored.size - (old.size if old else 0)
        self.staged[stored.doc["id"]] = stored
        self.entries.append(put_entry(coll, key, stored))
        return rng

    def delete(self, coll: Container, key: Key, epk: str, item_id: str) -> PkRange:
        rng = coll.range_for(epk)
        old = self.item(rng, epk, item_id)
        self.size_change -= old.size if old else 0
        self.staged[item_id] = None
        self.entries.append(delete_entry(coll, key, item_id))
        return rng
