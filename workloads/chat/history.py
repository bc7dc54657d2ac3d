"""The demo's day of traffic, driven through the engine's domain API on a simulated clock (no HTTP): what
`ruscope demo` collects from and `benchmarks/bench_demo.py` times.

The account (`chat` database): `messages` (/sessionId), the query logs three ways (`query-logs` on
/tenantId, the hot one; `query-logs-by-month` on the synthetic {tenantId}-{yyyy-MM} key; `chat-data` on
/tenantId,/sessionId) and `query-logs-by-status` (/status, the deliberately poor key). Small partitions
(`DEMO_LIMITS`: 200 RU/s each at creation, 400 at most) so four pkranges and a split cost a few hundred
requests, not millions.

Each minute replays its questions as writes at their own seconds (a message pair and four log rows
each), and one busy second of reads: the large tenant's analytics reads spend a share of its `query-logs`
partition's budget (`hot_level`), which is what Azure Monitor's NormalizedRUConsumption reports (the
minute's busiest second); the other containers get their dominant queries. The reads are that one second
per minute, not every second's (the per-minute totals are a sample; the peak is exact). The story
(`Scenario`): a campaign where the large tenant's partition runs at 100% and throttles; the team raises
`query-logs` from 800 to 2,000 RU/s, which splits a partition; at the end the tenant is hot again on its
new partition (one logical key cannot be spread by RU/s: the lesson of the guides).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cosmoscore.limits import Limits
from emulator.engine import errors
from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Context, Engine, ThroughputSpec
from workloads.chat import generator as gen

DATABASE = "chat"
DEMO_LIMITS = Limits(manual_ru_per_partition_at_creation=200, max_ru_per_partition=400)
HOT_CONTAINER = "query-logs"
RU_BEFORE_SPLIT, RU_AFTER_SPLIT = 800, 2_000
BUSY_SECOND = 30.5  # the second of each minute that carries the minute's reads
CTX = Context()
COMPOSITE = {
    "compositeIndexes": [[{"path": "/tenantId", "order": "ascending"}, {"path": "/createdAt", "order": "descending"}]]
}


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    paths: tuple[str, ...]
    throughput: int
    indexing: dict[str, Any] | None = None

    def definition(self) -> dict[str, Any]:
        kind = "MultiHash" if len(self.paths) > 1 else "Hash"
        body: dict[str, Any] = {
            "id": self.name,
            "partitionKey": {"paths": list(self.paths), "kind": kind, "version": 2},
        }
        if self.indexing:
            body["indexingPolicy"] = {"indexingMode": "consistent", "includedPaths": [{"path": "/*"}], **self.indexing}
        return body


CONTAINERS = (
    ContainerSpec("messages", ("/sessionId",), 800),
    ContainerSpec(HOT_CONTAINER, ("/tenantId",), RU_BEFORE_SPLIT, COMPOSITE),
    ContainerSpec("query-logs-by-month", ("/partitionKey",), 800),
    ContainerSpec("chat-data", ("/tenantId", "/sessionId"), 800),
    ContainerSpec("query-logs-by-status", ("/status",), 400),
)
LOG_CONTAINERS = tuple(spec.name for spec in CONTAINERS if spec.name != "messages")


@dataclass(frozen=True)
class Scenario:
    """Minutes (from the history's start) of the story's events."""

    minutes: int
    campaign: tuple[int, int]  # the large tenant's partition at 100% and throttling
    split_at: int  # query-logs: 800 -> 2,000 RU/s, a partition splits
    hot_again_from: int  # to the end: hot on its new partition (the alerts fire at the end)
    replay_at: tuple[int, ...]  # when the replay and storage collectors run

    @classmethod
    def for_size(cls, size: gen.Size) -> Scenario:
        m = size.history_minutes
        replays = tuple(sorted({int(m * f) for f in (0.1, 0.3, 0.45, 0.6, 0.8, 0.97)}))
        return cls(m, (int(m * 0.38), int(m * 0.48)), int(m * 0.5), int(m * 0.9), replays)


@dataclass
class HistoryReport:
    minutes: int = 0
    writes: int = 0
    reads: int = 0
    throttled: int = 0
    wall_seconds: float = 0.0
    ranges_before_split: int = 0
    ranges_after_split: int = 0

    @property
    def minutes_per_second(self) -> float:
        return self.minutes / self.wall_seconds if self.wall_seconds else 0.0


@dataclass
class _Recent:
    """The latest ids written, which the reads ask for."""

    log_by_tenant: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)


def create_containers(engine: Engine) -> None:
    engine.create_database(CTX, {"id": DATABASE})
    for spec in CONTAINERS:
        engine.create_container(CTX, DATABASE, spec.definition(), ThroughputSpec(spec.throughput))


def welcome_at(start: float) -> float:
    """When the fixed-id session `contoso-welcome` began: two hours before the history's `start`."""
    return start - 2 * 3600


# The import's pace: a turn writes one log row (about 10 RU, measured: 417 RU/s at 40 turns a second) into
# each log container, the smallest of which has 400 RU/s; 25 turns a second keep it near 260 RU/s, as an
# import paced by its 429s would stay under the provisioned RU/s (40 a second averaged 417 RU/s on 400
# for a minute, which Azure never shows).
BACKFILL_TURNS_PER_S = 25


def load_backfill(engine: Engine, clock: SimulatedClock, seed: int, size: gen.Size, start: float) -> int:
    """The older conversations, up to an hour before the history's `start`, written now at
    `BACKFILL_TURNS_PER_S` (throttling off, so none is dropped: at that pace no container's second exceeds
    its RU/s, as with a bulk import paced by its retries). Returns the documents."""
    tenants = gen.build_tenants(size.tenants)
    turns = [*gen.backfill_turns(seed, tenants, size, start - 3600), *gen.welcome_session(seed, welcome_at(start))]
    engine.throttle.enabled = False
    written = 0
    try:
        for index, turn in enumerate(turns):
            if index % BACKFILL_TURNS_PER_S == 0:
                clock.advance(1.0)
            written += _write_turn(engine, turn)
    finally:
        engine.throttle.enabled = True
    return written


def drive_history(
    engine: Engine,
    clock: SimulatedClock,
    seed: int,
    size: gen.Size,
    start: float,
    *,
    on_minute: Callable[[int], None] | None = None,
) -> HistoryReport:
    """`size.history_minutes` minutes from `start` (on a minute); `on_minute(m)` after each one (the demo
    runs its collectors there). The clock ends on the last minute's end."""
    scenario = Scenario.for_size(size)
    tenants = gen.build_tenants(size.tenants)
    report, recent, began = HistoryReport(), _Recent(), time.perf_counter()
    recent.log_by_tenant[gen.LARGE_TENANT] = gen.query_log_doc(gen.welcome_session(seed, welcome_at(start))[0])
    hot = engine.container(DATABASE, HOT_CONTAINER)
    report.ranges_before_split = len(hot.ranges)
    for minute in range(scenario.minutes):
        minute_start = start + minute * 60
        clock.set(max(clock.now, minute_start))
        if minute == scenario.split_at:
            _set_throughput(engine, HOT_CONTAINER, RU_AFTER_SPLIT)
            report.ranges_after_split = len(engine.container(DATABASE, HOT_CONTAINER).ranges)
        rate = size.peak_turns_per_minute * gen.activity(minute_start)
        turns = gen.turns_in_minute(seed, tenants, minute_start, rate)
        busy = minute_start + BUSY_SECOND
        for turn in (t for t in turns if t.at < busy):
            report.writes += _write_at(engine, clock, turn, recent)
        clock.set(max(clock.now, busy))
        _busy_second(engine, hot_level(scenario, minute, minute_start), tenants, recent, report)
        for turn in (t for t in turns if t.at >= busy):
            report.writes += _write_at(engine, clock, turn, recent)
        report.minutes = minute + 1
        if on_minute is not None:
            on_minute(minute)
    clock.set(max(clock.now, start + scenario.minutes * 60))
    report.wall_seconds = time.perf_counter() - began
    return report


def hot_level(scenario: Scenario, minute: int, at: float) -> float:
    """The share of its partition's RU/s budget the large tenant's reads spend in the busy second."""
    if scenario.campaign[0] <= minute < scenario.campaign[1] or minute >= scenario.hot_again_from:
        return 1.2
    return 0.3 + 0.4 * gen.activity(at)


def _write_at(engine: Engine, clock: SimulatedClock, turn: gen.Turn, recent: _Recent) -> int:
    clock.set(max(clock.now, turn.at))
    written = _write_turn(engine, turn)
    if written == 2 + len(LOG_CONTAINERS):  # every copy landed (a throttled one was dropped): readable
        recent.log_by_tenant[turn.tenant_id] = gen.query_log_doc(turn)
    recent.sessions = [*recent.sessions[-7:], turn.session_id]
    return written


def _write_turn(engine: Engine, turn: gen.Turn) -> int:
    """The question and answer into `messages`, its log row into each query-log container (a 429 is
    dropped, as a client that gave up would: it shows in the 429 counts)."""
    written = 0
    log = gen.query_log_doc(turn)
    for container, doc in (*(("messages", m) for m in gen.message_docs(turn)), *((c, log) for c in LOG_CONTAINERS)):
        written += _attempt(engine.create_item, CTX, DATABASE, container, doc, None, upsert=True)
    return written


def _busy_second(
    engine: Engine, level: float, tenants: tuple[gen.Tenant, ...], recent: _Recent, report: HistoryReport
) -> None:
    """The minute's reads, all in one second: the large tenant's analytics point reads (`level` of its
    partition's budget), a few small tenants', the same row on the other keys, and the latest sessions'
    conversations."""
    hot = engine.container(DATABASE, HOT_CONTAINER)
    log = recent.log_by_tenant[gen.LARGE_TENANT]
    for _ in range(round(level * engine.partition_budget(hot))):
        _read(engine, HOT_CONTAINER, log["id"], [gen.LARGE_TENANT], report)
    for tenant in tenants[1:6]:
        if tenant.id in recent.log_by_tenant:
            for _ in range(4):
                _read(engine, HOT_CONTAINER, recent.log_by_tenant[tenant.id]["id"], [tenant.id], report)
    for container, key in (
        ("query-logs-by-month", [log["partitionKey"]]),
        ("chat-data", [log["tenantId"], log["sessionId"]]),
        ("query-logs-by-status", [log["status"]]),
    ):
        for _ in range(15):
            _read(engine, container, log["id"], key, report)
    for session in dict.fromkeys(recent.sessions[-4:]):
        sql = 'SELECT * FROM c WHERE c.sessionId = @s ORDER BY c["order"]'
        report.reads += _attempt(engine.run_query, DATABASE, "messages", sql, {"@s": session}, [session])


def _read(engine: Engine, container: str, item_id: str, key: list[Any], report: HistoryReport) -> None:
    if _attempt(engine.read_item, CTX, DATABASE, container, item_id, key):
        report.reads += 1
    else:
        report.throttled += 1


def _attempt(call: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """1 when the call succeeded, 0 when it was throttled (429); other errors are bugs and propagate."""
    try:
        call(*args, **kwargs)
    except errors.CosmosError as exc:
        if exc.status != 429:
            raise
        return 0
    return 1


def _set_throughput(engine: Engine, container: str, throughput: int) -> None:
    offer_rid = engine.container(DATABASE, container).offer_rid
    engine.replace_offer(CTX, offer_rid or "", throughput)
