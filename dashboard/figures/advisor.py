"""Pure plotly figures of the Advisor page: the designs of one advice side by side (frames from
`analysis.advice` in, a `go.Figure` out; no Streamlit, tests assert on the traces)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from dashboard.figures.canvas import colorbar, empty_note, note_font, readable

PALETTE = qualitative.Safe  # colour-blind safe; a design keeps its colour across the page's figures
_ROW_PX, _BASE_PX = 34, 140


def design_colors(order: list[str]) -> dict[str, str]:
    """One colour per design, by rank."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(order)}


@readable
def build_ru_per_query_figure(matrix: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Grouped bars: RU of one execution of each query (and the weighted mix) under each design."""
    figure = go.Figure()
    if matrix.empty:
        return empty_note(figure, "No workload queries were measured.")
    colors = design_colors(list(matrix.columns))
    for design in matrix.columns:
        figure.add_bar(
            x=np.array(matrix.index, dtype=object),
            y=matrix[design].to_numpy(dtype=float),
            name=str(design),
            marker_color=colors[design],
            hovertemplate="%{x}<br>" + str(design).replace("%", "%%") + ": %{y:.2f} RU<extra></extra>",
        )
    figure.update_layout(
        barmode="group",
        title=title,
        yaxis_title="RU per execution",
        xaxis_title=None,
        legend_title_text="design",
        margin={"t": 40 if title else 10},
    )
    figure.update_yaxes(rangemode="tozero")
    return figure


@readable
def build_skew_heatmap_figure(matrix: pd.DataFrame, even: pd.Series, *, title: str | None = None) -> go.Figure:
    """Designs (rows, best first) by physical partition (columns, EPK order), coloured by the share of
    the writes each partition takes; the hover compares it with the design's even share (1/P)."""
    figure = go.Figure()
    if matrix.empty:
        return empty_note(figure, "No write distribution was measured.")
    shares = matrix.to_numpy(dtype=float) * 100
    evens = even.reindex(matrix.index).to_numpy(dtype=float) * 100
    custom = np.repeat(evens[:, None], shares.shape[1], axis=1)
    figure.add_heatmap(
        z=shares,
        x=[f"P{int(p)}" for p in matrix.columns],
        y=[str(d) for d in matrix.index],
        customdata=custom,
        colorscale="YlOrRd",
        zmin=0,
        colorbar=colorbar("% of writes"),
        hovertemplate="%{y}<br>%{x}: %{z:.1f}% of writes (even: %{customdata:.1f}%)<extra></extra>",
        xgap=1,
        ygap=1,
    )
    figure.update_layout(
        title=title,
        height=_BASE_PX + _ROW_PX * len(matrix.index),
        xaxis_title="physical partition (EPK order)",
        margin={"t": 40 if title else 10},
    )
    figure.update_yaxes(autorange="reversed")
    return figure


@readable
def build_limit_projection_figure(projection: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Each design's largest logical partition over the coming days against the logical-partition limit."""
    figure = go.Figure()
    if projection.empty:
        return empty_note(figure, "No storage projection was measured.")
    order = list(dict.fromkeys(projection["design"]))
    colors = design_colors(order)
    for design, rows in projection.groupby("design", sort=False):
        figure.add_scatter(
            x=rows["day"].to_numpy(dtype=float),
            y=rows["gb"].to_numpy(dtype=float),
            mode="lines",
            name=str(design),
            line={"color": colors[str(design)]},
            hovertemplate=str(design).replace("%", "%%") + "<br>day %{x:.0f}: %{y:.2f} GB<extra></extra>",
        )
    limit = float(projection["limit_gb"].max())
    figure.add_hline(
        y=limit,
        line_dash="dash",
        line_color="#b71c1c",
        annotation_text=f"{limit:.0f} GB limit",
        annotation_font=note_font(),
    )
    figure.update_layout(
        title=title,
        xaxis_title="days from the sample",
        yaxis_title="largest logical partition (GB)",
        legend_title_text="design",
        margin={"t": 40 if title else 10},
    )
    figure.update_yaxes(rangemode="tozero", range=[0, limit * 1.1])
    return figure
