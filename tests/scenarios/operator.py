"""An experienced operator's own account, collected as `ruscope collect` would: the issue 23 scenario.

Database `ops`, two containers created through azure-cosmos, as the operator would:
- `events` (/tenantId), 18,000 RU/s manual: three physical partitions of 6,000 RU/s each (ru-cost-model.md
  P4, P6). Tenant `contoso` holds 40% of the documents and spends 40% of the RU; twelve smaller tenants,
  four on each pkrange (picked by hashing, as the engine routes), share the rest evenly. So contoso's pkrange
  carries 40% + 4 x 5% = 60% of the RU and, at `HOT_RANGE_RU` RU in each minute's busy second, runs at
  ~97% of its per-second budget minute after minute (saturated), while the container's per-minute average
  stays near 1% of its RU/s: the case where "lower the RU/s" is the dangerous recommendation.
- `sessions` (/id), 24,000 RU/s manual: four pkranges and uniform point reads of random ids (no skew).

Minute 0 is the documents' load, paced so no pkrange exceeds half its budget in a second; minutes 1 to
`MINUTES` each carry one busy second (`BUSY_SECOND`: dashboards refreshing) of tenant aggregate queries,
point reads and new documents, driven through the engine's domain API on a simulated clock (fast), as the
demo's history is. The collectors are the real ones through the unmodified SDKs (azure-cosmos over HTTP,
MetricsClient and LogsQueryClient over HTTPS from the monitor stand-in): the replay and storage at
`REPLAY_AT` (second `REPLAY_SECOND`, after the busy second), metrics and logs at the end.

`OperatorStore.ru_by_pkrange` is what the workload itself was charged per container and pkrange (the RU the
engine answered each in-process request with): what the traffic says the shares are.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from azure.cosmos import CosmosClient, PartitionKey

from collectors.config import Config, parse_config
from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Context, Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import start_in_thread
from ruscope.demo.collect import collect  # one collector run (the SDK's waits move the simulated clock)
from tests.collected import environment

RESOURCE = "/subscriptions/0000/resourceGroups/ops/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
WORKSPACE = "11111111-2222-3333-4444-555555555555"
ACCOUNT, DATABASE = "ops-account", "ops"
EVENTS, SESSIONS = "events", "sessions"
EVENTS_RU_S, SESSIONS_RU_S = 18_000, 24_000
HOT_TENANT = "contoso"
HOT_SHARE = 0.4  # of the documents and of the RU
COLD_PER_RANGE = 4  # small tenants on each pkrange
HOT_DOCS, COLD_DOCS = 800, 100  # 800 of 800 + 12 x 100: 40%
HOT_WRITES, COLD_WRITES = 8, 1  # new documents a minute: 8 of 8 + 12 x 1, so contoso stays at 40%
SESSION_DOCS, SESSION_READS, SESSION_WRITES = 2_000, 400, 20
MINUTES = 10  # busy minutes after the load
BUSY_SECOND = 30.0
REPLAY_AT = (2, 5, 9)
REPLAY_SECOND = 40.0
HOT_RANGE_RU = 5_700.0  # contoso's pkrange in each busy second: 95% of 6,000 RU/s, plus up to one request a tenant
LOAD_DOCS_PER_SECOND = 300  # the load: at most ~2,800 RU in a second on any pkrange
COUNT_SQL = "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = @t AND c.kind = 'order'"
CTX = Context()

QUERIES: list[dict[str, Any]] = [
    {
        "name": "tenant-dashboard",
        "container": EVENTS,
        "sql": COUNT_SQL,
        "parameters": {"@t": HOT_TENANT},
        "partition_key": HOT_TENANT,
        "rate_per_s": 1.2,
    },
    {"name": "events-per-range", "container": EVENTS, "sql": "SELECT VALUE COUNT(1) FROM c", "mode": "per-feed-range"},
    {
        "name": "session-by-id",
        "container": SESSIONS,
        "sql": "SELECT * FROM c WHERE c.id = @id",
        "parameters": {"@id": "s-17"},
        "partition_key": "s-17",
        "rate_per_s": 6.7,
    },
]


@dataclass(frozen=True)
class OperatorStore:
    """The store and what the tests know about the traffic behind it."""

    store: Path
    config: Config
    start: float  # epoch seconds of minute 0
    end: float  # the simulated clock when the last collector ran
    tenants: dict[str, str]  # tenant -> the pkrange id the engine routed it to
    ru_by_pkrange: dict[str, dict[str, float]]  # container -> pkrange id -> RU the workload was charged
    feed_ranges: dict[str, list[dict[str, Any]]]  # container -> the SDK's feed ranges (read_feed_ranges)
    hot_feed_range: dict[str, Any]  # the SDK's feed range of the hot tenant's key


def operator_config(cosmos_url: str, monitor_url: str, ca: Path) -> Config:
    """The config the operator would write (the key and token come from the environment)."""
    account = {"name": ACCOUNT, "endpoint": cosmos_url, "database": DATABASE, "monitor_resource": RESOURCE}
    monitor = {
        "endpoint": monitor_url,
        "logs_endpoint": monitor_url,
        "workspace_id": WORKSPACE,
        "ca_bundle": str(ca),
        "backfill_hours": 1,
        "logs_lag_minutes": 0,  # the stand-in has no ingestion delay
    }
    return parse_config({"accounts": [account], "monitor": monitor, "queries": QUERIES}, Path("ops.toml"))


def build_operator_store(store: Path, workdir: Path) -> OperatorStore:
    """Run the scenario (the module docstring) into `store`; it ends a minute or two before now."""
    start = (time.time() // 60) * 60 - (MINUTES + 4) * 60
    clock = SimulatedClock(start)
    engine = Engine(clock=clock)
    certs = ensure_certificates(workdir / "tls")
    cosmos = start_in_thread(engine)
    monitor = start_in_thread(engine, app=MonitorApp(engine), tls=certs.server_context())
    try:
        config = operator_config(cosmos.url, monitor.url.rstrip("/"), certs.ca)
        client = CosmosClient(cosmos.url, credential=WELL_KNOWN_KEY)
        database = client.create_database(DATABASE)
        events = database.create_container(EVENTS, PartitionKey("/tenantId"), offer_throughput=EVENTS_RU_S)
        sessions = database.create_container(SESSIONS, PartitionKey("/id"), offer_throughput=SESSIONS_RU_S)
        feed_ranges = {EVENTS: list(events.read_feed_ranges()), SESSIONS: list(sessions.read_feed_ranges())}
        hot_feed_range = events.feed_range_from_partition_key(HOT_TENANT)
        workload = Workload(engine, clock, start)
        workload.load()
        with environment(RUSCOPE_MONITOR_TOKEN="local-token"):
            for minute in range(1, MINUTES + 1):
                workload.busy_second(minute)
                if minute in REPLAY_AT:
                    clock.set(start + minute * 60 + REPLAY_SECOND)
                    collect("replay", config, store, clock)
                    collect("storage", config, store, clock)
            clock.set(start + (MINUTES + 2) * 60)  # the last busy minute is complete
            collect("metrics", config, store, clock)
            collect("logs", config, store, clock)
    finally:
        monitor.stop()
        cosmos.stop()
    ledger = {name: dict(ranges) for name, ranges in workload.ru.items()}
    return OperatorStore(store, config, start, clock.now, workload.tenants, ledger, feed_ranges, hot_feed_range)


class Workload:
    """The operator's traffic through the engine's domain API (the module docstring)."""

    def __init__(self, engine: Engine, clock: SimulatedClock, start: float) -> None:
        self.engine, self.clock, self.start = engine, clock, start
        self.tenants = _tenants(engine)
        self.docs: dict[str, int] = defaultdict(int)  # tenant -> documents written
        self.sessions = 0
        self.ru: dict[str, dict[str, float]] = {EVENTS: defaultdict(float), SESSIONS: defaultdict(float)}
        self.random = random.Random(23)
        hot_range = self.tenants[HOT_TENANT]
        on_hot = sum(1 for t, pk in self.tenants.items() if pk == hot_range and t != HOT_TENANT)
        cold = len(self.tenants) - 1
        # the busy second's RU per tenant, so that contoso's pkrange is charged HOT_RANGE_RU
        total = HOT_RANGE_RU / (HOT_SHARE + (1 - HOT_SHARE) * on_hot / cold)
        self.targets = {t: total * (HOT_SHARE if t == HOT_TENANT else (1 - HOT_SHARE) / cold) for t in self.tenants}

    def load(self) -> None:
        """Minute 0: every tenant's documents and the sessions, paced under the budgets."""
        self.clock.set(self.start)
        writes = [HOT_TENANT] * HOT_DOCS + [t for t in self.tenants if t != HOT_TENANT for _ in range(COLD_DOCS)]
        self.random.shuffle(writes)
        for n, tenant in enumerate(writes):
            if n and n % LOAD_DOCS_PER_SECOND == 0:
                self.clock.advance(1.0)
            self._write_event(tenant)
        for n in range(SESSION_DOCS):
            if n and n % LOAD_DOCS_PER_SECOND == 0:
                self.clock.advance(1.0)
            self._write_session()

    def busy_second(self, minute: int) -> None:
        """The minute's busy second: each tenant's new documents, then its dashboard's aggregate queries and
        point reads up to its share of the RU; the sessions' new documents and uniform reads."""
        self.clock.set(self.start + minute * 60 + BUSY_SECOND)
        for tenant, target in self.targets.items():
            spent = sum(self._write_event(tenant) for _ in range(HOT_WRITES if tenant == HOT_TENANT else COLD_WRITES))
            while spent < target:
                spent += self._count(tenant)
                spent += self._read_event(tenant) if spent < target else 0.0
        for _ in range(SESSION_WRITES):
            self._write_session()
        for _ in range(SESSION_READS):
            n = self.random.randrange(self.sessions)
            self._charge(SESSIONS, self.engine.read_item, CTX, DATABASE, SESSIONS, f"s-{n}", [f"s-{n}"])

    def _write_event(self, tenant: str) -> float:
        n = self.docs[tenant]
        self.docs[tenant] += 1
        doc = {"id": f"{tenant}-{n}", "tenantId": tenant, "kind": "order", "seq": n, "note": "x" * 3_500}
        return self._charge(EVENTS, self.engine.create_item, CTX, DATABASE, EVENTS, doc, [tenant])

    def _read_event(self, tenant: str) -> float:
        n = self.random.randrange(self.docs[tenant])
        return self._charge(EVENTS, self.engine.read_item, CTX, DATABASE, EVENTS, f"{tenant}-{n}", [tenant])

    def _count(self, tenant: str) -> float:
        result = self.engine.run_query(DATABASE, EVENTS, COUNT_SQL, {"@t": tenant}, [tenant], ctx=CTX)
        for pkrange, ru in result.ru_by_pkrange.items():
            self.ru[EVENTS][pkrange] += ru
        return result.request_charge

    def _write_session(self) -> None:
        n = self.sessions
        self.sessions += 1
        doc = {"id": f"s-{n}", "user": f"u-{n % 97}", "started": n, "state": "open"}
        self._charge(SESSIONS, self.engine.create_item, CTX, DATABASE, SESSIONS, doc, [f"s-{n}"])

    def _charge(self, container: str, call: Any, *args: Any) -> float:
        result = call(*args)  # a 429 fails the build: the workload stays under every budget
        self.ru[container][result.pkrange_id] += result.request_charge
        return float(result.request_charge)


def _tenants(engine: Engine) -> dict[str, str]:
    """contoso and `COLD_PER_RANGE` small tenants on each pkrange (found by hashing, as the engine routes):
    tenant -> pkrange id."""
    coll = engine.container(DATABASE, EVENTS)
    found = {HOT_TENANT: coll.range_for(coll.epk((HOT_TENANT,))).id}
    per_range: dict[str, int] = defaultdict(int)
    for i in range(10_000):
        name = f"tenant-{i:03d}"
        pkrange = coll.range_for(coll.epk((name,))).id
        if per_range[pkrange] < COLD_PER_RANGE:
            per_range[pkrange] += 1
            found[name] = pkrange
        if len(per_range) == len(coll.ranges) and all(n == COLD_PER_RANGE for n in per_range.values()):
            return found
    raise RuntimeError("could not place the small tenants evenly over the pkranges")
