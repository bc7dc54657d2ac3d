"""Throttling: the 429 rate per container against the band the service documents as healthy, the rate per
operation and minute, 429s by operation (Azure Monitor), by physical partition (Log Analytics) and by
pkrange (the replay) over time, the retry-after they cost, and which replayed queries were throttled.
Every rate is `analysis.throttling`'s one definition (429s over all requests), so the figures agree.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders.throttling` (every figure's frame, computed once per view and cached; `metrics` and
`log_throttles` read as no rows on a replay-only store, which has neither), the numbers from
`analysis.throttling`, the figures from `dashboard.figures.throttling`. Every
widget has a key (tests drive them by key).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis import storage, throttling
from dashboard import widgets
from dashboard.figures.throttling import build_throttle_rate_figure, build_throttle_series_figure
from dashboard.loaders.throttling import ThrottlingData, load_throttling
from dashboard.state import frame_state

HOW_TO_COLLECT = (
    "Replay the queries of a config into it (and collect Azure Monitor metrics and logs), then open it here"
)
COLLECT = ["ruscope replay --config ruscope.toml --store {store}", "ruscope metrics --config ruscope.toml"]
BAND = "The service documents 1-5% of requests answered 429 as healthy: the SDK retries them (ru-cost-model.md P12)."
HIDDEN = ["account", "database", "container"]

SUMMARY_COLUMNS = {
    "label": st.column_config.TextColumn("container"),
    "source": st.column_config.TextColumn("source"),
    "requests": st.column_config.NumberColumn("requests", format="%.0f"),
    "throttled": st.column_config.NumberColumn("429s", format="%.0f"),
    "rate": st.column_config.NumberColumn("429 rate", format="%.2f%%"),  # shown in percent
    "verdict": st.column_config.TextColumn("against the 1-5% band"),
    "start": st.column_config.DatetimeColumn("counted from (UTC)", timezone="UTC"),
    "end": st.column_config.DatetimeColumn("to (UTC)", timezone="UTC"),
}
RETRY_COLUMNS = {
    "label": st.column_config.TextColumn("pkrange"),
    "requests": st.column_config.NumberColumn("requests"),
    "throttled": st.column_config.NumberColumn("429s"),
    "rate": st.column_config.NumberColumn("429 rate", format="%.2f%%"),  # shown in percent
    "retry_after_s": st.column_config.NumberColumn("retry-after s", format="%.3f"),
}
OPERATION_COLUMNS = {
    "label": st.column_config.TextColumn("container"),
    "source": st.column_config.TextColumn("source"),
    "operation": st.column_config.TextColumn("operation"),
    "time": st.column_config.DatetimeColumn("from (UTC)", timezone="UTC"),
    "requests": st.column_config.NumberColumn("requests", format="%.0f"),
    "throttled": st.column_config.NumberColumn("429s", format="%.0f"),
    "rate": st.column_config.NumberColumn("429 rate", format="%.2f%%"),  # shown in percent
}
QUERY_COLUMNS = {
    "container": st.column_config.TextColumn("container"),
    "query_name": st.column_config.TextColumn("query"),
    "time": st.column_config.DatetimeColumn("run started (UTC)", timezone="UTC"),
    "executions": st.column_config.NumberColumn("throttled executions"),
    "throttled": st.column_config.NumberColumn("429s"),
    "retry_after_s": st.column_config.NumberColumn("retry-after s", format="%.3f"),
    "total_ru": st.column_config.NumberColumn("RU", format="%.2f"),
}


def in_percent(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its `rate` (a share) in percent, as the Overview and Fleet show it; the CSV keeps the share."""
    return frame.assign(rate=frame["rate"].astype(float) * 100)


