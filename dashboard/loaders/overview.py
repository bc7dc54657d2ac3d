"""The Overview page's cached loader: the container summaries of the shown period and of the two compared
ones, the costliest queries and the periods, computed once per view and cached (keyed by the view and the
store's versions, `tables.cached_view`: a key holding the time would miss whenever a run crosses a minute).

Why: the summaries run the container model three times (the shown period, the recent one and the one
before, `analysis.overview.overview_table`); uncached, every rerun of the page (a widget change, a card
opened) paid for all three again, seconds even on a small store. The numbers all come from `analysis`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st

from analysis import fleet, overview, regions, throttling
from analysis.scope import Window
from dashboard.loaders import cells, tables
from dashboard.state import FrameState

TABLES = {  # what `summarize_containers` reads
    "executions": overview.EXECUTION_COLUMNS,
    "requests": fleet.REQUEST_COLUMNS,
    "metrics": overview.METRIC_COLUMNS,
    "partitions": fleet.PARTITION_COLUMNS,
    "logical_keys": overview.LOGICAL_KEY_COLUMNS,
    "log_throttles": throttling.LOG_THROTTLE_COLUMNS,
}


@dataclasses.dataclass(frozen=True)
class OverviewData:
    containers: pd.DataFrame  # analysis.overview.overview_table: per container, with its changes
    queries: pd.DataFrame  # analysis.overview.costliest_queries
    span: overview.Periods
    warnings: tuple[str, ...]


def load_frames(view: FrameState) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    """The frames the overview reads (`TABLES`) but the metrics, in the view's scope and window, and the
    store's warnings."""
    frames: dict[str, pd.DataFrame] = {}
    messages: tuple[str, ...] = ()
    for table, columns in TABLES.items():
        if table != "metrics":
            loaded = tables.load_view(view, table, columns=columns)
            frames[table], messages = loaded.frame, messages + loaded.warnings
    return frames, tuple(dict.fromkeys(messages))


def load_metrics(
    view: FrameState,
    boundaries: Sequence[dt.datetime | pd.Timestamp | None],
    cuts_of: Callable[[pd.DataFrame], Sequence[pd.Timestamp | dt.datetime | None]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...]]:
    """The view's metrics (of its region, or the total), the span cells of the whole days no period boundary
    cuts (`cells.metrics_with_cells`, whose NormalizedRUConsumption points are then not read), the warnings.
    A container that spends its database's shared offer has its partitions' metrics under the offer; the
    points are millions: read, not cached (this loader caches its result)."""
    read = cells.metrics_with_cells(view, TABLES["metrics"], boundaries, cuts_of=cuts_of)
    return regions.select_region(read.metrics.frame, view.region), read.cells, read.metrics.warnings


def load_overview(view: FrameState) -> OverviewData:
    """The containers with their changes, the costliest queries and the periods compared (cached: see the
    module docstring); all time's periods end at the newest row, a preset's at its start plus its length."""
    return _load_overview(tables.cached_view(view))


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Summarising the containers...", max_entries=tables.PAGE_ENTRIES)
def _load_overview(view: FrameState) -> OverviewData:
    window, region, now = view.window, view.region, dt.datetime.now(dt.UTC)
    first = overview.periods(window, now, None)
    before = first.before_start  # a bounded window's: read from the start of the period compared
    wider = window if before is None else dataclasses.replace(window, start=before.to_pydatetime())
    wide = dataclasses.replace(view, window=wider)
    frames, warnings = load_frames(wide)

    def all_time_cuts(rows: pd.DataFrame) -> list[pd.Timestamp | dt.datetime | None]:
        """All time's periods end at the newest row: the cells' newest minute (`rows`) and the frames' so far."""
        return (
            []
            if window.start is not None
            else _boundaries(overview.periods(window, now, _latest(frames, rows)), window)
        )

    frames["metrics"], frames["span_cells"], read = load_metrics(wide, _boundaries(first, window), all_time_cuts)
    span = overview.periods(window, now, _latest(frames))
    if window.start is None and _cut(frames["span_cells"], span):  # newer points than the cells: read again
        frames["metrics"], frames["span_cells"], read = load_metrics(wide, _boundaries(span, window))
        span = overview.periods(window, now, _latest(frames))
    warnings = tuple(dict.fromkeys([*warnings, *read]))
    containers = overview.overview_table(frames, span, region=region)
    executions = frames["executions"]
    queries = overview.costliest_queries(
        overview.between(executions, span.shown_start),
        overview.between(executions, span.recent_start),
        overview.between(executions, span.before_start, span.recent_start) if span.recent_start else executions[0:0],
    )
    return OverviewData(containers, queries, span, warnings)


def _boundaries(span: overview.Periods, window: Window) -> list[pd.Timestamp | dt.datetime | None]:
    """Where the compared periods start and end: a day one of them cuts is read as points."""
    return [span.shown_start, span.recent_start, span.before_start, window.end]


def _latest(frames: dict[str, pd.DataFrame], cells_: pd.DataFrame | None = None) -> pd.Timestamp | None:
    """The newest row of the executions and metrics, the span cells' newest minute included."""
    found = frames.get("span_cells") if cells_ is None else cells_
    minutes = found["last_minute"].rename("time").to_frame().dropna() if found is not None else pd.DataFrame()
    return overview.latest_time(*(f for f in (frames["executions"], frames.get("metrics"), minutes) if f is not None))


def _cut(span_cells: pd.DataFrame, span: overview.Periods) -> bool:
    """Whether a period boundary of `span` falls inside a day read from cells."""
    days = set(pd.to_datetime(span_cells["time"], utc=True).dt.date) if len(span_cells) else set()
    return any(b is not None and pd.Timestamp(b).date() in days and b != pd.Timestamp(b).floor("D") for b in
               (span.recent_start, span.before_start))  # fmt: skip
