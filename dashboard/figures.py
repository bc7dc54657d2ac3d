"""Pure plotly figure builders: frames from `analysis` in, a `go.Figure` out.

No Streamlit, no I/O, no caching: tests assert on the traces these return. Times are drawn in UTC (as naive
timestamps, since plotly.js ignores time zones), and a pkrange keeps its colour in every figure and every
run: the colour is a function of its id (`pkrange_color`), not of its position in a figure.
"""

from __future__ import annotations

import zlib

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from analysis.fleet import container_choices
from analysis.query_costs import GATEWAY, QUERY_KEY, pkrange_sort_key

PKRANGE_PALETTE = qualitative.Alphabet  # 26 distinct colours; ids beyond wrap around
GATEWAY_COLOR = "#9e9e9e"
GATEWAY_LABEL = "gateway"


def pkrange_color(pkrange_id: str) -> str:
    """The colour of a pkrange id: numeric ids index the palette, other ids hash into it; the gateway is grey."""
    if pkrange_id == GATEWAY:
        return GATEWAY_COLOR
    index = int(pkrange_id) if pkrange_id.isdigit() else zlib.crc32(pkrange_id.encode())
    return PKRANGE_PALETTE[index % len(PKRANGE_PALETTE)]


def pkrange_label(pkrange_id: str) -> str:
    """The legend name of a pkrange id: "pkrange 3", or "gateway" for RU not charged by a data page."""
    return GATEWAY_LABEL if pkrange_id == GATEWAY else f"pkrange {pkrange_id}"


def query_labels(frame: pd.DataFrame) -> pd.Series:
    """The query name, or `database/container/query` when the frame spans several containers."""
    if frame[["database", "container"]].drop_duplicates().shape[0] <= 1:
        return frame["query_name"].astype(str)
    return frame[QUERY_KEY].astype(str).agg("/".join, axis=1)


def build_ru_over_time_figure(series: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """One line per query: RU of each (logical) execution over time (`analysis.query_costs.ru_per_execution`)."""
    figure = go.Figure()
    figure.update_layout(
        title=title,
        xaxis_title="time (UTC)",
        yaxis_title="RU per execution",
        legend_title_text="query",
        hovermode="closest",
    )
    if series.empty:
        return _empty(figure, "No successful executions to draw.")
    labels = query_labels(series)
    times = _utc_naive(series["time"])
    for label in sorted(labels.unique()):
        mine = labels.eq(label)
        figure.add_trace(
            go.Scatter(
                x=times[mine].tolist(),
                y=series.loc[mine, "total_ru"].astype(float).tolist(),
                name=label,
                mode="lines+markers",
                customdata=series.loc[mine, "run_id"].astype(str).tolist(),
                hovertemplate="%{x}<br>%{y:.2f} RU<br>run %{customdata}<extra>" + label + "</extra>",
            )
        )
    return figure


def build_pkrange_breakdown_figure(
    breakdown: pd.DataFrame, *, title: str | None = None, y_title: str = "RU per execution"
) -> go.Figure:
    """Stacked bars: one bar per query, one segment per pkrange (`analysis.query_costs.pkrange_breakdown`).

    Bars keep the frame's query order (most expensive first); segments stack in pkrange order with the
    gateway on top; one trace per pkrange id, so a pkrange has the same colour in every bar.
    """
    figure = go.Figure()
    figure.update_layout(
        title=title, barmode="stack", xaxis_title="query", yaxis_title=y_title, legend_title_text="served by"
    )
    if breakdown.empty:
        return _empty(figure, "No requests recorded for this run.")
    labels = query_labels(breakdown)
    figure.update_xaxes(categoryorder="array", categoryarray=list(dict.fromkeys(labels)))
    for pkrange_id in sorted(breakdown["pkrange_id"].unique(), key=pkrange_sort_key):
        mine = breakdown["pkrange_id"].eq(pkrange_id)
        name = pkrange_label(pkrange_id)
        figure.add_trace(
            go.Bar(
                x=labels[mine].tolist(),
                y=breakdown.loc[mine, "ru"].astype(float).tolist(),
                name=name,
                marker_color=pkrange_color(pkrange_id),
                hovertemplate="%{x}<br>%{y:.2f} RU<extra>" + name + "</extra>",
            )
        )
    return figure


def build_fleet_figure(fleet: pd.DataFrame, *, top: int = 15, title: str | None = None) -> go.Figure:
    """Risk and waste (both 0..1) of the `top` first containers of a ranked fleet (`analysis.fleet`), as
    grouped horizontal bars, the first on top; a missing number draws no bar."""
    figure = go.Figure()
    figure.update_layout(title=title, barmode="group", xaxis_title="0 = none, 1 = at the limit", legend_title_text="")
    shown = fleet.head(top)
    if shown.empty:
        return _empty(figure, "No containers in this view.")
    labels = list(container_choices(shown).values())
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
    for column, name, color in (("risk", "risk", "#d62728"), ("waste", "waste", "#1f77b4")):
        values = shown[column].astype(float)
        figure.add_trace(
            go.Bar(
                x=[None if pd.isna(v) else float(v) for v in values],
                y=labels,
                name=name,
                orientation="h",
                marker_color=color,
                hovertemplate="%{y}<br>" + name + " %{x:.2f}<extra></extra>",
            )
        )
    return figure


def _utc_naive(times: pd.Series) -> pd.Series:
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def _empty(figure: go.Figure, message: str) -> go.Figure:
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return figure
