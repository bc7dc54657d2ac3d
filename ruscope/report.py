"""`ruscope report`: the capacity-review report of the store (`analysis.capacity.review`), as CSV or xlsx."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlparse

import typer

from ruscope.options import EXIT_PARTIAL, STORE_HELP, echo, fail, load, store_dir
from wholefile import write_whole

if TYPE_CHECKING:
    from analysis.capacity.commands import AzureAccount
    from collectors.config import Config

REPORT_FORMATS = ("csv", "xlsx")


def report(
    config: Annotated[Path, typer.Option("--config", help="The ruscope.toml whose store to report on.")],
    out: Annotated[Path, typer.Option("--out", help="The file to write (replaced atomically).")],
    store: Annotated[str | None, typer.Option(help=STORE_HELP)] = None,
    format: Annotated[str, typer.Option("--format", help="csv (default) or xlsx (a sheet per section).")] = "csv",
    since: Annotated[str | None, typer.Option(help="Only the last span of data, e.g. 30d, 24h (default: all).")] = None,
    region: Annotated[
        str | None,
        typer.Option(
            help="One Azure region's Monitor figures, as the metrics name it (default: every region in total)."
        ),
    ] = None,
) -> None:
    """Write the capacity-review report of the store (analysis/capacity/ documents its columns and rules).

    Exit 0 written; 1 the store has no data (in the time range): nothing written, the line names the store;
    2 bad config or usage."""
    from analysis.capacity.about import ReportAbout, data_window
    from analysis.capacity.review import REPORT_TABLES, build_capacity_report, report_summary
    from analysis.report import to_csv_bytes, to_xlsx_bytes
    from collectors.client import installed_version
    from store import read_table

    cfg = load(config)
    if format not in REPORT_FORMATS:
        fail(f"--format: {format!r} is not one of {', '.join(REPORT_FORMATS)}")
    start = _report_since(since)
    target = store_dir(store, cfg)
    try:
        frames = {name: read_table(target, name, since=start, columns=cols) for name, cols in REPORT_TABLES.items()}
    except (OSError, ValueError) as exc:
        fail(f"{target}: cannot read the store: {exc}")
    now = dt.datetime.now(dt.UTC)
    first, last = data_window(frames)
    about = ReportAbout(
        window_start=start or first,
        window_end=now if start else last,
        store=str(target),
        generated=now,
        region=region,
        version=installed_version(),
        window_note=f"--since {since}" if since else "all data: the first and last row read",
    )
    built = build_capacity_report(
        *(frames[table] for table in REPORT_TABLES),  # the report's inputs, in its signature's order
        region=region,
        about=about,
        azure=_azure_accounts(cfg),
        prices=cfg.pricing.prices(),
        multi_write=cfg.pricing.multi_write_accounts,
    )
    if built.empty:
        when = f" in the last {since}" if since else ""
        fail(f"{target}: no data to report{when}; collect some first: ruscope collect --config {config}", EXIT_PARTIAL)
    data = to_csv_bytes(built) if format == "csv" else to_xlsx_bytes(built)
    _write_file(out, data)
    echo(f"{out}: {report_summary(built)}")


def _azure_accounts(cfg: Config) -> dict[str, AzureAccount]:
    """Each configured account's ARM names (its `monitor_resource`, else its endpoint's host), by its store name."""
    from analysis.capacity.commands import azure_account

    return {
        a.name: azure_account(a.name, urlparse(a.endpoint).hostname, a.monitor_resource) for a in cfg.all_accounts()
    }


def _report_since(text: str | None) -> dt.datetime | None:
    """`--since 30d` (days) or any `--every` interval (`24h`, `90m`), as the instant that long before now."""
    from collectors.schedule import parse_interval

    if text is None:
        return None
    try:
        days = text.strip().lower().removesuffix("d")
        seconds = int(days) * 86400 if days.isdigit() and text.strip().lower().endswith("d") else parse_interval(text)
    except ValueError as exc:
        fail(f"--since: {exc}; or days, e.g. 30d")
    return dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)


def _write_file(path: Path, data: bytes) -> None:
    """`data` to `path` through a temp file beside it and a rename: a reader never sees half a report."""
    try:
        write_whole(path, data)
    except OSError as exc:
        fail(f"{path}: cannot write: {exc.strerror or exc}")
