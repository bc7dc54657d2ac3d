"""RU per logical key by operation (`key_operations` -> `log_key_operation_ru`): the real `LogsQueryClient` over
HTTPS against the Log Analytics stand-in, in both destination modes (the legacy table names the operation
`operationType_s`, azure-monitor.md §7b R20), and `ruscope logs` as a command. Expected values come from the
engine's raw records, summed here independently of both the stand-in and the collector."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_logs_standin import (
    QUERY,
    ROOT,
    WORKSPACE,
    StandIn,
    _records,
    collect,
    config,
    stand_in,  # noqa: F401 (a fixture)
    token,  # noqa: F401 (an autouse fixture: the stand-in's bearer token)
)
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, _hot_workload, _setup


def _ru_by_key_and_operation(engine: Engine) -> dict[tuple[str, str], float]:
    ru: dict[tuple[str, str], float] = defaultdict(float)
    for r in _records(engine):
        if r.partition_key:
            ru[(r.partition_key, r.operation)] += r.request_charge
    return dict(ru)


@pytest.mark.parametrize("mode", ["resource-specific", "azure-diagnostics"])
def test_ru_per_key_by_operation_is_stored_per_operation(stand_in: StandIn, tmp_path: Path, mode: str) -> None:  # noqa: F811
    code, out, err = collect(stand_in, tmp_path, config(stand_in, logs_mode=mode))
    assert (code, err) == (0, []), err
    assert any(line.startswith("t logs key_operations: ") for line in out), out

    frame = read_table(store_location(tmp_path), "log_key_operation_ru")
    assert set(frame["container"]) == {"c"} and not frame["partial"].any()
    stored = frame.groupby(["partition_key", "operation_name"])["request_charge"].sum().to_dict()
    expected = _ru_by_key_and_operation(stand_in.engine)
    assert stored == pytest.approx(expected)
    assert {op for _, op in expected} >= {"Create", "Read", "Query"}  # the workload's operations, each apart
    by_key = read_table(store_location(tmp_path), "log_key_ru").groupby("partition_key")["request_charge"].sum()
    assert frame.groupby("partition_key")["request_charge"].sum().to_dict() == pytest.approx(by_key.to_dict())
    assert (frame["peak_request_charge"] <= frame["request_charge"] + 1e-9).all()


def test_collected_again_the_operations_rows_are_not_stored_twice(stand_in: StandIn, tmp_path: Path) -> None:  # noqa: F811
    cfg = config(stand_in, overlap_minutes=60)
    assert collect(stand_in, tmp_path, cfg)[0] == 0
    first = read_table(store_location(tmp_path), "log_key_operation_ru")
    code, out, _ = collect(stand_in, tmp_path, cfg)
    assert code == 0 and any("key_operations: 0 new row(s)" in line for line in out), out
    again = read_table(store_location(tmp_path), "log_key_operation_ru")
    assert len(again) == len(first) > 0


@pytest.fixture
def recent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """The stand-in of `stand_in` with its history twenty minutes ago on the wall clock, so that `ruscope logs`
    (which asks up to the wall clock's last complete bins) finds it."""
    certs = ensure_certificates(tmp_path_factory.mktemp("logs-ops-tls"))
    start = math.floor(time.time() / 60) * 60 - 20 * 60
    clock = ManualClock(start)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, _, _ = _hot_workload(engine, clock, minutes=1)
    for _ in range(3):
        engine.run_query("t", "c", QUERY, {"@k": "k1"}, ["k1"], ctx=CTX)
    clock.advance(120)
    app = MonitorApp(engine)
    running = start_in_thread(engine, app=app, tls=certs.server_context())
    yield StandIn(running, app, engine, clock, certs, hot)
    running.stop()


def test_cli_logs_stores_ru_per_key_by_operation(recent: StandIn, tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n\n'
        f'[monitor]\nendpoint = "{recent.url}"\nlogs_endpoint = "{recent.url}"\n'
        f'workspace_id = "{WORKSPACE}"\nca_bundle = "{recent.certs.ca}"\nlogs_bin_minutes = 1\n',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token"}
    command = [sys.executable, "-m", "ruscope", "logs", "--config", str(path), "--store", str(tmp_path / "s")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "t logs key_operations: " in done.stdout and "6 logs query(s), 0 failed" in done.stdout, done.stdout
    frame = read_table(store_location(tmp_path / "s"), "log_key_operation_ru")
    stored = frame.groupby(["partition_key", "operation_name"])["request_charge"].sum().to_dict()
    assert stored == pytest.approx(_ru_by_key_and_operation(recent.engine)) and len(stored) > 1
    assert (frame["time"] < pd.Timestamp.now(tz="UTC")).all()
