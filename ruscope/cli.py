"""The `ruscope` command: the typer app, each command registered from the module of its group, and the
console entry point. Commands are thin: parse arguments, load config, call one function, map errors to
exit codes (`ruscope.options`).

- `emulator` (`emulator.cli`); `advise` (`ruscope.advise`); `check` (`ruscope.check`); `demo` (`ruscope.demo`);
- `replay`, `storage`, `metrics`, `logs`, `collect` (`ruscope.collect`); `report` (`ruscope.report`);
- `dashboard` (here: it execs Streamlit); `compact`, `store migrate`, `store check`, `store repair` (`ruscope.maintenance`).

To add a command: a function with typer-annotated options in the module of its group (a new module for a
new group), registered below in the order `ruscope --help` lists it."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer

from emulator.cli import emulator as emulator_command
from ruscope import collect, maintenance, panics, report
from ruscope.advise import advise as advise_command
from ruscope.check.command import check as check_command
from ruscope.launch import dashboard_environment, exposure_warning, listen_problem, streamlit_command
from ruscope.options import EXIT_OK, EXIT_USAGE, echo, fail, load, store_dir

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: `[store] uri` and `[alerts]` are shown, not eaten as markup
    help="RU-cost observability for Azure Cosmos DB.",
)


@app.callback()
def _root() -> None:
    """RU-cost observability for Azure Cosmos DB: collectors, dashboard, advisor and a local emulator."""


app.command()(emulator_command)
app.command("advise")(advise_command)
app.command("check")(check_command)


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

    from ruscope.demo.run import DemoError, DemoSettings, run_demo

    settings = DemoSettings(dir, size, port=port, cosmos_port=cosmos_port, monitor_port=monitor_port, fresh=fresh)
    try:
        raise typer.Exit(run_demo(replace(settings, browser=not no_browser), out=echo))
    except DemoError as exc:
        fail(str(exc), exc.exit_code)


app.command()(collect.replay)
for _name, _summary in collect.COLLECTOR_COMMANDS.items():
    app.command(_name)(collect.collector_command(_name, _summary))
app.command()(collect.collect)
app.command()(report.report)


@app.command()
def dashboard(
    config: Annotated[
        Path | None, typer.Option("--config", help="Show the store of this ruscope.toml, priced with its [pricing].")
    ] = None,
    store: Annotated[str | None, typer.Option(help="Store: a directory or an az:// / abfss:// URI.")] = None,
    port: Annotated[int, typer.Option(help="Port for the dashboard.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default).")] = "127.0.0.1",
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            help="Another host name the dashboard is reached by (the Host header is checked).", show_default=False
        ),
    ] = None,
    allow_any_store: Annotated[
        bool, typer.Option("--allow-any-store", help="Let the sidebar open any store path or URI a visitor types.")
    ] = False,
    check_report: Annotated[
        Path | None,
        typer.Option(help="Show this `ruscope check` run (its --report JSON or --junit XML) on the Query costs page."),
    ] = None,
) -> None:
    """Open the dashboard (Streamlit) on a store: --store, else the config's [store] uri, else ruscope-data;
    costs at the config's [pricing], else Microsoft's list price example.

    It answers only loopback names, --host and each --allow-host (a page elsewhere cannot reach it by DNS
    rebinding), and shows only that store unless --allow-any-store."""
    cfg = load(config) if config is not None else None
    target = store_dir(store, cfg)
    shown = str(target.local.resolve()) if target.local is not None else target.uri  # Streamlit runs elsewhere
    pricing = cfg.pricing if cfg is not None else None  # the pages price with it; else the list price example
    if check_report is not None and not check_report.is_file():
        fail(f"--check-report: {check_report}: no such file")
    env = dashboard_environment(
        os.environ, shown, any_store=allow_any_store, pricing=pricing, check_report=check_report
    )
    problem = listen_problem(host, port)
    if problem:
        fail(problem)
    if warning := exposure_warning(host, allow_host or ()):
        echo(f"ruscope: {warning}", err=True)
    panics.uninstall()  # Streamlit gets the real stderr
    command = streamlit_command(host, port, allow=allow_host or ())
    os.execve(sys.executable, command, env)  # not a child: Ctrl+C and SIGTERM reach Streamlit itself


app.command("compact")(maintenance.compact)
store_app = typer.Typer(
    no_args_is_help=True, help="Store maintenance: converting a store of an older layout, finding and repairing damage."
)
app.add_typer(store_app, name="store")
store_app.command("migrate")(maintenance.migrate)
store_app.command("check")(maintenance.check)
store_app.command("repair")(maintenance.repair)


def quiet_store_warnings() -> None:
    """A damaged store's warning once, as one line: the store logs each (`ruscope.store`, printed as it is);
    Python's display of the same warning would add it again with a source line."""
    from store import StoreWarning

    warnings.filterwarnings("ignore", category=StoreWarning)


def main() -> None:
    """Console entry point."""
    logging.getLogger("azure").addHandler(logging.NullHandler())  # the SDKs' failure logs: ours are one line
    quiet_store_warnings()
    panics.install()
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(EXIT_OK)
    except RuntimeError as exc:  # a store of the layout before Delta Lake: one line naming the command
        from store import StoreLayoutError

        if not isinstance(exc, StoreLayoutError):
            raise
        echo(f"ruscope: {exc}", err=True)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
