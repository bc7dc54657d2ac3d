"""`ruscope demo`: the emulator, the AI-chat workload's day, every collector and the dashboard, one command.

Steps (`run_demo`): start the emulator (HTTP) and the monitor stand-in (TLS) on the demo's engine; unless
the demo directory already holds data of this generator version, seed and size (`demo.json`), load the
older conversations, drive the day through the engine on a simulated clock (`workloads.chat.history`) with the
replay and storage collectors at several moments, then the metrics and logs collectors and the alerts
(`ruscope.demo.collect`); then the clock follows real time, the dashboard starts as a child process on the
demo store, and everything runs until Ctrl+C or SIGTERM, which stop every process the demo started.

The directory holds `store/` (the ruscope store), `emulator/` (the engine's journal and metrics history,
so a rerun serves the same account), `tls/` (the stand-in's CA), `dashboard.log` and `demo.json`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import sys
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from emulator.durability.journal import Journal
from emulator.engine.accounting import Accounting
from emulator.engine.facade import Engine
from emulator.history.aggregates import History
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import HISTORY_FILE, settle_heap
from ruscope.demo.collect import (
    USAGE,
    DemoClock,
    DemoError,
    Servers,
    advise_demo,
    collect,
    collect_in_minute,
    demo_config,
    demo_config_text,
    evaluate_alerts,
    start_servers,
)
from ruscope.demo.dashboard import start_dashboard, stop_process, wait_until_healthy
from ruscope.launch import listen_problem
from workloads.chat import generator as gen
from workloads.chat import history

Line = Callable[[str], None]
LOAD_LEAD_S = 4 * 3600  # the older conversations are loaded this long before the history starts
LOOK_FIRST = (
    "Overview: chat/query-logs, the /tenantId container, has the hot partition (contoso, half the traffic)",
    "Hot partitions: its pkrange at 100% normalized RU, and the split when its RU/s went 800 -> 2,000",
    "Query costs: admin-global-search fans out to every partition; session-conversation reads one",
    "Throttling: the 429s of the hot partition; Storage: query-logs-by-status, the poor /status key",
    "Advisor: /tenantId against the synthetic tenant-month key and /tenantId,/sessionId on the query logs",
)


@dataclass(frozen=True)
class DemoSettings:
    dir: Path = Path("ruscope-demo")
    size: str = "full"
    seed: int = gen.DEFAULT_SEED
    host: str = "127.0.0.1"
    port: int = 8501
    cosmos_port: int = 8081
    monitor_port: int = 8443
    fresh: bool = False
    browser: bool = True


@dataclass(frozen=True)
class DemoPaths:
    root: Path

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def emulator(self) -> Path:
        return self.root / "emulator"

    @property
    def tls(self) -> Path:
        return self.root / "tls"

    @property
    def config(self) -> Path:
        return self.root / "ruscope.toml"

    @property
    def marker(self) -> Path:
        return self.root / "demo.json"


@dataclass(frozen=True)
class Built:
    """What the data build did (for the tests and the benchmark)."""

    report: history.HistoryReport
    alerts: list[str]
    start: float
    end: float


def marker_for(settings: DemoSettings) -> dict[str, object]:
    return {"generator_version": gen.GENERATOR_VERSION, "seed": settings.seed, "size": settings.size}


def reusable(paths: DemoPaths, settings: DemoSettings) -> bool:
    """Whether the directory holds a complete build of this generator version, seed and size."""
    try:
        saved = json.loads(paths.marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    wanted = marker_for(settings)
    return all(saved.get(k) == v for k, v in wanted.items()) and paths.store.is_dir() and paths.emulator.is_dir()


def clear(paths: DemoPaths) -> None:
    """Remove what a build writes (only the demo's own entries: the directory may be the user's)."""
    paths.marker.unlink(missing_ok=True)
    for folder in (paths.store, paths.emulator):
        shutil.rmtree(folder, ignore_errors=True)


# The request log holds the whole simulated day: `ruscope logs` asks the stand-in for every request's
# ActivityId over the day (query_ru), which it refuses once the bounded log has dropped some
# (`emulator.engine.accounting`). Measured at the end of a full build: 466,094 records, 309 MB (the
# process's peak RSS 856 MB); the in-process default, 256 MiB, dropped the first 8 hours and the demo died.
DEMO_REQUEST_LOG_BYTES = 1024 * 1024 * 1024


def open_engine(paths: DemoPaths, clock: Callable[[], float]) -> Engine:
    """The demo's engine, durable in `emulator/` (journal and metrics history) so a rerun serves it again, its
    request log large enough for the whole day (`DEMO_REQUEST_LOG_BYTES`)."""
    journal = Journal(paths.emulator)
    engine = Engine(
        journal=journal,
        history=History.open(paths.emulator / HISTORY_FILE),
        clock=clock,
        limits=history.DEMO_LIMITS,
        accounting=Accounting(max_bytes=DEMO_REQUEST_LOG_BYTES),
    )
    journal.compact(engine.snapshot_entries())
    return engine


def build(engine: Engine, clock: DemoClock, paths: DemoPaths, settings: DemoSettings, start: float, out: Line) -> Built:
    """Load, drive the day from `start` with the replay and storage collectors inside it, then metrics,
    logs, alerts; the marker last (a build cut short is rebuilt by the next run)."""
    from tqdm import tqdm

    size = gen.SIZES[settings.size]
    config = demo_config(paths.config.read_text(encoding="utf-8"), paths.config)
    history.create_containers(engine)
    documents = history.load_backfill(engine, clock, settings.seed, size, start)
    out(f"loaded {documents:,} documents of older conversations ({size.tenants} tenants)")
    scenario = history.Scenario.for_size(size)
    bar = tqdm(total=size.history_minutes, unit="min", desc="history", file=sys.stderr, mininterval=0.5)

    def on_minute(minute: int) -> None:
        bar.update(1)
        if minute in scenario.replay_at:
            replayed, overrun_s = collect_in_minute(config, paths.store, clock, start + minute * 60)
            if overrun_s >= history.BUSY_SECOND:  # a few seconds only move the next minute's first writes
                bar.write(
                    f"replay at minute {minute}: its pacing and retries ran {overrun_s:.0f} s into the next minute, "
                    "past its busy second, which now comes after the replay"
                )
            if replayed.throttled_out:
                bar.write(
                    f"replay at minute {minute}: {replayed.throttled_out} execution(s) still throttled after the "
                    "SDK's retries on the hot partition; stored as failed executions (see Throttling)"
                )

    try:
        report = history.drive_history(engine, clock, settings.seed, size, start, on_minute=on_minute)
    finally:
        bar.close()
    out(
        f"{report.minutes} minutes of traffic in {report.wall_seconds:.1f} s ({report.minutes_per_second:.0f} "
        f"simulated minutes per second): {report.writes:,} writes, {report.reads:,} reads, {report.throttled:,} "
        f"throttled; query-logs split from {report.ranges_before_split} to {report.ranges_after_split} partitions"
    )
    clock.set(clock.now + 60)  # the last minute is complete
    for name in ("storage", "metrics", "logs"):
        began = time.perf_counter()
        collect(name, config, paths.store, clock)
        out(f"ruscope {name}: done in {time.perf_counter() - began:.1f} s")
    alerts = evaluate_alerts(config, paths.store, clock.now)
    out(f"alerts: {len(alerts)} line(s)" + "".join(f"\n  {line}" for line in alerts))
    # the day is over: the advisor samples the live account as a user would, in real time, so the SDK's
    # retries of a throttled read wait real seconds into the partition's next budget (on the simulated clock,
    # which nothing moves here, every retry landed in the same throttled second and the full demo died)
    clock.follow_wall_clock()
    began = time.perf_counter()
    line = advise_demo(config, paths.store, settings.dir / "advisor-sample.jsonl", clock.now)
    out(f"{line} in {time.perf_counter() - began:.1f} s")
    paths.marker.write_text(json.dumps({**marker_for(settings), "start": start, "end": clock.now}), encoding="utf-8")
    return Built(report, alerts, start, clock.now)


def write_config(paths: DemoPaths, servers: Servers, settings: DemoSettings, start: float) -> None:
    """`DIR/ruscope.toml`: the example config pointing at this run's emulator and store, for the build and
    for the user (`ruscope collect --config DIR/ruscope.toml` against the running demo)."""
    size = gen.SIZES[settings.size]
    month = dt.datetime.fromtimestamp(start, dt.UTC).strftime("%Y-%m")  # the history's month, in its queries
    text = demo_config_text(servers, paths.store, month, backfill_hours=size.history_minutes / 60 + 5)
    header = (
        "# Written by `ruscope demo` for the emulator it runs (this run's ports): collect more from it with\n"
        f"#   COSMOS_KEY='{WELL_KNOWN_KEY}' RUSCOPE_MONITOR_TOKEN=local-token ruscope collect --config {paths.config}\n"
    )
    paths.config.write_text(header + text, encoding="utf-8")


def history_start(size: gen.Size, now: float) -> float:
    """The history ends two minutes before the current minute, so the last collectors read finished minutes."""
    return (now // 60) * 60 - size.history_minutes * 60 - 180


def prepare(settings: DemoSettings, out: Line) -> tuple[Engine, DemoClock, Servers, Built | None]:
    """The engine serving, with data: built (the returned Built) or reused from an earlier run (None)."""
    paths = DemoPaths(settings.dir)
    settings.dir.mkdir(parents=True, exist_ok=True)
    reuse = not settings.fresh and reusable(paths, settings)
    if not reuse:
        clear(paths)
    size = gen.SIZES[settings.size]
    start = float(json.loads(paths.marker.read_text())["start"]) if reuse else history_start(size, time.time())
    clock = DemoClock(time.time() if reuse else start - LOAD_LEAD_S)
    if reuse:
        clock.follow_wall_clock()
        out(f"reusing the demo data in {settings.dir} (--fresh rebuilds it)")
    engine = open_engine(paths, clock)
    try:
        servers = start_servers(
            engine, paths.tls, host=settings.host, cosmos_port=settings.cosmos_port, monitor_port=settings.monitor_port
        )
    except DemoError:
        engine.close()
        raise
    out(f"emulator on {servers.cosmos.url} (key: {WELL_KNOWN_KEY}); monitor stand-in on {servers.monitor_url}")
    write_config(paths, servers, settings, start)
    try:
        built = None if reuse else build(engine, clock, paths, settings, start, out)
    except BaseException:
        servers.stop()
        engine.close()
        raise
    clock.follow_wall_clock()
    return engine, clock, servers, built


def run_demo(settings: DemoSettings, out: Line = print) -> int:
    """The whole demo until Ctrl+C/SIGTERM (exit 0); a failed step is a DemoError for the caller."""
    if settings.size not in gen.SIZES:
        raise DemoError(f"--size: {settings.size!r} is not one of {', '.join(gen.SIZES)}", USAGE)
    problem = listen_problem(settings.host, settings.port)
    if problem:
        raise DemoError(problem, USAGE)
    for signum in (signal.SIGINT, signal.SIGTERM):  # both unwind like Ctrl+C, so the cleanup runs (SIGINT
        signal.signal(signum, signal.default_int_handler)  # too: a background job starts with it ignored)
    began = time.perf_counter()
    out(f"ruscope demo: {settings.size} AI-chat workload in {settings.dir.resolve()}")
    engine, _clock, servers, _built = prepare(settings, out)
    settle_heap()  # the loaded day is long-lived: no full collection stalls the emulator the user now drives
    dashboard = None
    try:
        paths = DemoPaths(settings.dir)
        dashboard = start_dashboard(
            paths.store, host=settings.host, port=settings.port, log=settings.dir / "dashboard.log"
        )
        url = f"http://{settings.host}:{settings.port}"
        if not wait_until_healthy(url, dashboard):
            raise DemoError(f"the dashboard did not start; see {settings.dir / 'dashboard.log'}")
        out(f"dashboard ready in {time.perf_counter() - began:.0f} s: open {url}  (Ctrl+C stops everything)")
        out("look first at:" + "".join(f"\n  - {line}" for line in LOOK_FIRST))
        out(f"the emulator keeps serving; collect from it with the config in {paths.config} (its first lines say how)")
        if settings.browser and _has_display():
            webbrowser.open(url)
        while dashboard.poll() is None:
            time.sleep(0.5)
        raise DemoError(f"the dashboard stopped (exit {dashboard.returncode}); see {settings.dir / 'dashboard.log'}")
    except KeyboardInterrupt:
        out("ruscope demo: stopping")
        return 0
    finally:
        if dashboard is not None:
            stop_process(dashboard)
        servers.stop()
        engine.close()


def _has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


__all__ = ["Built", "DemoError", "DemoPaths", "DemoSettings", "prepare", "run_demo"]
