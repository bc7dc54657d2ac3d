"""Pure plotly builders of the Storage page: frames from `analysis.storage` in, a `go.Figure` out.

No Streamlit, no I/O: tests assert on the traces. Values go to plotly as numpy arrays; y axes start at zero;
a limit is a dashed horizontal line named in the legend, so a bar's distance to it reads at a glance.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from cosmoscore.limits import GB

LIMIT_COLOR = "#d62728"
BAR_COLOR = "#1f77b4"
MB_PER_KB = 1 / 1024


def build_partition_fill_figure(
    fill: pd.DataFrame, *, limit_bytes: int, top: int = 50, title: str | None = None
) -> go.Figure:
    """One bar per physical partition (`analysis.storage.partition_fill`, fullest first), in GB, against
    the partition limit (50 GB)."""
    return _fill_bars(
        fill.head(top),
        limit_bytes=limit_bytes,
        title=title,
        x_title="physical partition (pkrange)",
        limit_name=f"partition limit ({limit_bytes / GB:g} GB)",
        empty="No partition snapshots in this view.",
    )


def build_key_fill_figure(
    keys: pd.DataFrame, *, limit_bytes: int, top: int = 20, title: str | None = None
) -> go.Figure:
    """One bar per large logical key (`analysis.storage.key_fill`, largest first), in GB, against the
    logical partition limit (20 GB)."""
    shown = keys.head(top)
    return _fill_bars(
        shown.assign(label=shown["label"].astype(str) + " (" + shown["source"].astype(str) + ")"),
        limit_bytes=limit_bytes,
        title=title,
        x_title="logical partition key (source)",
        limit_name=f"logical partition limit ({limit_bytes / GB:g} GB)",
        empty="No logical key sizes in this view.",
    )


def build_container_growth_figure(sizes: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """One line per container: its total size in MB at each snapshot (`analysis.storage.container_sizes`)."""
    figure = go.Figure()
    figure.update_layout(
        title=title, xaxis_title="snapshot time (UTC)", yaxis_title="size (MB)", legend_title_text="container"
    )
    figure.update_yaxes(rangemode="tozero")
    if sizes.empty:
        return empty_note(figure, "No partition snapshots in this view.")
    for label in sorted(sizes["label"].astype(str).unique()):
        mine = sizes[sizes["label"].astype(str).eq(label)]
        figure.add_trace(
            go.Scatter(
                x=utc_naive(mine["time"]).to_numpy(),
                y=(mine["size_kb"].astype(float) * MB_PER_KB).to_numpy(),
                name=label,
                mode="lines+markers",
                hovertemplate="%{x}<br>%{y:.3f} MB<extra>" + label + "</extra>",
            )
        )
    return figure


def _fill_bars(
    frame: pd.DataFrame, *, limit_bytes: int, title: str | None, x_title: str, limit_name: str, empty: str
) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(title=title, xaxis_title=x_title, yaxis_title="size (GB)", legend_title_text="")
    figure.update_yaxes(rangemode="tozero")
    if frame.empty:
        return empty_note(figure, empty)
    labels = frame["label"].astype(str).to_numpy()
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    figure.add_trace(
        go.Bar(
            x=labels,
            y=frame["size_gb"].astype(float).to_numpy(),
            name="size",
            marker_color=BAR_COLOR,
            customdata=(frame["fill"].astype(float) * 100).to_numpy(),
            hovertemplate="%{x}<br>%{y:.6f} GB<br>%{customdata:.4f}% of the limit<extra></extra>",
        )
    )
    limit = limit_bytes / GB
    figure.add_trace(
        go.Scatter(
            x=labels,
            y=[limit] * len(labels),
            name=limit_name,
            mode="lines",
            line={"color": LIMIT_COLOR, "dash": "dash"},
            hoverinfo="skip",
        )
    )
    return figure


def utc_naive(times: pd.Series) -> pd.Series:
    """Times in UTC without a zone (plotly.js ignores zones)."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def empty_note(figure: go.Figure, message: str) -> go.Figure:
    """A figure with nothing to draw says so in its middle, rather than showing empty axes."""
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return figure
