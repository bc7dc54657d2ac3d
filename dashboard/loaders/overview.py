"""The Overview page's cached loader: the container summaries of the shown period and of the two compared
ones, the costliest queries and the periods, computed once per view and cached for `tables.TTL_SECONDS`
(keyed by the view alone: a key holding the time would miss whenever a run crosses a minute).

Why: the summaries run the container model three times (the shown period, the recent one and the one
before, `analysis.overview.overview_table`); uncached, every rerun of the page (a widget change, a card
opened) paid for all three again, seconds even on a small store. The numbers all come from `analysis`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pandas as pd
import streamlit as st

from analysis import fleet, overview, regions, throttling
from dashboard.loaders import tables
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
    """The frames the overview reads (`TABLES`), in the view's scope and window, and the store's warnings."""
    frames: dict[str, pd.DataFrame] = {}
    messages: tuple[str, ...] = ()
    for table, columns in TABLES.items():
        # a container that spends its database's shared offer has its partitions' metrics under the offer
        if table == "metrics":  # millions of points: read, not cached (this loader caches its result)
            loaded = tables.load_with_shared_offer(view, table, columns=columns, cached=False)
        else:
            loaded = tables.load_view(view, table, columns=columns)
        frames[table], messages = loaded.frame, messages + loaded.warnings
    frames["metrics"] = regions.select_region(frames["metrics"], view.region)  # one region, or the total
    return frames, tuple(dict.fromkeys(messages))


def load_overview(view: FrameState) -> OverviewData:
    """The containers with their changes, the costliest queries and the periods compared (cached: see the
    module docstring); the periods end when they were computed (at most `tables.TTL_SECONDS` ago)."""
    return _load_overview(tables.cached_view(view))


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Summarising the containers...", max_entries=16)
def _load_overview(view: FrameState) -> OverviewData:
    window, region, now = view.window, view.region, dt.datetime.now(dt.UTC)
    first = overview.periods(window, now, None)
    before = first.before_start  # a bounded window's: read from the start of the period compared
    wider = window if before is None else dataclasses.replace(window, start=before.to_pydatetime())
    frames, warnings = load_frames(dataclasses.replace(view, window=wider))
    span = overview.periods(window, now, overview.latest_time(frames["executions"], frames["metrics"]))
    containers = overview.overview_table(frames, span, region=region)
    executions = frames["executions"]
    queries = overview.costliest_queries(
        overview.between(executions, span.shown_start),
        overview.between(executions, span.recent_start),
        overview.between(executions, span.before_start, span.recent_start) if span.recent_start else executions[0:0],
    )
    return OverviewData(containers, queries, span, warnings)
