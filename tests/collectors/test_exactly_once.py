"""Concurrent collectors store every point once: real `ruscope metrics` and `ruscope logs` processes, two for
one account and one for another, started at the same moment against the emulator's monitor stand-in over
real HTTPS, into one store. The store is then read three ways: `read_table`, delta-rs' own SQL over the
table, and DuckDB over the snapshot's Parquet files."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder

from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import Certificates, ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from store import read_table, store_location
from store.records import TABLES
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, _hot_workload, _setup
from tests.emulator.monitor.test_metrics import RESOURCE

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = "11111111-2222-3333-4444-555555555555"
QUERY = "SELECT * FROM c WHERE c.k = @k"
IDENTITY_TABLES = ("metrics", "log_key_ru", "log_key_operation_ru", "log_throttles", "log_query_stats")


class StandIn:
    def __init__(self, running: RunningEmulator, certs: Certificates) -> None:
        self.running, self.certs = running, certs
        self.url = running.url.rstrip("/")


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """The stand-in over a history of a few minutes that ended just before now (the processes run on the wall
    clock): an hour-aligned start, so minutes and PT5M intervals align."""
    certs = ensure_certificates(tmp_path_factory.mktemp("exact-tls"))
    clock = ManualClock(math.floor(time.time() / 3600) * 3600 - 3600)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    _hot_workload(engine, clock, minutes=4)
    for _ in range(3):
        engine.run_query("t", "c", QUERY, {"@k": "k1"}, ["k1"], ctx=CTX)
    running = start_in_thread(engine, app=MonitorApp(engine), tls=certs.server_context())
    yield StandIn(running, certs)
    running.stop()


def write_config(stand_in: StandIn, path: Path) -> Path:
    accounts = "".join(
        f'[[accounts]]\nname = "{name}"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n'
        f'monitor_resource = "{RESOURCE}"\n\n'
        for name in ("local", "other")
    )
    path.write_text(
        accounts + f'[monitor]\nendpoint = "{stand_in.url}"\nlogs_endpoint = "{stand_in.url}"\n'
        f'workspace_id = "{WORKSPACE}"\nca_bundle = "{stand_in.certs.ca}"\nbackfill_hours = 3\n'
        "logs_bin_minutes = 1\nlogs_lag_minutes = 0\n",
        encoding="utf-8",
    )
    return path


# `python -m ruscope ARGS` once GO exists: each process has imported what a run needs before the gate opens,
# so the runs start together (interpreter start-up alone differs by more than a whole run takes here)
GATED = """
import os, runpy, sys, time
import azure.monitor.query, azure.monitor.querymetrics, deltalake, pandas, pyarrow.json
import collectors.logs, collectors.metrics, ruscope.cli, store
go = sys.argv.pop(1)
while not os.path.exists(go):
    time.sleep(0.001)
runpy.run_module("ruscope", run_name="__main__", alter_sys=True)
"""


def run_at_once(commands: list[list[str]], gate: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start every `ruscope` command (its arguments) at the same moment and wait for all."""
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token", "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", GATED, str(gate), *c],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for c in commands
    ]
    time.sleep(4)  # every process is at the gate
    gate.touch()
    done = []
    for proc, command in zip(procs, commands, strict=True):
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


def counts_by_sql(store: Path, table: str) -> tuple[int, int]:
    """(rows, distinct keys) of `table`, by delta-rs' SQL over the Delta table itself."""
    key = ", ".join(f'"{c}"' for c in TABLES[table].key)
    sql = f"SELECT (SELECT count(*) FROM t) AS n, (SELECT count(*) FROM (SELECT {key} FROM t GROUP BY {key})) AS k"
    result = pa.table(QueryBuilder().register("t", DeltaTable(str(store / table))).execute(sql).read_all())
    return int(result["n"][0].as_py()), int(result["k"][0].as_py())


def counts_by_duckdb(store: Path, table: str) -> tuple[int, int]:
    files = [uri.removeprefix("file://") for uri in DeltaTable(str(store / table)).file_uris()]
    key = ", ".join(f'"{c}"' for c in TABLES[table].key)
    scan = f"read_parquet({files!r})"
    row = duckdb.sql(
        f"SELECT (SELECT count(*) FROM {scan}), (SELECT count(*) FROM (SELECT DISTINCT {key} FROM {scan}))"
    )
    n, k = row.fetchall()[0]
    return int(n), int(k)


@pytest.mark.parametrize("command", ["metrics", "logs"])
def test_two_collectors_at_once_and_one_for_another_account_store_each_point_once(
    stand_in: StandIn, tmp_path: Path, command: str
) -> None:
    cfg = write_config(stand_in, tmp_path / "ruscope.toml")
    store = tmp_path / "store"
    base = [command, "--config", str(cfg), "--store", str(store)]
    accounts = ["local", "local", "other"]
    done = run_at_once([[*base, "--account", account] for account in accounts], tmp_path / "go")
    for proc in done:
        assert proc.returncode == 0, proc.stdout + proc.stderr

    tables = ["metrics"] if command == "metrics" else [t for t in IDENTITY_TABLES if t.startswith("log_")]
    for table in tables:
        frame = read_table(store_location(store), table)
        key = [c for c in TABLES[table].key if c != "account"]
        local, other = frame[frame["account"] == "local"], frame[frame["account"] == "other"]
        assert len(local) > 0 and len(other) > 0, table
        assert not frame.duplicated(TABLES[table].key).any(), f"{table}: {frame.duplicated(TABLES[table].key).sum()}"
        # the account collected twice at once holds exactly the points of the account collected once
        assert sorted(map(tuple, local[key].astype(str).to_numpy())) == sorted(
            map(tuple, other[key].astype(str).to_numpy())
        )
        rows, keys = counts_by_sql(store, table)
        assert rows == keys == len(frame), table
        assert counts_by_duckdb(store, table) == (rows, keys), table
