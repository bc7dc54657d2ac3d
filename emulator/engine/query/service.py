"""The query service: SQL queries served page by page as the gateway routes them, the query plan the SDK
asks for, and `run`, which fans a whole query out and merges it the way the SDK does, for in-process users.

Routing (cosmos-wire-protocol.md §1.6-1.9, ru-cost-model.md §3.3): a full partition key runs the query in
its logical partition; a pkrange id (the SDK's own fan-out, feed ranges) runs it in that range, limited
to an EPK sub-range when given; otherwise the WHERE clause's keys (or a hierarchical prefix) pick the
ranges, and the caller's `gate` may refuse what the gateway would not serve (the REST layer's 400/1004).
A page is charged for the share of its range's work it carries, so paging does not change the total.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cosmoscore.costmodel import CostModel
from cosmoscore.epk import EpkRange, prefix_range
from cosmoscore.keys import key_json
from cosmoscore.routing import Target
from cosmoscore.sql import (
    Query,
    QueryShape,
    SqlError,
    computed,
    describe,
    execute,
    parse_query,
    partition_key_filter,
    rewrite_for_cross_partition,
)
from cosmoscore.sql.computed import ComputedProperty
from cosmoscore.sql.executor import plan_for
from cosmoscore.sql.indexing import counts_from_index
from emulator.engine import errors
from emulator.engine.items import Items
from emulator.engine.metering import Context, Meter, Metering
from emulator.engine.model import Container, PkRange
from emulator.engine.query import budget, paging
from emulator.engine.query.budget import QuerySettings
from emulator.engine.query.index_reads import IndexReads
from emulator.engine.query.plan import PLAN_PREFIX, QueryPlan, check_features, check_order_by, key_intervals
from emulator.engine.query.sql import guarded, parse, sql_error
from emulator.engine.results import PageMetrics, QueryCursor, QueryPage, QueryResult
from emulator.engine.state import State


@dataclass(frozen=True)
class QuerySpec:
    """One page request: the SQL, where to run it, and where to resume."""

    sql: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    partition_key: Sequence[Any] | None = None  # a full key or a hierarchical prefix
    pkrange_id: str | None = None
    epk_range: EpkRange | None = None  # within pkrange_id
    max_items: int | None = None  # None: the service's default page size
    cursor: QueryCursor | None = None
    query_metrics: bool = False
    index_metrics: bool = False
    intended_rid: str | None = None


class QueryRoute:
    """A query the caller did not pin to one partition: the ranges it reaches, and what fanning it out needs."""

    def __init__(self, query: Query, parameters: Mapping[str, Any], intervals: list[EpkRange], partitions: int) -> None:
        self.query = query
        self.parameters = parameters
        self.intervals = intervals
        self.partitions = partitions  # distinct physical partitions reached

    @functools.cached_property
    def shape(self) -> QueryShape:
        return guarded(lambda: describe(self.query, dict(self.parameters)))

    @property
    def needs_plan(self) -> bool:
        """Whether serving it page by page would be wrong (ORDER BY, aggregates, TOP...): the SDK must fan out."""
        return not self.shape.is_streamable

    def plan(self) -> QueryPlan:
        rewritten = guarded(lambda: rewrite_for_cross_partition(self.query, self.shape))
        return QueryPlan(self.shape, rewritten, self.intervals)


@dataclass(frozen=True)
class Refusal:
    error: errors.CosmosError
    request_charge: float = 0.0


Gate = Callable[[QueryRoute], Refusal | None]


class QueryService:
    def __init__(
        self, state: State, metering: Metering, cost: CostModel, items: Items, consistency: str, settings: QuerySettings
    ) -> None:
        self.state = state
        self.metering = metering
        self.cost = cost
        self.items = items
        self.consistency = consistency
        self._results = paging.ResultCache()  # query results being paged, per range and LSN
        self.settings = settings
        self.index_reads = IndexReads(lambda: self.settings.index)
        self._range_docs: dict[tuple[str, str], tuple[int, list[dict[str, Any]]]] = {}

    def page(self, ctx: Context, db_id: str, coll_id: str, spec: QuerySpec, gate: Gate | None = None) -> QueryPage:
        """One page of a query, routed as the gateway routes it; `gate` may refuse an unpinned query."""
        with self.metering.metered(ctx, "Query", "docs", db_id, coll_id) as meter:
            meter.query_text = spec.sql  # CDBQueryRuntimeStatistics' QueryText (not obfuscated here)
            coll = self.state.coll(db_id, coll_id, spec.intended_rid)
            query = computed.inline(parse(spec.sql), coll.computed)
            check_order_by(query, coll.policy)
            if spec.pkrange_id is not None:
                rng = coll.range_by_id(spec.pkrange_id)
                if rng is None:
                    raise errors.range_gone()
                return self._serve(ctx, coll, meter, query, spec, [Target(rng, spec.epk_range or _whole(rng))])
            if spec.partition_key is not None:
                key = self.items.checked_key(coll, spec.partition_key, full=False)
                epk = coll.epk(key)
                if len(key) == len(coll.key_paths):
                    meter.partition_key = key_json(key)
                    target = Target(coll.range_for(epk), EpkRange.point(epk))
                    return self._serve(ctx, coll, meter, query, spec, [target])
                intervals = [EpkRange(*prefix_range(epk))]
            else:
                key_filter = guarded(lambda: partition_key_filter(query, coll.key_paths, dict(spec.parameters)))
                intervals = key_intervals(coll, key_filter)
            targets = coll.routing.targets(intervals)
            refusal = (
                gate(QueryRoute(query, spec.parameters, intervals, len({t.range.id for t in targets})))
                if gate
                else None
            )
            if refusal is not None:
                meter.charge = refusal.request_charge
                raise refusal.error
            return self._serve(ctx, coll, meter, query, spec, targets)

    def plan(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        sql: str,
        parameters: Mapping[str, Any],
        supported_features: frozenset[str] | None = None,
    ) -> QueryPlan:
        """The plan the SDK asks for after a 400/1004 (wire §1.7-1.8): operators and target EPK intervals."""
        with self.metering.metered(ctx, "QueryPlan", "docs", db_id, coll_id) as meter:
            meter.query_text = sql  # the text as the application wrote it: its pages carry the rewritten one
            coll = self.state.coll(db_id, coll_id)
            params = dict(parameters)
            try:
                query = parse_query(sql)  # the rewritten query keeps the computed properties' names (CP3)
                shape = describe(query, params)
                rewritten = rewrite_for_cross_partition(query, shape)
                key_filter = partition_key_filter(computed.inline(query, coll.computed), coll.key_paths, params)
            except SqlError as exc:
                raise sql_error(exc, PLAN_PREFIX) from None
            check_features(query, shape, supported_features)
            meter.charge = self.cost.query_plan_ru
            return QueryPlan(shape, rewritten, key_intervals(coll, key_filter))

    # -- serving a page ------------------------------------------------------------------------

    def _serve(
        self, ctx: Context, coll: Container, meter: Meter, query: Query, spec: QuerySpec, targets: list[Target[PkRange]]
    ) -> QueryPage:
        """Serve the next page: rows of one target, charged for the share of that target's work they carry."""
        cursor = spec.cursor or QueryCursor()
        index, same = paging.resume_index(targets, cursor)
        offset = cursor.offset if same else 0
        if index >= len(targets):
            return QueryPage([], 0.0, "", None, None, coll.rid)
        target = targets[index]
        rng = target.range
        self.metering.admit(coll, rng, meter)
        result, cut = self._cut(coll, target, query, spec, offset)
        page, sizes = cut.page, cut.sizes
        # an index-only COUNT costs at least what listing its matches would (azure-cosmos-dotnet-v3#3503)
        out_docs, out_bytes = (cut.retrieved, cut.retrieved_bytes) if result.index_only else (len(page), sum(sizes))
        base = self.cost.query_page_ru(cut.first, cut.nonempty, cut.retrieved, cut.retrieved_bytes, out_docs, out_bytes)
        late_nonempty = self.cost.query_nonempty_partition if cut.nonempty and not cut.first else 0.0
        kappa = self.cost.consistency_multiplier(ctx.consistency or self.consistency)
        ru = kappa * self.cost.query_shape_factor(result.order_without_composite) * (base + late_nonempty)
        self.metering.consume(coll, rng, meter, ru)
        following = None
        if cut.more:
            following = paging.cursor_at(target, cut.end)
        elif index + 1 < len(targets):
            following = paging.cursor_at(targets[index + 1], 0)
        metrics = None
        if spec.query_metrics:
            # an index-only COUNT is charged for the index entries it scans but reports no documents (§7)
            shown = (0, 0) if result.index_only else (cut.retrieved, cut.retrieved_bytes)
            metrics = PageMetrics(*shown, len(page), sum(sizes), cut.execution_ms, result.index_hit_ratio)
        # the service sends index metrics only with results (W73)
        use = paging.utilization_of(query, spec.parameters, coll.policy) if spec.index_metrics and page else None
        return QueryPage(page, meter.charge, rng.id, rng.lsn, following, coll.rid, metrics, use)

    def _cut(
        self, coll: Container, target: Target[PkRange], query: Query, spec: QuerySpec, offset: int
    ) -> tuple[paging.RangeResult | budget.Progress, budget.Cut]:
        """The next page of one target: from its whole result, or from a run advanced within the page budget."""
        rng, params = target.range, dict(spec.parameters)
        key = (coll.rid, rng.id, rng.lsn, target.lo, target.hi, spec.sql, paging.parameters_key(params))
        result = self._results.get(key)
        if result is None:
            result = self._range_result(coll, target, query, params)
        if isinstance(result, paging.RangeResult):
            self._results.put(key, result, budget.result_bytes(result.rows))
            return result, budget.cut_whole(result, offset, spec.max_items)
        try:
            # the first page computes as far as its budget allows (most runs end there and are paged as a
            # whole); later pages only until they have their rows
            want = offset + budget.page_limit(spec.max_items) if result.charged_first else math.inf
            guarded(lambda: result.advance(want, self.settings.page_budget_ms))
        except BaseException:
            self._results.pop(key)  # a run that failed cannot be resumed
            raise
        if result.done and offset == 0 and not result.charged_first:
            whole = budget.whole_result(result)  # it ended within the first page's budget: an ordinary result
            self._results.put(key, whole, budget.result_bytes(whole.rows))
            return whole, budget.cut_whole(whole, offset, spec.max_items)
        self._results.put(key, result, budget.result_bytes(result.rows))
        return result, budget.cut_progress(result, offset, spec.max_items)

    def _range_result(
        self, coll: Container, target: Target[PkRange], query: Query, params: dict[str, Any]
    ) -> paging.RangeResult | budget.Progress:
        """A query's result in one target: a run to advance page by page when its rows stream, else whole."""
        use = paging.index_use_of(query, coll.policy)
        load = paging.loading_of(query, params, coll.policy, use)
        rng = target.range
        found, matched = None, None  # matched: what a scan would match, when the index hands over fewer
        if use.served_by_index and target.interval.covers(_whole(rng)):
            found, matched = self.index_reads.documents(rng, query, params)
        if found is None:
            docs, scope_bytes = self.scope_documents(coll, target)
            average = scope_bytes / len(docs) if docs else 0.0
        else:  # the whole range's list is not needed (nor rebuilt after a write)
            docs, average = found, rng.size / rng.docs if rng.docs else 0.0
        batch = [budget.FIRST_BATCH_ROWS]
        batches = guarded(lambda: plan_for(query, params).stream(docs, batch))
        if batches is not None and matched is None:
            run = budget.Progress(batches, batch, use.served_by_index, average)
            run.index_only = counts_from_index(query, use)
            run.cap, run.order_without_composite = load.cap, load.order_without_composite
            return run
        started = time.perf_counter()
        result = guarded(lambda: execute(query, docs, params, count_matches=True))
        elapsed = (time.perf_counter() - started) * 1000
        # ru-cost-model.md §3.3: an index-served filter loads only its matches, a bounded one only those up to
        # its OFFSET + LIMIT or TOP (Q20); anything else scans
        found_matches = result.matched if matched is None else matched
        retrieved = paging.capped(found_matches, load.cap) if use.served_by_index else result.loaded
        return paging.RangeResult(
            rows=result.rows,
            retrieved_docs=retrieved,
            retrieved_bytes=round(retrieved * average),
            execution_ms=elapsed,
            index_hit_ratio=paging.hit_ratio(use.served_by_index, result.matched, retrieved),
            index_only=counts_from_index(query, use),
            order_without_composite=load.order_without_composite,
        )

    def scope_documents(self, coll: Container, target: Target[PkRange]) -> tuple[list[dict[str, Any]], int]:
        """The documents a target covers and their stored bytes (a range's list is kept until it changes)."""
        rng, interval = target.range, target.interval
        if interval.is_point:
            lp = rng.logical.get(interval.min)
            return ([item.doc for item in lp.items.values()], lp.size) if lp else ([], 0)
        if interval.covers(_whole(rng)):
            cached = self._range_docs.get((coll.rid, rng.id))
            if cached is None or cached[0] != rng.lsn:
                # in write order, not key order: documents written together sit together in memory, and
                # scanning them in that order is several times faster than hopping between partitions; the
                # range keeps that order as writes happen (PkRange.written), so nothing is re-sorted here
                cached = self._range_docs[(coll.rid, rng.id)] = (rng.lsn, rng.documents_in_write_order())
            return cached[1], rng.size
        inside = [lp for epk, lp in rng.logical.items() if interval.contains(epk)]
        return [item.doc for lp in inside for item in lp.items.values()], sum(lp.size for lp in inside)

    # -- whole queries, for in-process users ---------------------------------------------------

    def run(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        sql: str,
        parameters: Mapping[str, Any] | None = None,
        partition_key: Sequence[Any] | None = None,
    ) -> QueryResult:
        """A whole query as the SDK runs it. A hierarchical prefix: the query in each range the prefix
        overlaps, limited to its EPKs. Otherwise the gateway serves what it can page by page, and refuses
        the rest once (400/1004), which is then planned, run per range with the rewritten query and merged.
        Every one of those requests is metered, throttled (a 429 is raised, not retried) and accounted."""
        spec = QuerySpec(sql, dict(parameters or {}), partition_key)
        with self.metering.lock:  # one consistent view across the pages
            prefix = self._prefix_targets(db_id, coll_id, partition_key)
            if prefix is not None:
                return self._run_prefix(ctx, db_id, coll_id, spec, prefix)
            try:
                first = self.page(ctx, db_id, coll_id, spec, self._first_chance)
            except _FanOut:
                return self._fan_out(ctx, db_id, coll_id, spec)
            pages = self._drain(ctx, db_id, coll_id, spec, [first])
            return _merged([row for p in pages for row in p.rows], pages)

    def _drain(
        self, ctx: Context, db_id: str, coll_id: str, spec: QuerySpec, pages: list[QueryPage] | None = None
    ) -> list[QueryPage]:
        """Every page of a query (after those given), following continuations as the SDK does."""
        pages = pages or [self.page(ctx, db_id, coll_id, spec)]
        while pages[-1].next is not None:
            pages.append(self.page(ctx, db_id, coll_id, replace(spec, cursor=pages[-1].next)))
        return pages

    def _first_chance(self, route: QueryRoute) -> Refusal | None:
        return Refusal(_FanOut(), self.cost.refused_query_ru) if route.needs_plan else None

    def _prefix_targets(
        self, db_id: str, coll_id: str, partition_key: Sequence[Any] | None
    ) -> list[Target[PkRange]] | None:
        db = self.state.databases.get(db_id)
        coll = db.containers.get(coll_id) if db else None
        if coll is None or partition_key is None or not 0 < len(partition_key) < len(coll.key_paths):
            return None  # not a prefix (or no container: the first page reports it)
        key = self.items.checked_key(coll, partition_key, full=False)
        return coll.routing.targets([EpkRange(*prefix_range(coll.epk(key)))])

    def _run_prefix(
        self, ctx: Context, db_id: str, coll_id: str, spec: QuerySpec, targets: list[Target[PkRange]]
    ) -> QueryResult:
        coll = self.state.coll(db_id, coll_id)
        pages: list[QueryPage] = []
        docs: list[dict[str, Any]] = []
        for target in targets:  # the SDK sends the query to each range with the prefix's EPK bounds
            ranged = replace(spec, partition_key=None, pkrange_id=target.range.id, epk_range=target.interval)
            pages += self._drain(ctx, db_id, coll_id, ranged)
            docs += self.scope_documents(coll, target)[0]
        if len(targets) == 1:
            return _merged([row for p in pages for row in p.rows], pages)
        return _merged(_execute(spec, docs, coll.computed), pages)

    def _fan_out(self, ctx: Context, db_id: str, coll_id: str, spec: QuerySpec) -> QueryResult:
        plan = self.plan(ctx, db_id, coll_id, spec.sql, spec.parameters)
        coll = self.state.coll(db_id, coll_id)
        reached = {r.id: r for interval in plan.intervals for r in coll.routing.overlapping(interval)}
        pages: list[QueryPage] = []
        docs: list[dict[str, Any]] = []
        ranged = QuerySpec(plan.rewritten or spec.sql, spec.parameters)  # no rewrite: the SDK sends the query
        for rng in sorted(reached.values(), key=lambda r: r.min):  # the SDK's producers: one range each
            pages += self._drain(ctx, db_id, coll_id, replace(ranged, pkrange_id=rng.id))
            docs += self.scope_documents(coll, Target(rng, _whole(rng)))[0]
        # the SDK's merge (ORDER BY, aggregates, DISTINCT, TOP, OFFSET) equals the query over the union
        return _merged(_execute(spec, docs, coll.computed), pages, self.cost.query_plan_ru)


def _execute(spec: QuerySpec, docs: list[dict[str, Any]], inlined: tuple[ComputedProperty, ...]) -> list[Any]:
    query = computed.inline(parse(spec.sql), inlined)
    return guarded(lambda: execute(query, docs, dict(spec.parameters)).rows)


class _FanOut(errors.CosmosError):
    """The first attempt of a query the gateway cannot serve page by page (the SDK sees 400/1004)."""

    def __init__(self) -> None:
        super().__init__(400, "The query needs the client's fan-out.", 1004)


def _merged(rows: list[Any], pages: list[QueryPage], plan_ru: float = 0.0) -> QueryResult:
    """Rows with the charges the SDK would see: each page's, as its header rounds it, plus the plan's."""
    by_range: dict[str, float] = {}
    for p in pages:
        if p.pkrange_id:
            by_range[p.pkrange_id] = by_range.get(p.pkrange_id, 0.0) + round(p.request_charge, 2)
    return QueryResult(rows, round(sum(by_range.values()) + round(plan_ru, 2), 2), by_range)


def _whole(rng: PkRange) -> EpkRange:
    return EpkRange(rng.min, rng.max)
