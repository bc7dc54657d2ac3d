"""The Fleet page's figure: risk and waste of the riskiest containers as grouped bars."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from analysis.fleet import container_choices
from dashboard.figures.canvas import empty_note, readable


@readable
def build_fleet_figure(fleet: pd.DataFrame, *, top: int = 15, title: str | None = None) -> go.Figure:
    """Risk and waste (both 0..1) of the `top` first containers of a ranked fleet (`analysis.fleet`), as
    grouped horizontal bars, the first on top; a missing number draws no bar."""
    figure = go.Figure()
    figure.update_layout(title=title, barmode="group", xaxis_title="0 = none, 1 = at the limit", legend_title_text="")
    shown = fleet.head(top)
    if shown.empty:
        return empty_note(figure, "No containers in this view.")
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
