"""The emulator engine: databases, containers, items, partitioning, RU charges, throttling, accounting.

Usable in-process (the advisor and the demo history drive it directly, on a simulated clock if they
like); `emulator.http` only translates REST to these calls. Every public operation is metered: it
records one `RequestRecord` (status, RU, pkrange, logical key), also when it fails.

How to add an operation: write a method that opens `self._metered(...)`, resolves its container and
partition, calls `self._admit()` before any work on a partition (throttling), sets `meter.charge`,
and returns an `Outcome`. Mutations go through `self._journal` before they are acknowledged.
"""

from __future__ import annotations

import functools
import math
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson

from cosmoscore.costmodel import CostModel
from cosmoscore.epk import FULL_RANGE, UNDEFINED, EpkRange, prefix_range
from cosmoscore.indexing import IndexPolicy, changed_leaf_count, indexed_leaves
from cosmoscore.keys import is_key_component, key_from_json, key_json, key_to_json
from cosmoscore.layout import (
    even_boundaries,
    initial_range_count,
    midpoint,
    ranges_to_split,
    required_range_count,
    storage_split_point,
)
from cosmoscore.limits import Limits
from cosmoscore.routing import Target
from cosmoscore.sql import (
    IndexUse,
    Query,
    SqlError,
    describe,
    execute,
    index_use,
    parse_query,
    partition_key_filter,
    rewrite_for_cross_partition,
)
from emulator import errors, queries
from emulator.accounting import Accounting, PartitionStorage, RequestRecord
from emulator.journal import Journal
from emulator.model import (
    Container,
    Database,
    LogicalPartition,
    Offer,
    PkRange,
    StoredItem,
    make_rid,
)
from emulator.patch import apply_patch
from emulator.queries import QueryRequest
from emulator.throttle import Throttle

CONSISTENCY_LEVELS = ("Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual")


@dataclass(frozen=True)
class Context:
    """Per-request facts from the caller (headers, in HTTP terms)."""

    activity_id: str = ""
    correlated_activity_id: str = ""
    consistency: str | None = None
    if_match: str | None = None
    if_none_match: str | None = None


@dataclass
class Outcome:
    """What an operation answers: status, JSON body and the headers that belong to it."""

    status: int
    body: Any = None
    charge: float = 0.0
    pkrange_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Meter:
    operation: str
    resource_type: str
    database: str
    container: str
    charge: float = 0.0
    pkrange_id: str = ""
    partition_key: str = ""
    status: int = 200

    def answer(self, outcome: Outcome) -> Outcome:
        """Note the status an operation answers with (the record carries it)."""
        self.status = outcome.status
        return outcome


@dataclass(frozen=True)
class ThroughputSpec:
    """Throughput asked for at creation: manual RU/s or an autoscale maximum."""

    throughput: int
    autoscale: bool = False


@dataclass(frozen=True)
class FeedPage:
    items: list[StoredItem]
    continuation: str | None
    pkrange_id: str


