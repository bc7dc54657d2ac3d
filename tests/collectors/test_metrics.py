"""The metrics collector with the real `MetricsClient` against the Azure Monitor stand-in over real HTTPS:
stored points equal the engine's `History`, collection is incremental (no repeat, no gap), faults are lines."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collectors.config import Config, parse_config
from collectors.registry import collector, run_collector
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS
from emulator.engine.facade import Engine
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import Certificates, ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from store import read_table, store_location
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _by, _hot_workload, _key_on, _reads, _setup

RESOURCE = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
ROOT = Path(__file__).resolve().parents[2]


class StandIn:
    def __init__(self, running: RunningEmulator, engine: Engine, clock: ManualClock, certs: Certificates) -> None:
        self.running, self.engine, self.clock, self.certs = running, engine, clock, certs
        self.url = running.url.rstrip("/")


@pytest.fixture
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    certs = ensure_certificates(tmp_path_factory.mktemp("metrics-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certs.server_context())
    yield StandIn(running, engine, clock, certs)
    running.stop()


def config(stand_in: StandIn, endpoint: str | None = None, **monitor: Any) -> Config:
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t", "monitor_resource": RESOURCE}
    section = {"endpoint": endpoint or stand_in.url, "ca_bundle": str(stand_in.certs.ca), **monitor}
    return parse_config({"accounts": [account], "monitor": section}, Path("metrics.toml"))


def collect(stand_in: StandIn, store: Path, cfg: Config | None = None) -> tuple[int, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    summary = run_collector(
        collector("metrics"),
        cfg or config(stand_in),
        store=store_location(store),
        clock=stand_in.clock,
        out=out.append,
        err=err.append,
    )
    return summary.exit_code, out, err


def stored(store: Path, metric: str) -> dict[tuple[float, str], float]:
    frame = read_table(store_location(store), "metrics")
    frame = frame[frame["metric"] == metric]
    assert set(frame["container"]) <= {"c"} and set(frame["account"]) <= {"local"}
    return {(t.timestamp(), pk): v for t, pk, v in zip(frame["time"], frame["pkrange_id"], frame["value"], strict=True)}


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")


def test_incremental_collection_stores_each_point_once(stand_in: StandIn, tmp_path: Path, token: None) -> None:
    engine, clock = stand_in.engine, stand_in.clock
    hot, cold, _ = _hot_workload(engine, clock, minutes=2)
    code, out, err = collect(stand_in, tmp_path)
    assert (code, err) == (0, [])
    end = clock.now - clock.now % 60  # complete minutes only
    expected = _by(engine.history.series("t", "c", NORMALIZED_RU, START, end), "PartitionKeyRangeId")
    got = stored(tmp_path, NORMALIZED_RU)
    assert got == pytest.approx(expected) and len(got) == 2 * (1 + len(cold))
    assert all(v >= 99 for (_, pk), v in got.items() if pk == hot)
    frame = read_table(store_location(tmp_path), "metrics")
    totals = frame[frame["metric"] == TOTAL_REQUEST_UNITS]
    assert set(totals["status_code"]) >= {"200", "429"} and set(totals["aggregation"]) == {"Total"}
    rows, before = len(read_table(store_location(tmp_path), "metrics")), len(got)

    code, out, err = collect(stand_in, tmp_path)  # nothing new: nothing written
    assert (code, err) == (0, [])
    assert all(" 0 new point(s)" in line for line in out if "new point(s)" in line)
    assert len(read_table(store_location(tmp_path), "metrics")) == rows

    key = _key_on(engine, hot)
    for _ in range(120):  # two more minutes of the hot key
        _reads(engine, key, 230)
        clock.advance(1.0)
    code, out, err = collect(stand_in, tmp_path)
    assert (code, err) == (0, [])
    end = clock.now - clock.now % 60
    expected = _by(engine.history.series("t", "c", NORMALIZED_RU, START, end), "PartitionKeyRangeId")
    assert stored(tmp_path, NORMALIZED_RU) == pytest.approx(expected)  # no gap, no repeat
    assert any(f"{NORMALIZED_RU}: {len(expected) - before} new point(s)" in line for line in out), out
    frame = read_table(store_location(tmp_path), "metrics")
    columns = ["metric", "aggregation", "time", "pkrange_id", "physical_partition_id", "operation_type", "status_code"]
    assert not frame.duplicated(columns).any()
    assert len(frame.drop_duplicates(["run_id"])) == 2  # the second run wrote nothing


def test_faults_are_one_line_each(stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "")
    code, _, err = collect(stand_in, tmp_path)
    assert code == 1 and len(err) == 1 and "401" in err[0] and "Monitoring Reader" in err[0], err

    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    cfg = config(stand_in, metrics=["NoSuchMetric", NORMALIZED_RU])
    code, out, err = collect(stand_in, tmp_path, cfg)
    assert code == 1 and len(err) == 1 and "'NoSuchMetric': 400" in err[0], err
    assert any(NORMALIZED_RU in line for line in out)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = collect(stand_in, tmp_path, config(stand_in, endpoint=f"https://127.0.0.1:{port}"))
    assert code == 1 and len(err) == 1 and "cannot reach" in err[0], err
    assert all("local-token" not in line for line in err)


def test_nothing_to_do_without_monitor(stand_in: StandIn, tmp_path: Path, token: None) -> None:
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    cfg = parse_config({"accounts": [account], "monitor": {"endpoint": stand_in.url}}, Path("m.toml"))
    code, _, err = collect(stand_in, tmp_path, cfg)
    assert (code, err) == (0, [])
    assert read_table(store_location(tmp_path), "metrics").empty


def test_monitor_section_errors_are_located() -> None:
    account = {"name": "a", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    with pytest.raises(Exception) as caught:
        parse_config({"accounts": [account], "monitor": {"endpoint": "http://x", "grain": "PT2M"}}, Path("m.toml"))
    assert "m.toml: monitor.endpoint: " in str(caught.value) and "m.toml: monitor.grain: " in str(caught.value)


def test_cli_metrics_exits_0_with_its_line(stand_in: StandIn, tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n'
        f'monitor_resource = "{RESOURCE}"\n\n[monitor]\nendpoint = "{stand_in.url}"\n'
        f'ca_bundle = "{stand_in.certs.ca}"\nmetrics = ["{NORMALIZED_RU}"]\n',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token"}
    command = [sys.executable, "-m", "ruscope", "metrics", "--config", str(path), "--store", str(tmp_path / "s")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"t {NORMALIZED_RU}: 0 new point(s)" in done.stdout
    assert "local-token" not in done.stdout + done.stderr
