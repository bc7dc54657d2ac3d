"""Query costs: per query what it costs now and how that changed, how it was routed and what that routing
multiplies its cost by, its SQL; RU per run over time; two runs side by side, split by partition.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the derived frames
from `dashboard.loaders.query_costs` (cached: computed once per view), the numbers from `analysis.queries.costs` and
`analysis.queries.runs`, the figures from `dashboard.figures`, the shared widgets from `dashboard.widgets`.
Every widget has a key (tests drive them by key): `query_costs_sql`, `query_costs_run`, `query_costs_run_b`.
Started with `--check-report`, the page shows that `ruscope check` run first (`query_costs_check`): the
baseline against now, with each query's verdict and reasons (`analysis.gate.reported`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from analysis.queries import runs as qr
from analysis.scope import Window
from dashboard import widgets
from dashboard.figures.query_costs import (
    build_pkrange_breakdown_figure,
    build_ru_over_time_figure,
    partition_colors,
    partition_labels,
    query_labels,
    stacked_range,
)
from dashboard.loaders.query_costs import (
    CheckRun,
    LoggedQueries,
    QueryCosts,
    load_check_run,
    load_logged_queries,
    load_query_costs,
    load_run_detail,
)
from dashboard.state import FrameState, frame_state

HOW_TO_COLLECT = (
    "Replay the queries of a config into it, or collect the account's diagnostic logs "
    "(`[monitor] workspace_id`), then open it here"
)
COLLECT = ["ruscope replay --config ruscope.toml --store {store}", "ruscope logs --config ruscope.toml --store {store}"]

ROUTING_HELP = """
How a query reached the container's physical partitions (pkranges), observed from the partitions that
served its data pages:

- **single**: one partition. The filter pins the full partition key (or the query passes it); the cheapest.
- **targeted**: some partitions. `IN` over key values, or a prefix of a hierarchical key.
- **fan-out**: every partition. No usable key filter; each partition charges its own minimum (about 2.5 RU),
  so the cost grows with the partition count, even when few items match.

