"""Overview: per container for the time range, RU consumed, peak and p95 RU/s against provisioned, the
busiest range's sustained normalized RU (p95), the 429 rate against the healthy 1-5%, storage against
50 GB / 20 GB, each with its change against the period before; the costliest queries; the open alerts.

Cards: one per container, in the Fleet's risk order, up to `MAX_CARDS` (12); with more, the page says
"showing 12 of M" and points at the Fleet page and the table, which have them all. A change reads in
percentage points for a rate or share and in the measure's own unit for a quantity
(`dashboard.figures.overview.CHANGE_UNITS`), the same on every card.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders` (read from the start of the compared period, `analysis.overview.periods`), the numbers
from `analysis.overview` (over `analysis.fleet`) and `analysis.alerts`, the figure from
`dashboard.figures.overview`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
import streamlit as st

from analysis import alerts, overview, units
from analysis.scope import Window
from dashboard import widgets
from dashboard.display import markdown_text
from dashboard.figures.overview import CHANGE_UNITS, build_limits_figure, overview_cards
from dashboard.loaders.overview import load_overview
from dashboard.loaders.tables import load_view
from dashboard.state import FrameState, frame_state

HOW_TO_COLLECT = "Collect the configured queries and Azure Monitor data into it, then open it here"
COLLECT = ['ruscope collect --config ruscope.toml   # [store] uri = "{store}"']
# A card per container, in the Fleet's risk order, up to MAX_CARDS; past that the page says "showing N of M"
# and points at the Fleet page and the table below (both have them all).
MAX_CARDS = 12
CARDS_CUT = (
    "Showing cards for {shown} of {count} containers, the riskiest first; see Fleet (or the table below) for all."
)
_NUMBER = st.column_config.NumberColumn
CONTAINER_TABLE = {
    "ru_consumed": _NUMBER("RU consumed", format="%.0f"),
    "ru_consumed_change": _NUMBER("RU change (RU)", format="%+.0f"),
    "ru_source": st.column_config.TextColumn("RU from"),
    "provisioned_ru_s": _NUMBER("provisioned RU/s", format="%.0f"),
    "autoscale": st.column_config.CheckboxColumn("autoscale"),
    "peak_ru_s": _NUMBER("peak RU/s", format="%.1f"),
    "peak_ru_s_change": _NUMBER("peak change (RU/s)", format="%+.1f"),
    "p95_ru_s": _NUMBER("p95 RU/s", format="%.1f"),
    "p95_ru_s_change": _NUMBER("p95 change (RU/s)", format="%+.1f"),
    "p95_utilization": _NUMBER("p95 of provisioned", format="%.2f"),
    "hot_pkrange": st.column_config.TextColumn("hottest pkrange"),
    "hot_range_share": _NUMBER("its RU share", format="%.2f"),
    "hot_normalized_ru": _NUMBER("peak normalized RU %", format="%.0f"),
    "hot_peak_pkrange": st.column_config.TextColumn("peak pkrange"),
    "hot_normalized_ru_change": _NUMBER("peak change (pts)", format="%+.0f"),
    "pkranges": _NUMBER("pkranges"),
    "skew_source": st.column_config.TextColumn("skew from"),
    "throttle_rate": _NUMBER("429 rate %", format="%.2f"),
    "throttle_rate_change": _NUMBER("429 change (pts)", format="%+.2f"),
    "throttle_source": st.column_config.TextColumn("429s from"),
    **widgets.RATE_WINDOW_COLUMNS,
    "throttle_flag": st.column_config.CheckboxColumn("above 5%"),
    "executions": _NUMBER("executions"),
    "storage_headroom": _NUMBER("of 50 GB free", format="%.2f"),
    "key_headroom": _NUMBER("of 20 GB free", format="%.2f"),
}
RATES = ["throttle_rate", "throttle_rate_change"]  # shown in % and points, as the cards read them
SIZES = ["largest_partition_gb", "largest_partition_gb_change", "largest_key_gb", "largest_key_gb_change"]


def size_config(unit: str) -> dict[str, Any]:
    """The size columns' headers in the unit the table shows them in (`analysis.units.gb_in_fitting_unit`)."""
    number, change = ("%.0f", "%+.0f") if unit == "KB" else ("%.3f", "%+.3f")
    return {
        "largest_partition_gb": _NUMBER(f"largest partition {unit}", format=number),
        "largest_partition_gb_change": _NUMBER(f"partition change ({unit})", format=change),
        "largest_key_gb": _NUMBER(f"largest key {unit}", format=number),
        "largest_key_gb_change": _NUMBER(f"key change ({unit})", format=change),
    }


