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


Card = tuple[str, str, str | None, str, str]  # label, value, delta, delta colour, help


def overview_cards(row: pd.Series) -> list[Card]:
    """One container's headline numbers for `st.metric`: (label, value, delta, delta colour, help); "" for
    a number without data, None for a delta without one. Colour "inverse": up is bad."""
    provisioned = row.get("provisioned_ru_s")
    peak_of = f" of {provisioned:,.0f}" if pd.notna(provisioned) else ""
    hot = f"Hottest range ({row.get('hot_pkrange')})" if row.get("hot_pkrange") else "Hottest range"
    return [
        ("RU consumed", _number(row.get("ru_consumed"), "{:,.0f}"), _delta(row.get("ru_consumed_change"), "{:+,.0f}"), "off", "Azure Monitor's TotalRequestUnits, else the replay's RU"),
        ("Peak RU/s" + peak_of, _number(row.get("peak_ru_s"), "{:,.1f}"), _delta(row.get("peak_ru_s_change"), "{:+,.1f}"), "inverse", "the busiest interval's RU/s, against the provisioned RU/s"),
        ("p95 RU/s", _number(row.get("p95_ru_s"), "{:,.1f}"), _delta(row.get("p95_ru_s_change"), "{:+,.1f}"), "inverse", "95% of intervals used less"),
        (hot, _number(row.get("hot_normalized_ru"), "{:.0f}%"), _delta(row.get("hot_normalized_ru_change"), "{:+.0f} pts"), "inverse", "normalized RU consumption of the hottest pkrange: 100% means its requests are throttled"),
        ("429 rate", _number(row.get("throttle_rate"), "{:.2%}"), _delta(row.get("throttle_rate_change"), "{:+.2%}"), "inverse", "1-5% is healthy (the SDK retries them); above 5% needs action"),
        ("Largest partition", _size(row.get("largest_partition_gb")), _delta(row.get("largest_partition_gb_change"), "{:+,.3f} GB"), "inverse", "of the 50 GB a physical partition holds before it splits"),
        ("Largest key", _size(row.get("largest_key_gb")), _delta(row.get("largest_key_gb_change"), "{:+,.3f} GB"), "inverse", "of the 20 GB one logical partition key may hold"),
    ]  # fmt: skip


def _size(gb: object) -> str:
    """A size in GB as people read it: GB from 1 GB, MB below, "< 1 MB" below that ("" when missing)."""
    if gb is None or pd.isna(gb):
        return ""
    value = float(gb)
    return f"{value:,.1f} GB" if value >= 1 else f"{value * 1024:,.0f} MB" if value * 1024 >= 1 else "< 1 MB"


def _number(value: object, template: str) -> str:
    return "" if value is None or pd.isna(value) else template.format(float(value))


def _delta(value: object, template: str) -> str | None:
    return None if value is None or pd.isna(value) else template.format(float(value))
