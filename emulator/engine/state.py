"""The account's state: databases, containers, offers, items, users and permissions, changed only by journal entries.

Every mutation is an entry (a JSON-able dict) that is journaled first (`commit`) and then applied
(`apply`), so replaying the journal at start rebuilds exactly what was acknowledged. `snapshot_entries`
writes the state back as entries for compaction. Lookups raise the service's 404s.
"""

from __future__ import annotations

import copy
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

from cosmoscore.epk import hash_version
from cosmoscore.indexing import DEFAULT_POLICY, IndexPolicy
from cosmoscore.keys import key_from_json, key_to_json
from cosmoscore.layout import even_boundaries
from cosmoscore.limits import Limits
from emulator.durability.datadir import JournalFull
from emulator.durability.journal import Journal
from emulator.engine import errors, splits, ttl, userlog
from emulator.engine.model import CONTAINER_OPTIONS, Container, Database, LogicalPartition, Offer, PkRange, StoredItem
from emulator.engine.results import ResourceNames


class State:
    """Resources by id, the journal, and the appliers that change them."""

    def __init__(self, limits: Limits, clock: Callable[[], float], journal: Journal | None) -> None:
        self.limits = limits
        self.clock = clock
        self.databases: dict[str, Database] = {}
        self.offers: dict[str, Offer] = {}
        self.journal = journal
        self.lock = threading.RLock()  # the metering lock: every change and every consistent read holds it
        self.on_expired: Callable[[Container], None] | None = None  # told after a sweep deleted items
        self._writes = 0  # StoredItem.seq
        self._counter = secrets.randbits(24) << 6  # resource ids stay unique across restarts
        if journal is not None:
            journal.replay(self.apply)

    def next_id(self) -> int:
        self._counter += 1
        return self._counter

    @property
    def writes(self) -> int:
        """The last write's sequence number: the change feed's position "now"."""
        return self._writes

    def now(self) -> int:
        return int(self.clock())

    def commit(self, entry: dict[str, Any]) -> None:
        """Journal an entry (before it is applied and acknowledged); a journal the disk cannot hold is the
        service's 503 for this request (`storage_unavailable`), with nothing applied."""
        if self.journal is not None:
            try:
                self.journal.append(entry)
            except JournalFull as exc:
                raise errors.storage_unavailable(exc) from exc

    def close_journal(self) -> None:
        """Fold the journal into a snapshot of the current state and release it."""
        if self.journal is not None:
            self.journal.compact(self.snapshot_entries())
            self.journal.close()
            self.journal = None

    # -- lookups -------------------------------------------------------------------------------

    def db(self, db_id: str) -> Database:
        db = self.databases.get(db_id)
        if db is None:
            raise errors.not_found()
        return db

    def coll(self, db_id: str, coll_id: str, intended_rid: str | None = None) -> Container:
        coll = self.db(db_id).containers.get(coll_id)
        if coll is None:
            raise errors.not_found()
        if intended_rid and intended_rid != coll.rid:
            raise errors.bad_request("The container was recreated; its resource id changed.", substatus=1024)
        heap = coll.expiry.heap
        if heap and heap[0].at <= self.now():
            ttl.sweep(self, coll)
        return coll

    def names_of(
        self, db_rid: str, coll_rid: str | None = None, doc_rid: str | None = None, key: tuple[Any, ...] | None = None
    ) -> ResourceNames:
        """The ids of the database, container and document these rids name (a document is looked up in the
        logical partition of `key`); a rid that names nothing ends the chain (the operation answers 404)."""
        db = next((d for d in self.databases.values() if d.rid == db_rid), None)
        if db is None:
            return ResourceNames()
        coll = None if coll_rid is None else next((c for c in db.containers.values() if c.rid == coll_rid), None)
        if coll is None:
            return ResourceNames(db.id)
        item = None if doc_rid is None or key is None else _item_id(coll, key, doc_rid)
        return ResourceNames(db.id, coll.id, item)

    def offer(self, offer_rid: str) -> Offer:
        offer = self.offers.get(offer_rid) or next(
            (o for o in self.offers.values() if o.rid.lower() == offer_rid.lower()), None
        )
        if offer is None:
            raise errors.not_found()
        return offer

    def container_throughput(self, coll: Container) -> int:
        offer_rid = coll.offer_rid or self.databases[coll.db_id].offer_rid
        return self.offers[offer_rid].throughput if offer_rid else self.limits.default_throughput

    def partition_budget(self, coll: Container) -> float:
        """RU/s one physical partition may spend: provisioned / P (P4), at most 10,000 (P2)."""
        return min(self.container_throughput(coll) / len(coll.ranges), float(self.limits.max_ru_per_partition))

    # -- appliers ------------------------------------------------------------------------------

    def apply(self, entry: dict[str, Any]) -> Any:
        appliers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "create_db": self.apply_create_db,
            "delete_db": self.apply_delete_db,
            "create_coll": self.apply_create_coll,
            "replace_coll": self.apply_replace_coll,
            "delete_coll": self.apply_delete_coll,
            "replace_offer": self.apply_replace_offer,
            "put": self.apply_put,
            "delete": self.apply_delete,
            "writes": self.apply_writes,
            "batch": self.apply_batch,
        }
        if entry["op"] in userlog.APPLIERS:  # users and permissions (emulator.engine.userlog)
            return userlog.APPLIERS[entry["op"]](self.databases, entry)
        return appliers[entry["op"]](entry)

    def apply_create_db(self, entry: dict[str, Any]) -> Database:
        rid = entry["rid"]
        props = {
            "id": entry["id"],
            "_rid": rid,
            "_self": f"dbs/{rid}/",
            "_etag": f'"{rid}"',
            "_colls": "colls/",
            "_users": "users/",
            "_ts": entry["ts"],
        }
        db = Database(entry["id"], rid, props, None)
        if "offer" in entry:
            db.offer_rid = self._apply_offer(entry["offer"], props["_self"], rid, entry["ts"])
        self.databases[db.id] = db
        return db

    def _apply_offer(self, spec: dict[str, Any], link: str, owner_rid: str, ts: int) -> str:
        throughput = spec["throughput"]
        offer = Offer(
            spec["rid"], link, owner_rid, throughput, spec["autoscale"], throughput, ts, spec.get("increment")
        )
        self.offers[offer.rid] = offer
        return offer.rid

    def apply_delete_db(self, entry: dict[str, Any]) -> None:
        db = self.databases.pop(entry["id"])
        for coll in db.containers.values():
            self.offers.pop(coll.offer_rid or "", None)
        self.offers.pop(db.offer_rid or "", None)

    def apply_create_coll(self, entry: dict[str, Any]) -> Container:
        db = self.databases[entry["db"]]
        rid = entry["rid"]
        policy_json = entry["indexingPolicy"] or copy.deepcopy(DEFAULT_POLICY)
        props = {
            "id": entry["id"],
            "indexingPolicy": policy_json,
            "partitionKey": entry["partitionKey"],
            "geospatialConfig": {"type": "Geography"},
            **entry.get("extra", {}),
            "_rid": rid,
            "_ts": entry["ts"],
            "_self": f"{db.props['_self']}colls/{rid}/",
            "_etag": f'"{rid}-{entry["ts"]}"',
            "_docs": "docs/",
            "_sprocs": "sprocs/",
            "_triggers": "triggers/",
            "_udfs": "udfs/",
            "_conflicts": "conflicts/",
        }
        coll = _new_container(entry, db.id, props, IndexPolicy.from_json(policy_json))
        if "offer" in entry:
            coll.offer_rid = self._apply_offer(entry["offer"], props["_self"], rid, entry["ts"])
        db.containers[coll.id] = coll
        return coll

    def apply_replace_coll(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers[entry["id"]]
        coll.props["indexingPolicy"] = entry["indexingPolicy"]
        coll.policy = IndexPolicy.from_json(entry["indexingPolicy"])
        if entry.get("defaultTtl") is not None and entry["defaultTtl"] != coll.props.get("defaultTtl"):
            coll.props["defaultTtl"] = entry["defaultTtl"]
            items = ((lp.epk, item.doc) for r in coll.ranges for lp in r.logical.values() for item in lp.items.values())
            coll.expiry.rebuild(items, entry["defaultTtl"])
        if "computedProperties" in entry:  # entries from before computed properties leave them as they were
            coll.set_computed(entry["computedProperties"])
        coll.props["_ts"] = entry["ts"]

    def apply_delete_coll(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers.pop(entry["id"])
        self.offers.pop(coll.offer_rid or "", None)

    def apply_replace_offer(self, entry: dict[str, Any]) -> None:
        offer = self.offers[entry["rid"]]
        offer.throughput = entry["throughput"]
        offer.max_ever = max(offer.max_ever, offer.throughput)
        offer.ts = entry["ts"]
        if "increment" in entry:  # replaces that sent autoscale settings (W80); older entries had none
            offer.increment_percent = entry["increment"]
        for coll in self._containers_of_offer(offer):
            splits.split_for_throughput(coll, offer.throughput, self.limits)

    def _containers_of_offer(self, offer: Offer) -> list[Container]:
        return [
            c
            for db in self.databases.values()
            for c in db.containers.values()
            if c.offer_rid == offer.rid or (c.offer_rid is None and db.offer_rid == offer.rid)
        ]

    def apply_put(self, entry: dict[str, Any]) -> PkRange:
        """Store a document; returns the range holding it afterwards (a storage split may move it)."""
        coll = self.databases[entry["db"]].containers[entry["coll"]]
        key = key_from_json(entry["key"])
        epk = coll.epk(key)
        rng = coll.range_for(epk)
        lp = rng.logical.setdefault(epk, LogicalPartition(key, epk))
        doc = entry["doc"]
        old = lp.items.get(doc["id"])
        if old is not None:
            lp.size -= old.size
            rng.size -= old.size
            rng.docs -= 1
        # a snapshot's entry carries the item's position (its change feed etag), so compaction keeps it
        seq = entry.get("seq") or self._writes + 1
        self._writes = max(self._writes, seq)
        stored = lp.items[doc["id"]] = StoredItem(doc, entry["size"], seq, epk)
        rng.record_write(old, stored)
        coll.expiry.schedule(epk, doc, coll.props.get("defaultTtl"))
        lp.size += entry["size"]
        rng.size += entry["size"]
        rng.docs += 1
        rng.lsn += 1
        splits.split_for_storage(coll, rng, self.limits)
        return coll.range_for(epk)

    def apply_writes(self, entry: dict[str, Any]) -> None:
        """A snapshot's write counter: positions handed out before a compaction are never reused, even
        when the items last written were deleted since."""
        self._writes = max(self._writes, entry["seq"])

    def apply_delete(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers[entry["coll"]]
        epk = coll.epk(key_from_json(entry["key"]))
        rng = coll.range_for(epk)
        lp = rng.logical[epk]
        item = lp.items.pop(entry["id"])
        rng.record_delete(item)
        lp.size -= item.size
        rng.size -= item.size
        rng.docs -= 1
        rng.lsn += 1
        if not lp.items:
            del rng.logical[epk]

    def apply_batch(self, entry: dict[str, Any]) -> PkRange | None:
        """A transactional batch's writes (one logical partition), applied together from one journal entry so
        no restart can see part of it; the partition's log sequence number advances once for the batch, as
        the service's does (cosmos-wire-protocol.md W25). The range holding the partition afterwards."""
        writes = entry["entries"]
        if not writes:
            return None
        first = writes[0]
        coll = self.databases[first["db"]].containers[first["coll"]]
        epk = coll.epk(key_from_json(first["key"]))
        lsn = coll.range_for(epk).lsn
        for write in writes:
            self.apply(write)
        rng = coll.range_for(epk)
        rng.lsn = lsn + 1  # each write advanced it (a split's children carry it on)
        return rng

    # -- snapshot ------------------------------------------------------------------------------

    def snapshot_entries(self) -> Iterator[dict[str, Any]]:
        """The current state as journal entries (for compaction): replaying them rebuilds it."""
        for db in self.databases.values():
            offer = self.offers.get(db.offer_rid or "")
            entry: dict[str, Any] = {"op": "create_db", "id": db.id, "rid": db.rid, "ts": db.props["_ts"]}
            if offer:
                entry["offer"] = _offer_spec(offer, offer.max_ever)
            yield entry
            if offer and offer.throughput != offer.max_ever:
                yield {"op": "replace_offer", "rid": offer.rid, "throughput": offer.throughput, "ts": offer.ts}
            for coll in db.containers.values():
                yield from _container_entries(db, coll, self.offers.get(coll.offer_rid or ""))
            yield from userlog.user_entries(db)
        yield {"op": "writes", "seq": self._writes}


def _new_container(entry: dict[str, Any], db_id: str, props: dict[str, Any], policy: IndexPolicy) -> Container:
    """A container at creation (even ranges) or from a snapshot (its exact layout, splits included)."""
    layout = entry.get("layout")
    if not layout:
        bounds = even_boundaries(entry["ranges"], hash_version(props["partitionKey"]))
        ranges = [PkRange(str(i), lo, hi) for i, (lo, hi) in enumerate(bounds)]
        coll = Container(entry["id"], entry["rid"], db_id, props, policy, ranges, None, len(ranges))
        coll.range_log = [(1, r.id) for r in ranges]
        return coll
    ranges = [PkRange(r["id"], r["min"], r["max"], r["parents"]) for r in layout["ranges"]]
    log = [tuple(x) for x in layout["log"]]
    return Container(
        entry["id"],
        entry["rid"],
        db_id,
        props,
        policy,
        ranges,
        None,
        layout["next_range_id"],
        layout["version"],
        log,
        set(layout["gone"]),
    )


def _offer_spec(offer: Offer, throughput: int) -> dict[str, Any]:
    """An offer as a creation entry's `offer` (a snapshot's), its auto-upgrade policy included (W80)."""
    spec: dict[str, Any] = {"rid": offer.rid, "throughput": throughput, "autoscale": offer.autoscale}
    if offer.increment_percent is not None:
        spec["increment"] = offer.increment_percent
    return spec


def _container_entries(db: Database, coll: Container, offer: Offer | None) -> Iterator[dict[str, Any]]:
    layout = {
        "ranges": [{"id": r.id, "min": r.min, "max": r.max, "parents": r.parents} for r in coll.ranges],
        "next_range_id": coll.next_range_id,
        "version": coll.range_version,
        "log": [list(x) for x in coll.range_log],
        "gone": sorted(coll.gone),
    }
    entry: dict[str, Any] = {
        "op": "create_coll",
        "db": db.id,
        "id": coll.id,
        "rid": coll.rid,
        "ts": coll.props["_ts"],
        "partitionKey": coll.props["partitionKey"],
        "indexingPolicy": coll.props["indexingPolicy"],
        "ranges": len(coll.ranges),
        "layout": layout,
        "extra": {k: coll.props[k] for k in CONTAINER_OPTIONS if k in coll.props},
    }
    if offer:
        entry["offer"] = _offer_spec(offer, offer.throughput)
    yield entry
    for rng in coll.ranges:  # in write order, each with its position: the change feed's order survives
        for item in rng.written.values():
            yield {
                "op": "put",
                "db": db.id,
                "coll": coll.id,
                "key": key_to_json(rng.logical[item.epk].key),
                "doc": item.doc,
                "size": item.size,
                "seq": item.seq,
            }


def _item_id(coll: Container, key: tuple[Any, ...], doc_rid: str) -> str | None:
    """The id of the document with `_rid` `doc_rid` in the logical partition of `key`."""
    try:
        epk = coll.epk(key)
    except (ValueError, TypeError):  # a key the operation itself will refuse with the service's 400
        return None
    lp = coll.range_for(epk).logical.get(epk)
    if lp is None:
        return None
    return next((item_id for item_id, item in lp.items.items() if item.doc.get("_rid") == doc_rid), None)
