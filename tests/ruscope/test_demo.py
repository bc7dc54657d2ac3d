"""`ruscope demo` at the small size: the store it builds shows what the dashboard must show (a hot pkrange
at 100% with 429s, fan-out queries, the split, throttling, alerts), a rerun reuses it, and the real command
serves the dashboard and stops every process it started on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from ruscope.demo.collect import REPLAY_FROM_S
from ruscope.demo.run import DEMO_REQUEST_LOG_BYTES, Built, DemoPaths, DemoSettings, prepare
from store import read_table, store_location
from workloads.chat.history import BUSY_SECOND


@dataclass(frozen=True)
class SmallDemo:
    settings: DemoSettings
    built: Built
    began: float  # wall time before the build
    missing_until: float | None  # the request log's: None when it held every request of the day
    log_cap: int


def _settings(directory: Path, **changes: object) -> DemoSettings:
    return DemoSettings(**{**DemoSettings(directory, "small", cosmos_port=0, monitor_port=0).__dict__, **changes})


@pytest.fixture(scope="module")
def small_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmallDemo]:
    settings = _settings(tmp_path_factory.mktemp("demo"))
    began = time.time()
    engine, _clock, servers, built = prepare(settings, lambda line: None)
    missing, cap = engine.accounting.missing_until, engine.accounting.max_bytes
    servers.stop()
    engine.close()
    assert built is not None
    yield SmallDemo(settings, built, began, missing, cap)


def _table(demo: SmallDemo, name: str) -> pd.DataFrame:
    return read_table(store_location(DemoPaths(demo.settings.dir).store), name)


def test_no_minute_consumed_more_than_the_provisioned_ru_s(small_demo: SmallDemo) -> None:
    """What Azure would show: a container's per-minute average RU/s stays within its provisioned RU/s (each
    partition serves at most its share each second, ru-cost-model.md P4). The older conversations' bulk
    import, written with throttling off, is paced to that too: unpaced it averaged 417 RU/s on 400."""
    metrics = _table(small_demo, "metrics")
    consumed = metrics[metrics.metric.eq("TotalRequestUnits")].groupby(["container", "time"])["value"].sum() / 60
    provisioned = metrics[metrics.metric.eq("ProvisionedThroughput")].groupby("container")["value"].max()
    over = consumed / consumed.index.get_level_values("container").map(provisioned).to_numpy()
    assert not over.empty and over.max() <= 1.0, over.sort_values().tail(3)


def test_the_hot_pkrange_reaches_100_percent_and_throttles(small_demo: SmallDemo) -> None:
    metrics = _table(small_demo, "metrics")
    logs = metrics[metrics.container == "query-logs"]
    normalized = logs[logs.metric == "NormalizedRUConsumption"]
    assert normalized.value.max() == pytest.approx(100.0)
    hot_minutes = normalized[normalized.value >= 99].groupby("pkrange_id").size()
    assert hot_minutes.max() >= 10  # a period, not a blip
    requests = logs[(logs.metric == "TotalRequests") & (logs.status_code == "429")]
    assert requests.value.sum() > 100


def test_fan_out_and_single_partition_queries_were_replayed(small_demo: SmallDemo) -> None:
    executions = _table(small_demo, "executions")
    routing = executions.groupby("query_name").routing_observed.first()
    assert routing["admin-global-search"] == "fan-out"
    assert routing["session-conversation"] == "single"
    assert routing["tenant-month-synthetic"] == "single"
    assert executions[executions.query_name == "session-conversation"]["items"].min() > 0
    assert executions.run_id.nunique() >= 5  # replayed across the day
    assert (executions.status == "ok").all(), executions[executions.status != "ok"][["query_name", "error"]]


def test_every_replay_ran_paced_after_its_minute_busy_second(small_demo: SmallDemo) -> None:
    """The pacing's waits move the demo's clock: each replay starts after its minute's busy second and
    spreads over seconds; a minute whose traffic ran late (a loaded machine) may take it a few seconds into
    the next minute, never up to that minute's busy second, so no minute's reads move
    (`ruscope.demo.collect.collect_in_minute`)."""
    requests = _table(small_demo, "requests")
    seconds = requests["time"].map(lambda t: t.timestamp()) - small_demo.built.start
    runs = seconds.groupby(requests["run_id"]).agg(["min", "max"])
    assert len(runs) >= 5 and (runs["min"] % 60 >= REPLAY_FROM_S).all()
    assert (runs["max"] < (runs["min"] // 60 + 1) * 60 + BUSY_SECOND).all()
    assert (runs["max"] > runs["min"]).all()  # paced: not one instant


def test_the_split_is_in_the_partitions_lineage(small_demo: SmallDemo) -> None:
    partitions = _table(small_demo, "partitions")
    logs = partitions[partitions.container == "query-logs"]
    assert (logs.parents != "").any()
    assert logs.pkrange_id.nunique() == 4 + 2  # four, then one split into two


def test_alerts_fired_for_the_hot_partition_and_the_429s(small_demo: SmallDemo) -> None:
    rules = set(_table(small_demo, "alerts").rule)
    assert {"hot_partition", "throttle_rate"} <= rules
    assert any("query-logs" in line for line in small_demo.built.alerts)


def test_the_query_logs_were_advised_on(small_demo: SmallDemo) -> None:
    """The demo's [advisor]: the live query-logs sampled, the guides' candidates and the proposals ranked."""
    designs = _table(small_demo, "advice_designs").sort_values("rank")
    assert set(designs.container) == {"query-logs"} and designs.run_id.nunique() == 1
    assert {"/tenantId", "tenant-month", "/tenantId,/sessionId"} <= set(designs.design)
    tenant = designs.set_index("design").loc["/tenantId"]
    assert (
        "write distribution" in tenant["flags"] and tenant["hottest_key_share_now"] > 0.4
    )  # contoso, half the traffic
    synthetic = designs.set_index("design").loc["tenant-month"]
    assert '"paths": ["/partitionKey"]' in synthetic["partition_key"]  # the config's synthetic_property
    assert set(_table(small_demo, "advice_queries")["query"]) >= {"session-logs-without-key", "admin-global-search"}


def test_the_advisor_samples_the_live_account_in_real_time(small_demo: SmallDemo) -> None:
    """After the simulated day the clock follows the wall: the advisor's reads (and the SDK's retries of a
    throttled one) run in real seconds, not in a simulated second nothing moves (the full demo died there);
    the request log held the whole day, so the stand-in answered `ruscope logs`' per-request query."""
    designs = _table(small_demo, "advice_designs")
    assert pd.to_datetime(designs["time"], utc=True).min() >= pd.Timestamp(small_demo.began, unit="s", tz="UTC")
    assert small_demo.built.start + 60 * 60 < small_demo.began  # the history itself is simulated, in the past
    assert small_demo.missing_until is None and small_demo.log_cap == DEMO_REQUEST_LOG_BYTES


