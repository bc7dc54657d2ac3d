"""Point operations on items: create/upsert, replace, patch, read, delete.

Each resolves the document's logical and physical partition, is admitted to that partition's RU
budget before any work (429 otherwise), is charged by the cost model (size, indexed terms,
consistency) and journals its write before answering. Keys are tuples (`cosmoscore.keys`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, NoReturn

import orjson

from cosmoscore.costmodel import CostModel
from cosmoscore.epk import UNDEFINED
from cosmoscore.indexing import SYSTEM_PROPERTIES, changed_leaf_count, indexed_leaves
from cosmoscore.keys import Key, is_key_component, key_json, key_to_json
from cosmoscore.limits import Limits, key_value_bytes, nesting_depth
from cosmoscore.sql import Query, execute
from emulator.engine import errors
from emulator.engine.metering import Context, Meter, Metering
from emulator.engine.model import Container, PkRange, StoredItem, make_rid
from emulator.engine.patch import apply_patch
from emulator.engine.query.sql import guarded, parse
from emulator.engine.results import ItemResult
from emulator.engine.state import State
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
        doc, key = self._checked_document(coll, doc, key)
        rng, epk = self._locate(coll, key, meter)
        writes.admit(coll, rng, meter)
        existing = writes.item(rng, epk, doc["id"])
        if existing is not None and not upsert:
            self._refuse(coll, rng, meter, writes, existing.size, errors.conflict())
        if existing is not None:
            self._check_if_match(ctx, coll, rng, meter, writes, existing)
            return self._write_replace(coll, rng, key, epk, existing, doc, meter, writes)
        stored = self._stamp(coll, doc)
        self._check_limits(writes.partition_bytes(rng, epk), stored.size, 0)
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
        doc, key = self._checked_document(coll, doc, key)
        if doc["id"] != item_id:
            raise errors.bad_request("The id in the document does not match the id in the request URI.")
        rng, epk, existing = self._existing(ctx, coll, key, item_id, meter, writes)
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

    def _checked_document(self, coll: Container, doc: Any, key: Sequence[Any] | None) -> tuple[dict[str, Any], Key]:
        """Validate a document; returns it with its partition key (400 when `key` is given and differs)."""
        if not isinstance(doc, dict):
            raise errors.bad_request("The request payload is invalid: a document must be a JSON object.")
        item_id = doc.get("id")
        if item_id is None:
            raise errors.bad_request(
                "The input content is invalid because the required properties - 'id; ' - are missing"
            )
        if not isinstance(item_id, str) or not item_id:
            raise errors.bad_request(
                "The input content is invalid because the property 'id' must be a non-empty string."
            )
        if len(item_id.encode()) > self.limits.max_id_bytes or any(ch in item_id for ch in "/\\?#"):
            raise errors.bad_request("The id is invalid: at most 1,023 bytes and none of '/', '\\', '?', '#'.")
        own = coll.extract_key(doc)
        if not all(is_key_component(c) for c in own):
            raise errors.bad_request(
                "The partition key value of the document must be a string, number, boolean or null."
            )
        self._check_key_size(own)
        if key is not None:
            given = self.checked_key(coll, key, full=True)
            if given != own and key_to_json(given) != key_to_json(own):
                raise errors.bad_request(
                    "PartitionKey extracted from document doesn't match the one specified in the header", 1001
                )
        return doc, own

    def checked_key(self, coll: Container, key: Sequence[Any], *, full: bool) -> Key:
        """A key (or, not `full`, a hierarchical prefix) that fits the container's definition."""
        key = tuple(key)
        if not key:  # no value (the SDK's empty header): the undefined key of a one-path definition
            if coll.kind == "MultiHash":
                raise errors.bad_request("The partition key header must be a JSON array of the key's components.")
            key = (UNDEFINED,)
        levels = len(coll.key_paths)
        if (full and len(key) != levels) or len(key) > levels or not all(is_key_component(c) for c in key):
            raise errors.bad_request(
                "Partition key provided either doesn't correspond to definition in the collection or doesn't match "
                f"partition key field values specified in the document (expected {levels} component(s), "
                f"got {key_to_json(key)!r})."
            )
        self._check_key_size(key)
        return key

    def _check_key_size(self, key: Key) -> None:
        """Partition key values are at most 2,048 bytes (cosmos-errors-and-stats.md §2.5: 400)."""
        if key_value_bytes(key) > self.limits.max_partition_key_bytes:
            raise errors.bad_request(
                f"The partition key value is too large: at most {self.limits.max_partition_key_bytes} bytes."
            )

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
        meter.pkrange_id = rng.id
        meter.partition_key = key_json(key)
        return rng, epk

    def _check_limits(self, current: int, new: int, old: int) -> None:
        """Refuse a write that takes a logical partition (of `current` bytes) past 20 GB (403/1014, P1)."""
        if current - old + new > self.limits.logical_partition_max_bytes:
            raise errors.partition_full(self.limits.logical_partition_max_bytes / 1024**3)

    # -- writes --------------------------------------------------------------------------------

    def _stamp(self, coll: Container, doc: dict[str, Any], rid: str | None = None) -> StoredItem:
        """Add the system properties and measure the persisted size (413 past the item limit). `rid`: the
        item's own, kept by a replace or an upsert of it (an item's `_rid` and `_self` stay fixed for its life,
        so a `_self` kept from an earlier response still addresses it); a new item gets a new one."""
        stored = {k: v for k, v in doc.items() if k not in SYSTEM_PROPERTIES}
        rid = rid or make_rid(0, 0, self.state.next_id())
        stored.update(
            {
                "_rid": rid,
                "_self": f"{coll.self_link}docs/{rid}/",
                "_etag": f'"{uuid.uuid4()}"',
                "_attachments": "attachments/",
                "_ts": self.state.now(),
            }
        )
        if nesting_depth(doc, self.limits.max_document_depth + 1) - 1 > self.limits.max_document_depth:
            raise errors.bad_request(
                f"The document nests objects or arrays deeper than {self.limits.max_document_depth} levels."
            )
        size = len(orjson.dumps(stored))
        if size > self.limits.max_item_bytes:
            raise errors.too_large()
        return StoredItem(stored, size)

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
        stored = self._stamp(coll, doc, rid=existing.doc.get("_rid"))
        self._check_limits(writes.partition_bytes(rng, epk), stored.size, existing.size)
        old_leaves = indexed_leaves(existing.doc, coll.policy)
        new_leaves = indexed_leaves(stored.doc, coll.policy)
        changed = changed_leaf_count(old_leaves, new_leaves)
        args = (existing.size, stored.size, changed, len(old_leaves), len(new_leaves))
        ru = self.cost.patch_ru(*args, patch_ops) if patch_ops is not None else self.cost.replace_ru(*args)
        writes.consume(coll, rng, meter, ru)
        return self._store(coll, key, epk, stored, 200, meter, writes)

    def _store(
        self, coll: Container, key: Key, epk: str, stored: StoredItem, status: int, meter: Meter, writes: Writes
    ) -> ItemResult:
        rng = writes.put(coll, key, epk, stored)
        meter.changed, meter.changed_epk = (coll,), epk
        return _answer(meter, rng, status, stored.doc)


def _answer(meter: Meter, rng: PkRange, status: int, doc: dict[str, Any] | None) -> ItemResult:
    meter.status = status
    return ItemResult(status, doc, meter.charge, rng.id, rng.lsn)


def filter_predicate(condition: Any) -> Query:
    """A conditional patch's predicate (`FROM c WHERE c.x = 1`) as the query that selects the item when it
    holds; a predicate that is not one is the service's 400 with the SQL error."""
    if not isinstance(condition, str) or not condition.strip():
        raise errors.bad_request("The patch condition must be a filter predicate such as 'FROM c WHERE c.x = 1'.")
    return parse(f"SELECT VALUE 1 {condition}")


def predicate_holds(predicate: Query, doc: dict[str, Any]) -> bool:
    return bool(guarded(lambda: execute(predicate, [doc]).rows))
