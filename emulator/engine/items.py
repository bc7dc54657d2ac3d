"""Point operations on items: create/upsert, replace, patch, read, delete.

Each resolves the document's logical and physical partition, is admitted to that partition's RU
budget before any work (429 otherwise), is charged by the cost model (size, indexed terms,
consistency) and journals its write before answering. Keys are tuples (`cosmoscore.keys`). Reads and
writes of the logical partition go through a `Writes` (`emulator.engine.writes`): the live state, or a
transactional batch's staging (`emulator.engine.batch`), so a batch runs these very operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

from cosmoscore.costmodel import CostModel
from cosmoscore.indexing import changed_leaf_count, indexed_leaves
from cosmoscore.keys import Key, key_json
from cosmoscore.limits import Limits
from emulator.engine import errors, ttl
from emulator.engine.documents import checked_document, checked_key, filter_predicate, predicate_holds, stamp
from emulator.engine.metering import Context, Meter, Metering
from emulator.engine.model import Container, PkRange, StoredItem, make_rid
from emulator.engine.patch import apply_patch
from emulator.engine.results import ItemResult
from emulator.engine.state import State
from emulator.engine.unique import violates
from emulator.engine.writes import LiveWrites, Writes


class Items:
    """The point operations. Each public method is one metered request against the live state; its `run_*`
    twin is the operation itself against any `Writes` (a transactional batch runs them on its staging)."""

    def __init__(self, state: State, metering: Metering, cost: CostModel, limits: Limits, consistency: str) -> None:
        self.state = state
        self.metering = metering
        self.cost = cost
        self.limits = limits
        self.consistency = consistency
        self.live = LiveWrites(state, metering)

    def create(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        doc: Any,
        key: Sequence[Any] | None,
        *,
        upsert: bool = False,
        intended_rid: str | None = None,
    ) -> ItemResult:
        with self.metering.metered(ctx, "Upsert" if upsert else "Create", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            return self.run_create(ctx, coll, doc, key, meter, self.live, upsert=upsert)

    def run_create(
        self,
        ctx: Context,
        coll: Container,
        doc: Any,
        key: Sequence[Any] | None,
        meter: Meter,
        writes: Writes,
        *,
        upsert: bool = False,
    ) -> ItemResult:
        doc, key = checked_document(coll, doc, key, self.limits)
        rng, epk = self._locate(coll, key, meter)
        writes.admit(coll, rng, meter)
        existing = writes.item(rng, epk, doc["id"])
        if existing is not None and not upsert:
            self._refuse(coll, rng, meter, writes, existing.size, errors.conflict())
        if existing is not None:
            self._check_if_match(ctx, coll, rng, meter, writes, existing)
            return self._write_replace(coll, rng, key, epk, existing, doc, meter, writes)
        stored = stamp(coll, doc, self._new_rid(), self.state.now(), self.limits)
        self._check_limits(writes.partition_bytes(rng, epk), stored.size, 0)
        self._check_unique(coll, rng, epk, stored, meter, writes)
        leaves = len(indexed_leaves(stored.doc, coll.policy))
        writes.consume(coll, rng, meter, self.cost.create_ru(stored.size, leaves))
        return self._store(coll, key, epk, stored, 201, meter, writes)

    def replace(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        doc: Any,
        key: Sequence[Any] | None,
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        with self.metering.metered(ctx, "Replace", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            return self.run_replace(ctx, coll, item_id, doc, key, meter, self.live)

    def run_replace(
        self,
        ctx: Context,
        coll: Container,
        item_id: str,
        doc: Any,
        key: Sequence[Any] | None,
        meter: Meter,
        writes: Writes,
    ) -> ItemResult:
        doc, key = checked_document(coll, doc, key, self.limits)
        rng, epk, existing = self._existing(ctx, coll, key, item_id, meter, writes)
        taken = writes.item(rng, epk, doc["id"]) if doc["id"] != item_id else None
        if taken is not None:  # a rename onto an id its logical partition already holds (W86)
            self._refuse(coll, rng, meter, writes, taken.size, errors.conflict())
        return self._write_replace(coll, rng, key, epk, existing, doc, meter, writes)

    def patch(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        operations: Any,
        key: Sequence[Any],
        *,
        condition: str | None = None,
        intended_rid: str | None = None,
    ) -> ItemResult:
        with self.metering.metered(ctx, "Patch", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            return self.run_patch(ctx, coll, item_id, operations, key, meter, self.live, condition=condition)

    def run_patch(
        self,
        ctx: Context,
        coll: Container,
        item_id: str,
        operations: Any,
        key: Sequence[Any],
        meter: Meter,
        writes: Writes,
        *,
        condition: Any = None,
    ) -> ItemResult:
        """`condition`: a filter predicate (`FROM c WHERE c.x = 1`) the stored item must meet, else 412."""
        key = self.checked_key(coll, key, full=True)
        predicate = None if condition is None else filter_predicate(condition)
        rng, epk, existing = self._existing(ctx, coll, key, item_id, meter, writes)
        if predicate is not None and not predicate_holds(predicate, existing.doc):
            self._refuse(coll, rng, meter, writes, existing.size, errors.precondition_failed())
        new_doc = apply_patch(existing.doc, operations, list(coll.key_paths))
        ttl.check_item_ttl(coll.props.get("defaultTtl"), new_doc)  # a patched ttl is checked too (W88)
        ops = len(operations or [])
        return self._write_replace(coll, rng, key, epk, existing, new_doc, meter, writes, patch_ops=ops)

    def read(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        key: Sequence[Any],
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        with self.metering.metered(ctx, "Read", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            return self.run_read(ctx, coll, item_id, key, meter, self.live)

    def run_read(
        self, ctx: Context, coll: Container, item_id: str, key: Sequence[Any], meter: Meter, writes: Writes
    ) -> ItemResult:
        key = self.checked_key(coll, key, full=True)
        rng, epk = self._locate(coll, key, meter)
        writes.admit(coll, rng, meter)
        item = writes.item(rng, epk, item_id)
        consistency = ctx.consistency or self.consistency
        if item is None:
            writes.consume(coll, rng, meter, self.cost.read_ru(0, consistency))
            raise errors.not_found("Entity")
        writes.consume(coll, rng, meter, self.cost.read_ru(item.size, consistency))
        if ctx.if_none_match and ctx.if_none_match == item.doc["_etag"]:
            return _answer(meter, rng, 304, None)
        return _answer(meter, rng, 200, item.doc)

    def delete(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        key: Sequence[Any],
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        with self.metering.metered(ctx, "Delete", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            return self.run_delete(ctx, coll, item_id, key, meter, self.live)

    def run_delete(
        self, ctx: Context, coll: Container, item_id: str, key: Sequence[Any], meter: Meter, writes: Writes
    ) -> ItemResult:
        key = self.checked_key(coll, key, full=True)
        rng, epk, item = self._existing(ctx, coll, key, item_id, meter, writes)
        leaves = len(indexed_leaves(item.doc, coll.policy))
        writes.consume(coll, rng, meter, self.cost.delete_ru(item.size, leaves))
        rng = writes.delete(coll, key, epk, item_id)
        meter.changed, meter.changed_epk = (coll,), epk
        return _answer(meter, rng, 204, None)

    def delete_partition_key(
        self, ctx: Context, db_id: str, coll_id: str, key: Sequence[Any], *, intended_rid: str | None = None
    ) -> ItemResult:
        """Delete a logical partition: one journaled delete per item (so a restart replays it), charged
        as those deletes (W4); the service runs it in the background, here it is done when answered."""
        with self.metering.metered(ctx, "Delete", "partitionkey", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            key = self.checked_key(coll, key, full=True)
            rng, epk = self._locate(coll, key, meter)
            self.metering.admit(coll, rng, meter)
            lp = rng.logical.get(epk)
            items = list(lp.items.values()) if lp else []
            ru = sum(self.cost.delete_ru(i.size, len(indexed_leaves(i.doc, coll.policy))) for i in items)
            self.metering.consume(coll, rng, meter, ru)
            for item in items:
                self.live.delete(coll, key, epk, item.doc["id"])
            meter.changed, meter.changed_epk = (coll,), epk
            return _answer(meter, rng, 200, None)

    # -- checks --------------------------------------------------------------------------------

    def checked_key(self, coll: Container, key: Sequence[Any], *, full: bool) -> Key:
        """A key (or, not `full`, a hierarchical prefix) that fits the container's definition."""
        return checked_key(coll, key, self.limits, full=full)

    def _existing(
        self, ctx: Context, coll: Container, key: Key, item_id: str, meter: Meter, writes: Writes
    ) -> tuple[PkRange, str, StoredItem]:
        """The stored item a write targets, after throttling and its If-Match precondition (404/412)."""
        rng, epk = self._locate(coll, key, meter)
        writes.admit(coll, rng, meter)
        item = writes.item(rng, epk, item_id)
        if item is None:
            self._refuse(coll, rng, meter, writes, 0, errors.not_found("Entity"))
        self._check_if_match(ctx, coll, rng, meter, writes, item)
        return rng, epk, item

    def _check_if_match(
        self, ctx: Context, coll: Container, rng: PkRange, meter: Meter, writes: Writes, item: StoredItem
    ) -> None:
        if ctx.if_match and ctx.if_match != "*" and ctx.if_match != item.doc["_etag"]:
            self._refuse(coll, rng, meter, writes, item.size, errors.precondition_failed())

    def _refuse(
        self, coll: Container, rng: PkRange, meter: Meter, writes: Writes, examined: int, error: errors.CosmosError
    ) -> NoReturn:
        """Charge a write refused after its lookup (the read it did, M2), then answer the error."""
        writes.consume(coll, rng, meter, self.cost.refused_write_ru(examined))
        raise error

    def _locate(self, coll: Container, key: Key, meter: Meter) -> tuple[PkRange, str]:
        epk = coll.epk(key)
        rng = coll.range_for(epk)
        meter.served_by(coll, rng)
        meter.partition_key = key_json(key)
        return rng, epk

    def _check_limits(self, current: int, new: int, old: int) -> None:
        """Refuse a write that takes a logical partition (of `current` bytes) past 20 GB (403/1014, P1)."""
        if current - old + new > self.limits.logical_partition_max_bytes:
            raise errors.partition_full(self.limits.logical_partition_max_bytes / 1024**3)

    def _check_unique(
        self, coll: Container, rng: PkRange, epk: str, stored: StoredItem, meter: Meter, writes: Writes
    ) -> None:
        """Refuse a write that repeats another item's unique key values (409, W53), charged as refused."""
        others = (item.doc for item in writes.partition_items(rng, epk))
        if violates(coll.unique_keys, stored.doc, others):
            self._refuse(coll, rng, meter, writes, stored.size, errors.unique_violation())

    # -- writes --------------------------------------------------------------------------------

    def _new_rid(self) -> str:
        return make_rid(0, 0, self.state.next_id())

    def _write_replace(
        self,
        coll: Container,
        rng: PkRange,
        key: Key,
        epk: str,
        existing: StoredItem,
        doc: dict[str, Any],
        meter: Meter,
        writes: Writes,
        *,
        patch_ops: int | None = None,
    ) -> ItemResult:
        stored = stamp(coll, doc, existing.doc.get("_rid") or self._new_rid(), self.state.now(), self.limits)
        self._check_limits(writes.partition_bytes(rng, epk), stored.size, existing.size)
        self._check_unique(coll, rng, epk, stored, meter, writes)
        old_leaves = indexed_leaves(existing.doc, coll.policy)
        new_leaves = indexed_leaves(stored.doc, coll.policy)
        changed = changed_leaf_count(old_leaves, new_leaves)
        args = (existing.size, stored.size, changed, len(old_leaves), len(new_leaves))
        ru = self.cost.patch_ru(*args, patch_ops) if patch_ops is not None else self.cost.replace_ru(*args)
        writes.consume(coll, rng, meter, ru)
        rng = writes.put(coll, key, epk, stored, replaces=existing.doc["id"])  # another id renames it (W86)
        meter.changed, meter.changed_epk = (coll,), epk
        return _answer(meter, rng, 200, stored.doc)

    def _store(
        self, coll: Container, key: Key, epk: str, stored: StoredItem, status: int, meter: Meter, writes: Writes
    ) -> ItemResult:
        rng = writes.put(coll, key, epk, stored)
        meter.changed, meter.changed_epk = (coll,), epk
        return _answer(meter, rng, status, stored.doc)


def _answer(meter: Meter, rng: PkRange, status: int, doc: dict[str, Any] | None) -> ItemResult:
    meter.status = status
    return ItemResult(status, doc, meter.charge, rng.id, rng.lsn)