class Engine:
    """The whole emulated account. Thread-safe: one lock serialises operations."""

    def __init__(
        self,
        *,
        cost_model: CostModel | None = None,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
        consistency: str = "Session",
        account_name: str = "localhost",
        journal: Journal | None = None,
        throttling: bool = True,
        accounting: Accounting | None = None,
    ) -> None:
        if consistency not in CONSISTENCY_LEVELS:
            raise ValueError(f"consistency must be one of {', '.join(CONSISTENCY_LEVELS)}")
        self.cost = cost_model or CostModel()
        self.limits = limits or Limits()
        self.clock = clock
        self.consistency = consistency
        self.account_name = account_name
        self.accounting = accounting or Accounting()
        self.throttle = Throttle(enabled=throttling)
        self.databases: dict[str, Database] = {}
        self.offers: dict[str, Offer] = {}
        self._journal = journal
        self._lock = threading.RLock()
        self._results = queries.ResultCache()  # query results being paged, per range and LSN
        self._range_docs: dict[tuple[str, str], tuple[int, list[dict[str, Any]]]] = {}
        self._writes = 0  # StoredItem.seq
        self._counter = secrets.randbits(24) << 6  # resource ids stay unique across restarts
        if journal is not None:
            journal.replay(self._apply_entry)

    # -- metering ------------------------------------------------------------------------

    @contextmanager
    def _metered(
        self, ctx: Context, operation: str, resource_type: str, database: str = "", container: str = ""
    ) -> Iterator[_Meter]:
        meter = _Meter(operation, resource_type, database, container)
        started = time.perf_counter()
        substatus, retry_after = 0, 0
        try:
            with self._lock:
                yield meter
        except errors.CosmosError as exc:
            meter.status, substatus, retry_after = exc.status, exc.substatus, exc.retry_after_ms or 0
            raise
        finally:
            self.accounting.add(
                RequestRecord(
                    time=self.clock(),
                    database=meter.database,
                    container=meter.container,
                    operation=meter.operation,
                    resource_type=resource_type,
                    status=meter.status,
                    substatus=substatus,
                    request_charge=round(meter.charge, 2),
                    pkrange_id=meter.pkrange_id,
                    partition_key=meter.partition_key,
                    activity_id=ctx.activity_id,
                    correlated_activity_id=ctx.correlated_activity_id,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    retry_after_ms=retry_after,
                )
            )

    def record_rejected(self, ctx: Context, resource_type: str, status: int, substatus: int = 0) -> None:
        """Meter a request refused before it reached an operation (bad auth, unknown route)."""
        self.accounting.add(
            RequestRecord(
                self.clock(),
                "",
                "",
                "Rejected",
                resource_type,
                status,
                substatus,
                0.0,
                "",
                "",
                ctx.activity_id,
                ctx.correlated_activity_id,
                0.0,
            )
        )

    def _admit(self, coll: Container, rng: PkRange, meter: _Meter) -> None:
        """Refuse with 429 when this partition has spent its RU/s budget in the current second."""
        meter.pkrange_id = rng.id
        wait = self.throttle.retry_after_ms((coll.rid, rng.id), self.partition_budget(coll), self.clock())
        if wait is not None:
            meter.charge = self.cost.throttled_ru
            raise errors.throttled(wait)

    def _consume(self, coll: Container, rng: PkRange, meter: _Meter, ru: float) -> None:
        meter.charge = ru
        meter.pkrange_id = rng.id
        self.throttle.consume((coll.rid, rng.id), ru, self.clock())

    def _next(self) -> int:
        self._counter += 1
        return self._counter

    def _now(self) -> int:
        return int(self.clock())

    def _commit(self, entry: dict[str, Any]) -> None:
        if self._journal is not None:
            self._journal.append(entry)

    # -- account ---------------------------------------------------------------------------

    def read_account(self, ctx: Context, endpoint: str) -> Outcome:
        with self._metered(ctx, "Read", "databaseaccount"):
            locations = [{"name": "South Central US", "databaseAccountEndpoint": endpoint}]
            body = {
                "_self": "",
                "id": self.account_name,
                "_rid": self.account_name,
                "media": "//media/",
                "addresses": "//addresses/",
                "_dbs": "//dbs/",
                "writableLocations": locations,
                "readableLocations": locations,
                "enableMultipleWriteLocations": False,
                "enablePerPartitionFailoverBehavior": False,
                "userReplicationPolicy": {"asyncReplication": False, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
                "userConsistencyPolicy": {"defaultConsistencyLevel": self.consistency},
                "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
                "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
                "queryEngineConfiguration": "{}",
            }
            return Outcome(200, body)

    # -- databases -------------------------------------------------------------------------

    def create_database(self, ctx: Context, body: dict[str, Any], throughput: ThroughputSpec | None) -> Outcome:
        db_id = _require_id(body)
        with self._metered(ctx, "Create", "dbs", db_id) as meter:
            if db_id in self.databases:
                raise errors.conflict()
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "create_db", "id": db_id, "rid": make_rid(self._next()), "ts": self._now()}
            if throughput is not None:
                entry["offer"] = self._offer_entry(throughput)
            self._commit(entry)
            db = self._apply_create_db(entry)
            return meter.answer(Outcome(201, db.props, meter.charge))

    def _offer_entry(self, spec: ThroughputSpec) -> dict[str, Any]:
        if spec.throughput < self.limits.min_throughput:
            raise errors.bad_request(
                f"The offer throughput provided ({spec.throughput}) is below the minimum of {self.limits.min_throughput} RU/s."
            )
        return {"rid": make_rid(self._next())[:4], "throughput": spec.throughput, "autoscale": spec.autoscale}

    def _apply_create_db(self, entry: dict[str, Any]) -> Database:
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
        offer = Offer(spec["rid"], link, owner_rid, spec["throughput"], spec["autoscale"], spec["throughput"], ts)
        self.offers[offer.rid] = offer
        return offer.rid

    def read_database(self, ctx: Context, db_id: str) -> Outcome:
        with self._metered(ctx, "Read", "dbs", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            return Outcome(200, self._db(db_id).props, meter.charge)

    def list_databases(self, ctx: Context) -> Outcome:
        with self._metered(ctx, "ReadFeed", "dbs") as meter:
            meter.charge = self.cost.metadata_read_ru
            dbs = [d.props for d in self.databases.values()]
            return Outcome(200, {"_rid": "", "Databases": dbs, "_count": len(dbs)}, meter.charge)

    def delete_database(self, ctx: Context, db_id: str) -> Outcome:
        with self._metered(ctx, "Delete", "dbs", db_id) as meter:
            self._db(db_id)
            meter.charge = self.cost.metadata_write_ru
            self._commit({"op": "delete_db", "id": db_id})
            self._apply_delete_db({"id": db_id})
            return meter.answer(Outcome(204, None, meter.charge))

    def _apply_delete_db(self, entry: dict[str, Any]) -> None:
        db = self.databases.pop(entry["id"])
        for coll in db.containers.values():
            self.offers.pop(coll.offer_rid or "", None)
        self.offers.pop(db.offer_rid or "", None)

    def _db(self, db_id: str) -> Database:
        db = self.databases.get(db_id)
        if db is None:
            raise errors.not_found()
        return db

    # -- containers ------------------------------------------------------------------------

    def create_container(
        self, ctx: Context, db_id: str, body: dict[str, Any], throughput: ThroughputSpec | None
    ) -> Outcome:
        coll_id = _require_id(body)
        with self._metered(ctx, "Create", "colls", db_id, coll_id) as meter:
            db = self._db(db_id)
            if coll_id in db.containers:
                raise errors.conflict()
            pk = _validate_partition_key_definition(body.get("partitionKey"), self.limits)
            policy_json = body.get("indexingPolicy") or None
            _validate_policy(policy_json)
            if throughput is None and db.offer_rid is None:
                throughput = ThroughputSpec(self.limits.default_throughput)
            shared = self.offers[db.offer_rid] if throughput is None and db.offer_rid else None
            count = (
                initial_range_count(shared.throughput, True, self.limits)
                if shared
                else initial_range_count(throughput.throughput, throughput.autoscale, self.limits)  # type: ignore[union-attr]
            )
            entry: dict[str, Any] = {
                "op": "create_coll",
                "db": db_id,
                "id": coll_id,
                "rid": make_rid(self._next(), self._next()),
                "ts": self._now(),
                "partitionKey": pk,
                "indexingPolicy": policy_json,
                "ranges": count,
                "extra": {
                    k: v for k, v in body.items() if k in ("defaultTtl", "uniqueKeyPolicy", "conflictResolutionPolicy")
                },
            }
            if throughput is not None:
                entry["offer"] = self._offer_entry(throughput)
            meter.charge = self.cost.metadata_write_ru
            self._commit(entry)
            coll = self._apply_create_coll(entry)
            return meter.answer(Outcome(201, coll.props, meter.charge))

    def _apply_create_coll(self, entry: dict[str, Any]) -> Container:
        db = self.databases[entry["db"]]
        rid = entry["rid"]
        policy_json = entry["indexingPolicy"] or {
            "indexingMode": "consistent",
            "automatic": True,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": '/"_etag"/?'}],
        }
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
        layout = entry.get("layout")
        if layout:  # a snapshot keeps the exact layout, splits included
            ranges = [PkRange(r["id"], r["min"], r["max"], r["parents"]) for r in layout["ranges"]]
            coll = Container(
                entry["id"],
                rid,
                db.id,
                props,
                IndexPolicy.from_json(policy_json),
                ranges,
                None,
                layout["next_range_id"],
                layout["version"],
                [tuple(x) for x in layout["log"]],
                set(layout["gone"]),
            )
        else:
            ranges = [PkRange(str(i), lo, hi) for i, (lo, hi) in enumerate(even_boundaries(entry["ranges"]))]
            coll = Container(
                entry["id"], rid, db.id, props, IndexPolicy.from_json(policy_json), ranges, None, len(ranges)
            )
            coll.range_log = [(1, r.id) for r in ranges]
        if "offer" in entry:
            coll.offer_rid = self._apply_offer(entry["offer"], props["_self"], rid, entry["ts"])
        db.containers[coll.id] = coll
        return coll

    def read_container(
        self, ctx: Context, db_id: str, coll_id: str, *, statistics: bool = False, quota: bool = False
    ) -> Outcome:
        with self._metered(ctx, "Read", "colls", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id)
            meter.charge = self.cost.metadata_read_ru
            body = dict(coll.props)
            headers: dict[str, str] = {}
            if statistics:
                body["statistics"] = [_range_statistics(r) for r in coll.ranges]
            if quota:
                headers.update(self._quota_headers(coll))
            return Outcome(200, body, meter.charge, headers=headers)

    def _quota_headers(self, coll: Container) -> dict[str, str]:
        """x-ms-resource-quota/-usage in the service's `key=value;` form (cosmos-errors-and-stats.md §2.3)."""
        size_kb = math.ceil(coll.size / 1024)
        quota_kb = self.limits.logical_partition_max_bytes // 1024 * len(coll.ranges)
        quota = (
            f"functions=25;storedProcedures=100;triggers=25;documentSize={quota_kb // 1024};"
            f"documentsSize={quota_kb};documentsCount=-1;collectionSize={quota_kb};"
        )
        usage = (
            f"functions=0;storedProcedures=0;triggers=0;documentSize={math.ceil(size_kb / 1024)};"
            f"documentsSize={size_kb};documentsCount={coll.docs};collectionSize={size_kb};"
        )
        return {"x-ms-resource-quota": quota, "x-ms-resource-usage": usage}

    def list_containers(self, ctx: Context, db_id: str) -> Outcome:
        with self._metered(ctx, "ReadFeed", "colls", db_id) as meter:
            colls = [c.props for c in self._db(db_id).containers.values()]
            meter.charge = self.cost.metadata_read_ru
            return Outcome(
                200, {"_rid": self._db(db_id).rid, "DocumentCollections": colls, "_count": len(colls)}, meter.charge
            )

    def replace_container(self, ctx: Context, db_id: str, coll_id: str, body: dict[str, Any]) -> Outcome:
        with self._metered(ctx, "Replace", "colls", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id)
            if body.get("partitionKey") and body["partitionKey"].get("paths") != coll.props["partitionKey"]["paths"]:
                raise errors.bad_request("Partition key paths of a container cannot be changed.")
            policy = body.get("indexingPolicy") or coll.props["indexingPolicy"]
            _validate_policy(policy)
            meter.charge = self.cost.metadata_write_ru
            entry = {
                "op": "replace_coll",
                "db": db_id,
                "id": coll_id,
                "indexingPolicy": policy,
                "defaultTtl": body.get("defaultTtl"),
                "ts": self._now(),
            }
            self._commit(entry)
            self._apply_replace_coll(entry)
            return Outcome(200, coll.props, meter.charge)

    def _apply_replace_coll(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers[entry["id"]]
        coll.props["indexingPolicy"] = entry["indexingPolicy"]
        coll.policy = IndexPolicy.from_json(entry["indexingPolicy"])
        if entry.get("defaultTtl") is not None:
            coll.props["defaultTtl"] = entry["defaultTtl"]
        coll.props["_ts"] = entry["ts"]

    def delete_container(self, ctx: Context, db_id: str, coll_id: str) -> Outcome:
        with self._metered(ctx, "Delete", "colls", db_id, coll_id) as meter:
            self._coll(db_id, coll_id)
            meter.charge = self.cost.metadata_write_ru
            self._commit({"op": "delete_coll", "db": db_id, "id": coll_id})
            self._apply_delete_coll({"db": db_id, "id": coll_id})
            return meter.answer(Outcome(204, None, meter.charge))

    def _apply_delete_coll(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers.pop(entry["id"])
        self.offers.pop(coll.offer_rid or "", None)

    def _coll(self, db_id: str, coll_id: str, intended_rid: str | None = None) -> Container:
        coll = self._db(db_id).containers.get(coll_id)
        if coll is None:
            raise errors.not_found()
        if intended_rid and intended_rid != coll.rid:
            raise errors.bad_request("The container was recreated; its resource id changed.", substatus=1024)
        return coll

    def container(self, db_id: str, coll_id: str) -> Container:
        """Direct access for in-process users (advisor, monitor stand-in, tests)."""
        with self._lock:
            return self._coll(db_id, coll_id)

    # -- partition key ranges --------------------------------------------------------------

    def read_pkranges(self, ctx: Context, db_id: str, coll_id: str, if_none_match: str | None) -> Outcome:
        """The routing map as an incremental feed: etag = layout version, 304 when unchanged (§1.5)."""
        with self._metered(ctx, "ReadFeed", "pkranges", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id)
            etag = f'"{coll.range_version}"'
            if if_none_match == etag:
                return meter.answer(Outcome(304, None, headers={"etag": etag}))
            since = _etag_version(if_none_match)
            if since is None or since > coll.range_version:
                ranges = coll.ranges  # a first read (or an etag we never issued): the whole map
            else:  # incremental: only ranges born since that version, each naming its parents
                born = {rid for version, rid in coll.range_log if version > since}
                ranges = [r for r in coll.ranges if r.id in born]
            fraction = 1 / len(coll.ranges)
            body = {
                "_rid": coll.rid,
                "PartitionKeyRanges": [r.to_json(fraction) for r in ranges],
                "_count": len(ranges),
            }
            return Outcome(200, body, headers={"etag": etag})

    def feed_ranges(self, db_id: str, coll_id: str) -> list[tuple[str, str, str]]:
        """(pkrange id, min, max) of the current layout."""
        with self._lock:
            return [(r.id, r.min, r.max) for r in self._coll(db_id, coll_id).ranges]

    # -- offers ----------------------------------------------------------------------------

    def list_offers(self, ctx: Context, body: Any = None) -> Outcome:
        """All offers, or those a SQL query selects (the SDK asks `... WHERE r.resource = @link`)."""
        with self._metered(ctx, "ReadFeed" if body is None else "Query", "offers") as meter:
            meter.charge = self.cost.metadata_read_ru
            offers = [o.to_json() for o in self.offers.values()]
            if body is not None:
                text, params = queries.query_text_and_parameters(body)
                offers = _guarded(lambda: execute(_parse(text), offers, params).rows)
            return Outcome(200, {"_rid": "", "Offers": offers, "_count": len(offers)}, meter.charge)

    def read_offer(self, ctx: Context, offer_rid: str) -> Outcome:
        with self._metered(ctx, "Read", "offers") as meter:
            offer = self._offer(offer_rid)
            meter.charge = self.cost.metadata_read_ru
            return Outcome(
                200,
                offer.to_json(),
                meter.charge,
                headers={"x-ms-cosmos-min-throughput": str(self.limits.min_throughput)},
            )

    def replace_offer(self, ctx: Context, offer_rid: str, body: dict[str, Any]) -> Outcome:
        """Change throughput; raising it past P x 10,000 RU/s splits partitions (P7)."""
        with self._metered(ctx, "Replace", "offers") as meter:
            offer = self._offer(offer_rid)
            content = body.get("content") or {}
            autopilot = content.get("offerAutopilotSettings")
            value = autopilot.get("maxThroughput") if offer.autoscale and autopilot else content.get("offerThroughput")
            if not isinstance(value, int) or isinstance(value, bool) or value < self.limits.min_throughput:
                raise errors.bad_request(
                    f"The offer throughput must be an integer of at least {self.limits.min_throughput} RU/s."
                )
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "replace_offer", "rid": offer_rid, "throughput": value, "ts": self._now()}
            self._commit(entry)
            self._apply_replace_offer(entry)
            return Outcome(200, offer.to_json(), meter.charge)

    def _apply_replace_offer(self, entry: dict[str, Any]) -> None:
        offer = self.offers[entry["rid"]]
        offer.throughput = entry["throughput"]
        offer.max_ever = max(offer.max_ever, offer.throughput)
        offer.ts = entry["ts"]
        for coll in self._containers_of_offer(offer):
            self._split_for_throughput(coll, offer.throughput)

    def _containers_of_offer(self, offer: Offer) -> list[Container]:
        return [
            c
            for db in self.databases.values()
            for c in db.containers.values()
            if c.offer_rid == offer.rid or (c.offer_rid is None and db.offer_rid == offer.rid)
        ]

    def _offer(self, offer_rid: str) -> Offer:
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

    # -- splits ----------------------------------------------------------------------------

    def _split_for_throughput(self, coll: Container, throughput: int) -> None:
        target = required_range_count(throughput, self.limits)
        to_split = [coll.ranges[i] for i in ranges_to_split(len(coll.ranges), target)]
        for rng in to_split:
            self._split(coll, rng, midpoint(rng.min, rng.max))

    def _split_for_storage(self, coll: Container, rng: PkRange) -> None:
        if rng.size <= self.limits.physical_partition_max_bytes:
            return
        cut = storage_split_point(sorted((lp.epk, lp.size) for lp in rng.logical.values()))
        if cut is not None:
            self._split(coll, rng, cut)

    def _split(self, coll: Container, parent: PkRange, cut: str) -> None:
        """Replace a range by two children at `cut`; logical partitions move whole (P5)."""
        coll.range_version += 1
        children = []
        for lo, hi in ((parent.min, cut), (cut, parent.max)):
            child = PkRange(str(coll.next_range_id), lo, hi, [*parent.parents, parent.id], lsn=parent.lsn)
            coll.next_range_id += 1
            coll.range_log.append((coll.range_version, child.id))
            children.append(child)
        for epk, lp in parent.logical.items():
            child = children[0] if epk < cut else children[1]
            child.logical[epk] = lp
            child.size += lp.size
            child.docs += len(lp.items)
        coll.ranges.remove(parent)
        coll.ranges.extend(children)
        coll.gone.add(parent.id)
        coll.reindex_ranges()

    # -- items -----------------------------------------------------------------------------

    def create_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        doc: Any,
        pk_header: Any,
        *,
        upsert: bool = False,
        intended_rid: str | None = None,
    ) -> Outcome:
        with self._metered(ctx, "Upsert" if upsert else "Create", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            doc, key = self._checked_document(coll, doc, pk_header)
            lp, rng = self._locate(coll, key, meter)
            self._admit(coll, rng, meter)
            existing = lp.items.get(doc["id"]) if lp else None
            if existing is not None and not upsert:
                raise errors.conflict()
            if existing is not None:
                self._check_if_match(ctx, existing)
                return self._write_replace(ctx, coll, rng, key, existing, doc, meter, status=200)
            stored = self._stamp(coll, doc)
            self._check_limits(lp, stored.size, 0)
            leaves = len(indexed_leaves(stored.doc, coll.policy))
            self._consume(coll, rng, meter, self.cost.create_ru(stored.size, leaves))
            return self._store(coll, rng, key, stored, 201, meter)

    def replace_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        doc: Any,
        pk_header: Any,
        *,
        intended_rid: str | None = None,
    ) -> Outcome:
        with self._metered(ctx, "Replace", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            doc, key = self._checked_document(coll, doc, pk_header)
            if doc["id"] != item_id:
                raise errors.bad_request("The id in the document does not match the id in the request URI.")
            rng, existing = self._existing(ctx, coll, key, item_id, meter)
            return self._write_replace(ctx, coll, rng, key, existing, doc, meter, status=200)

    def patch_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        body: Any,
        pk_header: Any,
        *,
        intended_rid: str | None = None,
    ) -> Outcome:
        with self._metered(ctx, "Patch", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            key = self._header_key(coll, pk_header, full=True)
            rng, existing = self._existing(ctx, coll, key, item_id, meter)
            operations = body.get("operations") if isinstance(body, dict) else None
            if body.get("condition") if isinstance(body, dict) else None:
                raise errors.bad_request("Conditional patch (filter predicate) is not supported by this emulator yet.")
            new_doc = apply_patch(existing.doc, operations, [p for p in coll.key_paths])
            return self._write_replace(
                ctx, coll, rng, key, existing, new_doc, meter, status=200, patch_ops=len(operations or [])
            )

    def read_item(
        self, ctx: Context, db_id: str, coll_id: str, item_id: str, pk_header: Any, *, intended_rid: str | None = None
    ) -> Outcome:
        with self._metered(ctx, "Read", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            key = self._header_key(coll, pk_header, full=True)
            lp, rng = self._locate(coll, key, meter)
            self._admit(coll, rng, meter)
            item = lp.items.get(item_id) if lp else None
            consistency = ctx.consistency or self.consistency
            if item is None:
                self._consume(coll, rng, meter, self.cost.read_ru(0, consistency))
                raise errors.not_found("Entity")
            self._consume(coll, rng, meter, self.cost.read_ru(item.size, consistency))
            if ctx.if_none_match and ctx.if_none_match == item.doc["_etag"]:
                return self._item_outcome(coll, rng, meter, 304, None)
            return self._item_outcome(coll, rng, meter, 200, item.doc)

    def delete_item(
        self, ctx: Context, db_id: str, coll_id: str, item_id: str, pk_header: Any, *, intended_rid: str | None = None
    ) -> Outcome:
        with self._metered(ctx, "Delete", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            key = self._header_key(coll, pk_header, full=True)
            rng, item = self._existing(ctx, coll, key, item_id, meter)
            leaves = len(indexed_leaves(item.doc, coll.policy))
            self._consume(coll, rng, meter, self.cost.delete_ru(item.size, leaves))
            entry = {"op": "delete", "db": db_id, "coll": coll_id, "key": key_to_json(key), "id": item_id}
            self._commit(entry)
            self._apply_delete(entry)
            return self._item_outcome(coll, rng, meter, 204, None)

    # -- item helpers ----------------------------------------------------------------------

    def _checked_document(self, coll: Container, doc: Any, pk_header: Any) -> tuple[dict[str, Any], tuple[Any, ...]]:
        """Validate a document body; returns it with its partition key (400/413 otherwise)."""
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
        key = coll.extract_key(doc)
        bad = next((c for c in key if not is_key_component(c)), None)
        if bad is not None:
            raise errors.bad_request(
                "The partition key value of the document must be a string, number, boolean or null."
            )
        header_key = self._header_key(coll, pk_header, full=True)
        if header_key != key and key_to_json(header_key) != key_to_json(key):
            raise errors.bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the header", 1001
            )
        return doc, key

    def _header_key(self, coll: Container, pk_header: Any, *, full: bool) -> tuple[Any, ...]:
        """Parse the x-ms-documentdb-partitionkey value (already JSON-decoded) for this container."""
        if pk_header is None:
            raise errors.bad_request("PartitionKey value must be supplied for this operation.")
        if not isinstance(pk_header, list) or not pk_header and coll.kind == "MultiHash":
            raise errors.bad_request("The partition key header must be a JSON array of the key's components.")
        key = key_from_json(pk_header) or (UNDEFINED,)
        levels = len(coll.key_paths)
        if (full and len(key) != levels) or len(key) > levels or not all(is_key_component(c) for c in key):
            raise errors.bad_request(
                "Partition key provided either doesn't correspond to definition in the collection or doesn't match "
                f"partition key field values specified in the document (expected {levels} component(s), got {pk_header!r})."
            )
        return key

    def _existing(
        self, ctx: Context, coll: Container, key: tuple[Any, ...], item_id: str, meter: _Meter
    ) -> tuple[PkRange, StoredItem]:
        """The stored item a write targets, after throttling and its If-Match precondition (404/412)."""
        lp, rng = self._locate(coll, key, meter)
        self._admit(coll, rng, meter)
        item = lp.items.get(item_id) if lp else None
        if item is None:
            raise errors.not_found("Entity")
        self._check_if_match(ctx, item)
        return rng, item

    def _locate(self, coll: Container, key: tuple[Any, ...], meter: _Meter) -> tuple[LogicalPartition | None, PkRange]:
        epk = coll.epk(key)
        rng = coll.range_for(epk)
        meter.pkrange_id = rng.id
        meter.partition_key = key_json(key)
        return rng.logical.get(epk), rng

    def _stamp(self, coll: Container, doc: dict[str, Any]) -> StoredItem:
        """Add the system properties and measure the persisted size (413 past the item limit)."""
        stored = {k: v for k, v in doc.items() if k not in ("_rid", "_self", "_etag", "_attachments", "_ts")}
        rid = make_rid(0, 0, self._next())
        stored.update(
            {
                "_rid": rid,
                "_self": f"{coll.self_link}docs/{rid}/",
                "_etag": f'"{uuid.uuid4()}"',
                "_attachments": "attachments/",
                "_ts": self._now(),
            }
        )
        size = len(orjson.dumps(stored))
        if size > self.limits.max_item_bytes:
            raise errors.too_large()
        return StoredItem(stored, size)

    def _check_limits(self, lp: LogicalPartition | None, new: int, old: int) -> None:
        """Refuse a write that takes a logical partition past 20 GB (403/1014, P1)."""
        current = lp.size if lp else 0
        if current - old + new > self.limits.logical_partition_max_bytes:
            raise errors.partition_full(self.limits.logical_partition_max_bytes / 1024**3)

    def _check_if_match(self, ctx: Context, item: StoredItem) -> None:
        if ctx.if_match and ctx.if_match != "*" and ctx.if_match != item.doc["_etag"]:
            raise errors.precondition_failed()

    def _write_replace(
        self,
        ctx: Context,
        coll: Container,
        rng: PkRange,
        key: tuple[Any, ...],
        existing: StoredItem,
        doc: dict[str, Any],
        meter: _Meter,
        *,
        status: int,
        patch_ops: int | None = None,
    ) -> Outcome:
        stored = self._stamp(coll, doc)
        self._check_limits(rng.logical.get(coll.epk(key)), stored.size, existing.size)
        old_leaves = indexed_leaves(existing.doc, coll.policy)
        new_leaves = indexed_leaves(stored.doc, coll.policy)
        changed = changed_leaf_count(old_leaves, new_leaves)
        args = (existing.size, stored.size, changed, len(old_leaves), len(new_leaves))
        ru = self.cost.patch_ru(*args, patch_ops) if patch_ops is not None else self.cost.replace_ru(*args)
        self._consume(coll, rng, meter, ru)
        return self._store(coll, rng, key, stored, status, meter)

    def _store(
        self, coll: Container, rng: PkRange, key: tuple[Any, ...], stored: StoredItem, status: int, meter: _Meter
    ) -> Outcome:
        entry = {
            "op": "put",
            "db": coll.db_id,
            "coll": coll.id,
            "key": key_to_json(key),
            "doc": stored.doc,
            "size": stored.size,
        }
        self._commit(entry)
        rng = self._apply_put(entry)
        return self._item_outcome(coll, rng, meter, status, stored.doc)

    def _apply_put(self, entry: dict[str, Any]) -> PkRange:
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
        self._writes += 1
        lp.items[doc["id"]] = StoredItem(doc, entry["size"], self._writes)
        lp.size += entry["size"]
        rng.size += entry["size"]
        rng.docs += 1
        rng.lsn += 1
        self._split_for_storage(coll, rng)
        return coll.range_for(epk)

    def _apply_delete(self, entry: dict[str, Any]) -> None:
        coll = self.databases[entry["db"]].containers[entry["coll"]]
        epk = coll.epk(key_from_json(entry["key"]))
        rng = coll.range_for(epk)
        lp = rng.logical[epk]
        item = lp.items.pop(entry["id"])
        lp.size -= item.size
        rng.size -= item.size
        rng.docs -= 1
        rng.lsn += 1
        if not lp.items:
            del rng.logical[epk]

    def _item_outcome(self, coll: Container, rng: PkRange, meter: _Meter, status: int, body: Any) -> Outcome:
        headers = {"x-ms-session-token": f"{rng.id}:-1#{rng.lsn}", "lsn": str(rng.lsn)}
        if isinstance(body, dict) and "_etag" in body:
            headers["etag"] = body["_etag"]
        return meter.answer(Outcome(status, body, meter.charge, rng.id, headers))

    # -- read feed -------------------------------------------------------------------------

    def read_feed(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        *,
        pk_header: Any = None,
        pkrange_id: str | None = None,
        epk_range: tuple[str, str] | None = None,
        max_items: int = -1,
        continuation: str | None = None,
        intended_rid: str | None = None,
    ) -> Outcome:
        """One page of documents: of a logical partition, a pkrange, an EPK sub-range, or everything."""
        with self._metered(ctx, "ReadFeed", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, intended_rid)
            lo, hi = FULL_RANGE.min, FULL_RANGE.max
            if pk_header is not None:
                key = self._header_key(coll, pk_header, full=False)
                epk = coll.epk(key)
                lo, hi = (epk, epk) if len(key) == len(coll.key_paths) else prefix_range(epk)
                meter.partition_key = key_json(key) if lo == hi else ""
            elif epk_range is not None:
                lo, hi = epk_range
            page = self._feed_page(coll, meter, lo, hi, pkrange_id, max_items, continuation)
            consistency = ctx.consistency or self.consistency
            sizes = [item.size for item in page.items]  # measured once, when stored
            rng = coll.range_by_id(page.pkrange_id)
            if rng is not None:
                self._consume(coll, rng, meter, self.cost.feed_page_ru(sizes, consistency))
            headers = {"x-ms-item-count": str(len(page.items))}
            if page.continuation:
                headers["x-ms-continuation"] = page.continuation
            if rng is not None:
                headers["x-ms-session-token"] = f"{rng.id}:-1#{rng.lsn}"
            docs = [item.doc for item in page.items]
            body = {"_rid": coll.rid, "Documents": docs, "_count": len(docs)}
            return Outcome(200, body, meter.charge, page.pkrange_id, headers)

    def _feed_page(
        self,
        coll: Container,
        meter: _Meter,
        lo: str,
        hi: str,
        pkrange_id: str | None,
        max_items: int,
        continuation: str | None,
    ) -> FeedPage:
        """Serve ranges in EPK order, one range per page at most, as the gateway does (wire §1.7 path A)."""
        state = _decode_continuation(continuation) or {}
        after = tuple(state["after"]) if isinstance(state.get("after"), list) else None
        start = max(lo, str(state.get("from", lo)))
        if pkrange_id is not None:
            rng = coll.range_by_id(pkrange_id)
            if rng is None:
                raise errors.range_gone()
            candidates = [rng]
        elif lo == hi:
            candidates = [coll.range_for(lo)]
        else:
            candidates = [r for r in coll.ranges if EpkRange(r.min, r.max).overlaps(EpkRange(start, hi))]
        for index, rng in enumerate(candidates):
            self._admit(coll, rng, meter)
            items, cursor = _collect(rng, lo, hi, after, max_items)
            if cursor is not None:
                return FeedPage(items, _encode_continuation({"from": cursor[0], "after": list(cursor)}), rng.id)
            is_last = index == len(candidates) - 1 or pkrange_id is not None or lo == hi
            if items or is_last:
                token = None if is_last else _encode_continuation({"from": candidates[index + 1].min})
                return FeedPage(items, token, rng.id)
        return FeedPage([], None, "")

    # -- queries ---------------------------------------------------------------------------

    def query(self, ctx: Context, db_id: str, coll_id: str, req: QueryRequest) -> Outcome:
        """One page of a SQL query, routed as the gateway routes it (see emulator.queries)."""
        with self._metered(ctx, "Query", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id, req.intended_rid)
            text, params = queries.query_text_and_parameters(req.body)
            query = _parse(text)
            queries.check_order_by(query, coll.policy)
            if req.pkrange_id is not None:
                rng = coll.range_by_id(req.pkrange_id)
                if rng is None:
                    raise errors.range_gone()
                lo, hi = req.epk_range or (rng.min, rng.max)
                return self._query_page(ctx, coll, meter, query, text, params, req, [Target(rng, EpkRange(lo, hi))])
            if req.pk_header is not None:
                key = self._header_key(coll, req.pk_header, full=False)
                epk = coll.epk(key)
                if len(key) == len(coll.key_paths):
                    meter.partition_key = key_json(key)
                    target = Target(coll.range_for(epk), EpkRange.point(epk))
                    return self._query_page(ctx, coll, meter, query, text, params, req, [target])
                intervals = [EpkRange(*prefix_range(epk))]
            else:
                key_filter = _guarded(lambda: partition_key_filter(query, coll.key_paths, params))
                intervals = queries.key_intervals(coll, key_filter)
            targets = coll.routing.targets(intervals)
            if len({t.range.id for t in targets}) > 1 and not req.cross_partition:
                raise errors.bad_request(queries.CROSS_PARTITION_DISABLED)
            shape = _guarded(lambda: describe(query, params))
            if not shape.is_streamable:
                plan = queries.query_plan(shape, _guarded(lambda: rewrite_for_cross_partition(query, shape)), intervals)
                refused = errors.bad_request(queries.NOT_SERVABLE, 1004)
                refused.additional_info = orjson.dumps(plan).decode()
                meter.charge = self.cost.refused_query_ru
                raise refused
            return self._query_page(ctx, coll, meter, query, text, params, req, targets)

    def query_plan(self, ctx: Context, db_id: str, coll_id: str, body: Any, supported_features: str | None) -> Outcome:
        """The query plan the SDK asks for after a 400/1004 (wire §1.7-1.8): operators and target EPK ranges."""
        with self._metered(ctx, "QueryPlan", "docs", db_id, coll_id) as meter:
            coll = self._coll(db_id, coll_id)
            text, params = queries.query_text_and_parameters(body)
            try:
                query = parse_query(text)
                shape = describe(query, params)
                rewritten = rewrite_for_cross_partition(query, shape)
                key_filter = partition_key_filter(query, coll.key_paths, params)
            except SqlError as exc:
                raise queries.sql_error(exc, queries.PLAN_PREFIX) from None
            queries.check_features(query, shape, supported_features)
            meter.charge = self.cost.query_plan_ru
            plan = queries.query_plan(shape, rewritten, queries.key_intervals(coll, key_filter))
            return meter.answer(Outcome(200, plan, meter.charge))

    def _query_page(
        self,
        ctx: Context,
        coll: Container,
        meter: _Meter,
        query: Query,
        text: str,
        params: dict[str, Any],
        req: QueryRequest,
        targets: list[Target[PkRange]],
    ) -> Outcome:
        """Serve the next page: rows of one target, charged for the share of that target's work they carry."""
        start, offset = queries.decode_continuation(req.continuation)
        index, same = queries.resume_index(targets, start)
        offset = offset if same else 0
        if index >= len(targets):
            return Outcome(200, {"_rid": coll.rid, "Documents": [], "_count": 0}, 0.0, "", {"x-ms-item-count": "0"})
        target = targets[index]
        rng = target.range
        self._admit(coll, rng, meter)
        result = self._range_result(coll, target, query, text, params)
        page, sizes = queries.page_rows(result.rows, offset, req.max_items)
        end, count = offset + len(page), len(result.rows)
        retrieved = queries.share(result.retrieved_docs, offset, end, count)
        retrieved_bytes = queries.share(result.retrieved_bytes, offset, end, count)
        consistency = ctx.consistency or self.consistency
        ru = self.cost.consistency_multiplier(consistency) * self.cost.query_page_ru(
            offset == 0, count > 0, retrieved, retrieved_bytes, len(page), sum(sizes)
        )
        self._consume(coll, rng, meter, ru)
        headers = {"x-ms-item-count": str(len(page)), "x-ms-session-token": f"{rng.id}:-1#{rng.lsn}"}
        if end < count:
            headers["x-ms-continuation"] = queries.encode_continuation(target.lo, end)
        elif index + 1 < len(targets):
            headers["x-ms-continuation"] = queries.encode_continuation(targets[index + 1].lo, 0)
        if req.query_metrics:
            headers["x-ms-documentdb-query-metrics"] = queries.query_metrics_header(
                queries.PageMetrics(
                    retrieved,
                    retrieved_bytes,
                    len(page),
                    sum(sizes),
                    result.execution_ms if offset == 0 else 0.0,
                    result.index_hit_ratio,
                )
            )
        if req.index_metrics:
            headers["x-ms-cosmos-index-utilization"] = queries.index_utilization_header(
                result.indexed, result.unindexed
            )
        body = {"_rid": coll.rid, "Documents": page, "_count": len(page)}
        return meter.answer(Outcome(200, body, meter.charge, rng.id, headers))

    def _range_result(
        self, coll: Container, target: Target[PkRange], query: Query, text: str, params: dict[str, Any]
    ) -> queries.RangeResult:
        """The whole result of a query in one target, from the cache when the range has not changed."""
        rng = target.range
        key = (coll.rid, rng.id, rng.lsn, target.lo, target.hi, text, queries.parameters_key(params))
        cached = self._results.get(key)
        if cached is not None:
            return cached
        use = _index_use(query, coll.policy)
        docs, scope_bytes = self._scope_documents(coll, target)
        started = time.perf_counter()
        result = _guarded(lambda: execute(query, docs, params, count_matches=True))
        elapsed = (time.perf_counter() - started) * 1000
        average = scope_bytes / len(docs) if docs else 0.0
        # ru-cost-model.md §3.3: an index-served filter loads only its matches; anything else scans
        retrieved = result.matched if use.served_by_index else result.loaded
        served = queries.RangeResult(
            rows=result.rows,
            retrieved_docs=retrieved,
            retrieved_bytes=round(retrieved * average),
            execution_ms=elapsed,
            indexed=use.indexed_paths,
            unindexed=use.unindexed_paths,
            index_hit_ratio=_hit_ratio(use.served_by_index, result.matched, retrieved),
        )
        self._results.put(key, served)
        return served

    def _scope_documents(self, coll: Container, target: Target[PkRange]) -> tuple[list[dict[str, Any]], int]:
        """The documents a target covers and their stored bytes (a range's list is kept until it changes)."""
        rng, lo, hi = target.range, target.lo, target.hi
        if lo == hi:
            lp = rng.logical.get(lo)
            return ([item.doc for item in lp.items.values()], lp.size) if lp else ([], 0)
        if target.interval.covers(EpkRange(rng.min, rng.max)):
            cached = self._range_docs.get((coll.rid, rng.id))
            if cached is None or cached[0] != rng.lsn:
                # in write order, not key order: documents written together sit together in memory, and
                # scanning them in that order is several times faster than hopping between partitions
                items = sorted((item for lp in rng.logical.values() for item in lp.items.values()), key=_write_order)
                docs = [item.doc for item in items]
                cached = self._range_docs[(coll.rid, rng.id)] = (rng.lsn, docs)
            return cached[1], rng.size
        inside = [lp for epk, lp in rng.logical.items() if target.interval.contains(epk)]
        return [item.doc for lp in inside for item in lp.items.values()], sum(lp.size for lp in inside)

    # -- statistics for in-process consumers ----------------------------------------------

    def partition_storage(self, db_id: str, coll_id: str) -> list[PartitionStorage]:
        with self._lock:
            coll = self._coll(db_id, coll_id)
            budget = self.partition_budget(coll)
            return [
                PartitionStorage(
                    db_id,
                    coll_id,
                    r.id,
                    r.min,
                    r.max,
                    r.size,
                    r.docs,
                    {lp.key_json: lp.size for lp in r.logical.values()},
                    budget,
                )
                for r in coll.ranges
            ]

    def close(self) -> None:
        """Fold the journal into a snapshot and release it (clean shutdown)."""
        with self._lock:
            if self._journal is not None:
                self._journal.compact(self.snapshot_entries())
                self._journal.close()
                self._journal = None

    # -- journal replay --------------------------------------------------------------------

    def _apply_entry(self, entry: dict[str, Any]) -> None:
        appliers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "create_db": self._apply_create_db,
            "delete_db": self._apply_delete_db,
            "create_coll": self._apply_create_coll,
            "replace_coll": self._apply_replace_coll,
            "delete_coll": self._apply_delete_coll,
            "replace_offer": self._apply_replace_offer,
            "put": self._apply_put,
            "delete": self._apply_delete,
        }
        appliers[entry["op"]](entry)

    def snapshot_entries(self) -> Iterator[dict[str, Any]]:
        """The current state as journal entries (for compaction): replaying them rebuilds it."""
        with self._lock:
            for db in self.databases.values():
                offer = self.offers.get(db.offer_rid or "")
                entry: dict[str, Any] = {"op": "create_db", "id": db.id, "rid": db.rid, "ts": db.props["_ts"]}
                if offer:
                    entry["offer"] = {"rid": offer.rid, "throughput": offer.max_ever, "autoscale": offer.autoscale}
                yield entry
                if offer and offer.throughput != offer.max_ever:
                    yield {"op": "replace_offer", "rid": offer.rid, "throughput": offer.throughput, "ts": offer.ts}
                for coll in db.containers.values():
                    yield from self._container_entries(db, coll)

    def _container_entries(self, db: Database, coll: Container) -> Iterator[dict[str, Any]]:
        offer = self.offers.get(coll.offer_rid or "")
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
            "extra": {k: coll.props[k] for k in ("defaultTtl",) if k in coll.props},
        }
        if offer:
            entry["offer"] = {"rid": offer.rid, "throughput": offer.throughput, "autoscale": offer.autoscale}
        yield entry
        for rng in coll.ranges:
            for lp in rng.logical.values():
                for item in lp.items.values():
                    yield {
                        "op": "put",
                        "db": db.id,
                        "coll": coll.id,
                        "key": key_to_json(lp.key),
                        "doc": item.doc,
                        "size": item.size,
                    }


# -- module helpers ---------------------------------------------------------------------------


def _require_id(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("id"), str) or not body["id"]:
        raise errors.bad_request("The input content is invalid because the required properties - 'id; ' - are missing")
    return body["id"]


def _validate_partition_key_definition(pk: Any, limits: Limits) -> dict[str, Any]:
    """Hash with one path or MultiHash with 2-3 (H1), version 2 (the SDK default, §1.3)."""
    if not isinstance(pk, dict) or not isinstance(pk.get("paths"), list) or not pk["paths"]:
        raise errors.bad_request("A container needs a partitionKey definition with at least one path.")
    kind, paths, version = pk.get("kind", "Hash"), pk["paths"], pk.get("version", 1)
    if not all(isinstance(p, str) and p.startswith("/") and len(p) > 1 for p in paths):
        raise errors.bad_request(f"Partition key paths must be strings starting with '/': {paths!r}")
    if kind == "Hash" and len(paths) != 1:
        raise errors.bad_request("A Hash partition key has exactly one path; use kind MultiHash for 2 or 3.")
    if kind == "MultiHash" and not 2 <= len(paths) <= limits.max_hierarchy_levels:
        raise errors.bad_request(f"A MultiHash partition key has 2 to {limits.max_hierarchy_levels} paths.")
    if kind not in ("Hash", "MultiHash"):
        raise errors.bad_request(f"Partition key kind {kind!r} is not supported (Hash or MultiHash).")
    if version != 2:
        raise errors.bad_request("Only partition key version 2 (the SDK default) is supported by this emulator.")
    return {"paths": list(paths), "kind": kind, "version": 2}


def _validate_policy(policy: Any) -> None:
    if policy is None:
        return
    try:
        IndexPolicy.from_json(policy)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise errors.bad_request(f"The indexing policy is invalid: {exc}") from None


def _range_statistics(rng: PkRange) -> dict[str, Any]:
    """One `statistics` entry of a container read (cosmos-errors-and-stats.md §2.2)."""
    top = sorted(rng.logical.values(), key=lambda lp: lp.size, reverse=True)[:10]
    return {
        "id": rng.id,
        "sizeInKB": math.ceil(rng.size / 1024),
        "documentCount": rng.docs,
        "sampledDistinctPartitionKeyCount": len(rng.logical),
        "partitionKeys": [
            {"partitionKey": orjson.loads(lp.key_json), "sizeInKB": math.ceil(lp.size / 1024)} for lp in top
        ],
    }


def _write_order(item: StoredItem) -> int:
    return item.seq


def _parse(text: str) -> Query:
    try:
        return parse_query(text)
    except SqlError as exc:
        raise queries.sql_error(exc) from None


def _guarded(call: Callable[[], Any]) -> Any:
    """Run a step of the SQL engine; its errors become the service's 400."""
    try:
        return call()
    except SqlError as exc:
        raise queries.sql_error(exc) from None


@functools.lru_cache(maxsize=1024)
def _index_use(query: Query, policy: IndexPolicy) -> IndexUse:
    return index_use(query, policy.is_indexed)


def _hit_ratio(served: bool, matched: int, retrieved: int) -> float:
    """Index utilization: the share of retrieved documents the filter kept (1 when the index served it)."""
    if served or retrieved == 0:
        return 1.0
    return max(0.0, min(1.0, matched / retrieved)) if matched >= 0 else 0.0


def _etag_version(etag: str | None) -> int | None:
    if not etag:
        return None
    try:
        return int(etag.strip('"'))
    except ValueError:
        return None


def _decode_continuation(token: str | None) -> dict[str, Any] | None:
    if not token:
        return None
    try:
        state = orjson.loads(token)
    except orjson.JSONDecodeError:
        raise errors.bad_request("The continuation token is malformed.") from None
    if not isinstance(state, dict):
        raise errors.bad_request("The continuation token is malformed.")
    return state


def _encode_continuation(state: dict[str, Any]) -> str:
    return orjson.dumps(state).decode()


def _collect(
    rng: PkRange, lo: str, hi: str, after: tuple[str, ...] | None, max_items: int
) -> tuple[list[StoredItem], tuple[str, str] | None]:
    """Documents of a range within [lo, hi) (a point when lo == hi) in (EPK, id) order, after a cursor.

    Returns the page and, when more documents remain, the cursor of its last document.
    """
    items: list[StoredItem] = []
    limit = max_items if max_items and max_items > 0 else math.inf
    scope = EpkRange(lo, hi)
    last: tuple[str, str] | None = None
    for epk in sorted(rng.logical):
        if not scope.contains(epk):
            continue
        lp = rng.logical[epk]
        for item_id in sorted(lp.items):
            if after is not None and (epk, item_id) <= after:
                continue
            if len(items) >= limit:
                return items, last
            items.append(lp.items[item_id])
            last = (epk, item_id)
    return items, None
