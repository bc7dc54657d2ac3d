"""Store maintenance commands: `ruscope compact` and `ruscope store migrate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ruscope.options import CONFIG_HELP, DEFAULT_CONFIG, EXIT_OK, EXIT_PARTIAL, echo, error_line, fail, load, store_dir


def compact(
    config: Annotated[Path, typer.Option("--config", help=CONFIG_HELP)] = DEFAULT_CONFIG,
    store: Annotated[str | None, typer.Option(help="Store: a directory or an az:// / abfss:// URI.")] = None,
) -> None:
    """Compact every store table (a few files per day, not one per run), checkpoint it and vacuum old files."""
    from store import StoreLayoutError
    from store import compact as compact_store

    cfg = load(config)
    target = store_dir(store, cfg)
    try:
        reports = compact_store(target, retention_hours=cfg.store.vacuum_retention_hours)
    except (StoreLayoutError, ValueError) as exc:
        fail(str(exc))
    for report in reports:
        echo(report.line())
    if not reports:
        echo(f"{target}: no table to compact")


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