def render_rate(data: ThrottlingData) -> None:
    st.subheader("429 rate")
    st.caption(BAND)
    summary = data.summary
    widgets.render_rate_window(summary["start"], summary["end"], every_source=True)
    columns = {**SUMMARY_COLUMNS, "label": st.column_config.TextColumn(storage.container_title(summary))}
    widgets.render_table(
        in_percent(summary).drop(columns=HIDDEN), key="throttling_summary", file_name="throttling-summary.csv",
        column_config=columns, csv=summary,
    )  # fmt: skip
    widgets.render_figure(build_throttle_rate_figure(data.rate), key="throttling_rate_chart")


def render_operations(rates: pd.DataFrame) -> None:
    """The 429 rate per operation and time bin (a minute where the view allows), most throttled first."""
    st.subheader("429 rate per operation")
    if rates.empty:
        st.caption("No requests counted per operation in this view (Azure Monitor metrics or diagnostic logs).")
        return
    st.caption("429s over all requests of each operation in each time bin (from: the bin's start), from the "
               "container's source above (Azure Monitor, else the logs): the operations of a container add up "
               "to its rate.")  # fmt: skip
    widgets.render_table(
        in_percent(rates).drop(columns=HIDDEN), key="throttling_operation_rates",
        file_name="throttling-operation-rates.csv", column_config=OPERATION_COLUMNS, csv=rates,
    )  # fmt: skip


def render_series(series: pd.DataFrame, *, key: str, legend: str, empty: str) -> None:
    """The 429s of `series` as stacked bars, or `empty` in words when there are none (no empty axes)."""
    if series.empty:
        st.caption(empty)
        return
    widgets.render_figure(build_throttle_series_figure(series, legend=legend), key=key)


def render_monitor(data: ThrottlingData) -> None:
    st.subheader("429s by operation (Azure Monitor) and by physical partition (logs)")
    render_series(
        data.monitor, key="throttling_operations_chart", legend="operation",
        empty="Azure Monitor counted no 429s in this view.",
    )  # fmt: skip
    render_series(
        data.logged, key="throttling_partitions_chart",
        legend="physical partition (PartitionId) · operation",
        empty="No 429s in the diagnostic logs of this view (or no logs collected: `ruscope logs`).",
    )  # fmt: skip


def render_replay(data: ThrottlingData) -> None:
    st.subheader("429s of the replay by pkrange")
    totals = data.retry_after
    title = storage.label_title(totals, "pkrange")
    render_series(
        data.replay, key="throttling_pkranges_chart", legend=title,
        empty="The replay got no 429s in this view.",
    )  # fmt: skip
    columns = {**RETRY_COLUMNS, "label": st.column_config.TextColumn(title)}
    widgets.render_table(
        in_percent(totals).drop(columns=[*HIDDEN, "pkrange_id"]), key="throttling_retry_after",
        file_name="throttling-retry-after.csv", column_config=columns, csv=totals,
    )  # fmt: skip
    st.subheader("Throttled queries of the replay")
    queries = data.queries
    if queries.empty:
        st.caption("No replayed query was answered 429 in this view.")
        return
    widgets.render_table(
        queries.drop(columns=["account", "database"]), key="throttling_queries",
        file_name="throttled-queries.csv", column_config=QUERY_COLUMNS, csv=queries,
    )  # fmt: skip


st.title("Throttling")
view = frame_state()
data = load_throttling(view)
widgets.render_store_warnings(data.warnings)
if not data.has_monitor and not data.has_replay:
    widgets.render_empty_state(view, what="requests or metrics", how=HOW_TO_COLLECT, commands=COLLECT)
else:
    if not data.has_monitor:
        widgets.render_monitor_missing(
            what="metrics or diagnostic logs",
            shown="the replay's own 429s: its rate, its pkranges, the retry-after and the throttled queries",
            adds="Metrics add the 429s of all the container's traffic by operation, and the 429 rate of "
            "production traffic; diagnostic logs add the 429s of each physical partition.",
        )
    widgets.render_region_note(view)
    if data.has_logs:
        widgets.render_logs_region_note(view, f"The rows from {throttling.LOGS} and the 429s by physical partition")
    render_rate(data)
    if data.has_monitor:
        render_operations(data.operations)
        render_monitor(data)
    render_replay(data)
