"""Store maintenance commands: `ruscope compact`, `ruscope store migrate`, `ruscope store check` and
`ruscope store repair`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from ruscope.options import (
    CONFIG_HELP,
    DEFAULT_CONFIG,
    EXIT_OK,
    EXIT_PARTIAL,
    STORE_HELP,
    echo,
    error_line,
    fail,
    load,
    store_dir,
)

if TYPE_CHECKING:
    from collectors.config import Config
    from store import StoreLocation

T = TypeVar("T")


def compact(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help="Store: a directory or an az:// / abfss:// URI.")] = None,
) -> None:
    """Compact every store table (a few files per day, not one per run), checkpoint it and vacuum old files;
    roll the metrics up and refresh the span cells first. Exit 1 if a table is damaged (named, with the repair command; the other tables are still compacted)."""
    from analysis.load.stored import DERIVATION
    from store import CompactFailure, StoreLayoutError
    from store import compact as compact_store
    from store.maintenance import DEFAULT_RETENTION_HOURS

    cfg = _optional_config(config, store)
    target = store_dir(store, cfg)
    retention = cfg.store.vacuum_retention_hours if cfg is not None else DEFAULT_RETENTION_HOURS
    try:
        reports = compact_store(target, retention_hours=retention, derived=(DERIVATION,))
    except (StoreLayoutError, ValueError) as exc:
        fail(str(exc))
    for report in reports:
        if isinstance(report, CompactFailure):
            error_line(report.line())
        else:
            echo(report.line())
    if not reports:
        echo(f"{target}: no table to compact")
    raise typer.Exit(EXIT_PARTIAL if any(isinstance(r, CompactFailure) for r in reports) else EXIT_OK)


def migrate(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help="Store: a directory (the old layout was local only).")] = None,
) -> None:
    """Convert a store of Parquet parts (before Delta Lake) to Delta tables, in place; safe to re-run after a
    kill. Exit 1 if some file could not be read (it is left in place and named)."""
    from store import migrate as migrate_store

    cfg = load(config)
    target = store_dir(store, cfg)
    try:
        report = migrate_store(target, warn=error_line)
    except ValueError as exc:
        fail(str(exc))
    echo(report.line(target))
    raise typer.Exit(EXIT_PARTIAL if report.skipped else EXIT_OK)


def check(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
) -> None:
    """List each table's damage: data files the table names that are missing (with their rows), log entries
    that do not parse. Exit 0 if the store is clean, 1 if damage was found (`ruscope store repair`)."""
    from store import check as check_store
    from store import repair_hint

    target = store_dir(store, _optional_config(config, store))
    reports = _guarded(lambda: check_store(target))
    _print_reports(reports, target, "check")
    damaged = [r for r in reports if not r.clean]
    if damaged:
        error_line(f"{len(damaged)} damaged table(s); `{repair_hint(target)}` repairs them")
    raise typer.Exit(EXIT_PARTIAL if damaged else EXIT_OK)


def repair(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
) -> None:
    """Repair each damaged table: drop missing data files from its log, rewrite a damaged log entry with its
    intact lines (a local table's log is backed up first), and list the rows lost. Safe to run again. Exit 1
    if a table could not be repaired."""
    from store import repair as repair_store

    target = store_dir(store, _optional_config(config, store))
    reports = _guarded(lambda: repair_store(target))
    _print_reports(reports, target, "repair")
    raise typer.Exit(EXIT_PARTIAL if any(r.error for r in reports) else EXIT_OK)


def _print_reports(reports: Sequence[Any], target: StoreLocation, verb: str) -> None:
    """Each table report's lines (`lines(target)`), or that there was no table to `verb`; control
    characters escaped, as every line a command prints (`options.echo`)."""
    for report in reports:
        for line in report.lines(target):
            echo(line)
    if not reports:
        echo(f"{target}: no table to {verb}")


def _optional_config(config: Path, store: str | None) -> Config | None:
    """The config, which `--store` makes optional (the repair line a warning prints names only the store)."""
    return load(config) if store is None or config.exists() else None


def _guarded(run: Callable[[], list[T]]) -> list[T]:
    """`run()`, a store in the old layout or a bad location being one line (exit 2)."""
    from store import StoreLayoutError

    try:
        return run()
    except (StoreLayoutError, ValueError, OSError) as exc:
        fail(str(exc))