QUERY_TABLE = {
    "query_name": st.column_config.TextColumn("query"),
    "executions": _NUMBER("executions"),
    "total_ru": _NUMBER("total RU", format="%.2f"),
    "mean_ru": _NUMBER("mean RU", format="%.2f"),
    "mean_ru_change_pct": _NUMBER("mean change %", format="%+.1f"),
    "max_ru": _NUMBER("max RU", format="%.2f"),
    "routing": st.column_config.TextColumn("routing"),
    "pkrange_count": _NUMBER("pkranges"),
    "sql": st.column_config.TextColumn("SQL"),
}
ALERT_TABLE = {
    "time": st.column_config.DatetimeColumn("evaluated (UTC)", timezone="UTC"),
    "rule": st.column_config.TextColumn("rule"),
    "subject": st.column_config.TextColumn("subject"),
    "value": _NUMBER("value", format="%.2f"),
    "threshold": _NUMBER("threshold", format="%.2f"),
    "message": st.column_config.TextColumn("what"),
}
BAND = (
    "429 rate: the service documents 1-5% of requests answered 429 as healthy (the SDK retries them; "
    "ru-cost-model.md P12, learn.microsoft.com troubleshoot-request-rate-too-large); above 5% is flagged."
)


def load_open_alerts(view: FrameState) -> pd.DataFrame:
    """The alerts of each account's latest evaluation, in the view's scope, whatever the time range."""
    stored = load_view(dataclasses.replace(view, window=Window()), "alerts", columns=alerts.STORED_COLUMNS)
    return alerts.latest_alerts(stored.frame)


def render_cards(containers: pd.DataFrame) -> None:
    """A card per container (the first `MAX_CARDS` in risk order, saying so when there are more)."""
    if len(containers) > MAX_CARDS:
        st.caption(CARDS_CUT.format(shown=MAX_CARDS, count=len(containers)))
    st.caption(CHANGE_UNITS)
    for _, row in containers.head(MAX_CARDS).iterrows():
        st.subheader(f"{markdown_text(row['database'])} / {markdown_text(row['container'])}", divider="gray")
        cards = overview_cards(row)
        for column, (label, value, delta, colour, about) in zip(st.columns(len(cards)), cards):
            same = units.reads_unchanged(delta)  # no change: no arrow and no colour, not a rise in red
            column.metric(
                label, value or "-", delta, delta_color="off" if same else colour, delta_arrow="off" if same else "auto",
                help=about,
            )  # fmt: skip


def render_alerts(open_alerts: pd.DataFrame) -> None:
    st.subheader("Open alerts")
    if open_alerts.empty:
        st.caption("None open: the latest evaluation of the config's [alerts] fired nothing (or none has run yet).")
        return
    widgets.render_table(open_alerts, key="overview_alerts", file_name="open-alerts.csv", column_config=ALERT_TABLE)


st.title("Overview")
view = frame_state()
data = load_overview(view)
widgets.render_store_warnings(data.warnings)
containers, queries, span = data.containers, data.queries, data.span
open_alerts = load_open_alerts(view)
if containers.empty and open_alerts.empty:
    widgets.render_empty_state(view, what="data", how=HOW_TO_COLLECT, commands=COLLECT)
else:
    if containers["provisioned_ru_s"].isna().all() and containers["hot_normalized_ru"].isna().all():
        widgets.render_monitor_missing(
            what="metrics",
            shown="the replayed queries' RU and skew across pkranges, and the 429 rate of the diagnostic logs or the replay",
            adds="Metrics add the provisioned, peak and p95 RU/s, each range's normalized RU and the 429 rate of "
            "all traffic; the storage collector adds partition and key sizes against 50 GB and 20 GB.",
        )
    st.caption(f"{span.note} {BAND}")
    widgets.render_rate_window(containers["throttle_start"], containers["throttle_end"])
    widgets.render_region_note(view)
    render_cards(containers)
    fills = overview.limit_fills(containers)
    widgets.render_figure(build_limits_figure(fills, title="How close to each limit"), key="overview_limits")
    st.subheader("Containers")
    sized, unit = units.gb_in_fitting_unit(containers, SIZES)  # the CSV keeps GB and the rates' fractions
    sized = units.rates_in_percent(sized, RATES)
    config = {**CONTAINER_TABLE, **size_config(unit)}
    widgets.render_table(
        sized, key="overview_containers", file_name="overview.csv", column_config=config, csv=containers
    )
    st.subheader("Costliest queries")
    widgets.render_table(queries, key="overview_queries", file_name="costliest-queries.csv", column_config=QUERY_TABLE)
    render_alerts(open_alerts)