PAGES = ("overview", "query_costs", "hot_partitions", "throttling", "advisor")  # what the demo points to


def test_every_dashboard_page_renders_the_demo_store(small_demo: SmallDemo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages the demo points to, on its store: no exception; the Overview shows a range at 100%."""
    import streamlit as st

    from tests.dashboard.apptest import new_app

    monkeypatch.setenv("RUSCOPE_STORE", str(DemoPaths(small_demo.settings.dir).store))
    for page in PAGES:
        st.cache_data.clear()
        app = new_app(timeout=60).switch_page(f"views/{page}.py").run()
        assert not app.exception, (page, [e.message for e in app.exception])
        if page == "overview":
            hottest = [m.value for m in app.metric if m.label == "Hottest range"]
            assert "100%" in hottest


def test_a_rerun_reuses_the_data_and_fresh_rebuilds_it(small_demo: SmallDemo, tmp_path: Path) -> None:
    engine, _clock, servers, built = prepare(small_demo.settings, lambda line: None)
    try:
        assert built is None  # reused: the engine came back from its journal
        assert engine.container("chat", "messages").docs > 500
    finally:
        servers.stop()
        engine.close()
    other = _settings(small_demo.settings.dir, seed=small_demo.settings.seed + 1)
    from ruscope.demo.run import reusable

    assert not reusable(DemoPaths(other.dir), other)  # another seed: rebuilt


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _start_demo(directory: Path, port: int) -> tuple[subprocess.Popen[str], list[str]]:
    """`ruscope demo` in a real process, read up to its "dashboard ready" line (the lines so far)."""
    command = [sys.executable, "-m", "ruscope", "demo", "--no-browser", "--dir", str(directory)]
    command += ["--size", "small", "--port", str(port), "--cosmos-port", "0", "--monitor-port", "0"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen(
        command, cwd=directory.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines = []
    for line in process.stdout:  # type: ignore[union-attr]
        lines.append(line)
        if "dashboard ready" in line:
            break
    return process, lines


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads child processes from /proc")
def test_the_command_serves_the_dashboard_and_a_signal_stops_every_child(tmp_path: Path) -> None:
    """SIGTERM stops the first run; the second reuses its data and stops on SIGINT (Ctrl+C)."""
    port = _free_port()
    for run, stop in enumerate((signal.SIGTERM, signal.SIGINT)):
        process, lines = _start_demo(tmp_path / "demo", port)
        try:
            assert any("dashboard ready" in line for line in lines), "".join(lines) + process.stderr.read()  # type: ignore[union-attr]
            assert any("reusing the demo data" in line for line in lines) == (run == 1)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as answer:
                assert answer.read() == b"ok"
            children = _children(process.pid)
            assert children  # the dashboard
            process.send_signal(stop)
            assert process.wait(30) == 0
            stderr = process.stderr.read()  # type: ignore[union-attr]
            assert "Traceback" not in stderr and "Traceback" not in (tmp_path / "demo" / "dashboard.log").read_text()
            time.sleep(0.2)
            assert not [pid for pid in children if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)]
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_the_demo_goes_on_when_its_replay_only_stayed_throttled() -> None:
    """The demo's hot partition may keep its own replay throttled past the SDK's retries on a loaded machine:
    those executions are stored as failed, and the demo goes on; any other failure still stops it."""
    from collectors.run import RunSummary
    from ruscope.demo.collect import throttled_only

    assert throttled_only(RunSummary("r", items=9, failed=2, throttled_out=2))
    assert not throttled_only(RunSummary("r", items=9, failed=2, throttled_out=1))  # another failure too
    assert not throttled_only(RunSummary("r", items=9, failed=1, throttled_out=1, ended_by="budget"))
    assert not throttled_only(RunSummary("r", items=9))  # nothing failed: nothing to excuse
