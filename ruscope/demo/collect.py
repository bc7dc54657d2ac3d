"""The demo's account served as a user's would be, and every collector run against it.

The engine serves the Cosmos DB API over HTTP and the Azure Monitor stand-in over TLS (its own CA, kept in
the demo directory), from threads of the demo's process; the collectors are the real ones, through the
unmodified SDKs, with the config of `workloads/chat/ruscope.toml` (endpoints, CA and store filled in).
"""

from __future__ import annotations

import datetime as dt
import os
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import workloads.chat
from collectors.alerts import after_collect
from collectors.config import Config, ConfigError, parse_config
from collectors.registry import Options, collector, run_collector
from collectors.run import RunSummary
from collectors.sample import SampleError
from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import RunningEmulator, start_in_thread
from store import store_location

EXAMPLE_CONFIG = Path(workloads.chat.__file__).resolve().parent / "ruscope.toml"
USAGE = 2  # the exit code of a usage problem
MONITOR_TOKEN = ("RUSCOPE_MONITOR_TOKEN", "local-token")  # the stand-in accepts any bearer token
REPLAY_FROM_S = 45  # the second of a history minute the collectors start at (the busy second is 30.5)


class DemoError(RuntimeError):
    """A step of the demo failed: one line for the user, and the exit code (DESIGN.md: 1 a step failed,
    2 bad usage, such as a port in use or an unknown size)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class DemoClock(SimulatedClock):
    """The simulated clock of the history, then (after `follow_wall_clock`) real time: the emulator keeps
    serving after the day was replayed, and its requests must land at now, not at the history's end.

    While the collectors run inside the history, simulated time moves only by the waits they make or are
    told of: the replay's pacing (`sleep`) and the SDK's sleep before retrying a 429 (`waited`, by its
    Retry-After), so a throttled replay's retry lands in the partition's next second as in production,
    however slow the machine (a clock flowing at wall speed and stopped at the minute's end answered 429
    to every retry once a loaded machine took longer than the minute had left). The time the machine
    takes to serve and read is not simulated time, as the history's own writes land at their set times.
    """

    def __init__(self, start: float) -> None:
        super().__init__(start)
        self._live = False

    def __call__(self) -> float:
        return max(self._now, time.time()) if self._live else self._now

    @property
    def now(self) -> float:
        return self()

    def sleep(self, seconds: float) -> None:
        """A collector's own wait: simulated time moves by it at once (live: real time passes)."""
        if self._live:
            time.sleep(seconds)
        else:
            self.advance(seconds)

    def waited(self, seconds: float) -> None:
        """Another's wait that really happens (the SDK's Retry-After sleep): simulated time moves by it."""
        if not self._live:
            self.advance(seconds)

    def follow_wall_clock(self) -> None:
        self._live = True


@dataclass
class Servers:
    cosmos: RunningEmulator
    monitor: RunningEmulator
    ca: Path

    @property
    def monitor_url(self) -> str:
        return self.monitor.url.rstrip("/")

    def stop(self) -> None:
        self.monitor.stop()
        self.cosmos.stop()


def start_servers(engine: Engine, tls_dir: Path, *, host: str, cosmos_port: int, monitor_port: int) -> Servers:
    """The Cosmos DB API on http://host:cosmos_port/ and the monitor stand-in on https://host:monitor_port
    (0: a free port); a port in use is a DemoError naming the option to change it."""
    certs = ensure_certificates(tls_dir)
    try:
        cosmos = start_in_thread(engine, host=host, port=cosmos_port)
    except OSError as exc:
        raise DemoError(_port_problem(host, cosmos_port, "--cosmos-port", exc), USAGE) from None
    try:
        monitor = start_in_thread(
            engine, host=host, port=monitor_port, app=MonitorApp(engine), tls=certs.server_context()
        )
    except OSError as exc:
        cosmos.stop()
        raise DemoError(_port_problem(host, monitor_port, "--monitor-port", exc), USAGE) from None
    return Servers(cosmos, monitor, certs.ca)


def _port_problem(host: str, port: int, option: str, exc: OSError) -> str:
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}; pick another port with {option} (e.g. {option} {port + 1})"


