"""`ruscope emulator` / `python -m emulator`: run the local Cosmos DB until Ctrl+C.

Defined here, not in the `ruscope` command, so the emulator runs on its own without the collectors;
`ruscope.cli` registers this same function as its `emulator` command.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import tempfile
import threading
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer


def _fail(message: str) -> NoReturn:
    typer.echo(f"ruscope: {message}", err=True)
    raise typer.Exit(2)


def emulator(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8081,
    key: Annotated[
        str | None,
        typer.Option(
            help="Master key (default: the well-known emulator key).",
            envvar="RUSCOPE_EMULATOR_KEY",
            show_default=False,
        ),
    ] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Keep data here across restarts.")] = None,
    consistency: Annotated[str, typer.Option(help="Default consistency level of the account.")] = "Session",
    fsync: Annotated[bool, typer.Option(help="fsync every acknowledged write (slower; power-loss safe).")] = False,
    no_throttling: Annotated[bool, typer.Option("--no-throttling", help="Never answer 429.")] = False,
    monitor_port: Annotated[
        int, typer.Option(help="HTTPS port of the local Azure Monitor stand-in (metrics); 0 disables it.")
    ] = 8443,
) -> None:
    """Run the local Cosmos DB emulator (http://HOST:PORT/, the azure-cosmos SDK talks to it unmodified).
    It holds the terminal: its endpoint and key are printed once it listens; Ctrl+C stops it."""
    from emulator.auth import WELL_KNOWN_KEY
    from emulator.server import open_engine

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        engine = open_engine(data_dir, fsync=fsync, consistency=consistency, throttling=not no_throttling)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    running, ca = _listen(engine, host, port, key or WELL_KNOWN_KEY, monitor_port, data_dir)
    monitor = (running[1].url, ca) if len(running) > 1 and ca is not None else None
    for line in ready_lines(running[0].url, key, data_dir, monitor):
        typer.echo(line)
    try:
        _wait_for_a_signal()
    finally:
        for server in reversed(running):
            server.stop()
        engine.close()  # the journal is compacted on the way out


def ready_lines(url: str, key: str | None, data_dir: Path | None, monitor: tuple[str, Path] | None = None) -> list[str]:
    """What a user needs once the emulator listens: the endpoint, the key (the public well-known one, so
    it is printed; a key of the user's own is never echoed) and how to hand both to ruscope."""
    from emulator.auth import WELL_KNOWN_KEY

    lines = [f"ruscope emulator listening on {url} (data: {data_dir or 'in memory'}); Ctrl+C stops it"]
    if key is None:
        lines.append(f"key (the well-known emulator key, public): {WELL_KNOWN_KEY}")
        lines.append(f"  for ruscope in another terminal: export COSMOS_KEY='{WELL_KNOWN_KEY}'")
    else:
        lines.append("key: the one given by --key / RUSCOPE_EMULATOR_KEY (export it as COSMOS_KEY for ruscope)")
    if monitor is not None:
        lines.append(
            f"Azure Monitor stand-in on {monitor[0].rstrip('/')} (metrics, and Log Analytics under /v1); "
            f"trust its CA: {monitor[1]}"
        )
    return lines


def _listen(
    engine: Any, host: str, port: int, key: str, monitor_port: int, data_dir: Path | None
) -> tuple[list[Any], Path | None]:
    """The emulator (and the monitor stand-in) accepting requests; a port in use exits 2 naming the option
    to change, before anything was announced."""
    from emulator.server import start_in_thread

    running: list[Any] = []
    ca = None
    try:
        running.append(_start(start_in_thread, engine, host, port, "--port", key=key))
        if monitor_port:
            monitor, ca = _monitor(engine, host, monitor_port, data_dir, start_in_thread)
            running.append(monitor)
    except BaseException:
        for server in running:
            server.stop()
        engine.close()
        raise
    return running, ca


def _start(start: Any, engine: Any, host: str, port: int, option: str, **kwargs: Any) -> Any:
    try:
        return start(engine, host=host, port=port, **kwargs)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        _fail(f"cannot listen on {host}:{port}: {reason}; pick another port with {option} (e.g. {option} {port + 1})")


def _wait_for_a_signal() -> None:
    """Block until SIGINT or SIGTERM (the servers run on their own threads)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: stop.set())
    while not stop.wait(1.0):
        pass


def _monitor(engine: Any, host: str, port: int, data_dir: Path | None, start: Any) -> tuple[Any, Path]:
    """The Azure Monitor stand-in, served over TLS; its CA is kept in the data directory (else a temp dir)
    and printed, since clients must trust it (`connection_verify` or `REQUESTS_CA_BUNDLE`)."""
    from emulator.monitor.app import MonitorApp
    from emulator.monitor.tls import ensure_certificates

    folder = Path(data_dir) / "monitor-tls" if data_dir else Path(tempfile.mkdtemp(prefix="ruscope-monitor-"))
    certs = ensure_certificates(folder)
    running = _start(start, engine, host, port, "--monitor-port", app=MonitorApp(engine), tls=certs.server_context())
    return running, certs.ca


def main() -> None:
    """`python -m emulator`."""
    with contextlib.suppress(KeyboardInterrupt):
        typer.run(emulator)
