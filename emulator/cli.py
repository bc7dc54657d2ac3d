"""`ruscope emulator` / `python -m emulator`: run the local Cosmos DB until Ctrl+C.

Defined here, not in the `ruscope` command, so the emulator runs on its own without the collectors;
`ruscope.cli` registers this same function as its `emulator` command.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer


def _fail(message: str) -> NoReturn:
    typer.echo(f"ruscope: {message}", err=True)
    raise typer.Exit(2)


KEY_HELP = (
    "Master key (default: the well-known emulator key). Prefer the RUSCOPE_EMULATOR_KEY environment variable: "
    "a key given on the command line is visible to every user of the machine (ps, /proc)."
)


def emulator(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8081,
    key: Annotated[str | None, typer.Option(help=KEY_HELP, envvar="RUSCOPE_EMULATOR_KEY", show_default=False)] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Keep data here across restarts.")] = None,
    consistency: Annotated[str, typer.Option(help="Default consistency level of the account.")] = "Session",
    fsync: Annotated[bool, typer.Option(help="fsync every acknowledged write (slower; power-loss safe).")] = False,
    no_throttling: Annotated[bool, typer.Option("--no-throttling", help="Never answer 429.")] = False,
    monitor_port: Annotated[
        int, typer.Option(help="HTTPS port of the local Azure Monitor stand-in (metrics); 0 disables it.")
    ] = 8443,
    tls: Annotated[
        bool, typer.Option("--tls", help="Serve the Cosmos DB endpoint over HTTPS, with the monitor stand-in's CA.")
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Another host name clients reach the emulator by (the Host header is checked).", show_default=False
        ),
    ] = None,
    repair: Annotated[
        bool, typer.Option("--repair", help="Repair --data-dir (a backup is kept; losses are reported), then exit.")
    ] = False,
    history_checkpoint_s: Annotated[
        float,
        typer.Option(
            min=0.1,
            help="How often the metrics history is saved to --data-dir when it changed: a crash loses at most "
            "this much of it.",
        ),
    ] = 60.0,
    compact_journal_mb: Annotated[
        float,
        typer.Option(min=0.001, help="Fold the journal into the snapshot while running once it is this large (MB)."),
    ] = 16.0,
    request_log_mb: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="Memory for the newest request records (MB): the request log, which log queries naming "
            "ActivityId read (older requests keep their per-minute history only); metrics come from that history.",
        ),
    ] = 16.0,
    region: Annotated[
        list[str] | None,
        typer.Option(
            help="A region of the account, for the monitor stand-in's metrics (repeat it for several; the first "
            "serves the requests, each holds a copy of the data and the provisioned RU/s) [default: local].",
            show_default=False,
        ),
    ] = None,
    page_budget_ms: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            show_default=False,
            help="Compute time a query page may take before it answers with a continuation, so other clients "
            "are served meanwhile [default: 50, emulator/engine/query/budget.py].",
        ),
    ] = None,
) -> None:
    """Run the local Cosmos DB emulator (http://HOST:PORT/, the azure-cosmos SDK talks to it unmodified).
    It holds the terminal: its endpoint and key are printed once it listens; Ctrl+C stops it.
    The key is read from RUSCOPE_EMULATOR_KEY when set (better than --key, which other users can see)."""
    from emulator.rest.auth import WELL_KNOWN_KEY
    from emulator.rest.server import open_engine

    if repair:
        _repair(data_dir)
        return
    for line in safety_warnings(host, key, _on_command_line(ctx, "key")):
        typer.echo(line, err=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    regions = tuple(r.strip() for r in region or ())
    if len(set(regions)) != len(regions) or not all(regions):
        _fail(f"--region: each region once, by name; got {', '.join(repr(r) for r in regions)}")
    try:
        settings = engine_settings(consistency, not no_throttling, request_log_mb, page_budget_ms)
        engine = open_engine(data_dir, fsync=fsync, settle=True, **settings)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    options = _Options(
        host,
        port,
        key or WELL_KNOWN_KEY,
        monitor_port,
        data_dir,
        tls,
        tuple(allow_host or ()),
        history_checkpoint_s,
        int(compact_journal_mb * 1024 * 1024),
        regions,
    )
    stop = _stop_on_a_signal()  # before the ready lines: a SIGTERM right after them still saves on the way out
    running, ca = _listen(engine, options)
    monitor = (running[1].url, ca) if len(running) > 1 and ca is not None else None
    for line in ready_lines(running[0].url, key, data_dir, monitor, tls_ca=ca if tls else None):
        typer.echo(line)
    try:
        while not stop.wait(1.0):
            pass
    finally:
        for server in reversed(running):
            server.stop()
        try:
            engine.close()  # the journal is compacted on the way out
        except OSError as exc:  # datadir.SaveFailed: names the file; the journal still holds every write
            _fail(str(exc))


def engine_settings(
    consistency: str, throttling: bool, request_log_mb: float, page_budget_ms: float | None
) -> dict[str, Any]:
    """The served engine's settings from the command line (`Engine`'s keyword arguments)."""
    from emulator.engine.accounting import Accounting
    from emulator.engine.query.budget import QuerySettings

    return {
        "consistency": consistency,
        "throttling": throttling,
        "accounting": Accounting(max_bytes=int(request_log_mb * 1024 * 1024)),
        "query_settings": QuerySettings() if page_budget_ms is None else QuerySettings(page_budget_ms=page_budget_ms),
    }


def safety_warnings(host: str, key: str | None, key_on_command_line: bool) -> list[str]:
    """Warnings before listening: the public well-known key beyond loopback; a key visible in `ps`."""
    lines = []
    if key is None and not is_loopback(host):
        lines.append(
            f"ruscope: warning: listening on {host} with the well-known emulator key (public): anyone who can reach "
            "this port can read and write every database. Set RUSCOPE_EMULATOR_KEY to a key of your own."
        )
    if key_on_command_line:
        lines.append(
            "ruscope: warning: --key on the command line is visible to other users (ps); "
            "set RUSCOPE_EMULATOR_KEY instead."
        )
    return lines


def _on_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether the option was given on the command line (not by its environment variable or default). Read
    by name: typer vendors its own click, whose `ParameterSource` is not `click.core.ParameterSource`."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP literal, IPv6 in brackets or not) is this machine only."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _repair(data_dir: Path | None) -> None:
    """`--repair`: the data directory repaired by `emulator.repair.repair` (a backup kept), its report printed;
    exit 1 when something was lost (as `python -m emulator.repair`), 2 when there is no such directory."""
    from emulator.repair import repair

    if data_dir is None:
        _fail("--repair needs --data-dir (the directory to repair)")
    try:
        report = repair(data_dir)
    except (FileNotFoundError, NotADirectoryError) as exc:
        _fail(str(exc))
    typer.echo(str(report))
    if report.lost or report.notes:
        raise typer.Exit(1)


def ready_lines(
    url: str,
    key: str | None,
    data_dir: Path | None,
    monitor: tuple[str, Path] | None = None,
    *,
    tls_ca: Path | None = None,
) -> list[str]:
    """What a user needs once the emulator listens: the endpoint, the key (the public well-known one, so
    it is printed; a key of the user's own is never echoed) and how to hand both to ruscope."""
    from emulator.rest.auth import WELL_KNOWN_KEY

    lines = [f"ruscope emulator listening on {url} (data: {data_dir or 'in memory'}); Ctrl+C stops it"]
    if tls_ca is not None:
        lines.append(f"  over HTTPS: trust its CA with connection_verify='{tls_ca}' (or REQUESTS_CA_BUNDLE)")
    if key is None:
        lines.append(f"key (the well-known emulator key, public): {WELL_KNOWN_KEY}")
        lines.append(f"  for ruscope in another terminal: export COSMOS_KEY='{WELL_KNOWN_KEY}'")
    else:
        lines.append("key: the one given by RUSCOPE_EMULATOR_KEY / --key (export it as COSMOS_KEY for ruscope)")
    if monitor is not None:
        lines.append(
            f"Azure Monitor stand-in on {monitor[0].rstrip('/')} (metrics, and Log Analytics under /v1); "
            f"trust its CA: {monitor[1]}"
        )
    return lines


@dataclass(frozen=True)
class _Options:
    """How to listen: the endpoint, the monitor stand-in, TLS and the host names served."""

    host: str
    port: int
    key: str
    monitor_port: int
    data_dir: Path | None
    tls: bool
    allowed_hosts: tuple[str, ...]
    checkpoint_s: float = 60.0  # the metrics history saved this often (by the Cosmos DB endpoint's server)
    compact_at: int = 16 * 1024 * 1024  # the journal compacted while running once this large
    regions: tuple[str, ...] = ()  # the account's regions for the stand-in's metrics (default: one, "local")


def _listen(engine: Any, o: _Options) -> tuple[list[Any], Path | None]:
    """The emulator (and the monitor stand-in) accepting requests; a port in use exits 2 naming the option
    to change, before anything was announced."""
    from emulator.rest.server import start_in_thread
    from emulator.rest.transport import TransportLimits

    limits = TransportLimits(allowed_hosts=o.allowed_hosts)
    certs = _certificates(o.data_dir) if o.tls or o.monitor_port else None
    running: list[Any] = []
    try:
        tls = certs.server_context() if o.tls and certs is not None else None
        running.append(
            _start(
                start_in_thread,
                engine,
                o.host,
                o.port,
                "--port",
                key=o.key,
                tls=tls,
                limits=limits,
                checkpoint_s=o.checkpoint_s,
                compact_at=o.compact_at,
            )
        )
        if o.monitor_port and certs is not None:
            from emulator.monitor.app import MonitorApp, transport_limits

            context = certs.server_context()
            app = MonitorApp(engine, regions=o.regions or None)
            running.append(
                _start(
                    start_in_thread,
                    engine,
                    o.host,
                    o.monitor_port,
                    "--monitor-port",
                    app=app,
                    tls=context,
                    limits=transport_limits(limits),
                    checkpoint_s=None,  # the endpoint's server saves the history
                )
            )
    except BaseException:
        for server in running:
            server.stop()
        engine.close()
        raise
    return running, certs.ca if certs is not None else None


def _certificates(data_dir: Path | None) -> Any:
    """The local CA and server certificate shared by the HTTPS endpoint and the monitor stand-in, kept in
    the data directory (else a temp dir) so clients keep trusting a restarted emulator."""
    from emulator.monitor.tls import ensure_certificates

    folder = Path(data_dir) / "monitor-tls" if data_dir else Path(tempfile.mkdtemp(prefix="ruscope-monitor-"))
    return ensure_certificates(folder)


def _start(start: Any, engine: Any, host: str, port: int, option: str, **kwargs: Any) -> Any:
    try:
        return start(engine, host=host, port=port, **kwargs)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        _fail(f"cannot listen on {host}:{port}: {reason}; pick another port with {option} (e.g. {option} {port + 1})")


def _stop_on_a_signal() -> threading.Event:
    """An event SIGINT or SIGTERM sets (the servers run on their own threads). Installed before the servers
    say they are ready: a signal sent as soon as a supervisor reads "listening on" (measured under load in CI:
    the default action killed the process, exit -15, before it could save its history) is a clean stop."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())
    return stop


def main() -> None:
    """`python -m emulator`."""
    with contextlib.suppress(KeyboardInterrupt):
        typer.run(emulator)
