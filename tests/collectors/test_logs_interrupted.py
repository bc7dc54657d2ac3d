"""`ruscope logs` cut short while recording an answer (kill -9, a full disk) loses no row: the next run asks
again from the last window recorded whole and stores what a clean run stores. Real processes over real HTTPS
against the Log Analytics stand-in, on a history of many keys in four containers, so that one answer (grouped
by container, not ordered by time) takes a while to record."""

from __future__ import annotations

import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from emulator.engine.facade import Engine, ThroughputSpec
from emulator.history.aggregates import History, HistoryConfig
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from store.location import PENDING
from tests.collectors.test_exactly_once import ROOT, StandIn, write_config
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX

CONTAINERS, KEYS, MINUTES = 4, 150, 15
COLUMNS = ["time", "container", "pkrange_id", "partition_key", "request_charge"]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """Each minute, each of KEYS keys in each of CONTAINERS containers is read once: an answer of
    CONTAINERS * KEYS * MINUTES rows, ending a few minutes before now (the processes run on the wall clock)."""
    certs = ensure_certificates(tmp_path_factory.mktemp("interrupted-tls"))
    clock = ManualClock(math.floor(time.time() / 3600) * 3600 - 3600)
    engine = Engine(clock=clock, history=History(HistoryConfig(top_keys=KEYS)))
    engine.create_database(CTX, {"id": "t"})
    for c in range(CONTAINERS):
        body = {"id": f"c{c}", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
        engine.create_container(CTX, "t", body, ThroughputSpec(10_000))
        for k in range(KEYS):
            engine.create_item(CTX, "t", f"c{c}", {"id": "doc", "k": f"k{k}"}, [f"k{k}"])
    for _ in range(MINUTES):
        clock.advance(60)
        for c in range(CONTAINERS):
            for k in range(KEYS):
                engine.read_item(CTX, "t", f"c{c}", "doc", [f"k{k}"])
    running = start_in_thread(engine, app=MonitorApp(engine), tls=certs.server_context())
    yield StandIn(running, certs)
    running.stop()


def logs_command(cfg: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "ruscope", "logs", "--config", str(cfg), "--store", str(store), "--account", "local"]


ENV = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token", "PYTHONPATH": str(ROOT)}


def run_logs(cfg: Path, store: Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        logs_command(cfg, store), cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=180, **kwargs
    )  # type: ignore[call-overload]


def key_ru(store: Path) -> pd.DataFrame:
    frame = read_table(store_location(store), "log_key_ru", columns=COLUMNS)
    return frame.sort_values(COLUMNS[:4]).reset_index(drop=True).astype(object)


@pytest.fixture(scope="module")
def clean(stand_in: StandIn, tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """What one uninterrupted run stores."""
    folder = tmp_path_factory.mktemp("clean")
    done = run_logs(write_config(stand_in, folder / "ruscope.toml"), folder / "store")
    assert done.returncode == 0, done.stdout + done.stderr
    frame = key_ru(folder / "store")
    assert len(frame) == CONTAINERS * KEYS * (MINUTES + 1)  # the creates, then MINUTES of reads
    return frame


def kill_while_recording(cfg: Path, store: Path, rows: int) -> int:
    """Start a run and kill -9 it once its segment holds some, not all, of the first answer's rows (retried
    when the kill came too late); the rows the segment held."""
    for _ in range(5):
        proc = subprocess.Popen(logs_command(cfg, store), cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        held = 0
        while proc.poll() is None and time.monotonic() < deadline:
            segments = list((store / PENDING).glob("*/log_key_ru.jsonl"))
            if segments and segments[0].stat().st_size > 1_000_000:  # past the first containers, all their bins
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                held = segments[0].read_bytes().count(b"\n")
                break
            time.sleep(0.0005)
        if 0 < held < rows:
            return held
        proc.kill()
        proc.wait()
        shutil.rmtree(store, ignore_errors=True)  # the kill came too late: start afresh
    raise AssertionError("no kill landed inside the answer")


def test_a_run_killed_while_recording_an_answer_is_completed_by_the_next(
    stand_in: StandIn, clean: pd.DataFrame, tmp_path: Path
) -> None:
    cfg, store = write_config(stand_in, tmp_path / "ruscope.toml"), tmp_path / "store"
    held = kill_while_recording(cfg, store, len(clean))
    done = run_logs(cfg, store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"(rows: {held} log_key_ru)" in done.stdout, done.stdout  # the recovery says what it stored
    pd.testing.assert_frame_equal(key_ru(store), clean)
    assert f"t logs key_ru: {len(clean) - held} new row(s), {held} already stored" in done.stdout, done.stdout


def test_a_run_out_of_disk_while_recording_an_answer_is_completed_by_the_next(
    stand_in: StandIn, clean: pd.DataFrame, tmp_path: Path
) -> None:
    cfg, store = write_config(stand_in, tmp_path / "ruscope.toml"), tmp_path / "store"
    limit = 600_000  # bytes a file may grow to: a third of the answer's segment, and its Parquet with room

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    full = run_logs(cfg, store, preexec_fn=small_disk)
    assert full.returncode == 1 and "File too large" in full.stdout + full.stderr, full.stdout + full.stderr
    stored = len(read_table(store_location(store), "log_key_ru"))
    assert 0 < stored < len(clean)  # part of the answer reached the store
    done = run_logs(cfg, store)
    assert done.returncode == 0, done.stdout + done.stderr
    pd.testing.assert_frame_equal(key_ru(store), clean)
