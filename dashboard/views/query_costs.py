"""Query costs: per query, RU per execution over time, where a run's RU went (per pkrange), the routing
class, and the table as CSV.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders`, the numbers from `analysis.query_costs`, the figures from `dashboard.figures`, the
shared widgets from `dashboard.widgets`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis import query_costs
from dashboard import figures, loaders, widgets
from dashboard.state import FrameState, frame_state

HOW_TO_COLLECT = "Replay the queries of a config into it, then open it here"
COLLECT = ["ruscope replay --config ruscope.toml --store {store}"]

ROUTING_HELP = """
How a query reached the container's physical partitions (pkranges), observed from the partitions that
served its data pages:

- **single**: one partition. The filter pins the full partition key (or the query passes it); the cheapest.
- **targeted**: some partitions. `IN` over key values, or a prefix of a hierarchical key.
- **fan-out**: every partition. No usable key filter; each partition charges its own minimum, so the cost
  grows with the partition count, even when few items match.

**mismatch** marks a query whose observed class differs from the one predicted from its SQL and partition
key: usually a filter the gateway cannot route on (a function of the key, an `OR`), or a split partition.
A per-feed-range query runs once per partition; its parts count as one execution (their RU summed).
"""

SUMMARY_COLUMNS = {
    "query_name": st.column_config.TextColumn("query"),
    "executions": st.column_config.NumberColumn("executions", help="successful executions, all runs"),
    "mean_ru": st.column_config.NumberColumn("mean RU", format="%.2f"),
    "median_ru": st.column_config.NumberColumn("median RU", format="%.2f"),
    "max_ru": st.column_config.NumberColumn("max RU", format="%.2f"),
    "latest_mean_ru": st.column_config.NumberColumn("latest run RU", format="%.2f"),
    "previous_mean_ru": st.column_config.NumberColumn("previous run RU", format="%.2f"),
    "change_pct": st.column_config.NumberColumn("change %", format="%+.1f%%"),
    "latest_pkrange_count": st.column_config.NumberColumn("pkranges", help="reached in the latest run"),
    "latest_pkranges": st.column_config.TextColumn("pkrange ids"),
    "routing_mismatch": st.column_config.CheckboxColumn("mismatch", help="observed routing differs from predicted"),
    "last_seen": st.column_config.DatetimeColumn("last seen (UTC)", timezone="UTC"),
}


def render_summary(executions: pd.DataFrame) -> None:
    summary = query_costs.summarize_query_costs(executions)
    st.subheader("Per query")
    st.dataframe(summary, hide_index=True, column_config=SUMMARY_COLUMNS)
    widgets.render_csv_download(summary, file_name="query-costs.csv", key="query_costs_download")


def render_errors(executions: pd.DataFrame, *, only_failures: bool) -> None:
    errors = query_costs.failed_executions(executions)
    if errors.empty:
        return
    if only_failures:
        st.warning("No execution succeeded yet. The failed executions:", icon=":material/error:")
        st.dataframe(errors, hide_index=True)
        return
    with st.expander(f"Failed executions ({len(errors)})"):
        st.dataframe(errors, hide_index=True)


def render_charts(view: FrameState, executions: pd.DataFrame, series: pd.DataFrame) -> None:
    st.subheader("RU per execution over time")
    st.plotly_chart(figures.build_ru_over_time_figure(series), key="query_costs_over_time")
    st.subheader("Where a run's RU went")
    run_id = st.selectbox("Run", query_costs.runs_newest_first(executions), key="query_costs_run", help="newest first")
    requests = loaders.load_view(view, "requests", columns=query_costs.REQUEST_COLUMNS, run_ids=(run_id,))
    widgets.render_store_warnings(requests.warnings)
    breakdown = query_costs.pkrange_breakdown(requests.frame, run_id, executions=executions)
    st.plotly_chart(
        figures.build_pkrange_breakdown_figure(breakdown, title=f"run {run_id}"), key="query_costs_breakdown"
    )
    st.caption(
        "RU per execution of each query in the run, by the pkrange that charged it; "
        "gateway: the refused first attempt, the query plan and metadata reads."
    )


st.title("Query costs")
view = frame_state()
loaded = loaders.load_view(view, "executions", columns=query_costs.EXECUTION_COLUMNS)
widgets.render_store_warnings(loaded.warnings)
if loaded.frame.empty:
    widgets.render_empty_state(view, what="query executions", how=HOW_TO_COLLECT, commands=COLLECT)
else:
    executions = loaded.frame
    series = query_costs.ru_per_execution(executions)
    render_summary(executions)
    render_errors(executions, only_failures=series.empty)
    if not series.empty:
        render_charts(view, executions, series)
    with st.expander("Routing classes: single, targeted, fan-out"):
        st.markdown(ROUTING_HELP)
