"""The `ruscope` command. Thin: parse arguments, load config, call one function, map errors to exit codes.

Exit codes (DESIGN.md): 0 all good; 1 some items or an account failed (or a `--fail-on-error` cycle); 2 bad
config or usage; 3 ran, and alerts fired."""

from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from emulator.cli import emulator as emulator_command
from ruscope.advise_cli import advise as advise_command
from ruscope.launch import listen_problem, stop_on_signals, streamlit_flags
from wholefile import write_whole

if TYPE_CHECKING:
    from collectors.config import Account, Config
    from store import StoreLocation

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: `[store] uri` and `[alerts]` are shown, not eaten as markup
    help="RU-cost observability for Azure Cosmos DB.",
)

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE = 0, 1, 2


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    typer.echo(f"ruscope: {message}", err=True)
    raise typer.Exit(code)


@app.callback()
def _root() -> None:
    """RU-cost observability for Azure Cosmos DB: collectors, dashboard, advisor and a local emulator."""


app.command()(emulator_command)
app.command("advise")(advise_command)


@app.command()
def demo(
    dir: Annotated[Path, typer.Option("--dir", help="Where the demo keeps its store and emulator data.")] = Path(
        "ruscope-demo"
    ),
    port: Annotated[int, typer.Option(help="Port for the dashboard.")] = 8501,
    cosmos_port: Annotated[int, typer.Option(help="Port of the emulator's Cosmos DB API (0: a free one).")] = 8081,
    monitor_port: Annotated[int, typer.Option(help="HTTPS port of the monitor stand-in (0: a free one).")] = 8443,
    size: Annotated[str, typer.Option(help="full (a day and an hour) or small (2.5 hours, for tests).")] = "full",
    fresh: Annotated[bool, typer.Option("--fresh", help="Rebuild the data even if --dir holds it.")] = False,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = False,
) -> None:
    """Emulator, the AI-chat demo workload's day, every collector and the dashboard, until Ctrl+C."""
    from dataclasses import replace

    from ruscope.demo import DemoError, DemoSettings, run_demo

    settings = DemoSettings(dir, size, port=port, cosmos_port=cosmos_port, monitor_port=monitor_port, fresh=fresh)
    try:
        raise typer.Exit(run_demo(replace(settings, browser=not no_browser)))
    except DemoError as exc:
        _fail(str(exc), exc.exit_code)


DEFAULT_CONFIG = Path("ruscope.toml")
EXAMPLE_CONFIG = "workloads/chat/ruscope.toml"


def _load(config_path: Path) -> Config:
    """The validated config; a problem exits 2 with its location (collectors are imported lazily). A missing
    file is one line naming it and how to start one."""
    from collectors.config import ConfigError, load_config

    if not config_path.exists():
        given = "" if config_path == DEFAULT_CONFIG else " (--config)"
        _fail(
            f"{config_path}: no such file{given}; pass --config FILE, or start from the commented example: "
            f"cp {EXAMPLE_CONFIG} {config_path}"
        )
    try:
        return load_config(config_path)
    except ConfigError as exc:
        _fail(str(exc))


def _store_dir(store: str | None, config: Config | None) -> StoreLocation:
    """`--store`, else `[store] uri`, else `ruscope-data`, as the one location type every store function takes
    (exit 2 for a URI that cannot be a store, or a remote one whose credentials the environment lacks)."""
    from store import store_location

    uri = store if store is not None else config.store.uri if config is not None else None
    try:
        return store_location(uri)
    except ValueError as exc:
        _fail(str(exc))


def _error_line(line: str) -> None:
    typer.echo(f"ruscope: {line}", err=True)


def _accounts(config_path: Path, config: Config, account: str | None) -> list[Account]:
    """Every account of the config, or only the one `--account` names (exit 2 if none is called so)."""
    try:
        return [config.account(account)] if account is not None else config.all_accounts()
    except LookupError as exc:
        _fail(f"{config_path}: --account: {exc.args[0]}")


def _run(
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
        out=typer.echo,
        err=_error_line,
        options=Options(only=only),
    )
    return outcome.exit_code


STORE_HELP = "Store: a directory or an az:// / abfss:// URI (default: the config's store uri)."
CONFIG_HELP = "The ruscope.toml to use (default: ./ruscope.toml)."
FAIL_HELP = "With --every: stop after a cycle where something failed, and exit 1."
ACCOUNT_HELP = "Collect only the account with this name (default: every account)."


@app.command()
def replay(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    only: Annotated[str | None, typer.Option(help="Replay only the query with this name.")] = None,
    account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
) -> None:
    """Replay the configured read-only queries and record the RU of every request and partition."""
    cfg = _load(config)
    accounts = _accounts(config, cfg, account)
    known = list(dict.fromkeys(q.name for a in accounts for q in a.queries))
    if only is not None and only not in known:
        _fail(f"{config}: no query named {only!r} (known: {', '.join(known) or 'none'})")
    if not known:
        _fail(f"{config}: no [[queries]] to replay")
    # an account without the query (or any query) has nothing to replay: no empty run for it
    accounts = [a for a in accounts if any(only in (None, q.name) for q in a.queries)]
    raise typer.Exit(_run(["replay"], cfg, _store_dir(store, cfg), accounts, stop_on_signals(), only=only))


