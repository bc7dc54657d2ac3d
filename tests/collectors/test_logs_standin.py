"""`ruscope logs` end to end: the real `LogsQueryClient` over real HTTPS against the emulator's Log Analytics
stand-in (which computes its rows from the engine's accounting). Expected values come from the engine's raw
records, summed here independently of both the stand-in and the collector."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from azure.monitor.query import LogsQueryClient

from collectors.config import Config, parse_config
from collectors.registry import collector, run_collector
from cosmoscore.monitor.logs import AZURE_DIAGNOSTICS, CATEGORIES, MODES, QUERY_STATS_CATEGORY
from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import Certificates, ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from store import read_table, store_location
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, START, _hot_workload, _key_on, _reads, _setup
from tests.emulator.monitor.test_metrics import RESOURCE, FixedToken

WORKSPACE = "11111111-2222-3333-4444-555555555555"
QUERY = "SELECT * FROM c WHERE c.k = @k"
ROOT = Path(__file__).resolve().parents[2]


class StandIn:
    def __init__(
        self,
        running: RunningEmulator,
        app: MonitorApp,
        engine: Engine,
        clock: ManualClock,
        certs: Certificates,
        hot: str,
    ):
        self.running, self.app, self.engine, self.clock, self.certs, self.hot = running, app, engine, clock, certs, hot
        self.url = running.url.rstrip("/")


@pytest.fixture
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    certs = ensure_certificates(tmp_path_factory.mktemp("logs-standin-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, _, _ = _hot_workload(engine, clock, minutes=2)
    for _ in range(3):
        engine.run_query("t", "c", QUERY, {"@k": "k1"}, ["k1"], ctx=CTX)
    clock.advance(120)  # the workload's last minute is complete
    app = MonitorApp(engine)
    running = start_in_thread(engine, app=app, tls=certs.server_context())
    yield StandIn(running, app, engine, clock, certs, hot)
    running.stop()


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")


def config(stand_in: StandIn, **monitor: Any) -> Config:
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t", "monitor_resource": RESOURCE}
    section = {
        "endpoint": stand_in.url,
        "logs_endpoint": stand_in.url,
        "workspace_id": WORKSPACE,
        "ca_bundle": str(stand_in.certs.ca),
        "logs_bin_minutes": 1,
        "logs_lag_minutes": 0,  # the stand-in has no ingestion delay
        **monitor,
    }
    return parse_config({"accounts": [account], "monitor": section}, Path("logs.toml"))


def collect(stand_in: StandIn, store: Path, cfg: Config, name: str = "logs") -> tuple[int, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    summary = run_collector(
        collector(name), cfg, store=store_location(store), clock=stand_in.clock, out=out.append, err=err.append
    )
    return summary.exit_code, out, err


def _records(engine: Engine) -> list[Any]:
    return [r for r in engine.accounting.records() if r.container == "c"]


def _ru_by_key(engine: Engine) -> dict[str, float]:
    ru: dict[str, float] = defaultdict(float)
    for r in _records(engine):
        if r.partition_key:
            ru[r.partition_key] += r.request_charge
    return dict(ru)


@pytest.mark.parametrize("mode", ["resource-specific", "azure-diagnostics"])
def test_hot_key_first_by_ru_and_429s_on_the_hot_range(stand_in: StandIn, tmp_path: Path, mode: str) -> None:
    engine = stand_in.engine
    code, out, err = collect(stand_in, tmp_path, config(stand_in, logs_mode=mode))
    assert (code, err) == (0, []), err

    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert set(frame["account"]) == {"local"} and set(frame["container"]) == {"c"} and not frame["partial"].any()
    totals = frame.groupby("partition_key")["request_charge"].sum().sort_values(ascending=False)
    hottest = frame[frame["partition_key"] == totals.index[0]]
    assert set(hottest["pkrange_id"]) == {stand_in.hot}
    assert totals.to_dict() == pytest.approx(_ru_by_key(engine))
    assert "requests" not in frame  # a row of the log is a key's second, not a request: nothing to count
    seconds: dict[tuple[str, int], float] = defaultdict(float)
    for r in _records(engine):
        if r.partition_key:
            seconds[(r.partition_key, int(r.time // 1))] += r.request_charge
    peaks: dict[tuple[str, pd.Timestamp], float] = defaultdict(float)
    for (key, second), ru in seconds.items():
        at = (key, pd.Timestamp(second // 60 * 60, unit="s", tz="UTC"))
        peaks[at] = max(peaks[at], ru)
    stored = {(k, t): p for k, t, p in frame[["partition_key", "time", "peak_request_charge"]].itertuples(index=False)}
    assert stored == pytest.approx(dict(peaks))  # each bin's busiest second of each key, from the raw records

    throttles = read_table(store_location(tmp_path), "log_throttles")
    assert set(throttles.loc[throttles["throttled"] > 0, "partition_id"]) == {stand_in.hot}
    assert int(throttles["throttled"].sum()) == sum(1 for r in _records(engine) if r.status == 429) > 0
    # every request per partition, operation and minute, and the 429s among them, from the raw records
    counted: dict[tuple[str, str, pd.Timestamp], list[int]] = defaultdict(lambda: [0, 0])
    for r in _records(engine):
        cell = counted[(r.pkrange_id, r.operation, pd.Timestamp(int(r.time) // 60 * 60, unit="s", tz="UTC"))]
        cell[0] += 1
        cell[1] += r.status == 429
    columns = ["partition_id", "operation_name", "time", "requests", "throttled"]
    stored_counts = {(p, o, t): [n, k] for p, o, t, n, k in throttles[columns].itertuples(index=False)}
    assert stored_counts == dict(counted)

    stats = read_table(store_location(tmp_path), "log_query_stats")
    assert set(stats["query_text"]) == {QUERY}
    assert int(stats["queries"].sum()) == sum(1 for r in _records(engine) if r.operation == "Query") > 0

    sizes = read_table(store_location(tmp_path), "log_key_sizes")
    assert not sizes.empty and set(sizes["container"]) == {"c"}
    assert (sizes["time"] == pd.Timestamp(stand_in.clock.now, unit="s", tz="UTC")).all()


@pytest.mark.parametrize("mode", MODES)
def test_a_category_not_sent_is_a_warning_where_the_metrics_count_its_requests(
    stand_in: StandIn, tmp_path: Path, mode: str
) -> None:
    """The workspace gets no QueryRuntimeStatistics (the diagnostic setting lacks it), while TotalRequests,
    collected first as `ruscope collect` does, counts the workload's queries: one warning line per query of
    that category (query_stats, and query_ru which joins its rows), naming the query, the mode and the
    category; the exit code stays 0 (the other queries found their rows)."""
    cfg = config(stand_in, logs_mode=mode)
    assert collect(stand_in, tmp_path, cfg, "metrics")[0] == 0
    stand_in.app.logs.categories = frozenset(CATEGORIES) - {QUERY_STATS_CATEGORY}
    code, _, err = collect(stand_in, tmp_path, cfg)
    queries = sum(1 for r in _records(stand_in.engine) if r.operation == "Query")
    assert code == 0 and len(err) == 2, err
    for line, name in zip(err, ("query_stats", "query_ru"), strict=True):
        assert line.startswith(f"warning: database 't' logs query '{name}'"), err
        assert f"({mode} mode)" in line and QUERY_STATS_CATEGORY in line and f"{queries} request(s)" in line

    stand_in.app.logs.categories = frozenset(CATEGORIES)  # every category sent: rows, and no warning
    assert collect(stand_in, tmp_path / "all", cfg, "metrics")[0] == 0
    assert collect(stand_in, tmp_path / "all", cfg)[::2] == (0, [])


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_key_is_served_but_never_stored_so_it_cannot_head_the_ranking(
    stand_in: StandIn, tmp_path: Path, mode: str
) -> None:
    """Queries across keys have no single key: the stand-in logs their RU with an empty PartitionKey, as
    the service does (azure-monitor.md §7b R7, R22), and in their minute that row outweighs every key; the
    collector's `isnotempty` keeps it out of the store."""
    engine, clock = stand_in.engine, stand_in.clock
    minute = (clock.now // 60 + 1) * 60
    clock.now = minute + 1
    for _ in range(30):
        engine.run_query("t", "c", "SELECT * FROM c", ctx=CTX)
    _reads(engine, _key_on(engine, stand_in.hot), 1)
    clock.advance(120)
    keyless = sum(r.request_charge for r in _records(engine) if r.pkrange_id and not r.partition_key)
    keyed = sum(r.request_charge for r in _records(engine) if r.partition_key and r.time >= minute)
    assert keyless > keyed > 0

    client = LogsQueryClient(FixedToken(), endpoint=stand_in.url, connection_verify=str(stand_in.certs.ca))
    table, key, charge = ("CDBPartitionKeyRUConsumption", "PartitionKey", "RequestCharge")
    if mode == AZURE_DIAGNOSTICS:
        table, key, charge = (
            "AzureDiagnostics | where Category == 'PartitionKeyRUConsumption'",
            "partitionKey_s",
            "requestCharge_s",
        )
    kql = f"{table} | where isempty({key}) | summarize RU = sum(todouble({charge}))"
    (answer,) = client.query_workspace(WORKSPACE, kql, timespan=None).tables
    assert answer.rows[0][0] == pytest.approx(keyless)

    code, _, err = collect(stand_in, tmp_path, config(stand_in, logs_mode=mode))
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert not frame.empty and not (frame["partition_key"] == "").any()
    assert frame.groupby("partition_key")["request_charge"].sum().to_dict() == pytest.approx(_ru_by_key(engine))


def test_incremental_twice_stores_no_duplicate_and_leaves_no_gap(stand_in: StandIn, tmp_path: Path) -> None:
    engine, clock = stand_in.engine, stand_in.clock
    cfg = config(stand_in)
    assert collect(stand_in, tmp_path, cfg)[0] == 0
    rows = len(read_table(store_location(tmp_path), "log_key_ru"))

    code, out, err = collect(stand_in, tmp_path, cfg)  # nothing new: nothing written
    assert (code, err) == (0, [])
    assert any("logs key_ru: 0 new row(s)" in line for line in out), out
    assert len(read_table(store_location(tmp_path), "log_key_ru")) == rows

    key = _key_on(engine, stand_in.hot)
    for _ in range(120):  # two more minutes of the hot key
        _reads(engine, key, 230)
        clock.advance(1.0)
    clock.advance(60)
    code, out, err = collect(stand_in, tmp_path, cfg)
    assert (code, err) == (0, [])
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert len(frame) > rows
    assert not frame.duplicated(["time", "pkrange_id", "partition_key"]).any()
    totals = frame.groupby("partition_key")["request_charge"].sum()
    assert totals.to_dict() == pytest.approx(_ru_by_key(engine))  # every minute once: no gap, no repeat
    assert len(frame.drop_duplicates(["run_id"])) == 2  # the second run wrote nothing


def test_without_a_token_one_line_and_nothing_stored(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "")
    code, _, err = collect(stand_in, tmp_path, config(stand_in))
    assert code == 1 and len(err) == 1 and "401" in err[0] and "Log Analytics Reader" in err[0], err
    assert read_table(store_location(tmp_path), "log_key_ru").empty


def test_rows_of_another_account_in_the_workspace_are_not_collected(stand_in: StandIn, tmp_path: Path) -> None:
    cfg = config(stand_in)
    other = cfg.model_copy(
        update={"accounts": [cfg.accounts[0].model_copy(update={"monitor_resource": RESOURCE + "-other"})]}
    )
    code, _, err = collect(stand_in, tmp_path, other)
    assert (code, err) == (0, [])
    assert (
        read_table(store_location(tmp_path), "log_key_ru").empty
        and read_table(store_location(tmp_path), "log_throttles").empty
    )


@pytest.mark.parametrize("mode", MODES)
def test_the_account_is_matched_whatever_the_case_of_its_resource_id(
    stand_in: StandIn, tmp_path: Path, mode: str
) -> None:
    """ARM resource ids are case-insensitive and AzureDiagnostics upper-cases Resource: the account filter is
    `=~` (azure-monitor.md §7b R23), so a resource id written `LocalHost` finds the rows of `localhost`."""
    cfg = config(stand_in, logs_mode=mode)
    prefix, name = RESOURCE.rsplit("/", 1)
    mixed = cfg.accounts[0].model_copy(update={"monitor_resource": f"{prefix}/{name.title()}"})
    code, _, err = collect(stand_in, tmp_path, cfg.model_copy(update={"accounts": [mixed]}))
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert name.title() != name and frame["request_charge"].sum() == pytest.approx(
        sum(_ru_by_key(stand_in.engine).values())
    )


def test_cli_logs_exits_0_with_its_lines(stand_in: StandIn, tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n\n'
        f'[monitor]\nendpoint = "{stand_in.url}"\nlogs_endpoint = "{stand_in.url}"\n'
        f'workspace_id = "{WORKSPACE}"\nca_bundle = "{stand_in.certs.ca}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token"}
    command = [sys.executable, "-m", "ruscope", "logs", "--config", str(path), "--store", str(tmp_path / "s")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "t logs key_ru: " in done.stdout and "6 logs query(s), 0 failed" in done.stdout, done.stdout
    # the subprocess runs on the wall clock, before the stand-in's simulated history: nothing to store yet
    assert "local-token" not in done.stdout + done.stderr
