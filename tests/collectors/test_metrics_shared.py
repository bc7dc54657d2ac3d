"""A shared-throughput database through the metrics collector, the real `MetricsClient` and the stand-in over
HTTPS (which answers as Azure does, azure-monitor.md §7b R2, R30-R32): the series Azure labels `<empty>` and
`__Empty` are stored under the database's shared offer (`container` = SHARED_OFFER_CONTAINER), every one of
them, and no container of either name appears in the store."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from collectors.config import parse_config
from collectors.metrics import stored_container
from collectors.registry import collector, run_collector
from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    NORMALIZED_RU,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    TOTAL_REQUEST_UNITS,
)
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from store.records import SHARED_OFFER_CONTAINER
from tests.collectors.test_metrics import RESOURCE, ROOT, StandIn
from tests.conftest import ManualClock
from tests.emulator.history.test_history import START
from tests.emulator.monitor.test_shared_throughput import MINUTES, SHARED_RU, build_shared

PHANTOMS = {"<empty>", "__Empty"}


def _serve(start: float, certs_dir: Path) -> StandIn:
    certs = ensure_certificates(certs_dir)
    clock = ManualClock(start)
    engine, _ = build_shared(clock)
    clock.advance(5 * 60)  # the last PT5M interval of the writes is complete
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certs.server_context())
    return StandIn(running, engine, clock, certs)


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    served = _serve(START, tmp_path_factory.mktemp("metrics-shared-tls"))
    yield served
    served.running.stop()


def _config_text(stand_in: StandIn) -> str:
    return (
        '[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabases = ["shared", "solo"]\n'
        f'monitor_resource = "{RESOURCE}"\n\n[monitor]\nendpoint = "{stand_in.url}"\n'
        f'ca_bundle = "{stand_in.certs.ca}"\n'
    )


def _collect(stand_in: StandIn, store: Path, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    import tomllib

    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    cfg = parse_config(tomllib.loads(_config_text(stand_in)), Path("metrics.toml"))
    out: list[str] = []
    err: list[str] = []
    summary = run_collector(
        collector("metrics"), cfg, store=store_location(store), clock=stand_in.clock, out=out.append, err=err.append
    )
    assert summary.exit_code == 0, err
    return read_table(store_location(store), "metrics")


def _containers(frame: pd.DataFrame, database: str, metric: str) -> set[str]:
    rows = frame[(frame["database"] == database) & (frame["metric"] == metric)]
    return set(rows["container"])


def test_shared_offer_rows_are_the_databases_and_none_is_lost(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _collect(stand_in, tmp_path / "store", monkeypatch)
    assert not set(frame["container"]) & PHANTOMS
    for metric in (NORMALIZED_RU, PARTITION_SIZE, PARTITION_THROUGHPUT, PROVISIONED):
        assert _containers(frame, "shared", metric) == {SHARED_OFFER_CONTAINER, "own"}, metric
        assert _containers(frame, "solo", metric) == {"c"}, metric
    assert _containers(frame, "shared", AUTOSCALE_MAX) == set()
    for metric in (TOTAL_REQUEST_UNITS, DATA_USAGE):
        assert _containers(frame, "shared", metric) == {"a", "b", "own"}, metric
    offer = frame[(frame["container"] == SHARED_OFFER_CONTAINER) & (frame["metric"] == PROVISIONED)]
    assert set(offer["value"]) == {float(SHARED_RU)}

    # every point the service labels `<empty>` is stored, once, under the offer
    history = stand_in.engine.history
    expected: dict[tuple[float, str], float] = {}
    for coll in ("a", "b"):
        for p in history.series("shared", coll, NORMALIZED_RU, START, START + MINUTES * 60):
            slot = (p.time, p.dimensions["PartitionKeyRangeId"])
            expected[slot] = max(expected.get(slot, 0.0), p.value)
    rows = frame[(frame["container"] == SHARED_OFFER_CONTAINER) & (frame["metric"] == NORMALIZED_RU)]
    got = {(t.timestamp(), pk): v for t, pk, v in zip(rows["time"], rows["pkrange_id"], rows["value"], strict=True)}
    assert got == expected and len(rows) == len(expected)


def test_only_the_label_of_its_own_metric_is_the_offer() -> None:
    assert stored_container(NORMALIZED_RU, "<empty>") == SHARED_OFFER_CONTAINER
    assert stored_container("physicalpartitionsizeinfo", "<empty>") == SHARED_OFFER_CONTAINER
    assert stored_container(PROVISIONED, "__Empty") == SHARED_OFFER_CONTAINER
    # a container literally named so, in a metric Azure never labels: its own name
    assert stored_container(TOTAL_REQUEST_UNITS, "<empty>") == "<empty>"
    assert stored_container(DATA_USAGE, "__Empty") == "__Empty"
    assert stored_container(PROVISIONED, "<empty>") == "<empty>"


def test_cli_metrics_stores_no_phantom_container(tmp_path: Path) -> None:
    now = dt.datetime.now(dt.UTC).timestamp()
    served = _serve(now - now % 3600 - 3600, tmp_path / "tls")  # an hour ago: within the CLI's own backfill
    try:
        path = tmp_path / "ruscope.toml"
        metrics = f'metrics = ["{NORMALIZED_RU}", "{PROVISIONED}", "{TOTAL_REQUEST_UNITS}"]\n'
        path.write_text(_config_text(served) + metrics, encoding="utf-8")
        env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token", "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "ruscope", "metrics", "--config", str(path), "--store", str(tmp_path / "s")]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    finally:
        served.running.stop()
    assert done.returncode == 0, done.stderr
    frame = read_table(store_location(tmp_path / "s"), "metrics")
    assert not set(frame["container"]) & PHANTOMS
    assert _containers(frame, "shared", NORMALIZED_RU) == {SHARED_OFFER_CONTAINER, "own"}
    assert _containers(frame, "shared", PROVISIONED) == {SHARED_OFFER_CONTAINER, "own"}
    assert _containers(frame, "shared", TOTAL_REQUEST_UNITS) == {"a", "b", "own"}
