"""The `ruscope` command. Thin: parse arguments, load config, call one function, map errors to exit codes.

Exit codes (DESIGN.md): 0 all good; 1 ran, but some items failed; 2 bad config or usage.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="RU-cost observability for Azure Cosmos DB.")

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE = 0, 1, 2


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    typer.echo(f"ruscope: {message}", err=True)
    raise typer.Exit(code)


@app.callback()
def _root() -> None:
    """RU-cost observability for Azure Cosmos DB: collectors, dashboard, advisor and a local emulator."""


@app.command()
def emulator(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8081,
    key: Annotated[Optional[str], typer.Option(help="Master key (default: the well-known emulator key).",  # noqa: UP045
                                               envvar="RUSCOPE_EMULATOR_KEY", show_default=False)] = None,
    data_dir: Annotated[Optional[Path], typer.Option(help="Keep data here across restarts.")] = None,  # noqa: UP045
    consistency: Annotated[str, typer.Option(help="Default consistency level of the account.")] = "Session",
    fsync: Annotated[bool, typer.Option(help="fsync every acknowledged write (slower; power-loss safe).")] = False,
    no_throttling: Annotated[bool, typer.Option("--no-throttling", help="Never answer 429.")] = False,
) -> None:
    """Run the local Cosmos DB emulator (http://HOST:PORT/, the azure-cosmos SDK talks to it unmodified)."""
    from emulator.auth import WELL_KNOWN_KEY
    from emulator.server import open_engine, serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        engine = open_engine(data_dir, fsync=fsync, consistency=consistency, throttling=not no_throttling)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    typer.echo(f"ruscope emulator on http://{host}:{port}/ (data: {data_dir or 'in memory'}); Ctrl+C stops it")
    try:
        serve(engine, host=host, port=port, key=key or WELL_KNOWN_KEY)
    except OSError as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    except ValueError as exc:
        _fail(str(exc))


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(EXIT_OK)


if __name__ == "__main__":
    main()
