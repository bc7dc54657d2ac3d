"""A store filled by the real collectors, for the dashboard's and the reports' tests.

Two hours of a small shop on the emulator, on a simulated clock that ends about now (so "Last 24 hours"
covers it): container `shop/orders` (key /tenantId, 800 RU/s on four 200 RU/s pkranges) where tenant
`hot` reads past its partition's budget every minute (429s) while one cold tenant per other pkrange reads a
little; at minute 60 the RU/s are raised to 2,000, which splits a partition (so the hot partitions heatmap
has a split to mark). Orders keep arriving, the hot tenant's the largest, so storage grows between
snapshots. Through the unmodified SDKs, as a user would collect it:
- `replay` (azure-cosmos over HTTP) at five points in time: a single-partition query with a production rate,
  a targeted IN, a fan-out, and a per-feed-range count;
- `storage` after each replay (partition statistics, quota, lineage, EPK bounds);
- `metrics` (MetricsClient) and `logs` (LogsQueryClient) over HTTPS from the monitor stand-in at the end;
- then the config's `[alerts]` are evaluated, as `ruscope collect` does: the hot range and the 429 rate fire;
- and the orders are sampled live and advised on (`ruscope advise --from-account`), for the Advisor page.

`build_collected_store` is deterministic in everything but the wall-clock hour it ends on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from azure.cosmos import CosmosClient, PartitionKey

from collectors.alerts import EXIT_ALERTS, after_collect
from collectors.config import AdvisorSettings, Config, parse_config
from cosmoscore.limits import Limits
from emulator.engine import errors
from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Context, Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import start_in_thread
from ruscope.advise import advise_live
from ruscope.demo.collect import collect  # the demo's: one collector run, failing loudly
from store import store_location

RESOURCE = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
WORKSPACE = "11111111-2222-3333-4444-555555555555"
LIMITS = Limits(manual_ru_per_partition_at_creation=200, max_ru_per_partition=400)  # small: splits are cheap
MINUTES = 120
SPLIT_AT = 60  # minute at which the RU/s go from 800 to 2,000 (four pkranges become five)
REPLAY_AT = (5, 35, 65, 95, 115)
# point reads (1 RU) in each minute's busy second: past the hot pkrange's 200 RU/s budget before the split
# and its 400 RU/s after it (the workload grew), so the alerts still have a hot range at the end
HOT_READS, HOT_READS_AFTER_SPLIT, COLD_READS = 230, 450, 10
ACCOUNT = "local"
# `ruscope advise` on the orders, sampled live at the end: /tenantId (the hot tenant) against /id and the
# designs proposed from the documents and the queries
ADVISOR = AdvisorSettings.model_validate(
    {
        "container": "orders",
        "throughput": 40_000,
        "growth_gb_per_day": 0.5,
        "scale": 1_000,
        "candidates": [{"key": "/tenantId"}, {"key": "/id"}],
        "propose": 2,
    }
)
CTX = Context()

QUERIES: list[dict[str, Any]] = [
    {
        "name": "hot-tenant-orders",
        "container": "orders",
        "sql": "SELECT * FROM c WHERE c.tenantId = @t",
        "parameters": {"@t": "hot"},
        "partition_key": "hot",
        "rate_per_s": 40.0,
    },
    {
        "name": "two-tenants",
        "container": "orders",
        "sql": "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId IN ('cold-1', 'cold-2')",
        "rate_per_s": 2.0,
    },
    {"name": "big-orders", "container": "orders", "sql": "SELECT * FROM c WHERE c.total > 900", "rate_per_s": 5.0},
    {"name": "count-each", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c", "mode": "per-feed-range"},
]


@dataclass(frozen=True)
class CollectedStore:
    """The store and what the tests may assert about it."""

    store: Path
    start: float  # epoch seconds of minute 0
    end: float  # the simulated clock when the last collector ran
    hot_tenant: str  # the tenant whose reads throttle its pkrange
    hot_pkranges: tuple[str, ...]  # the pkrange(s) the hot tenant lived on (before and after the split)
    config: Config


def collected_config(cosmos_url: str, monitor_url: str, ca: Path) -> Config:
    """The config a user would write for this account (the key and token come from the environment)."""
    account = {"name": ACCOUNT, "endpoint": cosmos_url, "database": "shop", "monitor_resource": RESOURCE}
    monitor = {
        "endpoint": monitor_url,
        "logs_endpoint": monitor_url,
        "workspace_id": WORKSPACE,
        "ca_bundle": str(ca),
        "backfill_hours": 3,
        "logs_lag_minutes": 0,  # the stand-in has no ingestion delay
    }
    alerts = {"hot_partition_percent": 90, "hot_partition_minutes": 5, "throttle_rate_percent": 5}
    data = {"accounts": [account], "monitor": monitor, "queries": QUERIES, "alerts": alerts}
    return parse_config(data, Path("collected.toml"))


def build_collected_store(store: Path, workdir: Path, *, start: float | None = None) -> CollectedStore:
    """Run the two hours and every collector into `store` (see the module docstring); minute 0 at `start`
    (epoch seconds on an hour), by default two hours before the current hour."""
    if start is None:
        start = (time.time() // 3600) * 3600 - 2 * 3600
    clock = SimulatedClock(start)
    engine = Engine(limits=LIMITS, clock=clock)
    certs = ensure_certificates(workdir / "tls")
    cosmos = start_in_thread(engine)
    monitor = start_in_thread(engine, app=MonitorApp(engine), tls=certs.server_context())
    try:
        config = collected_config(cosmos.url, monitor.url.rstrip("/"), certs.ca)
        client = CosmosClient(cosmos.url, credential=WELL_KNOWN_KEY)
        orders = client.create_database("shop").create_container(
            "orders", PartitionKey("/tenantId"), offer_throughput=800
        )
        tenants = _tenants(engine)
        hot_ranges = {_range_of(engine, "hot")}
        with environment(RUSCOPE_MONITOR_TOKEN="local-token"):
            for minute in range(MINUTES):
                clock.set(start + minute * 60)
                if minute == SPLIT_AT:
                    orders.replace_throughput(2_000)
                    hot_ranges.add(_range_of(engine, "hot"))
                    tenants = list(dict.fromkeys([*tenants, *_tenants(engine)]))  # a cold tenant on each child
                _minute_of_traffic(engine, clock, tenants, minute)
                if minute in REPLAY_AT:
                    clock.set(start + minute * 60 + 45)  # a fresh second: the replay is not throttled
                    collect("replay", config, store, clock)
                    collect("storage", config, store, clock)
            clock.set(start + MINUTES * 60 + 60)  # the last minute is complete
            collect("metrics", config, store, clock)
            collect("logs", config, store, clock)
            lines: list[str] = []
            when = dt.datetime.fromtimestamp(clock.now, dt.UTC)
            if (
                after_collect(config, store_location(store), now=when, out=lines.append, err=lines.append)
                != EXIT_ALERTS
            ):
                raise RuntimeError(f"the collected store's alerts did not fire: {lines}")
            sample = workdir / "orders-sample.jsonl"
            advise_live(
                config, ADVISOR, store=store_location(store), sample_path=sample, now=when, credential=WELL_KNOWN_KEY
            )
    finally:
        monitor.stop()
        cosmos.stop()
    ranges = tuple(sorted(hot_ranges, key=int))
    return CollectedStore(store, start, clock.now, "hot", ranges, config)


def _tenants(engine: Engine) -> list[str]:
    """The hot tenant and one cold tenant on each other pkrange (found by hashing, as the engine routes)."""
    coll = engine.container("shop", "orders")
    hot_range = coll.range_for(coll.epk(("hot",))).id
    cold: dict[str, str] = {}
    for i in range(10_000):
        name = f"cold-{i}"
        range_id = coll.range_for(coll.epk((name,))).id
        if range_id != hot_range and range_id not in cold:
            cold[range_id] = name
        if len(cold) == len(coll.ranges) - 1:
            break
    return ["hot", *cold.values()]


def _range_of(engine: Engine, tenant: str) -> str:
    coll = engine.container("shop", "orders")
    return coll.range_for(coll.epk((tenant,))).id


def _minute_of_traffic(engine: Engine, clock: SimulatedClock, tenants: list[str], minute: int) -> None:
    """New orders at second 0 (the hot tenant's larger and more), reads at second 1: the hot tenant's
    past its partition's budget."""
    for n, tenant in enumerate(tenants):
        for i in range(3 if tenant == "hot" else 1):
            doc = {"id": f"{minute}-{i}", "tenantId": tenant, "total": (minute * 37 + n * 101 + i) % 1000}
            doc["lines"] = ["item"] * (60 if tenant == "hot" else 10)
            _swallow_429(engine.create_item, CTX, "shop", "orders", doc, [tenant])
    clock.advance(1.0)
    for tenant in tenants:
        hot_reads = HOT_READS if minute < SPLIT_AT else HOT_READS_AFTER_SPLIT
        for _ in range(hot_reads if tenant == "hot" else COLD_READS):
            _swallow_429(engine.read_item, CTX, "shop", "orders", f"{minute}-0", [tenant])


def _swallow_429(call: Any, *args: Any) -> None:
    try:
        call(*args)
    except errors.CosmosError as exc:
        if exc.status != 429:
            raise


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables for the collectors, restored after (a session or module fixture has no
    monkeypatch)."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