**× one partition** (the routing multiplier) is the query's RU per execution divided by what its costliest
partition charged: about 1 for a single-partition query, and for a fan-out roughly what adding the
partition key to the filter would save. **mismatch** marks a query whose observed class differs from the one
predicted from its SQL and partition key: usually a filter the gateway cannot route on (a function of the
key, an `OR`), or a split partition. A per-feed-range query runs once per partition; its parts count as one
execution (their RU summed).
"""

Num = st.column_config.NumberColumn
Text = st.column_config.TextColumn
# shown first: what it costs now and whether it is in trouble; then how; then where from; run ids last
SUMMARY_COLUMNS = {
    "query_name": Text("query"),
    "routing": Text("routing", help="observed in the latest run: single, targeted or fan-out"),
    "latest_mean_ru": Num("latest RU", format="%.2f", help="mean RU per execution in the query's latest run"),
    "change_pct": Num("change %", format="%+.1f%%", help="latest run against the one before"),
    "throttled": Num("throttled", help="429 responses, all runs"),
    "errors": Num("errors", help="failed executions, all runs"),
    "latest_run_start": st.column_config.DatetimeColumn("latest run (UTC)", format="%Y-%m-%d %H:%M"),
    "routing_multiplier": Num(
        "× one partition", format="%.1f×", help="RU per execution / RU of its costliest partition"
    ),
    "latest_pkrange_count": Num("partitions", help="reached in the latest run"),
    "latest_retrieved_documents": Num("retrieved docs", format="%.1f", help="per execution, latest run"),
    "latest_output_documents": Num("output docs", format="%.1f", help="per execution, latest run"),
    "ru_per_item": Num("RU per item", format="%.3f", help="latest RU / items returned per execution"),
    "latest_items": Num("items", format="%.1f", help="returned per execution, latest run"),
    "latest_pages": Num("pages", format="%.1f", help="data pages per execution, latest run"),
    "latest_round_trips": Num("round trips", format="%.1f", help="HTTP requests per execution, latest run"),
    "executions": Num("executions", help="successful executions, all runs"),
    "mean_ru": Num("mean RU", format="%.2f"),
    "median_ru": Num("median RU", format="%.2f"),
    "max_ru": Num("max RU", format="%.2f"),
    "previous_mean_ru": Num("previous run RU", format="%.2f"),
    "routing_predicted": Text("predicted routing"),
    "routing_mismatch": st.column_config.CheckboxColumn("mismatch", help="observed routing differs from predicted"),
    "latest_pkranges": Text("pkrange ids"),
    "mode": Text("mode"),
    "container": Text("container"),
    "database": Text("database"),
    "last_seen": st.column_config.DatetimeColumn("last seen (UTC)", format="%Y-%m-%d %H:%M"),
    "latest_run": Text("latest run id"),
}
COMPARE_COLUMNS = {
    "query_name": Text("query"),
    "ru_a": Num("RU, run A", format="%.2f", help="per execution"),
    "ru_b": Num("RU, run B", format="%.2f", help="per execution"),
    "change_pct": Num("change %", format="%+.1f%%", help="A against B"),
    "pkranges_a": Num("partitions, A"),
    "pkranges_b": Num("partitions, B"),
    "routing_multiplier_a": Num("× one partition, A", format="%.1f×"),
    "index_hit_ratio": Num("index hit ratio, A", format="%.2f"),
    "indexes_used": Text("indexes used, A"),
    "indexes_missing": Text("indexes that would help, A"),
    "container": Text("container"),
    "database": Text("database"),
}
WORKLOAD_COLUMNS = {
    "query_text": Text("query text", help="as the service logged it: obfuscated unless full-text query logging is on"),
    "request_charge": Num("RU", format="%.1f", help="every logged request of the text in the window, 429s included"),
    "share_pct": Num("share %", format="%.1f%%", help="of the container's logged query RU (ruscope's own left out)"),
    "requests": Num("requests", help="requests logged; a throttled attempt and its retry are two"),
    "ru_per_request": Num("RU per request", format="%.2f"),
    "throttled": Num("429s"),
    "throttled_pct": Num("429 %", format="%.1f%%", help="429 responses over the text's requests"),
    "pkranges": Num("partitions", help="pkranges the text's requests reached"),
    "container": Text("container"),
    "database": Text("database"),
    "account": Text("account"),
    "first_seen": st.column_config.DatetimeColumn("first bin (UTC)", format="%Y-%m-%d %H:%M"),
    "last_seen": st.column_config.DatetimeColumn("last bin (UTC)", format="%Y-%m-%d %H:%M"),
}
CHECK_COLUMNS = {
    "query_name": Text("query"),
    "verdict": Text("verdict", help="pass, new (not in the baseline), warn or fail"),
    "ru_before": Num("RU, baseline", format="%.2f", help="per execution, as the committed baseline holds it"),
    "ru_now": Num("RU, now", format="%.2f", help="per execution, in this check run"),
    "change_pct": Num("change %", format="%+.1f%%", help="now against the baseline"),
    "routing": Text("routing"),
    "partitions": Num("partitions"),
    "reasons": Text("reasons", help="the rules that failed or warned, and why (routing, partitions, index)"),
    "container": Text("container"),
    "sql": Text("SQL"),
}
ERROR_COLUMNS = {
    "time": st.column_config.DatetimeColumn("time (UTC)", format="%Y-%m-%d %H:%M:%S"),
    "query_name": Text("query"),
    "status": Text("status"),
    "error": Text("error"),
    "repeat": Num("repeat"),
    "mode": Text("mode"),
    "feed_range": Text("feed range"),
    "container": Text("container"),
    "database": Text("database"),
    "run_id": Text("run id"),
}


def shown(frame: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """The frame's columns a table shows, in its config's order (what matters first, run ids last)."""
    return frame[[c for c in columns if c in frame.columns]]


def render_summary(costs: QueryCosts) -> None:
    st.subheader("Per query")
    widgets.render_table(shown(costs.summary, SUMMARY_COLUMNS), key="query_costs_table", file_name="query-costs.csv", column_config=SUMMARY_COLUMNS, csv=costs.summary)  # fmt: skip
    sql = dict(zip(query_labels(costs.summary), costs.summary["sql"]))
    picked = st.selectbox("SQL of", list(sql), key="query_costs_sql", help="the queries in the table's order")
    text = sql.get(picked) if picked is not None else None
    st.code(text if isinstance(text, str) and text else "-- not recorded", language="sql")


def render_logged(view: FrameState, logged: LoggedQueries) -> None:
    """The workload's own queries from the diagnostic logs, ruscope's requests apart."""
    st.subheader("The workload's queries (diagnostic logs)")
    if logged.workload.empty:
        st.info("No query of the workload is in the diagnostic logs of this window.", icon=":material/info:")
    else:
        widgets.render_table(shown(logged.workload, WORKLOAD_COLUMNS), key="query_costs_logged", file_name="logged-queries.csv", column_config=WORKLOAD_COLUMNS, csv=logged.workload)  # fmt: skip
    since = "over the whole store" if view.window == Window() else view.window.text()
    regions = " All regions: the logs are collected summed over regions." if view.region is not None else ""
    own = logged.own
    spent = (
        f" ruscope's own query requests (its replay, told apart by its user agent) spent "
        f"{own['request_charge'].sum():,.1f} RU in {int(own['requests'].sum()):,} request(s) here, left out above."
        if not own.empty
        else ""
    )
    st.caption(
        f"Source: Log Analytics, query statistics joined with the data-plane requests on ActivityId, {since}."
        f"{spent}{regions}"
    )


def render_check(check: CheckRun) -> None:
    """The check run the dashboard was started with: the baseline against now, query by query."""
    st.subheader("Check run (ruscope check)")
    if check.report is None:
        st.warning(f"The check report {check.path} cannot be shown: {check.problem}.", icon=":material/error:")
        return
    report = check.report
    queries = report.queries
    failed = report.failed
    text = f"{failed} of {len(queries)} queries failed" if failed else f"all {len(queries)} queries passed"
    (st.error if failed else st.success)(f"{text} on {report.target or 'its target'}.")
    widgets.render_table(shown(queries, CHECK_COLUMNS), key="query_costs_check", file_name="check-run.csv", column_config=CHECK_COLUMNS, csv=queries)  # fmt: skip
    for row in queries[queries["verdict"].isin(["fail", "warn"])].to_dict("records"):
        reasons = [r for r in str(row["reasons"] or "").split("; ") if r]
        st.markdown(f"**{row['query_name']}** ({row['verdict']})\n" + "".join(f"\n- {r}" for r in reasons))
    st.caption(
        f"Source: {check.path}, written by `ruscope check` (RU per execution of the emulator's or account's run)."
    )


def render_errors(failed: pd.DataFrame, *, only_failures: bool) -> None:
    if failed.empty:
        return
    table = shown(failed, ERROR_COLUMNS)
    if only_failures:
        st.warning("No execution succeeded yet. The failed executions:", icon=":material/error:")
        widgets.render_table(table, key="query_costs_errors", file_name="failed-executions.csv", column_config=ERROR_COLUMNS, csv=failed)  # fmt: skip
        return
    with st.expander(f"Failed executions ({len(failed)})"):
        widgets.render_table(table, key="query_costs_errors", file_name="failed-executions.csv", column_config=ERROR_COLUMNS, csv=failed)  # fmt: skip


def render_runs(view: FrameState, costs: QueryCosts) -> None:
    st.subheader("Two runs side by side")
    starts = dict(zip(costs.runs["run_id"], costs.runs["start"]))
    names = {run: f"{start:%Y-%m-%d %H:%M} UTC" for run, start in starts.items()}
    runs = list(starts)
    left, right = st.columns(2)
    run_a = left.selectbox("Run A", runs, format_func=names.__getitem__, key="query_costs_run", help="newest first")
    run_b = right.selectbox(
        "Run B", runs, index=min(1, len(runs) - 1), format_func=names.__getitem__, key="query_costs_run_b"
    )
    if run_a is None or run_b is None:  # no runs to pick from
        return
    a = load_run_detail(view, run_a, starts[run_a])
    b = load_run_detail(view, run_b, starts[run_b])
    widgets.render_store_warnings(tuple(dict.fromkeys((*a.warnings, *b.warnings))))
    keep = qr.costliest_partitions(a.breakdown, b.breakdown)  # the same partitions drawn in both
    shown_a, shown_b = (qr.fold_partitions(d.breakdown, keep) for d in (a, b))
    colors = partition_colors([*partition_labels(shown_a), *partition_labels(shown_b)])
    y_range = stacked_range(shown_a, shown_b)  # one y scale: the taller bar is the costlier run's
    for column, run, breakdown, key in (
        (left, run_a, shown_a, "query_costs_breakdown"),
        (right, run_b, shown_b, "query_costs_breakdown_b"),
    ):
        figure = build_pkrange_breakdown_figure(breakdown, title=f"run {names[run]}", colors=colors, y_range=y_range)
        with column:
            widgets.render_figure(figure, key=key)
    st.caption(
        f"Run A: {run_a}, run B: {run_b}. RU per execution of each query in the run, by the partition "
        f"(container/pkrange) that charged it, the {qr.MAX_PARTITIONS} costliest on their own and the rest "
        "as container/other; gateway: the refused first attempt, the query plan and metadata reads."
    )  # fmt: skip
    compared = qr.compare_runs(a.multipliers, b.multipliers, index=a.index)
    widgets.render_table(shown(compared, COMPARE_COLUMNS), key="query_costs_compare", file_name="query-costs-runs.csv", column_config=COMPARE_COLUMNS, csv=compared)  # fmt: skip


st.title("Query costs")
view = frame_state()
costs = load_query_costs(view)
logged = load_logged_queries(view)
check = load_check_run()
widgets.render_store_warnings(tuple(dict.fromkeys((*costs.warnings, *logged.warnings))))
if check is not None:
    render_check(check)
nothing = costs.empty and logged.empty
if nothing and check is None and not costs.warnings and not logged.warnings:  # a damaged table is what its warning says
    widgets.render_empty_state(view, what="query executions", how=HOW_TO_COLLECT, commands=COLLECT)
if not logged.empty:
    render_logged(view, logged)
if not costs.empty:
    render_summary(costs)
    render_errors(costs.failed, only_failures=costs.series.empty)
    if not costs.series.empty:
        st.subheader("RU per execution over time")
        widgets.render_figure(build_ru_over_time_figure(costs.series), key="query_costs_over_time")
        st.caption("Each point: a query's mean RU per successful execution in one run (or window of runs).")
        render_runs(view, costs)
    with st.expander("Routing classes, × one partition, mismatch"):
        st.markdown(ROUTING_HELP)
