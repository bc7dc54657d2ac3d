"""The Overview's figure: how close each container is to each limit, as pure plotly from
`analysis.overview.limit_fills` (no Streamlit)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.fleet import container_choices
from analysis.overview import FILLS
from analysis.units import CHANGE_RULE, COMPACT_FROM, Number, change_text, compact_text, percent_text, size_text
from dashboard.figures.canvas import BASE_FONT_PX, empty_note, note_font, readable

COLORS = ("#1f77b4", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd")  # one per limit of FILLS, in order
LIMIT_COLOR = "#444444"
BAR_PX, BASE_PX, MIN_HEIGHT = 18, 120, 400  # a bar is as thick as its 12 px label, so labels never overlap


@readable
def build_limits_figure(fills: pd.DataFrame, *, top: int = 10, title: str | None = None) -> go.Figure:
    """Grouped horizontal bars: per container (the first `top`, the first on top), each limit's fill in %,
    with a line at 100% (at the limit); x from zero; a limit without data draws no bar. Each bar says its
    value ("0.001%") at a readable size, so a fill too small to see is still read: the figure grows with its
    bars (`BAR_PX` each) rather than shrinking their labels."""
    figure = go.Figure()
    figure.update_layout(title=title, barmode="group", legend_title_text="", xaxis_title="% of the limit")
    shown = fills.head(top)
    if shown.empty:
        return empty_note(figure, "No containers in this view.")
    figure.update_layout(height=max(MIN_HEIGHT, BASE_PX + BAR_PX * len(FILLS) * len(shown)))
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
                text=np.array([percent_text(v) for v in values.tolist()], dtype=object),  # a near-zero bar still reads
                textposition="outside",
                textfont={"size": BASE_FONT_PX},
                cliponaxis=False,
                hovertemplate="%{y}<br>" + label + ": %{x:.1f}%<extra></extra>",
            )
        )
    top_value = np.nanmax(shown[list(FILLS.values())].to_numpy(dtype=float), initial=0.0)
    figure.update_xaxes(range=[0, max(110.0, float(top_value) * 1.05)])
    figure.update_yaxes(categoryorder="array", categoryarray=labels[::-1].tolist())
    figure.add_vline(
        x=100, line_color=LIMIT_COLOR, line_dash="dash", annotation_text="limit", annotation_font=note_font()
    )
    return figure


CHANGE_UNITS = CHANGE_RULE  # said once above the cards: how every card's change reads
DeltaColor = Literal["normal", "inverse", "off"]  # st.metric's: "inverse" shows a rise in red
Card = tuple[str, str, str | None, DeltaColor, str]  # label, value, delta, delta colour, help
MAX_LABEL = 13  # characters: a longer label is cut ("Hottest range (5) n…") in a row of seven cards


def overview_cards(row: pd.Series) -> list[Card]:
    """One container's headline numbers for `st.metric`: (label, value, delta, delta colour, help); "" for
    a number without data, None for a delta without one. Colour "inverse": up is bad. Each delta carries its
    unit (`analysis.units.change_text`): a rate or share in percentage points, a quantity in its own unit. Labels are short
    (`MAX_LABEL`); what a number is of (the provisioned RU/s, which pkrange, the limit) is in its help."""
    provisioned = row.get("provisioned_ru_s")
    of = f" (provisioned: {provisioned:,.0f} RU/s)" if pd.notna(provisioned) else ""
    sustained = f"pkrange {row.get('sustained_pkrange')}: " if row.get("sustained_pkrange") else ""
    peak_value, peak_range = row.get("hot_normalized_ru"), row.get("hot_peak_pkrange")
    peak_of = f" (pkrange {peak_range})" if peak_range else ""
    peak = (
        f"; the busiest minute of any range: {peak_value:.0f}%{peak_of}"
        if peak_value is not None and pd.notna(peak_value)
        else ""
    )
    rate_from = f"from {row.get('throttle_source')}, " if row.get("throttle_source") else ""
    return [
        ("RU consumed", compact_text(row.get("ru_consumed")), change_text(row.get("ru_consumed_change"), "RU", decimals=0), "off", f"Azure Monitor's TotalRequestUnits, else the replay's RU{_exact(row.get('ru_consumed'), 'RU', 0)}; change in RU"),
        ("Peak RU/s", compact_text(row.get("peak_ru_s"), decimals=1), change_text(row.get("peak_ru_s_change"), "RU/s"), "inverse", f"the busiest interval's RU/s, per-interval average{_exact(row.get('peak_ru_s'), 'RU/s', 1)}{of}; change in RU/s"),
        ("p95 RU/s", compact_text(row.get("p95_ru_s"), decimals=1), change_text(row.get("p95_ru_s_change"), "RU/s"), "inverse", f"95% of intervals used less{_exact(row.get('p95_ru_s'), 'RU/s', 1)}{of}; change in RU/s"),
        ("Hottest range", _number(row.get("sustained_normalized_ru"), "{:.0f}%"), change_text(row.get("sustained_normalized_ru_change"), "%", decimals=0), "inverse", f"{sustained}the sustained load of the busiest pkrange: the 95th percentile of its per-minute normalized RU over the window, ruscope's replay minutes left out (what the risk and the saturation finding read; 90% or more: saturated){peak}. 100% in a minute means one second used the whole budget, not by itself 429s; change in percentage points"),
        ("429 rate", _number(row.get("throttle_rate"), "{:.2%}"), change_text(row.get("throttle_rate_change"), "share", decimals=2), "inverse", f"{rate_from}over the whole window; 1-5% is healthy (the SDK retries them), above 5% needs action; change in percentage points"),
        ("Largest range", size_text(row.get("largest_partition_gb")), change_text(row.get("largest_partition_gb_change"), "GB"), "inverse", "the largest physical partition (pkrange), of the 50 GB it holds before it splits"),
        ("Largest key", size_text(row.get("largest_key_gb")), change_text(row.get("largest_key_gb_change"), "GB"), "inverse", "the largest logical partition key, of the 20 GB one key may hold"),
    ]  # fmt: skip


def _exact(value: Number, unit: str, decimals: int) -> str:
    """The card's number in full, for its help, when the card writes it compactly (`compact_text`)."""
    if value is None or pd.isna(value) or abs(float(value)) < COMPACT_FROM:
        return ""
    return f" ({float(value):,.{decimals}f} {unit})"


def _number(value: Number, template: str) -> str:
    return "" if value is None or pd.isna(value) else template.format(float(value))
