"""The metrics collector against a stand-in that throttles (429) and against metrics emitted at PT5M only:
the real `MetricsClient` over real HTTPS, the real `MetricsApp` behind a test-only wrapper."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.config import parse_config
from collectors.config.monitor import DEFAULT_METRICS
from collectors.metrics import grain_of
from cosmoscore.monitor.metrics import CATALOGUE, NORMALIZED_RU, TOTAL_REQUEST_UNITS
from emulator.engine.facade import Engine
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.request import Request
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_metrics import StandIn, collect, config
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _hot_workload, _setup

THROTTLED = b'{"error": {"code": "TooManyRequests", "message": "The request was throttled."}}'


class Throttling:
    """The real `MetricsApp`, except that requests for `metric` get a 429 (with `headers`) `times` times
    first; every request's metric, interval and arrival time is kept."""

    def __init__(self, app: MetricsApp, metric: str, times: int, headers: dict[str, str]) -> None:
        self.app, self.metric, self.left, self.headers = app, metric, times, headers
        self.request_type = app.request_type
        self.seen: list[tuple[str, str, float, int]] = []

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        param: Any = getattr(request, "param", lambda name: None)
        name, interval = param("metricnames") or "", param("interval") or ""
        if name == self.metric and self.left > 0:
            self.left -= 1
            self.seen.append((name, interval, time.monotonic(), 429))
            return 429, {"content-type": "application/json", **self.headers}, THROTTLED
        status, headers, body = self.app.handle(request)
        self.seen.append((name, interval, time.monotonic(), status))
        return status, headers, body


@pytest.fixture
def throttled(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[StandIn]:
    times, headers = request.param
    certs = ensure_certificates(tmp_path_factory.mktemp("metrics-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    app = Throttling(MetricsApp(engine), NORMALIZED_RU, times, headers)
    running = start_in_thread(engine, app=app, tls=certs.server_context())
    stand_in = StandIn(running, engine, clock, certs)
    stand_in.app = app  # type: ignore[attr-defined]
    _hot_workload(engine, clock, minutes=2)
    yield stand_in
    running.stop()


@pytest.mark.parametrize("throttled", [(1, {"Retry-After": "1"})], indirect=True)
def test_a_429_is_retried_after_the_advised_delay(throttled: StandIn, tmp_path: Path, token: None) -> None:
    cfg = config(throttled, metrics=[NORMALIZED_RU])
    code, out, err = collect(throttled, tmp_path, cfg)
    assert (code, err) == (0, []), err
    seen = [s for s in throttled.app.seen if s[0] == NORMALIZED_RU]  # type: ignore[attr-defined]
    assert [s[3] for s in seen] == [429, 200]
    assert seen[1][2] - seen[0][2] >= 0.9  # the retry waited what the service advised (1 s)
    frame = read_table(store_location(tmp_path), "metrics")
    assert len(frame) > 0 and set(frame["metric"]) == {NORMALIZED_RU}


# no Retry-After: azure-core would not retry a POST; the collector asks it to (and retry-after-ms keeps it quick)
@pytest.mark.parametrize("throttled", [(100, {"retry-after-ms": "10"})], indirect=True)
def test_a_permanent_429_is_one_line_and_the_other_metrics_go_on(
    throttled: StandIn, tmp_path: Path, token: None
) -> None:
    cfg = config(throttled, metrics=[TOTAL_REQUEST_UNITS, NORMALIZED_RU])
    code, out, err = collect(throttled, tmp_path, cfg)
    assert code == 1 and len(err) == 1, err
    assert "Azure Monitor throttled the request" in err[0] and "retry later" in err[0] and NORMALIZED_RU in err[0]
    assert "Traceback" not in err[0] and "local-token" not in err[0]
    frame = read_table(store_location(tmp_path), "metrics")
    assert set(frame["metric"]) == {TOTAL_REQUEST_UNITS}  # what the other metric brought is kept
    tries = [s for s in throttled.app.seen if s[0] == NORMALIZED_RU]  # type: ignore[attr-defined]
    assert len(tries) == 4  # the first try and azure-core's 3 retries


@pytest.mark.parametrize("throttled", [(0, {})], indirect=True)
def test_each_metric_is_asked_at_its_finest_grain(throttled: StandIn, tmp_path: Path, token: None) -> None:
    cfg = config(throttled, metrics=["DataUsage", NORMALIZED_RU])
    collect(throttled, tmp_path, cfg)  # the stand-in may not compute DataUsage: the wire is what counts
    intervals = {name: interval for name, interval, _, _ in throttled.app.seen}  # type: ignore[attr-defined]
    assert intervals == {"DataUsage": "PT5M", NORMALIZED_RU: "PT1M"}
    frame = read_table(store_location(tmp_path), "metrics")
    grains = dict(zip(frame["metric"], frame["grain"], strict=True))
    assert grains[NORMALIZED_RU] == "PT1M" and grains.get("DataUsage", "PT5M") == "PT5M"


def test_grain_of_follows_the_catalogue() -> None:
    assert grain_of("DataUsage", "PT1M") == "PT5M" and grain_of("DataUsage", "PT5M") == "PT5M"
    assert grain_of(NORMALIZED_RU, "PT1M") == "PT1M" and grain_of(NORMALIZED_RU, "PT5M") == "PT5M"
    coarser = {name for name, m in CATALOGUE.items() if m.finest_grain == "PT5M"}
    assert coarser >= {"IndexUsage", "DocumentCount", "ProvisionedThroughput", "AutoscaleMaxThroughput"}
    assert all(grain_of(name, "PT1M") == "PT5M" for name in coarser)
    assert {NORMALIZED_RU, TOTAL_REQUEST_UNITS, "PhysicalPartitionSizeInfo"} <= set(DEFAULT_METRICS)
    monitor = parse_config(
        {
            "accounts": [{"name": "a", "endpoint": "http://127.0.0.1:1/", "database": "t"}],
            "monitor": {"endpoint": "https://m.example"},
        },
        Path("m.toml"),
    ).monitor
    assert monitor is not None and monitor.metrics == list(DEFAULT_METRICS)  # the config's default


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