def _collector_command(name: str, summary: str) -> None:
    """Register `ruscope <name>`: one registered collector over the config's accounts (or `--account`)."""

    def command(
        config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
        account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
        store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    ) -> None:
        cfg = _load(config)
        accounts = _accounts(config, cfg, account)
        raise typer.Exit(_run([name], cfg, _store_dir(store, cfg), accounts, stop_on_signals()))

    command.__doc__ = summary
    app.command(name)(command)


_collector_command("storage", "Snapshot every container's storage per physical partition and its largest logical keys.")
_collector_command(
    "metrics",
    "Collect Azure Monitor metrics (normalized RU per partition, RU and requests by status) incrementally.",
)
_collector_command(
    "logs",
    "Collect Log Analytics diagnostic logs (RU per logical key, key sizes, 429s, query statistics) incrementally.",
)


@app.command()
def collect(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    every: Annotated[str | None, typer.Option(help="Repeat on this interval (e.g. 30s, 5m, 1h) until stopped.")] = None,
    account: Annotated[str | None, typer.Option(help=ACCOUNT_HELP)] = None,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    fail_on_error: Annotated[bool, typer.Option("--fail-on-error", help=FAIL_HELP)] = False,
) -> None:
    """Run every collector over every account once, or on a schedule until SIGINT/SIGTERM (which finish
    cleanly, exit 0); then compact the store when the config's store sets compact_after_collect, and evaluate
    the config's [alerts]: each alert is printed and the exit code is 3 when any fired (the highest of 1, 2
    and 3 wins). With --every, each cycle prints its start time (UTC) and when the next starts; a cycle where
    something failed is said in its lines and the schedule goes on, unless --fail-on-error: then the command
    stops after that cycle and exits 1."""
    from collectors.schedule import parse_interval

    cfg = _load(config)
    accounts = _accounts(config, cfg, account)
    try:
        interval = parse_interval(every) if every is not None else None
    except ValueError as exc:
        _fail(f"--every: {exc}")
    stop, where = stop_on_signals(), _store_dir(store, cfg)
    worst = EXIT_OK
    while not stop.is_set():
        started = dt.datetime.now(dt.UTC)
        if interval is not None:
            typer.echo(f"cycle at {_when(started)}")
        code, failed = _cycle(cfg, where, accounts, stop)
        worst = max(worst, code)
        if interval is None:
            break
        if failed and fail_on_error and not stop.is_set():
            _fail(f"the cycle at {_when(started)} failed; stopping (--fail-on-error)", EXIT_PARTIAL)
        next_at = max(started + dt.timedelta(seconds=interval), dt.datetime.now(dt.UTC))
        typer.echo(f"next cycle at {_when(next_at)}")
        if stop.wait((next_at - dt.datetime.now(dt.UTC)).total_seconds()):
            break
    raise typer.Exit(EXIT_OK if stop.is_set() else worst)


def _when(moment: dt.datetime) -> str:
    """A cycle's time as a log line shows it: UTC, to the second."""
    return moment.strftime("%Y-%m-%d %H:%M:%SZ")


def _cycle(cfg: Config, where: Path | str, accounts: list[Account], stop: threading.Event) -> tuple[int, bool]:
    """One pass of `collect`: every collector, then compaction and the alerts; its exit code, and whether
    something failed (exit 1: an item, an account, the compaction), which alerts (exit 3) would hide."""
    from collectors.alerts import after_collect
    from collectors.fleet import compact_after_collect
    from collectors.registry import collectors

    code = _run([chosen.name for chosen in collectors()], cfg, where, accounts, stop)
    if stop.is_set():
        return code, code == EXIT_PARTIAL
    code = max(code, compact_after_collect(cfg, where, out=typer.echo, err=_error_line))
    failed = code == EXIT_PARTIAL
    fired = after_collect(
        cfg, where, now=dt.datetime.now(dt.UTC), out=typer.echo, err=_error_line, accounts=[a.name for a in accounts]
    )
    return max(code, fired), failed or fired == EXIT_PARTIAL


REPORT_FORMATS = ("csv", "xlsx")