def demo_config_text(servers: Servers, store: Path, month: str, backfill_hours: float) -> str:
    """The example config's text with the demo's endpoints, CA, store, month and metrics window (the
    history and the load before it): the file the demo writes for the user and collects with."""
    replacements = {
        'endpoint = "http://127.0.0.1:8081/"': f'endpoint = "{servers.cosmos.url}"',
        'logs_endpoint = "https://127.0.0.1:8443"': f'logs_endpoint = "{servers.monitor_url}"',  # before endpoint
        '\nendpoint = "https://127.0.0.1:8443"': f'\nendpoint = "{servers.monitor_url}"',
        'ca_bundle = "emulator-data/monitor-tls/ca.pem"': f"ca_bundle = '{servers.ca.resolve()}'",
        'uri = "ruscope-data"': f"uri = '{store.resolve()}'",
        "backfill_hours = 26": f"backfill_hours = {backfill_hours:g}",
        "{month}": month,
    }
    text = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    for old, new in replacements.items():
        if old not in text:
            raise DemoError(f"{EXAMPLE_CONFIG}: the demo no longer finds {old!r} in it")
        text = text.replace(old, new)
    return text


def demo_config(text: str, path: Path) -> Config:
    """The config of `demo_config_text` (a mistake in the example file is a DemoError naming the line)."""
    try:
        return parse_config(tomllib.loads(text), path)
    except (ValueError, ConfigError) as exc:
        raise DemoError(f"{EXAMPLE_CONFIG}: {exc}") from None


def collect(name: str, config: Config, store: Path, clock: SimulatedClock) -> RunSummary:
    """One run of a collector (the well-known key; the stand-in's token) into the demo store; its waits move
    the simulated clock (`DemoClock`)."""
    os.environ.setdefault(*MONITOR_TOKEN)
    sleep, waited = (clock.sleep, clock.waited) if isinstance(clock, DemoClock) else (clock.advance, clock.advance)
    lines: list[str] = []
    summary = run_collector(
        collector(name),
        config,
        store=store_location(store),
        clock=clock,
        out=lines.append,
        err=lines.append,
        options=Options(credential=WELL_KNOWN_KEY),
        sleep=sleep,
        waited=waited,
    )
    if summary.exit_code != 0 and not throttled_only(summary):
        raise DemoError(f"`ruscope {name}` failed on the demo account: {' | '.join(lines[-3:])}")
    return summary


def collect_in_minute(config: Config, store: Path, clock: DemoClock, minute_start: float) -> tuple[RunSummary, float]:
    """The replay and storage collectors in what is left of a history minute after its traffic, from a fresh
    second after the busy one (so the replay is not throttled by the minute's reads); returns the replay's
    summary and how far past the minute's last second its waits took the clock (0: it fit). A minute whose
    traffic ran late leaves a few seconds only (a replay then runs into the next minute), and the next
    minute's writes due meanwhile land right after it, never before it (the clock only moves forward): they
    stay in their minute, so every minute's totals are as they were, unless the overrun reaches the next
    minute's busy second (`workloads.chat.history.BUSY_SECOND`), which the build then says."""
    clock.set(max(minute_start + REPLAY_FROM_S, clock.now // 1 + 1))
    replayed = collect("replay", config, store, clock)
    collect("storage", config, store, clock)
    return replayed, max(0.0, clock.now - (minute_start + 59))


def throttled_only(summary: RunSummary) -> bool:
    """A run whose only failures are executions still throttled after the SDK's retries: on the demo's
    deliberately hot partition that is the demo working (the failed executions are stored as such, and the
    Throttling page shows them), and a loaded machine makes it more likely, not a reason to stop."""
    return summary.failed > 0 and summary.failed == summary.throttled_out and not summary.ended_by


def evaluate_alerts(config: Config, store: Path, at: float) -> list[str]:
    """The config's [alerts] at `at`, as `ruscope collect` evaluates them after a pass: the lines printed."""
    lines: list[str] = []
    when = dt.datetime.fromtimestamp(at, dt.UTC)
    after_collect(config, store_location(store), now=when, out=lines.append, err=lines.append)
    return lines


def advise_demo(config: Config, store: Path, sample_path: Path, at: float) -> str:
    """The config's `[advisor]` on its live container, as `ruscope advise --from-account` does: one line
    naming the advice (an advisor failure is a DemoError, as a collector's is)."""
    from advisor.pipeline import AdviseError
    from ruscope.advise import advise_live

    if config.advisor is None:
        return "advise: no [advisor] section in the config"
    when = dt.datetime.fromtimestamp(at, dt.UTC)
    try:
        advice, run_id = advise_live(
            config,
            config.advisor,
            store=store_location(store),
            sample_path=sample_path,
            now=when,
            credential=WELL_KNOWN_KEY,
        )
    except (AdviseError, ValueError, SampleError) as exc:
        raise DemoError(f"`ruscope advise` failed on the demo account: {exc}") from None
    best = advice.verdicts[0].design.name
    return f"ruscope advise: {best} ranks first of {len(advice.verdicts)} partition-key designs (run {run_id})"
