"""Metering and throttling: every operation records one `RequestRecord`, also when it fails, and a
physical partition that has spent its RU/s budget in the current second answers 429 (P4, P12).

One re-entrant lock serialises operations: the engine is synchronous and its state is plain records.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cosmoscore.costmodel import CostModel
from emulator.engine import errors
from emulator.engine.accounting import Accounting, RequestRecord, capped, executed_query
from emulator.engine.model import Container, PkRange
from emulator.engine.throttle import Throttle
from emulator.history.aggregates import History


@dataclass(frozen=True)
class Context:
    """Per-request facts from the caller: who asked (activity ids), consistency and preconditions."""

    activity_id: str = ""  # "" from an in-process caller: the request is logged with a new id, as the service's
    correlated_activity_id: str = ""
    user_agent: str = ""  # the client's User-Agent header (CDBDataPlaneRequests.UserAgent, azure-monitor.md R70)
    tag: str = (
        ""  # the client's `x-ruscope-tag` header: which test run or test sent it (`ruscope check --from-emulator`)
    )
    consistency: str | None = None
    if_match: str | None = None
    if_none_match: str | None = None


@dataclass
class Meter:
    """What one request is recorded with; operations fill it in as they learn it."""

    operation: str
    resource_type: str
    database: str
    container: str
    charge: float = 0.0
    pkrange_id: str = ""
    pkrange_count: int = 0  # the container's physical partitions when served: a query's routing class
    partition_key: str = ""
    status: int = 200
    budget: float = 0.0  # the partition's RU/s when admitted: what `History` normalises by
    query_text: str = ""  # a query's SQL (CDBQueryRuntimeStatistics, of the queries that ran: `executed_query`)
    # Set by operations that changed storage or throughput (writes, metadata): the containers, and for a
    # document write its logical partition's EPK; the sampler snapshots them after the request. Reads
    # leave them.
    changed: tuple[Container, ...] = ()
    changed_epk: str | None = None

    def served_by(self, coll: Container, rng: PkRange) -> None:
        """The physical partition that served the request, and how many the container had then."""
        self.pkrange_id, self.pkrange_count = rng.id, len(coll.ranges)


class Metering:
    """Opens metered operations, admits them to a partition's budget and charges them."""

    def __init__(
        self,
        accounting: Accounting,
        throttle: Throttle,
        cost: CostModel,
        clock: Callable[[], float],
        budget: Callable[[Container], float],
        history: History | None = None,
        sampler: Callable[[float, Meter], None] | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        self.accounting = accounting
        self.history = history or History()
        self.throttle = throttle
        self.cost = cost
        self.clock = clock
        self.budget = budget
        self.sampler = sampler  # storage snapshots after a request that set `Meter.changed`
        self.lock = lock or threading.RLock()  # the state's, so its own sweeps (TTL) hold the same one

    @contextmanager
    def metered(
        self, ctx: Context, operation: str, resource_type: str, database: str = "", container: str = ""
    ) -> Iterator[Meter]:
        meter = Meter(operation, resource_type, database, container)
        started = time.perf_counter()
        substatus, retry_after = 0, 0
        try:
            with self.lock:
                yield meter
        except errors.CosmosError as exc:
            meter.status, substatus, retry_after = exc.status, exc.substatus, exc.retry_after_ms or 0
            exc.request_charge = round(meter.charge, 2)  # failed requests are charged too (ru-cost-model M2)
            raise
        finally:
            now, charge = self.clock(), round(meter.charge, 2)
            # capped as the log keeps it, so History's query texts are the per-request rows' own
            record = capped(
                RequestRecord(
                    time=now,
                    database=meter.database,
                    container=meter.container,
                    operation=meter.operation,
                    resource_type=resource_type,
                    status=meter.status,
                    substatus=substatus,
                    request_charge=charge,
                    pkrange_id=meter.pkrange_id,
                    pkrange_count=meter.pkrange_count,
                    partition_key=meter.partition_key,
                    activity_id=ctx.activity_id or str(uuid.uuid4()),
                    correlated_activity_id=ctx.correlated_activity_id,
                    duration_ms=(time.perf_counter() - started) * 1000,
                    retry_after_ms=retry_after,
                    query_text=meter.query_text,
                    user_agent=ctx.user_agent,
                    tag=ctx.tag,
                ),
                self.accounting.max_field_chars,
            )
            self.accounting.add(record)
            self.history.record(
                now,
                meter.database,
                meter.container,
                meter.pkrange_id,
                meter.operation,
                meter.status,
                charge,
                meter.partition_key,
                meter.budget,
                record.query_text if executed_query(record) else "",  # a query History counts is one that ran
            )
            if meter.changed and self.sampler is not None:
                with self.lock:
                    self.sampler(now, meter)

    def record_refused(
        self, ctx: Context, operation: str, resource_type: str, db_id: str, coll_id: str, error: errors.CosmosError
    ) -> None:
        """Meter an operation's request the protocol layer refused (a malformed header or body)."""
        try:
            with self.metered(ctx, operation, resource_type, db_id, coll_id):
                raise error
        except errors.CosmosError:
            pass

    def record_rejected(self, ctx: Context, resource_type: str, status: int, substatus: int = 0) -> None:
        """Meter a request refused before it reached an operation (bad auth, unknown route)."""
        now = self.clock()
        self.history.record(now, "", "", "", "Rejected", status, 0.0)
        self.accounting.add(
            RequestRecord(
                now,
                "",
                "",
                "Rejected",
                resource_type,
                status,
                substatus,
                0.0,
                "",
                "",
                ctx.activity_id or str(uuid.uuid4()),
                ctx.correlated_activity_id,
                0.0,
                user_agent=ctx.user_agent,
            )
        )

    def admit(self, coll: Container, rng: PkRange, meter: Meter) -> None:
        """Refuse with 429 when this partition has spent its RU/s budget in the current second."""
        meter.served_by(coll, rng)
        meter.budget = self.budget(coll)
        wait = self.throttle.retry_after_ms((coll.rid, rng.id), meter.budget, self.clock())
        if wait is not None:
            meter.charge = self.cost.throttled_ru
            raise errors.throttled(wait)

    def consume(self, coll: Container, rng: PkRange, meter: Meter, ru: float) -> None:
        meter.charge = ru
        meter.served_by(coll, rng)
        if not meter.budget:  # charged without `admit` (not expected, but never normalise by 0)
            meter.budget = self.budget(coll)
        self.throttle.consume((coll.rid, rng.id), ru, self.clock())
