"""The Throttling page's cached loader: every figure and table of the page computed once per view and cached
(`tables.cached_view`: keyed by the store's versions). Why: the page read the metrics (millions of points on a month's store) through
`tables.load_view`, whose cache pickles the frame and unpickles it on every rerun; a widget change cost
seconds of unpickling. The metrics are read, not cached, and only the page's results (a few thousand rows)
are. The numbers all come from `analysis.throttling`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analysis import regions, throttling
from dashboard.loaders import tables
from dashboard.state import FrameState


@dataclass(frozen=True)
class ThrottlingData:
    """What the Throttling page shows of one view."""

    summary: pd.DataFrame  # throttling.throttle_summary: per container, the 429 rate and its source
    rate: pd.DataFrame  # throttling.throttle_rate: the rate over time
    operations: pd.DataFrame  # throttling.operation_rates
    monitor: pd.DataFrame  # throttling.monitor_throttles: 429s by operation (Azure Monitor)
    logged: pd.DataFrame  # throttling.log_throttles: 429s by physical partition (Log Analytics)
    retry_after: pd.DataFrame  # throttling.retry_after_totals: the replay's retry-after per pkrange
    replay: pd.DataFrame  # throttling.replay_throttles: the replay's 429s by pkrange
    queries: pd.DataFrame  # throttling.throttled_queries
    has_monitor: bool  # any metric or log row: the page says what is missing without them
    has_logs: bool
    has_replay: bool  # any request or execution of the replay
    warnings: tuple[str, ...]


def load_throttling(view: FrameState) -> ThrottlingData:
    """The page's figures in the frame's view (cached: see the module docstring)."""
    return _load_throttling(tables.cached_view(view))


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Counting the 429s...", max_entries=tables.PAGE_ENTRIES)
def _load_throttling(view: FrameState) -> ThrottlingData:
    # read (see the docstring), only the metric the page counts 429s in: a month's NormalizedRUConsumption
    # points are millions of rows it never uses
    loaded = tables.read_view(view, "metrics", columns=throttling.METRIC_COLUMNS, only=throttling.MONITOR_ROWS)
    metrics = regions.select_region(loaded.frame, view.region)
    logs = tables.load_view(view, "log_throttles", columns=throttling.LOG_THROTTLE_COLUMNS)
    requests = tables.load_view(view, "requests", columns=throttling.REQUEST_COLUMNS)
    executions = tables.load_view(view, "executions", columns=throttling.EXECUTION_COLUMNS)
    logged = logs.frame
    warnings = (*loaded.warnings, *logs.warnings, *dict.fromkeys(requests.warnings + executions.warnings))
    return ThrottlingData(
        summary=throttling.throttle_summary(metrics, requests.frame, logged),
        rate=throttling.throttle_rate(metrics, requests.frame, logged),
        operations=throttling.operation_rates(metrics, logged),
        monitor=throttling.monitor_throttles(metrics),
        logged=throttling.log_throttles(logged),
        retry_after=throttling.retry_after_totals(requests.frame),
        replay=throttling.replay_throttles(requests.frame),
        queries=throttling.throttled_queries(executions.frame),
        has_monitor=not (metrics.empty and logged.empty),
        has_logs=not logged.empty,
        has_replay=not (requests.frame.empty and executions.frame.empty),
        warnings=tuple(dict.fromkeys(warnings)),
    )