@app.command()
def report(
    config: Annotated[Path, typer.Option("--config", help="The ruscope.toml whose store to report on.")],
    out: Annotated[Path, typer.Option("--out", help="The file to write (replaced atomically).")],
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    format: Annotated[str, typer.Option("--format", help="csv (default) or xlsx (a sheet per section).")] = "csv",
    since: Annotated[str | None, typer.Option(help="Only the last span of data, e.g. 30d, 24h (default: all).")] = None,
) -> None:
    """Write the capacity-review report of the store (analysis/capacity.py documents its columns and rules).

    Exit 0 written; 1 the store has no data (in the time range): nothing written, the line names the store;
    2 bad config or usage."""
    from analysis.capacity import REPORT_TABLES, build_capacity_report, report_summary
    from analysis.report import to_csv_bytes, to_xlsx_bytes
    from store import read_table

    cfg = _load(config)
    if format not in REPORT_FORMATS:
        _fail(f"--format: {format!r} is not one of {', '.join(REPORT_FORMATS)}")
    start = _report_since(since)
    target = _store_dir(store, cfg)
    try:
        frames = {name: read_table(target, name, since=start, columns=cols) for name, cols in REPORT_TABLES.items()}
    except (OSError, ValueError) as exc:
        _fail(f"{target}: cannot read the store: {exc}")
    built = build_capacity_report(**frames)
    if built.empty:
        when = f" in the last {since}" if since else ""
        _fail(f"{target}: no data to report{when}; collect some first: ruscope collect --config {config}", EXIT_PARTIAL)
    data = to_csv_bytes(built) if format == "csv" else to_xlsx_bytes(built)
    _write_file(out, data)
    typer.echo(f"{out}: {report_summary(built)}")


def _report_since(text: str | None) -> dt.datetime | None:
    """`--since 30d` (days) or any `--every` interval (`24h`, `90m`), as the instant that long before now."""
    from collectors.schedule import parse_interval

    if text is None:
        return None
    try:
        days = text.strip().lower().removesuffix("d")
        seconds = int(days) * 86400 if days.isdigit() and text.strip().lower().endswith("d") else parse_interval(text)
    except ValueError as exc:
        _fail(f"--since: {exc}; or days, e.g. 30d")
    return dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)


def _write_file(path: Path, data: bytes) -> None:
    """`data` to `path` through a temp file beside it and a rename: a reader never sees half a report."""
    try:
        write_whole(path, data)
    except OSError as exc:
        _fail(f"{path}: cannot write: {exc.strerror or exc}")


@app.command()
def dashboard(
    config: Annotated[Path | None, typer.Option("--config", help="Show the store of this ruscope.toml.")] = None,
    store: Annotated[str | None, typer.Option(help="Store: a directory or an az:// / abfss:// URI.")] = None,
    port: Annotated[int, typer.Option(help="Port for the dashboard.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
) -> None:
    """Open the dashboard (Streamlit) on a store: --store, else the config's [store] uri, else ruscope-data."""
    app_file = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"  # installed beside this package
    target = _store_dir(store, _load(config) if config is not None else None)
    shown = str(target.local.resolve()) if target.local is not None else target.uri  # Streamlit runs elsewhere
    env = {**os.environ, "RUSCOPE_STORE": shown}
    problem = listen_problem(host, port)
    if problem:
        _fail(problem)
    command = [sys.executable, "-m", "streamlit", "run", str(app_file), *streamlit_flags(host, port)]
    os.execve(sys.executable, command, env)  # not a child: Ctrl+C and SIGTERM reach Streamlit itself


@app.command("compact")
def compact_command(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help="Store: a directory or an az:// / abfss:// URI.")] = None,
) -> None:
    """Compact every store table (a few files per day, not one per run), checkpoint it and vacuum old files."""
    from store import StoreLayoutError, compact

    cfg = _load(config)
    target = _store_dir(store, cfg)
    try:
        reports = compact(target, retention_hours=cfg.store.vacuum_retention_hours)
    except (StoreLayoutError, ValueError) as exc:
        _fail(str(exc))
    for report in reports:
        typer.echo(report.line())
    if not reports:
        typer.echo(f"{target}: no table to compact")


store_app = typer.Typer(no_args_is_help=True, help="Store maintenance: converting a store of an older layout.")
app.add_typer(store_app, name="store")


@store_app.command("migrate")
def migrate_command(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help="Store: a directory (the old layout was local only).")] = None,
) -> None:
    """Convert a store of Parquet parts (before Delta Lake) to Delta tables, in place; safe to re-run after a
    kill. Exit 1 if some file could not be read (it is left in place and named)."""
    from store import migrate

    cfg = _load(config)
    target = _store_dir(store, cfg)
    try:
        report = migrate(target, warn=_error_line)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(report.line(target))
    raise typer.Exit(EXIT_PARTIAL if report.skipped else EXIT_OK)


def main() -> None:
    """Console entry point."""
    logging.getLogger("azure").addHandler(logging.NullHandler())  # the SDKs' failure logs: ours are one line
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(EXIT_OK)
    except RuntimeError as exc:  # a store of the layout before Delta Lake: one line naming the command
        from store import StoreLayoutError

        if not isinstance(exc, StoreLayoutError):
            raise
        typer.echo(f"ruscope: {exc}", err=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
