"""The emulator engine: one facade over the services that make up the emulated account.

Usable in-process (the advisor and the demo drive it directly, on a simulated clock if they like);
`emulator.rest.app` translates REST to these calls and `emulator.rest.wire` shapes their answers. The API is
the domain's: resource definitions and documents are dicts, partition keys are tuples of components
(`cosmoscore.keys`), answers are `emulator.engine.results` values carrying their RU and the pkrange that served
them, and failures are `emulator.engine.errors.CosmosError` (status, substatus, message). Every operation
takes the caller's `Context` first and is metered: it records one `RequestRecord`, also when it fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from cosmoscore.costmodel import CostModel
from cosmoscore.epk import EpkRange
from cosmoscore.limits import Limits
from emulator.durability.journal import Journal
from emulator.engine import ttl
from emulator.engine.accounting import Accounting
from emulator.engine.batch import Batches
from emulator.engine.catalog import Catalog
from emulator.engine.feeds import Feeds
from emulator.engine.items import Items
from emulator.engine.metering import Context, Metering
from emulator.engine.model import Container, Database, Offer
from emulator.engine.query.budget import QuerySettings
from emulator.engine.query.plan import QueryPlan
from emulator.engine.query.service import Gate, QueryService, QuerySpec
from emulator.engine.results import (
    AccountInfo,
    BatchOperation,
    BatchResult,
    ChangeFeedStart,
    ChangePage,
    ContainerInfo,
    FeedCursor,
    FeedPage,
    ItemResult,
    QueryPage,
    QueryResult,
    RangesResult,
    Resource,
    ResourceNames,
    ThroughputSpec,
)
from emulator.engine.sampler import StorageSampler
from emulator.engine.state import State
from emulator.engine.throttle import Throttle
from emulator.engine.users import Users
from emulator.history.aggregates import History

CONSISTENCY_LEVELS = ("Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual")

__all__ = ["CONSISTENCY_LEVELS", "Context", "Engine", "QuerySettings", "QuerySpec", "ThroughputSpec"]


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
        history: History | None = None,
        query_settings: QuerySettings | None = None,
    ) -> None:
        if consistency not in CONSISTENCY_LEVELS:
            raise ValueError(f"consistency must be one of {', '.join(CONSISTENCY_LEVELS)}")
        self.cost = cost_model or CostModel()
        self.limits = limits or Limits()
        self.clock = clock
        self.consistency = consistency
        self.account_name = account_name
        self.accounting = accounting or Accounting()
        self.history = history or History()  # per-minute aggregates for the Azure Monitor stand-in
        if self.history.minutes():  # a saved history's requests predate this log: it has none of their ids
            self.accounting.lose_until(clock())
        self.throttle = Throttle(enabled=throttling)
        self.state = State(self.limits, clock, journal)
        if self.history.clock is None:  # forward-filled storage series run up to the engine's now
            self.history.clock = clock
        sampler = StorageSampler(self.state, self.history)  # storage snapshots after writes, never reads
        self.metering = Metering(
            self.accounting,
            self.throttle,
            self.cost,
            clock,
            self.state.partition_budget,
            self.history,
            sampler,
            lock=self.state.lock,
        )
        self.state.on_expired = lambda coll: sampler.sync(clock(), coll)  # TTL deletions change storage too
        sampler.sync_all(clock())  # a replayed journal's containers, as the history should know them
        self._catalog = Catalog(self.state, self.metering, self.cost, self.limits)
        self._items = Items(self.state, self.metering, self.cost, self.limits, consistency)
        self._batches = Batches(self.state, self.metering, self._items, self.limits)
        self.users = Users(self.state, self.metering, self.cost)  # users, permissions, what they grant
        self._feeds = Feeds(self.state, self.metering, self.cost, self._items, consistency)
        self._queries = QueryService(
            self.state, self.metering, self.cost, self._items, consistency, query_settings or QuerySettings()
        )

    # -- state, for in-process readers ---------------------------------------------------------

    @property
    def databases(self) -> dict[str, Database]:
        return self.state.databases

    def monitored_containers(self) -> set[tuple[str, str]]:
        """(database, container) the Azure Monitor stand-in answers for: the live ones (the history may not
        have them yet) and every one with history, deleted ones included."""
        with self.metering.lock:
            live = {(db, c) for db, d in self.state.databases.items() for c in d.containers}
        return live | self.history.containers()

    @property
    def offers(self) -> dict[str, Offer]:
        return self.state.offers

    def container(self, db_id: str, coll_id: str) -> Container:
        """Direct access for in-process users (advisor, monitor stand-in, tests)."""
        with self.metering.lock:
            return self.state.coll(db_id, coll_id)

    def names_of(
        self, db_rid: str, coll_rid: str | None = None, doc_rid: str | None = None, key: tuple[Any, ...] | None = None
    ) -> ResourceNames:
        """The ids of the resources a `_self` link's rids name (`State.names_of`); not metered: the operation
        the link addresses is."""
        with self.metering.lock:
            return self.state.names_of(db_rid, coll_rid, doc_rid, key)

    def partition_budget(self, coll: Container) -> float:
        """RU/s one physical partition may spend: provisioned / P (P4), at most 10,000 (P2)."""
        return self.state.partition_budget(coll)

    # -- account, databases, containers, offers -------------------------------------------------

    def read_account(self, ctx: Context) -> AccountInfo:
        with self.metering.metered(ctx, "Read", "databaseaccount"):
            return AccountInfo(self.account_name, self.consistency)

    def create_database(
        self, ctx: Context, definition: Mapping[str, Any], throughput: ThroughputSpec | None = None
    ) -> Resource:
        """`definition`: the database's resource (`{"id": ...}`)."""
        return self._catalog.create_database(ctx, definition, throughput)

    def read_database(self, ctx: Context, db_id: str) -> Resource:
        return self._catalog.read_database(ctx, db_id)

    def list_databases(
        self, ctx: Context, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """All databases, or those a SQL query over their resources selects."""
        return self._catalog.list_databases(ctx, query, parameters)

    def delete_database(self, ctx: Context, db_id: str) -> Resource:
        return self._catalog.delete_database(ctx, db_id)

    def create_container(
        self, ctx: Context, db_id: str, definition: Mapping[str, Any], throughput: ThroughputSpec | None = None
    ) -> Resource:
        """`definition`: the container's resource (id, partitionKey, indexingPolicy, defaultTtl, ...)."""
        return self._catalog.create_container(ctx, db_id, definition, throughput)

    def read_container(
        self, ctx: Context, db_id: str, coll_id: str, *, statistics: bool = False, quota: bool = False
    ) -> ContainerInfo:
        return self._catalog.read_container(ctx, db_id, coll_id, statistics=statistics, quota=quota)

    def list_containers(
        self, ctx: Context, db_id: str, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """A database's containers, or those a SQL query over their resources selects."""
        return self._catalog.list_containers(ctx, db_id, query, parameters)

    def list_conflicts(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        query: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> Resource:
        """A container's conflicts (or those a SQL query selects): none, the account has one write region."""
        return self._catalog.list_conflicts(ctx, db_id, coll_id, query, parameters)

    def read_conflict(self, ctx: Context, db_id: str, coll_id: str, conflict_id: str) -> Resource:
        """One conflict by id: always 404, there are none."""
        return self._catalog.read_conflict(ctx, db_id, coll_id, conflict_id)

    def replace_container(self, ctx: Context, db_id: str, coll_id: str, definition: Mapping[str, Any]) -> Resource:
        return self._catalog.replace_container(ctx, db_id, coll_id, definition)

    def delete_container(self, ctx: Context, db_id: str, coll_id: str) -> Resource:
        return self._catalog.delete_container(ctx, db_id, coll_id)

    def read_pkranges(self, ctx: Context, db_id: str, coll_id: str, since: int | None = None) -> RangesResult:
        """The partition key ranges, or only those born after layout version `since` (unchanged: none)."""
        return self._catalog.read_pkranges(ctx, db_id, coll_id, since)

    def list_offers(
        self, ctx: Context, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        return self._catalog.list_offers(ctx, query, parameters)

    def read_offer(self, ctx: Context, offer_rid: str) -> Resource:
        return self._catalog.read_offer(ctx, offer_rid)

    def replace_offer(
        self, ctx: Context, offer_rid: str, throughput: Any, autoscale: Mapping[str, Any] | None = None
    ) -> Resource:
        """New RU/s (`autoscale`: the autopilot settings of an autoscale offer); may split partitions (P7)."""
        return self._catalog.replace_offer(ctx, offer_rid, throughput, autoscale)

    # -- items ---------------------------------------------------------------------------------

    def create_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        doc: Any,
        key: Sequence[Any] | None = None,
        *,
        upsert: bool = False,
        intended_rid: str | None = None,
    ) -> ItemResult:
        """Create (or upsert) a document; `key`, when given, must equal the document's own key."""
        return self._items.create(ctx, db_id, coll_id, doc, key, upsert=upsert, intended_rid=intended_rid)

    def read_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        key: Sequence[Any],
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        return self._items.read(ctx, db_id, coll_id, item_id, key, intended_rid=intended_rid)

    def replace_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        doc: Any,
        key: Sequence[Any] | None = None,
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        return self._items.replace(ctx, db_id, coll_id, item_id, doc, key, intended_rid=intended_rid)

    def patch_item(
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
        """Apply patch operations (`[{"op": "set", "path": "/a", "value": 1}, ...]`)."""
        return self._items.patch(
            ctx, db_id, coll_id, item_id, operations, key, condition=condition, intended_rid=intended_rid
        )

    def delete_item(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        item_id: str,
        key: Sequence[Any],
        *,
        intended_rid: str | None = None,
    ) -> ItemResult:
        return self._items.delete(ctx, db_id, coll_id, item_id, key, intended_rid=intended_rid)

    def delete_partition_key(
        self, ctx: Context, db_id: str, coll_id: str, key: Sequence[Any], *, intended_rid: str | None = None
    ) -> ItemResult:
        """Delete every item of one logical partition (`delete_all_items_by_partition_key`)."""
        return self._items.delete_partition_key(ctx, db_id, coll_id, key, intended_rid=intended_rid)

    def execute_batch(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        key: Sequence[Any],
        operations: Sequence[BatchOperation],
        *,
        intended_rid: str | None = None,
    ) -> BatchResult:
        """A transactional batch in the logical partition of `key`: every operation applied, or none (the
        failing one's result says why, the others 424); one request, charged the sum of its operations."""
        return self._batches.execute(ctx, db_id, coll_id, key, operations, intended_rid=intended_rid)

    def read_feed(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        *,
        key: Sequence[Any] | None = None,
        pkrange_id: str | None = None,
        epk_range: EpkRange | None = None,
        max_items: int = -1,
        cursor: FeedCursor | None = None,
        intended_rid: str | None = None,
    ) -> FeedPage:
        """One page of documents: of a key or hierarchical prefix, a pkrange, an EPK sub-range, or all."""
        return self._feeds.read_feed(
            ctx,
            db_id,
            coll_id,
            key=key,
            pkrange_id=pkrange_id,
            epk_range=epk_range,
            max_items=max_items,
            cursor=cursor,
            intended_rid=intended_rid,
        )

    def read_changes(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        start: ChangeFeedStart,
        *,
        key: Sequence[Any] | None = None,
        pkrange_id: str | None = None,
        epk_range: EpkRange | None = None,
        max_items: int = -1,
        intended_rid: str | None = None,
    ) -> ChangePage:
        """One page of the change feed (latest-version mode) of a pkrange, a key, an EPK range or all."""
        return self._feeds.read_changes(
            ctx,
            db_id,
            coll_id,
            start,
            key=key,
            pkrange_id=pkrange_id,
            epk_range=epk_range,
            max_items=max_items,
            intended_rid=intended_rid,
        )

    # -- queries -------------------------------------------------------------------------------

    def run_query(
        self,
        db_id: str,
        coll_id: str,
        sql: str,
        parameters: Mapping[str, Any] | None = None,
        partition_key: Sequence[Any] | None = None,
        *,
        ctx: Context | None = None,
    ) -> QueryResult:
        """A whole query, fanned out and merged as the SDK does: rows, total RU, RU per pkrange.

        For in-process users (the demo, the advisor): the requests it stands for are metered, throttled
        and accounted like the SDK's own, so the store and the monitor stand-in see the same traffic.
        """
        return self._queries.run(ctx or Context(), db_id, coll_id, sql, parameters, partition_key)

    def query_page(
        self, ctx: Context, db_id: str, coll_id: str, spec: QuerySpec, gate: Gate | None = None
    ) -> QueryPage:
        """One page as the gateway serves it; `gate` decides what an unpinned query may not be served."""
        return self._queries.page(ctx, db_id, coll_id, spec, gate)

    def query_plan(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        sql: str,
        parameters: Mapping[str, Any] | None = None,
        supported_features: frozenset[str] | None = None,
    ) -> QueryPlan:
        """What a client needs to fan a query out itself (operators, rewritten query, EPK intervals)."""
        return self._queries.plan(ctx, db_id, coll_id, sql, parameters or {}, supported_features)

    def build_indexes(self, budget_ms: float) -> bool:
        """Go on building the partitions' indexes for up to `budget_ms` (the server calls this while it is
        otherwise idle, so a build does not wait for queries); True while some build remains."""
        with self.metering.lock:
            return self._queries.index_reads.build(budget_ms)

    def expire(self) -> int:
        """Delete every expired item now (the server's checkpoint calls it; operations sweep their own
        container first anyway); how many."""
        return ttl.sweep_all(self.state)

    # -- durability ----------------------------------------------------------------------------

    def snapshot_entries(self) -> Iterator[dict[str, Any]]:
        """The current state as journal entries (for compaction): replaying them rebuilds it."""
        with self.metering.lock:
            yield from self.state.snapshot_entries()

    def close(self) -> None:
        """Fold the journal into a snapshot and release it, and save the metrics history (clean shutdown)."""
        with self.metering.lock:
            self.history.save()
            self.state.close_journal()
