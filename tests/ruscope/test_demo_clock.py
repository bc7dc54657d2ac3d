"""The demo's clock on a slow machine: a replay the emulator throttles completes however long each request
takes, because simulated time moves by the waits (the SDK's Retry-After sleeps, the pacing), never by the
machine's speed. The collectors are the real ones, through the unmodified SDK, against the demo's kind of
engine; only the server is slowed (each request answered later), as a loaded 2-core machine would be."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from collectors.config import parse_config
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.rest.app import CosmosApp, Response
from emulator.rest.server import start_in_thread
from emulator.rest.transport import Request
from ruscope.demo.collect import DemoClock, collect_in_minute
from store import read_table, store_location

START = 1_800_000_000.0  # on a minute
DELAY_S = 0.02  # per request: a machine slower than any the demo's minute could allow for (see below)


class SlowApp:
    """The emulator's Cosmos DB API, each request answered `delay_s` later."""

    def __init__(self, app: CosmosApp, delay_s: float) -> None:
        self.app, self.delay_s = app, delay_s

    def handle(self, request: Request) -> Response:
        time.sleep(self.delay_s)
        return self.app.handle(request)


def _throttled_container(engine: Engine) -> None:
    """One 400 RU/s partition holding enough that the replay below costs a few seconds of its budget."""
    engine.create_database(Context(), {"id": "chat"})
    engine.create_container(
        Context(),
        "chat",
        {"id": "logs", "partitionKey": {"paths": ["/tenantId"], "kind": "Hash", "version": 2}},
        ThroughputSpec(400),
    )
    engine.throttle.enabled = False
    for i in range(600):
        doc = {"id": f"d{i}", "tenantId": "contoso", "text": "x" * 2_000}
        engine.create_item(Context(), "chat", "logs", doc, ["contoso"])
    engine.throttle.enabled = True


@pytest.mark.timeout(120)
def test_a_throttled_replay_on_a_slow_machine_completes_and_its_retries_land_in_later_seconds(tmp_path: Path) -> None:
    clock = DemoClock(START)
    engine = Engine(clock=clock)
    server = start_in_thread(engine, app=SlowApp(CosmosApp(engine), DELAY_S))
    try:
        _throttled_container(engine)
        query = {"name": "all", "container": "logs", "sql": "SELECT * FROM c", "partition_key": "contoso"}
        config = parse_config(
            {
                "cosmos": {"endpoint": server.url, "database": "chat", "max_retry_wait_s": 5},
                "replay": {"max_ru_per_s": math.inf},  # unpaced: the SDK's retries alone must keep time moving
                "queries": [{**query, "repeat": 14}],
            },
            Path("demo.toml"),
        )
        clock.set(START + 57.5)  # the minute's traffic ran late: one second left before the minute ends
        summary, overrun_s = collect_in_minute(config, tmp_path, clock, START)
    finally:
        server.stop()
    requests = read_table(store_location(tmp_path), "requests").sort_values("seq")
    throttled = requests[requests["status"] == 429]
    assert summary.exit_code == 0 and summary.throttled_out == 0 and summary.items == 14
    assert len(throttled) >= 2 and summary.total_ru > 2 * 400  # several seconds of the partition's budget
    for seq, at in zip(throttled["seq"], throttled["time"], strict=True):  # each retry in a later second
        retried = requests[requests["seq"] > seq].iloc[0]
        assert math.floor(retried["time"].timestamp()) > math.floor(at.timestamp())
    # simulated time moved by the SDK's waits alone (the machine's slowness is no simulated time), past the
    # minute's end, which the caller is told (the clock never moves back into it)
    waited_s = throttled["retry_after_ms"].sum() / 1000
    assert clock() - (START + 58) == pytest.approx(waited_s, abs=1e-6)
    assert overrun_s == pytest.approx(clock() - (START + 59))
