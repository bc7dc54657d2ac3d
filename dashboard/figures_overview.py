"""The Overview's figure: how close each container is to each limit, as pure plotly from
`analysis.overview.limit_fills` (no Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.fleet import container_choices
from analysis.overview import FILLS

COLORS = ("#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd")  # one per limit of FILLS, in order
LIMIT_COLOR = "#444444"


def build_limits_figure(fills: pd.DataFrame, *, top: int = 10, title: str | None = None) -> go.Figure:
    """Grouped horizontal bars: per container (the first `top`, the first on top), each limit's fill in %,
    with a line at 100% (at the limit); x from zero; a limit without data draws no bar."""
    figure = go.Figure()
    figure.update_layout(title=title, barmode="group", legend_title_text="", xaxis_title="% of the limit")
    shown = fills.head(top)
    if shown.empty:
        figure.add_annotation(text="No containers in this view.", showarrow=False, xref="paper", yref="paper")
        return figure
    labels = np.array(list(container_choices(shown).values()), dtype=object)
    for label, color in zip(FILLS.values(), COLORS):
        values = shown[label].astype(float).to_numpy()
        figure.add_trace(
            go.Bar(
                x=values,
                y=labels,
                name=label,
                orientation="h",
                marker_color=color,
                hovertemplate="%{y}<br>" + label + ": %{x:.1f}%<extra></extra>",
            )
        )
    top_value = np.nanmax(shown[list(FILLS.values())].to_numpy(dtype=float), initial=0.0)
    figure.update_xaxes(range=[0, max(110.0, float(top_value) * 1.05)])
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1].tolist())
    figure.add_vline(x=100, line_color=LIMIT_COLOR, line_dash="dash", annotation_text="limit")
    return figure


def overview_cards(row: pd.Series) -> list[tuple[str, str, str | None, str]]:
    """One container's headline numbers for `st.metric`: (label, value, delta, delta colour); "" for a
    number without data, None for a delta without one. Colour "inverse": up is bad."""
    provisioned = row.get("provisioned_ru_s")
    peak_of = f" of {provisioned:,.0f}" if pd.notna(provisioned) else ""
    return [
        ("RU consumed", _number(row.get("ru_consumed"), "{:,.0f}"), _delta(row.get("ru_consumed_change"), "{:+,.0f}"), "off"),
        ("Peak RU/s" + peak_of, _number(row.get("peak_ru_s"), "{:,.1f}"), _delta(row.get("peak_ru_s_change"), "{:+,.1f}"), "inverse"),
        ("p95 RU/s", _number(row.get("p95_ru_s"), "{:,.1f}"), _delta(row.get("p95_ru_s_change"), "{:+,.1f}"), "inverse"),
        (
            f"Hottest range ({row.get('hot_pkrange') or '?'}) normalized RU",
            _number(row.get("hot_normalized_ru"), "{:.0f}%"),
            _delta(row.get("hot_normalized_ru_change"), "{:+.0f} pts"),
            "inverse",
        ),
        ("429 rate", _number(row.get("throttle_rate"), "{:.2%}"), _delta(row.get("throttle_rate_change"), "{:+.2%}"), "inverse"),
        ("Largest partition GB (of 50)", _number(row.get("largest_partition_gb"), "{:,.2f}"), _delta(row.get("largest_partition_gb_change"), "{:+,.2f}"), "inverse"),
        ("Largest key GB (of 20)", _number(row.get("largest_key_gb"), "{:,.2f}"), _delta(row.get("largest_key_gb_change"), "{:+,.2f}"), "inverse"),
    ]  # fmt: skip


def _number(value: object, template: str) -> str:
    return "" if value is None or pd.isna(value) else template.format(float(value))


def _delta(value: object, template: str) -> str | None:
    return None if value is None or pd.isna(value) else template.format(float(value))
