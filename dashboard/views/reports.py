"""Reports: the capacity-review report of the view (its time range and scope), the same generator and the
same bytes as `ruscope report --config F --out report.csv` (`analysis.capacity.review`, `analysis.report`):
recommended actions first, then the containers, partitions, keys and queries it is built from.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders`, the report from `analysis.capacity.review`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.capacity import review
from analysis.report import to_xlsx_bytes
from dashboard import widgets
from dashboard.loaders.report import load_report
from dashboard.state import frame_state, pricing

HOW_TO_COLLECT = "Collect the configured queries and Azure Monitor data into it, then open it here"
COLLECT = ['ruscope collect --config ruscope.toml   # [store] uri = "{store}"']
ABOUT = """The capacity review of this time range and scope: the same rows, in the same format, as
`ruscope report --config ruscope.toml --out report.csv` writes (add `--since 30d` for a time range, `--format
xlsx` for a workbook with a sheet per section). One row per number: `section` (report, container, partition, key,
query, action), the container, `subject` (a pkrange, a partition key, a query), `measure`, `value`, `unit`
and `detail`; an action also has `target`, `target_unit`, `severity`, `command` and `risk`. The first
section says what the report is of (window, store, generation time, region, version). The findings, their
thresholds and sources: docs/findings.md."""

RATE_NOTE = """429 rate %: over the whole window, from the source and the window (first and last time counted)
that its `throttle_rate` row's detail names in the whole report below."""

_NUMBER = st.column_config.NumberColumn
SECTION_TABLE = {
    "subject": st.column_config.TextColumn("subject"),
    "measure": st.column_config.TextColumn("measure"),
    "value": _NUMBER("value"),  # rounded per unit in analysis.capacity.review: shown as is, never 3.6e-05
    "unit": st.column_config.TextColumn("unit"),
    "detail": st.column_config.TextColumn("detail", width="large"),
    "target": _NUMBER("target"),
    "target_unit": st.column_config.TextColumn("target unit"),
    "severity": st.column_config.TextColumn("severity"),
    "command": st.column_config.TextColumn("command", width="large"),
    "risk": st.column_config.TextColumn("risk", width="large"),
}
SUMMARY_TABLE = {
    "ru_consumed": _NUMBER("RU consumed", format="%.0f"),
    "provisioned_ru_s": _NUMBER("provisioned RU/s", format="%.0f"),
    "peak_interval_ru_s": _NUMBER("peak RU/s, per-minute average of the busiest interval", format="%.1f"),
    "p95_ru_s": _NUMBER("p95 RU/s, of the per-minute averages", format="%.1f"),
    "p95_utilization": _NUMBER("p95 % of provisioned"),
    "hot_normalized_ru": _NUMBER("peak normalized RU %"),
    "hot_range_share": _NUMBER("hottest range % of RU"),
    "throttle_rate": _NUMBER("429 rate %"),
    "largest_partition_gb": _NUMBER("largest partition GB", format="%.3f"),
    "storage_headroom": _NUMBER("% of 50 GB free"),
    "largest_key_gb": _NUMBER("largest key GB", format="%.3f"),
    "key_headroom": _NUMBER("% of 20 GB free"),
    "autoscale_cost_ratio": _NUMBER("autoscale cost / manual", format="%.2f"),
    "replay_ru": _NUMBER("ruscope's replay RU", format="%.1f"),
}
ACTION_FIRST = ["severity", "database", "container", "detail", "target", "target_unit", "command", "risk"]
SECTIONS = {
    "report": "About this report",
    "cost": "Cost per month",
    "partition": "Partitions",
    "key": "Largest and costliest keys",
    "query": "Queries",
    "offer": "Shared-throughput databases",
}


def render_actions(report: pd.DataFrame) -> None:
    st.subheader("Recommended actions")
    actions = review.section(report, "action")
    if actions.empty:
        st.caption("No rule fired: nothing to raise, lower, re-key or rewrite in this view.")
        return
    shown = actions[[*ACTION_FIRST, *[c for c in actions.columns if c not in ACTION_FIRST]]]  # the words first
    widgets.render_table(shown, key="reports_actions", file_name="actions.csv", column_config=SECTION_TABLE)


def render_sections(report: pd.DataFrame) -> None:
    for tab, (name, title) in zip(st.tabs(list(SECTIONS.values())), SECTIONS.items()):
        rows = review.section(report, name)
        with tab:
            if rows.empty:
                st.caption(f"No {title.lower()} in this view's data.")
            else:
                key = "reports_about" if name == "report" else f"reports_{name}"  # reports_report: the whole
                widgets.render_table(rows, key=key, file_name=f"{name}s.csv", column_config=SECTION_TABLE)


st.title("Reports")
view = frame_state()
report, messages = load_report(view, pricing())
widgets.render_store_warnings(messages)
if report.empty:
    widgets.render_empty_state(view, what="data to report", how=HOW_TO_COLLECT, commands=COLLECT)
else:
    st.markdown(ABOUT)
    widgets.render_region_note(view)
    render_actions(report)
    st.subheader("Containers")
    st.caption(RATE_NOTE)
    summary = review.container_summary(report)
    widgets.render_table(summary, key="reports_containers", file_name="containers.csv", column_config=SUMMARY_TABLE)
    render_sections(report)
    st.subheader("The whole report")
    widgets.render_table(report, key="reports_report", file_name="capacity-report.csv", column_config=SECTION_TABLE)
    st.download_button(
        "Download as xlsx",
        data=to_xlsx_bytes(report),
        file_name="capacity-report.xlsx",
        mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        key="reports_xlsx",
        icon=":material/download:",
    )
