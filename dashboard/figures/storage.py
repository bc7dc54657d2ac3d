"""Pure plotly builders of the Storage page: frames from `analysis.storage` in, a `go.Figure` out.

No Streamlit, no I/O: tests assert on the traces. Values go to plotly as numpy arrays; y axes start at zero.
Sizes are drawn in the unit that fits the largest (`analysis.storage.size_unit`: KB, MB or GB), so a few KB
are visible bars. A limit is a dashed horizontal line named in the legend while the bars reach at least
`OFF_SCALE_BELOW` of it; below that the line would flatten every bar to nothing, so the figure names the
limit in a note instead ("limit 50 GB, off the scale: the largest is 0.00044% of it").
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from analysis.storage import SOURCES, SizeUnit, in_unit, percent_decimals, size_unit
from cosmoscore.limits import GB
from dashboard.figures.canvas import empty_note, line_mode, note_font, readable, utc_naive, with_time_range

LIMIT_COLOR = "#d62728"
BAR_COLOR = "#1f77b4"
SOURCE_COLORS = {"statistics": BAR_COLOR, "logs": "#ff7f0e"}
OFF_SCALE_BELOW = 0.01  # bars under 1% of the limit: the limit is named in a note, not drawn


@readable
def build_partition_fill_figure(
    fill: pd.DataFrame, *, limit_bytes: int, top: int = 50, title: str | None = None
) -> go.Figure:
    """One bar per physical partition (`analysis.storage.partition_fill`, fullest first), against the
    partition limit (50 GB)."""
    shown = fill.head(top)
    return _fill_bars(
        shown,
        {"size": shown["size_kb"]} if not shown.empty else {},
        limit_bytes=limit_bytes,
        title=title,
        x_title="physical partition (pkrange)",
        limit_name=f"partition limit ({limit_bytes / GB:g} GB)",
        empty="No partition snapshots in this view.",
    )


@readable
def build_key_fill_figure(
    keys: pd.DataFrame, *, limit_bytes: int, top: int = 20, title: str | None = None
) -> go.Figure:
    """The large logical keys (`analysis.storage.key_fill`, largest first), each once on the axis, one bar
    per source that measured it ("statistics", "logs"), against the logical partition limit (20 GB)."""
    shown = keys.head(top)
    bars = {s: shown[f"{s}_kb"] for s in SOURCES if f"{s}_kb" in shown and shown[f"{s}_kb"].notna().any()}
    return _fill_bars(
        shown,
        bars,
        limit_bytes=limit_bytes,
        title=title,
        x_title="logical partition key",
        limit_name=f"logical partition limit ({limit_bytes / GB:g} GB)",
        empty="No logical key sizes in this view.",
    )


@readable
def build_container_growth_figure(sizes: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """One line per container: its total size at each snapshot (`analysis.storage.container_sizes`), in the
    unit that fits the largest."""
    unit = size_unit(sizes["size_kb"]) if not sizes.empty else SizeUnit("MB", 1024.0)
    figure = go.Figure()
    figure.update_layout(
        title=title,
        xaxis_title="snapshot time (UTC)",
        yaxis_title=f"size ({unit.name})",
        legend_title_text="container",
    )
    figure.update_yaxes(rangemode="tozero")
    if sizes.empty:
        return empty_note(figure, "No partition snapshots in this view.")
    for label in sorted(sizes["label"].astype(str).unique()):
        mine = sizes[sizes["label"].astype(str).eq(label)]
        figure.add_trace(
            go.Scatter(
                x=utc_naive(mine["time"]).to_numpy(),
                y=in_unit(mine["size_kb"], unit).to_numpy(),
                name=label,
                mode=line_mode(len(mine)),
                hovertemplate="%{x}<br>%{y:.3f} " + unit.name + "<extra>" + label + "</extra>",
            )
        )
    return with_time_range(figure, utc_naive(sizes["time"]))


def _fill_bars(
    frame: pd.DataFrame,
    bars: dict[str, pd.Series],
    *,
    limit_bytes: int,
    title: str | None,
    x_title: str,
    limit_name: str,
    empty: str,
) -> go.Figure:
    """One bar trace per entry of `bars` (sizes in KB, one per row of `frame`), in the unit that fits, and
    the limit as a line, or as a note when the bars are far below it (see the module docstring)."""
    figure = go.Figure()
    figure.update_layout(title=title, xaxis_title=x_title, legend_title_text="", barmode="group")
    figure.update_yaxes(rangemode="tozero")
    if frame.empty or not bars:
        return empty_note(figure.update_layout(yaxis_title="size"), empty)
    sizes = pd.concat(bars.values(), ignore_index=True)
    unit = size_unit(sizes)
    figure.update_layout(yaxis_title=f"size ({unit.name})", showlegend=True)
    labels = frame["label"].astype(str).to_numpy()
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    limit_kb = limit_bytes / 1024
    for name, size_kb in bars.items():
        percent = size_kb.astype(float) / limit_kb * 100
        decimals = percent_decimals(percent)
        figure.add_trace(
            go.Bar(
                x=labels,
                y=in_unit(size_kb, unit).to_numpy(),
                name=name,
                marker_color=SOURCE_COLORS.get(name, BAR_COLOR),
                customdata=percent.to_numpy(),
                hovertemplate=f"%{{x}}<br>%{{y:.3f}} {unit.name}<br>%{{customdata:.{decimals}f}}% of the limit"
                + f"<extra>{name}</extra>",
            )
        )
    largest = float(sizes.max())
    if largest >= OFF_SCALE_BELOW * limit_kb:
        figure.add_trace(
            go.Scatter(
                x=labels,
                y=[limit_kb / unit.kb] * len(labels),
                name=limit_name,
                mode="lines",
                line={"color": LIMIT_COLOR, "dash": "dash"},
                hoverinfo="skip",
            )
        )
        return figure
    share = largest / limit_kb * 100
    note = f"limit {limit_bytes / GB:g} GB, off the scale: the largest is {share:.{percent_decimals(pd.Series([share]))}f}% of it"
    figure.add_annotation(
        text=note,
        showarrow=False,
        xref="paper",
        yref="paper",
        x=1,
        y=1.08,
        xanchor="right",
        font=note_font(color=LIMIT_COLOR),
    )
    return figure
