"""The collecting commands: `ruscope replay`, `storage`, `metrics`, `logs` (one registered collector each)
and `ruscope collect` (all of them, once or on a schedule, then compaction and the alerts)."""

from __future__ import annotations

import datetime as dt
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ruscope.launch import stop_on_signals
from ruscope.options import (
    ACCOUNT_HELP,
    CONFIG_HELP,
    DEFAULT_CONFIG,
    EXIT_OK,
    EXIT_PARTIAL,
    STORE_HELP,
    accounts_of,
    echo,
    error_line,
    fail,
    load,
    store_dir,
)

if TYPE_CHECKING:
    from collectors.config import Account, Config
    from store import StoreLocation

FAIL_HELP = "With --every: stop after a cycle where something failed, and exit 1."
COLLECTOR_COMMANDS = {
    "storage": "Snapshot every container's storage per physical partition and its largest logical keys.",
    "metrics": "Collect Azure Monitor metrics (normalized RU per partition, RU and requests by status) incrementally.",
    "logs": "Collect Log Analytics diagnostic logs (RU per logical key, key sizes, 429s, query statistics) incrementally.",
}


def run_collectors(
    names: list[str],
    config: Config,
    store: StoreLocation,
    accounts: list[Account],
    stop: threading.Event,
    only: str | None = None,
) -> int:
    """One run of each registered collector named, per account (`[fleet] parallelism` accounts at a time):
    per-item lines, then each run's closing line; the worst account's exit code."""
    from collectors.fleet import collect_fleet
    from collectors.registry import Options, collector

    outcome = collect_fleet(
        [collector(name) for name in names],
        config,
        store=store,
        accounts=accounts,
        stop=stop,
        progress=sys.stderr.isatty(),
        out=echo,
        err=error_line,
        options=Options(only=only),
    )
    return outcome.exit_code


def replay(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    only: Annotated[str | None, typer.Option(help="Replay only the query with this name.")] = None,
    account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
) -> None:
    """Replay the configured read-only queries and record the RU of every request and partition."""
    cfg = load(config)
    accounts = accounts_of(config, cfg, account)
    known = list(dict.fromkeys(q.name for a in accounts for q in a.queries))
    if only is not None and only not in known:
        fail(f"{config}: no query named {only!r} (known: {', '.join(known) or 'none'})")
    if not known:
        fail(f"{config}: no [[queries]] to replay")
    # an account without the query (or any query) has nothing to replay: no empty run for it
    accounts = [a for a in accounts if any(only in (None, q.name) for q in a.queries)]
    raise typer.Exit(run_collectors(["replay"], cfg, store_dir(store, cfg), accounts, stop_on_signals(), only=only))


def collector_command(name: str, summary: str) -> Callable[..., None]:
    """`ruscope <name>`: one registered collector over the config's accounts (or `--account`)."""

    def command(
        config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
        account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
        store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    ) -> None:
        cfg = load(config)
        accounts = accounts_of(config, cfg, account)
        raise typer.Exit(run_collectors([name], cfg, store_dir(store, cfg), accounts, stop_on_signals()))

    command.__doc__ = summary
    return command


def collect(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    every: Annotated[str | None, typer.Option(help="Repeat on this interval (e.g. 30s, 5m, 1h) until stopped.")] = None,
    account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    fail_on_error: Annotated[bool, typer.Option("--fail-on-error", help=FAIL_HELP)] = False,
) -> None:
    """Run every collector over every account once, or on a schedule until SIGINT/SIGTERM (which finish
    cleanly, exit 0); then roll the new metrics up (unless [store] rollup_after_collect = false; with
    compact_after_collect, compact the store, rollup included), and evaluate
    the config's [alerts]: each alert is printed and the exit code is 3 when any fired (the highest of 1, 2
    and 3 wins). With --every, each cycle prints its start time (UTC) and when the next starts; a cycle where
    something failed is said in its lines and the schedule goes on, unless --fail-on-error: then the command
    stops after that cycle and exits 1."""
    from collectors.schedule import parse_interval

    cfg = load(config)
    accounts = accounts_of(config, cfg, account)
    try:
        interval = parse_interval(every) if every is not None else None
    except ValueError as exc:
        fail(f"--every: {exc}")
    stop, where = stop_on_signals(), store_dir(store, cfg)
    worst = EXIT_OK
    while not stop.is_set():
        started = dt.datetime.now(dt.UTC)
        if interval is not None:
            echo(f"cycle at {_when(started)}")
        code, failed = _cycle(cfg, where, accounts, stop)
        worst = max(worst, code)
        if interval is None:
            break
        if failed and fail_on_error and not stop.is_set():
            fail(f"the cycle at {_when(started)} failed; stopping (--fail-on-error)", EXIT_PARTIAL)
        next_at = max(started + dt.timedelta(seconds=interval), dt.datetime.now(dt.UTC))
        echo(f"next cycle at {_when(next_at)}")
        if stop.wait((next_at - dt.datetime.now(dt.UTC)).total_seconds()):
            break
    raise typer.Exit(EXIT_OK if stop.is_set() else worst)


def _when(moment: dt.datetime) -> str:
    """A cycle's time as a log line shows it: UTC, to the second."""
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _cycle(cfg: Config, where: StoreLocation, accounts: list[Account], stop: threading.Event) -> tuple[int, bool]:
    """One pass of `collect`: every collector, then the rollup or compaction and the alerts; its exit code, and whether
    something failed (exit 1: an item, an account, the compaction), which alerts (exit 3) would hide."""
    from collectors.alerts import after_collect
    from collectors.fleet import maintain_after_collect
    from collectors.registry import collectors

    code = run_collectors([chosen.name for chosen in collectors()], cfg, where, accounts, stop)
    if stop.is_set():
        return code, code == EXIT_PARTIAL
    code = max(code, maintain_after_collect(cfg, where, out=echo, err=error_line))
    failed = code == EXIT_PARTIAL
    fired = after_collect(
        cfg, where, now=dt.datetime.now(dt.UTC), out=echo, err=error_line, accounts=[a.name for a in accounts]
    )
    return max(code, fired), failed or fired == EXIT_PARTIAL
