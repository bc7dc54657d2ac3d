"""Query costs: per query, RU per execution over time, where a run's RU went (per pkrange), the routing
class, and the table as CSV.

Layout only: the numbers come from `analysis.query_costs`, the figures from `dashboard.figures`, the data
from `dashboard.loaders`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis import query_costs
from analysis.report import to_csv_bytes
from dashboard import figures, loaders

ALL = "(all)"

HOW_TO_COLLECT = """No query executions in `{store}` yet. Replay the queries of a config into it, then open it here:

```sh
ruscope replay --config ruscope.toml --store {store}
ruscope dashboard --store {store}
```
"""

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


def render_warnings(messages: tuple[str, ...]) -> None:
    for message in messages:
        st.warning(message, icon=":material/warning:")


def render_scope(executions: pd.DataFrame) -> tuple[str | None, str | None]:
    left, right = st.columns(2)
    database = left.selectbox("Database", [ALL, *query_costs.databases(executions)], key="query_costs_database")
    database = None if database == ALL else database
    container = right.selectbox(
        "Container", [ALL, *query_costs.containers(executions, database)], key="query_costs_container"
    )
    return database, (None if container == ALL else container)


def render_summary(executions: pd.DataFrame) -> None:
    summary = query_costs.summarize_query_costs(executions)
    st.subheader("Per query")
    st.dataframe(summary, hide_index=True, column_config=SUMMARY_COLUMNS)
    st.download_button(
        "Download CSV",
        data=to_csv_bytes(summary),
        file_name="query-costs.csv",
        mime="text/csv",
        key="query_costs_download",
        icon=":material/download:",
    )


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


def render_charts(
    store: str, executions: pd.DataFrame, series: pd.DataFrame, database: str | None, container: str | None
) -> None:
    st.subheader("RU per execution over time")
    st.plotly_chart(figures.build_ru_over_time_figure(series), key="query_costs_over_time")
    st.subheader("Where a run's RU went")
    run_id = st.selectbox("Run", query_costs.runs_newest_first(executions), key="query_costs_run", help="newest first")
    requests = loaders.load_requests(store, run_id)
    render_warnings(requests.warnings)
    scoped = query_costs.select_scope(requests.frame, database=database, container=container)
    breakdown = query_costs.pkrange_breakdown(scoped, run_id, executions=executions)
    st.plotly_chart(
        figures.build_pkrange_breakdown_figure(breakdown, title=f"run {run_id}"), key="query_costs_breakdown"
    )
    st.caption(
        "RU per execution of each query in the run, by the pkrange that charged it; "
        "gateway: the refused first attempt, the query plan and metadata reads."
    )


st.title("Query costs")
store = st.text_input("Store directory", value=loaders.default_store(), key="query_costs_store")
loaded = loaders.load_executions(store)
render_warnings(loaded.warnings)
if loaded.frame.empty:
    st.info(HOW_TO_COLLECT.format(store=store), icon=":material/info:")
else:
    database, container = render_scope(loaded.frame)
    executions = query_costs.select_scope(loaded.frame, database=database, container=container)
    series = query_costs.ru_per_execution(executions)
    render_summary(executions)
    render_errors(executions, only_failures=series.empty)
    if not series.empty:
        render_charts(store, executions, series, database, container)
    with st.expander("Routing classes: single, targeted, fan-out"):
        st.markdown(ROUTING_HELP)
