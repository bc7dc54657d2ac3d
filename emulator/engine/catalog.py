"""Databases, containers, offers and the routing map: the metadata operations.

Each validates, journals an entry and applies it through `emulator.engine.state`; charges are the cost
model's flat metadata RU. Throughput changes split partitions (P7) in the applier, so a replayed
journal splits the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cosmoscore.costmodel import CostModel
from cosmoscore.indexing import IndexPolicy, complete_policy, normalize_policy
from cosmoscore.keys import split_path
from cosmoscore.layout import initial_range_count
from cosmoscore.limits import Limits
from cosmoscore.sql import execute
from cosmoscore.sql.computed import parse_computed
from emulator.engine import errors, ttl
from emulator.engine.metering import Context, Metering
from emulator.engine.model import CONTAINER_OPTIONS, Container, PkRange, make_rid
from emulator.engine.query.sql import guarded, parse
from emulator.engine.results import (
    ContainerInfo,
    RangesResult,
    RangeStatistics,
    Resource,
    StorageUsage,
    ThroughputSpec,
    autoscale_increment,
)
from emulator.engine.state import State
from emulator.engine.unique import parse_policy


class Catalog:
    def __init__(self, state: State, metering: Metering, cost: CostModel, limits: Limits) -> None:
        self.state = state
        self.metering = metering
        self.cost = cost
        self.limits = limits

    # -- databases -----------------------------------------------------------------------------

    def create_database(
        self, ctx: Context, definition: Mapping[str, Any], throughput: ThroughputSpec | None
    ) -> Resource:
        db_id = require_id(definition, self.limits.max_name_chars)
        with self.metering.metered(ctx, "Create", "dbs", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru  # a refused create still looked its id up (M2)
            if db_id in self.state.databases:
                raise errors.conflict()
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "create_db", "id": db_id, "rid": make_rid(self.state.next_id()), "ts": self.state.now()}
            if throughput is not None:
                entry["offer"] = self._offer_entry(throughput)
            self.state.commit(entry)
            db = self.state.apply_create_db(entry)
            meter.status = 201
            return Resource(201, db.props, meter.charge)

    def _checked_definition(
        self, definition: Mapping[str, Any], throughput: ThroughputSpec | None
    ) -> tuple[dict[str, Any], Any]:
        """A container definition's partition key and indexing policy, the whole body and its throughput
        checked first: a bad body is its 400 even when the id already exists (W85)."""
        pk = _validate_partition_key_definition(definition.get("partitionKey"), self.limits)
        policy_json = _validate_policy(definition.get("indexingPolicy") or None)
        _validate_computed(definition.get("computedProperties"))
        _validate_unique_keys(definition.get("uniqueKeyPolicy"))
        ttl.check_default_ttl(definition.get("defaultTtl"))
        if throughput is not None:
            self._check_throughput(throughput)
        return pk, policy_json

    def _check_throughput(self, spec: ThroughputSpec) -> None:
        if spec.throughput < self.limits.min_throughput:
            raise errors.bad_request(
                f"The offer throughput provided ({spec.throughput}) is below the minimum of {self.limits.min_throughput} RU/s."
            )
        self._check_max_throughput(spec.throughput, spec.autoscale)

    def _offer_entry(self, spec: ThroughputSpec) -> dict[str, Any]:
        self._check_throughput(spec)
        entry: dict[str, Any] = {
            "rid": make_rid(self.state.next_id())[:4],
            "throughput": spec.throughput,
            "autoscale": spec.autoscale,
        }
        if spec.autoscale and spec.increment_percent is not None:
            entry["increment"] = spec.increment_percent
        return entry

    def _check_max_throughput(self, value: int, autoscale: bool) -> None:
        """At most 1,000,000 RU/s without a support ticket (Limits.max_throughput), in the service's words."""
        if value > self.limits.max_throughput:
            step = 1000 if autoscale else 100
            raise errors.bad_request(
                f"The offer should have valid throughput values between {self.limits.min_throughput} and "
                f"{self.limits.max_throughput} inclusive in increments of {step}."
            )

    def read_database(self, ctx: Context, db_id: str) -> Resource:
        with self.metering.metered(ctx, "Read", "dbs", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru  # charged also when the lookup answers 404 (M2)
            return Resource(200, self.state.db(db_id).props, meter.charge)

    def list_databases(
        self, ctx: Context, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """All databases, or those a SQL query selects (the SDK's `query_databases`)."""
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "dbs") as meter:
            meter.charge = self.cost.metadata_read_ru
            found = [d.props for d in self.state.databases.values()]
            return Resource(200, select_resources(found, query, parameters), meter.charge)

    def delete_database(self, ctx: Context, db_id: str) -> Resource:
        with self.metering.metered(ctx, "Delete", "dbs", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            meter.charge = self.cost.metadata_write_ru
            self.state.commit({"op": "delete_db", "id": db_id})
            self.state.apply_delete_db({"id": db_id})
            meter.changed = tuple(db.containers.values())  # their storage series end
            meter.status = 204
            return Resource(204, None, meter.charge)

    # -- containers ----------------------------------------------------------------------------

    def create_container(
        self, ctx: Context, db_id: str, definition: Mapping[str, Any], throughput: ThroughputSpec | None
    ) -> Resource:
        """Create from a container definition (id, partitionKey, indexingPolicy, defaultTtl, ...)."""
        coll_id = require_id(definition, self.limits.max_name_chars)
        with self.metering.metered(ctx, "Create", "colls", db_id, coll_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            pk, policy_json = self._checked_definition(definition, throughput)  # before the id (W85)
            if coll_id in db.containers:
                raise errors.conflict()
            if throughput is None and db.offer_rid is None:
                throughput = ThroughputSpec(self.limits.default_throughput)
            if throughput is None:  # shared database throughput: counted as autoscale (P6)
                count = initial_range_count(self.state.offers[db.offer_rid or ""].throughput, True, self.limits)
            else:
                count = initial_range_count(throughput.throughput, throughput.autoscale, self.limits)
            entry: dict[str, Any] = {
                "op": "create_coll",
                "db": db_id,
                "id": coll_id,
                "rid": make_rid(self.state.next_id(), self.state.next_id()),
                "ts": self.state.now(),
                "partitionKey": pk,
                "indexingPolicy": policy_json,
                "ranges": count,
                "extra": {k: v for k, v in definition.items() if k in CONTAINER_OPTIONS},
            }
            if throughput is not None:
                entry["offer"] = self._offer_entry(throughput)
            meter.charge = self.cost.metadata_write_ru
            self.state.commit(entry)
            coll = self.state.apply_create_coll(entry)
            meter.changed = (coll,)
            meter.status = 201
            return Resource(201, coll.props, meter.charge)

    def read_container(
        self, ctx: Context, db_id: str, coll_id: str, *, statistics: bool = False, quota: bool = False
    ) -> ContainerInfo:
        with self.metering.metered(ctx, "Read", "colls", db_id, coll_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            coll = self.state.coll(db_id, coll_id)
            stats = [_range_statistics(r) for r in coll.ranges] if statistics else None
            usage = self._usage(coll) if quota else None
            return ContainerInfo(dict(coll.props), meter.charge, stats, usage)

    def _usage(self, coll: Container) -> StorageUsage:
        return StorageUsage(coll.size, coll.docs, self.limits.logical_partition_max_bytes * len(coll.ranges))

    def list_containers(
        self, ctx: Context, db_id: str, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """A database's containers, or those a SQL query selects (the SDK's `query_containers`)."""
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "colls", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            found = [c.props for c in db.containers.values()]
            return Resource(200, select_resources(found, query, parameters), meter.charge, db.rid)

    def list_conflicts(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        query: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> Resource:
        """A container's write conflicts (or those a query selects): always none, as on any account with one
        write region, which the emulated account is (cosmos-wire-protocol.md W28)."""
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "conflicts", db_id, coll_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            coll = self.state.coll(db_id, coll_id)
            return Resource(200, select_resources([], query, parameters), meter.charge, coll.rid)

    def read_conflict(self, ctx: Context, db_id: str, coll_id: str, conflict_id: str) -> Resource:
        """One conflict by id: there are none, so 404 (W28)."""
        with self.metering.metered(ctx, "Read", "conflicts", db_id, coll_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            self.state.coll(db_id, coll_id)
            raise errors.not_found()

    def replace_container(self, ctx: Context, db_id: str, coll_id: str, definition: Mapping[str, Any]) -> Resource:
        with self.metering.metered(ctx, "Replace", "colls", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id)
            if not isinstance(definition, Mapping):
                raise errors.bad_request("The input content is invalid: a container definition must be a JSON object.")
            pk = definition.get("partitionKey")
            if pk is not None and not isinstance(pk, Mapping):
                raise errors.bad_request("The partitionKey of a container must be a JSON object with 'paths'.")
            if pk and pk.get("paths") != coll.props["partitionKey"]["paths"]:
                raise errors.bad_request("Partition key paths of a container cannot be changed.")
            policy = _validate_policy(definition.get("indexingPolicy") or coll.props["indexingPolicy"])
            computed = _validate_computed(definition.get("computedProperties"))
            ttl.check_default_ttl(definition.get("defaultTtl"))
            meter.charge = self.cost.metadata_write_ru
            entry = {
                "op": "replace_coll",
                "db": db_id,
                "id": coll_id,
                "indexingPolicy": policy,
                "defaultTtl": definition.get("defaultTtl"),
                "computedProperties": computed,  # a replace sets them as given: none when left out (CP3)
                "ts": self.state.now(),
            }
            self.state.commit(entry)
            self.state.apply_replace_coll(entry)
            return Resource(200, coll.props, meter.charge)

    def delete_container(self, ctx: Context, db_id: str, coll_id: str) -> Resource:
        with self.metering.metered(ctx, "Delete", "colls", db_id, coll_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            coll = self.state.coll(db_id, coll_id)
            meter.charge = self.cost.metadata_write_ru
            self.state.commit({"op": "delete_coll", "db": db_id, "id": coll_id})
            self.state.apply_delete_coll({"db": db_id, "id": coll_id})
            meter.changed = (coll,)
            meter.status = 204
            return Resource(204, None, meter.charge)

    def read_pkranges(self, ctx: Context, db_id: str, coll_id: str, since: int | None) -> RangesResult:
        """The routing map as an incremental feed: the whole map, or the ranges born after version `since`."""
        with self.metering.metered(ctx, "ReadFeed", "pkranges", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id)
            version = coll.range_version
            if since == version:
                meter.status = 304
                return RangesResult([], version, len(coll.ranges), coll.rid, changed=False)
            ranges: list[PkRange] = coll.ranges  # a first read (or a version we never issued): everything
            if since is not None and since < version:  # incremental: only ranges born since, naming parents
                born = {rid for v, rid in coll.range_log if v > since}
                ranges = [r for r in coll.ranges if r.id in born]
            return RangesResult(list(ranges), version, len(coll.ranges), coll.rid)

    # -- offers --------------------------------------------------------------------------------

    def list_offers(
        self, ctx: Context, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """All offers, or those a SQL query selects (the SDK asks `... WHERE r.resource = @link`)."""
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "offers") as meter:
            meter.charge = self.cost.metadata_read_ru
            offers = [o.to_json() for o in self.state.offers.values()]
            return Resource(200, select_resources(offers, query, parameters), meter.charge)

    def read_offer(self, ctx: Context, offer_rid: str) -> Resource:
        with self.metering.metered(ctx, "Read", "offers") as meter:
            meter.charge = self.cost.metadata_read_ru
            offer = self.state.offer(offer_rid)
            return Resource(200, offer.to_json(), meter.charge)

    def replace_offer(
        self, ctx: Context, offer_rid: str, throughput: Any, autoscale: Mapping[str, Any] | None = None
    ) -> Resource:
        """Change throughput (`autoscale`: the autopilot settings, for an autoscale offer); raising it
        past P x 10,000 RU/s splits partitions (P7)."""
        with self.metering.metered(ctx, "Replace", "offers") as meter:
            offer = self.state.offer(offer_rid)
            value = autoscale.get("maxThroughput") if offer.autoscale and autoscale else throughput
            if not isinstance(value, int) or isinstance(value, bool) or value < self.limits.min_throughput:
                raise errors.bad_request(
                    f"The offer throughput must be an integer of at least {self.limits.min_throughput} RU/s."
                )
            self._check_max_throughput(value, offer.autoscale)
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "replace_offer", "rid": offer_rid, "throughput": value, "ts": self.state.now()}
            if offer.autoscale and autoscale:  # the settings as sent: their policy replaces the offer's (W80)
                entry["increment"] = _increment(autoscale)
            self.state.commit(entry)
            self.state.apply_replace_offer(entry)
            # throughput (and maybe the layout) changed: re-snapshot every container (unchanged ones
            # add nothing to the history; offers are rare)
            meter.changed = tuple(c for d in self.state.databases.values() for c in d.containers.values())
            return Resource(200, offer.to_json(), meter.charge)


def select_resources(resources: list[Any], query: str | None, parameters: Mapping[str, Any] | None) -> list[Any]:
    """The resources a metadata query (`SELECT * FROM root r WHERE r.id = @id`) selects; all without one."""
    if query is None:
        return resources
    return guarded(lambda: execute(parse(query), resources, dict(parameters or {})).rows)


RESERVED_ID_CHARACTERS = "/\\?#"  # "restricted and cannot be used in the Id property" (W87)


def require_id(definition: Any, max_chars: int | None = None) -> str:
    """The id of a resource definition: 400 when it has none, holds a reserved character, or (databases and
    containers: `max_chars`) is longer than the service allows (W87)."""
    if not isinstance(definition, Mapping) or not isinstance(definition.get("id"), str) or not definition["id"]:
        raise errors.bad_request("The input content is invalid because the required properties - 'id; ' - are missing")
    resource_id: str = definition["id"]
    if any(ch in resource_id for ch in RESERVED_ID_CHARACTERS):
        raise errors.bad_request("The id is invalid: it may not contain '/', '\\', '?' or '#'.")
    if max_chars is not None and len(resource_id) > max_chars:
        raise errors.bad_request(
            f"The id is invalid: a database or container id is at most {max_chars} characters, not {len(resource_id)}."
        )
    return resource_id


def _increment(settings: Mapping[str, Any]) -> int | None:
    """The auto-upgrade policy's `incrementPercent` of an offer replace's autopilot settings (400 if malformed)."""
    try:
        return autoscale_increment(dict(settings))
    except ValueError as exc:
        raise errors.bad_request(f"The offer's offerAutopilotSettings are invalid: {exc}") from None


def _validate_partition_key_definition(pk: Any, limits: Limits) -> dict[str, Any]:
    """Hash with one path or MultiHash with 2-3 (H1), version 1 or 2 (W60); kept as given, so a legacy
    definition without `version` (V1) reads back without one."""
    if not isinstance(pk, dict) or not isinstance(pk.get("paths"), list) or not pk["paths"]:
        raise errors.bad_request("A container needs a partitionKey definition with at least one path.")
    kind, paths, version = pk.get("kind", "Hash"), pk["paths"], pk.get("version", 1)
    if not all(isinstance(p, str) and p.startswith("/") and len(p) > 1 for p in paths):
        raise errors.bad_request(f"Partition key paths must be strings starting with '/': {paths!r}")
    try:  # quoted segments are one property name each (W82)
        if not all(split_path(p) for p in paths):
            raise ValueError(f"{paths!r} names no property")
    except ValueError as exc:
        raise errors.bad_request(f"The partition key path is invalid: {exc}") from None
    if kind == "Hash" and len(paths) != 1:
        raise errors.bad_request("A Hash partition key has exactly one path; use kind MultiHash for 2 or 3.")
    if kind == "MultiHash" and not 2 <= len(paths) <= limits.max_hierarchy_levels:
        raise errors.bad_request(f"A MultiHash partition key has 2 to {limits.max_hierarchy_levels} paths.")
    if kind not in ("Hash", "MultiHash"):
        raise errors.bad_request(f"Partition key kind {kind!r} is not supported (Hash or MultiHash).")
    if version not in (1, 2) or isinstance(version, bool):
        raise errors.bad_request(f"The partition key version {version!r} is invalid: 1 or 2.")
    return {"paths": list(paths), "kind": kind} | ({"version": version} if "version" in pk else {})


def _validate_unique_keys(policy: Any) -> None:
    """A unique key policy the writes can enforce (W51); 400 naming what is wrong."""
    try:
        parse_policy(policy)
    except ValueError as exc:
        raise errors.bad_request(f"The unique key policy is invalid: {exc}") from None


def _validate_computed(definitions: Any) -> Any:
    """A definition's computed properties, checked as the service checks them (CP1, CP2); 400 if invalid."""
    try:
        parse_computed(definitions)
    except ValueError as exc:
        raise errors.bad_request(f"The computed properties are invalid: {exc}") from None
    return definitions


def _validate_policy(policy: Any) -> Any:
    """The policy normalised and completed as the service stores it (legacy `/` and `indexes` accepted, the
    defaults filled in: W81); 400 if invalid."""
    if policy is None:
        return None
    try:
        normalized = complete_policy(normalize_policy(policy))
        IndexPolicy.from_json(normalized)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise errors.bad_request(f"The indexing policy is invalid: {exc}") from None
    return normalized


def _range_statistics(rng: PkRange) -> RangeStatistics:
    top = sorted(rng.logical.values(), key=lambda lp: lp.size, reverse=True)[:10]
    return RangeStatistics(rng.id, rng.size, rng.docs, len(rng.logical), [(lp.key, lp.size) for lp in top])
