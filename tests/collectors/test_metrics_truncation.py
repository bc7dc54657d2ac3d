"""A database with more series than one answer holds: the service returns at most `top` series per query
and says nothing of the rest (azure-monitor.md §7b R3, R12), and the stand-in does the same; the collector
sees an answer at its cap and asks again per container, then per dimension value, so every series is
stored. Through the real `MetricsClient` over real HTTPS, and `ruscope metrics`."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.getbatch import free_dimensions, only_split, pin
from collectors.metrics import MAX_RESULTS, metric_filter
from cosmoscore.monitor.metrics import NAMESPACE, TOTAL_REQUEST_UNITS
from emulator.engine.facade import Engine, ThroughputSpec
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_metrics import RESOURCE, ROOT, StandIn, collect, config
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS
from tests.emulator.monitor.test_metrics import FixedToken

CONTAINERS = [f"c{i:02d}" for i in range(40)]
OPERATIONS = ["Create", "Read", "Upsert", "Replace", "Delete", "Query", "Patch", "ReadFeed"]
STATUSES = [200, 201, 404, 429]
SERIES = len(CONTAINERS) * len(OPERATIONS) * len(STATUSES)  # 1,280: past one answer's 1,000
# Minutes just past (real time): `ruscope metrics`, run as a process, asks the hour before the real now.
START = time.time() // 60 * 60 - 5 * 60


@pytest.fixture
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """Database `t` with 40 containers, each metered for 8 operations x 4 status codes over 3 minutes."""
    certs = ensure_certificates(tmp_path_factory.mktemp("metrics-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    engine.create_database(CTX, {"id": "t"})
    for name in CONTAINERS:
        body = {"id": name, "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
        engine.create_container(CTX, "t", body, ThroughputSpec(400))
    for minute in range(3):
        for i, name in enumerate(CONTAINERS):
            for j, operation in enumerate(OPERATIONS):
                for status in STATUSES:  # the accounting's own recording call, one metered request each
                    ru = 1.0 + i + j / 10 + status / 1000
                    engine.history.record(START + 60 * minute + 1, "t", name, "0", operation, status, ru)
    clock.advance(4 * 60)
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certs.server_context())
    yield StandIn(running, engine, clock, certs)
    running.stop()


def _expected(engine: Engine) -> dict[tuple[str, str, str, float], float]:
    out: dict[tuple[str, str, str, float], float] = {}
    for name in CONTAINERS:
        for p in engine.history.series("t", name, TOTAL_REQUEST_UNITS, START, START + 3 * 60):
            key = (name, p.dimensions["OperationType"], p.dimensions["StatusCode"], p.time)
            out[key] = out.get(key, 0.0) + p.value
    return out


def test_the_stand_in_returns_top_series_and_no_sign_of_the_rest(many: StandIn) -> None:
    from azure.monitor.querymetrics import MetricsClient

    client = MetricsClient(many.url, FixedToken(), connection_verify=str(many.certs.ca), retry_total=0)
    span = (dt.datetime.fromtimestamp(START, dt.UTC), dt.datetime.fromtimestamp(START + 180, dt.UTC))
    ask = {
        "resource_ids": [RESOURCE],
        "metric_namespace": NAMESPACE,
        "metric_names": [TOTAL_REQUEST_UNITS],
        "timespan": span,
        "aggregations": ["Total"],
        "filter": metric_filter("t", TOTAL_REQUEST_UNITS),
    }
    (capped,) = client.query_resources(max_results=MAX_RESULTS, **ask)
    assert len(capped.metrics[0].timeseries) == MAX_RESULTS < SERIES
    (default,) = client.query_resources(**ask)  # no `top`: the service's default of 10
    assert len(default.metrics[0].timeseries) == 10


def test_a_capped_answer_is_split_and_every_series_is_stored(
    many: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    code, out, err = collect(many, tmp_path, config(many, metrics=[TOTAL_REQUEST_UNITS], backfill_hours=1))
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path), "metrics")
    got = {
        (c, op, sc, t.timestamp()): v
        for c, op, sc, t, v in zip(
            frame["container"],
            frame["operation_type"],
            frame["status_code"],
            frame["time"],
            frame["value"],
            strict=True,
        )
    }
    expected = _expected(many.engine)
    assert len(expected) == SERIES * 3
    assert got == pytest.approx(expected)
    assert any(f"{TOTAL_REQUEST_UNITS}: {SERIES * 3} new point(s)" in line for line in out), out


def test_cli_metrics_stores_every_series(many: StandIn, tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n'
        f'monitor_resource = "{RESOURCE}"\n\n[monitor]\nendpoint = "{many.url}"\n'
        f'ca_bundle = "{many.certs.ca}"\nmetrics = ["{TOTAL_REQUEST_UNITS}"]\nbackfill_hours = 1\n',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token"}
    command = [sys.executable, "-m", "ruscope", "metrics", "--config", str(path), "--store", str(tmp_path / "s")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    frame = read_table(store_location(tmp_path / "s"), "metrics")
    assert len(frame.drop_duplicates(["container", "operation_type", "status_code"])) == SERIES


def test_filters_are_pinned_and_narrowed_term_by_term() -> None:
    text = metric_filter("t", TOTAL_REQUEST_UNITS)
    assert free_dimensions(text) == ["CollectionName", "Region", "OperationType", "StatusCode"]
    assert only_split(text, "CollectionName") == "DatabaseName eq 't' and CollectionName eq '*'"
    pinned = pin(text, "CollectionName", "o'k")
    assert pinned == (
        "DatabaseName eq 't' and CollectionName eq 'o''k' and Region eq '*' and OperationType eq '*' and StatusCode eq '*'"
    )
    assert free_dimensions(pinned) == ["Region", "OperationType", "StatusCode"]


def test_a_dimension_with_more_values_than_an_answer_holds_is_a_failure_line(
    many: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a cap of 30 series, the 40 containers cannot be listed in one answer: said, never silent."""
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    monkeypatch.setattr("collectors.metrics.MAX_RESULTS", 30)
    code, out, err = collect(many, tmp_path, config(many, metrics=[TOTAL_REQUEST_UNITS], backfill_hours=1))
    assert code == 1 and len(err) == 1, err
    assert "more than 30 values of CollectionName" in err[0] and TOTAL_REQUEST_UNITS in err[0]
