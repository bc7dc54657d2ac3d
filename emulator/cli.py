"""`ruscope emulator` / `python -m emulator`: run the local Cosmos DB until Ctrl+C.

Defined here, not in the `ruscope` command, so the emulator runs on its own without the collectors;
`ruscope.cli` registers this same function as its `emulator` command.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer


def _fail(message: str) -> None:
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
    """Run the local Cosmos DB emulator (http://HOST:PORT/, the azure-cosmos SDK talks to it unmodified)."""
    from emulator.auth import WELL_KNOWN_KEY
    from emulator.server import Listener, bind, open_engine, serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        engine = open_engine(data_dir, fsync=fsync, consistency=consistency, throttling=not no_throttling)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"ruscope emulator on http://{host}:{port}/ (data: {data_dir or 'in memory'}); Ctrl+C stops it")
    also: tuple[Listener, ...] = ()
    try:
        if monitor_port:
            also = (_monitor(engine, host, monitor_port, data_dir, bind),)
        serve(engine, host=host, port=port, key=key or WELL_KNOWN_KEY, also=also)
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except ValueError as exc:
        _fail(str(exc))


def _monitor(engine: object, host: str, port: int, data_dir: Path | None, bind: Any) -> Any:
    """The Azure Monitor stand-in's listener; its CA is kept in the data directory (else a temp dir) and
    printed, since clients must trust it (`connection_verify` or `REQUESTS_CA_BUNDLE`)."""
    from emulator.monitor.app import MonitorApp
    from emulator.monitor.tls import ensure_certificates
    from emulator.server import Listener

    folder = Path(data_dir) / "monitor-tls" if data_dir else Path(tempfile.mkdtemp(prefix="ruscope-monitor-"))
    certs = ensure_certificates(folder)
    listener = Listener(MonitorApp(engine), bind(host, port), certs.server_context())  # type: ignore[arg-type]
    url = f"https://{host}:{port}"
    typer.echo(f"Azure Monitor stand-in on {url} (metrics, and Log Analytics under /v1); trust its CA: {certs.ca}")
    return listener


def main() -> None:
    """`python -m emulator`."""
    with contextlib.suppress(KeyboardInterrupt):
        typer.run(emulator)
