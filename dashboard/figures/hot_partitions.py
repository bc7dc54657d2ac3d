"""Pure plotly builders of the Hot partitions page: `analysis.hot.partitions` / `analysis.hot.replay` results in,
a `go.Figure` out. No Streamlit, no I/O; arrays, not Python lists, go to plotly.

The normalized-RU heatmap has a fixed 0-100% scale, so a colour means the same percentage in every view, and
its top (`SATURATED_FROM` and above: the partition spent its whole share of the RU/s in at least one second of
that minute, which is not by itself a 429) is a saturated red no lower value shares. It is not clipped: a
percentage of the budget means the same in every view, and a bulk load's 100% is a true 100%.

The logical-key heatmap's RU/s have no fixed top: one bulk-load column would set the scale and leave every
other cell in its palest colour. Its colour scale is clipped at the `CLIP_PERCENTILE`th percentile of the cells
(said in the colour bar's title; the hover keeps each cell's own value), or drawn on a log scale (`scale="log"`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analysis.hot.partitions import Heatmap
from analysis.units import significant_decimals
from dashboard.figures.canvas import colorbar, empty_note, note_font, readable, utc_naive, with_time_range

SATURATED_FROM = 99.5  # percent: cells at or above are drawn in the saturated top colour
TOP_COLOR = "#e00000"
NORMALIZED_COLORSCALE = [
    [0.0, "#f7fbff"],
    [0.3, "#9ecae1"],
    [0.6, "#4292c6"],
    [0.8, "#fed976"],
    [SATURATED_FROM / 100, "#fd8d3c"],
    [SATURATED_FROM / 100, TOP_COLOR],
    [1.0, TOP_COLOR],
]
KEY_COLORSCALE = "YlOrRd"
KeyScale = Literal["clipped", "log"]
KEY_SCALES: tuple[KeyScale, ...] = ("clipped", "log")
LOG_TICKS = (1, 2, 5)  # the log colour bar's ticks in each decade
CLIP_PERCENTILE = 99  # the key heatmap's colour scale tops out at this percentile of its cells
DEMAND_COLOR, OVER_BUDGET_COLOR, BUDGET_COLOR = "#4292c6", TOP_COLOR, "#9e9e9e"
OVER_BUDGET_NAME = "demand RU/s over budget"
ROW_HEIGHT, MIN_HEIGHT, MAX_HEIGHT = 28, 250, 900  # px: a heatmap's height follows its rows
MARGIN = {"t": 30, "b": 50, "l": 10, "r": 10}  # Plotly's default top margin (100 px) is an empty band
BAR_HEIGHT = 380  # px: the skew and demand bars


@readable
def build_normalized_heatmap_figure(heatmap: Heatmap, *, title: str | None = None) -> go.Figure:
    """Pkranges (rows, in key-space order, first on top) x time of normalized RU, 0-100%, with a vertical mark
    and a note at each split spanning the parent's row through its children's."""
    figure = _heatmap_layout(title, heatmap, y_title="pkrange (key-space order)")
    if heatmap.empty:
        return empty_note(figure, "No NormalizedRUConsumption points by pkrange in this view.")
    times, (z,) = wide_enough(heatmap, heatmap.z)
    figure.add_trace(
        go.Heatmap(
            z=z,
            x=times,
            y=np.asarray(heatmap.labels, dtype=object),
            zmin=0,
            zmax=100,
            colorscale=NORMALIZED_COLORSCALE,
            colorbar=colorbar(
                "normalized RU %",
                tickvals=np.array([0, 25, 50, 75, 100]),
                ticktext=np.array(["0", "25", "50", "75", "100: saturated"]),
            ),
            hoverongaps=False,
            hovertemplate="%{y}<br>%{x}<br>%{z:.0f}% (max in bin)<extra></extra>",
        )
    )
    _mark_own_cells(figure, heatmap)
    splits = heatmap.splits
    if splits.empty:  # no split: no marks (and an empty frame's columns are not times)
        return figure
    first_rows, last_rows = (splits[name].to_numpy(dtype=float) for name in ("first_row", "last_row"))
    for time, first, last, parent, children in zip(
        utc_naive(splits["time"]), first_rows, last_rows, splits["parent"], splits["children"]
    ):
        figure.add_shape(
            type="line",
            x0=time,
            x1=time,
            y0=first - 0.5,
            y1=last + 0.5,
            line={"color": "#000000", "width": 2, "dash": "dot"},
        )
        figure.add_annotation(
            x=time,
            y=first,
            text=f"split: {parent} → {children}",
            showarrow=True,
            arrowhead=2,
            ax=40,
            ay=-20,
            bgcolor="#ffffff",
            font=note_font(),
        )
    return figure


OWN_NAME = "ruscope's replay (left out of risk)"


def _mark_own_cells(figure: go.Figure, heatmap: Heatmap) -> None:
    """A cross on each cell holding a minute of ruscope's own replay (`Heatmap.own`): Azure Monitor counts the
    replay with the workload, the cell keeps its value, and the mark says the risk and the report leave it out."""
    if heatmap.own is None or not heatmap.own.any():
        return
    rows, columns = np.nonzero(heatmap.own)
    labels = np.asarray(heatmap.labels, dtype=object)
    figure.add_trace(
        go.Scatter(
            x=heatmap.times[columns],
            y=labels[rows],
            mode="markers",
            marker={"symbol": "x-thin-open", "size": 9, "color": "#000000", "line": {"width": 2}},
            name=OWN_NAME,
            customdata=heatmap.own[rows, columns],
            hovertemplate=(
                "%{y}<br>%{x}<br>%{customdata} minute(s) of ruscope's replay: its busiest second used at least "
                "half of the minute's figure (left out of risk and the report)<extra></extra>"
            ),
            showlegend=True,
        )
    )
    figure.update_layout(legend={"orientation": "h", "y": -0.25, "x": 0})


@readable
def build_key_heatmap_figure(
    heatmap: Heatmap, *, title: str | None = None, scale: KeyScale = "clipped", percentile: float = CLIP_PERCENTILE
) -> go.Figure:
    """The top logical keys (rows, hottest on top) x time of RU/s (mean over each bin), from zero. The colour
    scale is clipped at the `percentile`th percentile of the cells ("clipped", the colour bar says where) or
    logarithmic ("log"); the hover says each cell's own RU/s either way."""
    figure = _heatmap_layout(title, heatmap, y_title="logical key")
    if heatmap.empty:
        return empty_note(figure, "No RU per logical key in this view.")
    pkranges = heatmap.rows["pkranges"].astype(str).to_numpy(dtype=object)
    colors, options = log_colors(heatmap.z) if scale == "log" else clipped_colors(heatmap.z, percentile)
    times, (colors, values) = wide_enough(heatmap, colors, heatmap.z)
    figure.add_trace(
        go.Heatmap(
            z=colors,
            x=times,
            y=np.asarray(heatmap.labels, dtype=object),
            colorscale=KEY_COLORSCALE,
            text=np.repeat(pkranges[:, None], values.shape[1], axis=1),
            customdata=values,
            hoverongaps=False,
            hovertemplate="%{y} (pkrange %{text})<br>%{x}<br>%{customdata:.2f} RU/s<extra></extra>",
            **options,
        )
    )
    return figure


def wide_enough(heatmap: Heatmap, *grids: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The heatmap's times and `grids` (rows x times), with an empty column after a lone one: plotly.js draws
    one column one millisecond wide, on an axis ticked in fractions of a millisecond; two are a bin apart."""
    if heatmap.times.size != 1:
        return heatmap.times, list(grids)
    times = np.append(heatmap.times, heatmap.times[0] + heatmap.bin.to_timedelta64())
    return times, [np.hstack([grid.astype(float), np.full((grid.shape[0], 1), np.nan)]) for grid in grids]


def color_clip(z: np.ndarray, percentile: float = CLIP_PERCENTILE) -> float:
    """The top of a colour scale: the `percentile`th percentile of the cells with a value (0 when none)."""
    values = z[np.isfinite(z)]
    return float(np.percentile(values, percentile)) if values.size else 0.0


def clipped_colors(z: np.ndarray, percentile: float) -> tuple[np.ndarray, dict[str, object]]:
    """The cells as they are on a scale from 0 to `color_clip`; the colour bar's title says the clip when a
    cell is above it (those are drawn in the top colour)."""
    top = color_clip(z, percentile)
    largest = float(np.nanmax(z)) if np.isfinite(z).any() else 0.0
    clipped = largest > top > 0
    label = f"RU/s (clipped at p{percentile:g} = {number_text(top)})" if clipped else "RU/s"
    return z, {"zmin": 0, "zmax": top if clipped else None, "colorbar": colorbar(label)}


def log_colors(z: np.ndarray) -> tuple[np.ndarray, dict[str, object]]:
    """log10 of the cells, a cell of 0 RU/s at the smallest positive one's colour (log 0 has none), with the
    colour bar ticked in RU/s at 1, 2 and 5 times the powers of ten."""
    positive = z[np.isfinite(z) & (z > 0)]
    floor = float(positive.min()) if positive.size else 1.0
    with np.errstate(invalid="ignore"):
        colors = np.log10(np.where(np.isfinite(z), np.maximum(z, floor), np.nan))
    largest = float(positive.max()) if positive.size else floor
    low, high = int(np.floor(np.log10(floor))), int(np.ceil(np.log10(max(largest, floor))))
    steps = np.array([m * 10.0**p for p in range(low, max(high, low + 1) + 1) for m in LOG_TICKS])
    text = np.array([f"{v:,.{max(0, -int(np.floor(np.log10(v))))}f}" for v in steps], dtype=object)
    ticks = {"tickvals": np.log10(steps), "ticktext": text}  # "0.05", "0.1", "1", "1,000,000"
    return colors, {"colorbar": colorbar("RU/s (log scale)", **ticks)}


def number_text(value: float) -> str:
    """A number for a colour bar: thousands separated, 2 significant digits below 1 ("0.047", "6.5", "1,234")."""
    if value == 0 or not np.isfinite(value):
        return f"{value:g}"
    if abs(value) < 1:
        return f"{value:.{significant_decimals(value, digits=2)}f}"
    return f"{value:,.1f}" if abs(value) < 100 and value != round(value) else f"{value:,.0f}"


@readable
def build_skew_figure(shares: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Each pkrange's share of its container's load (`analysis.hot.replay.load_shares`) against the even share."""
    figure = go.Figure()
    figure.update_layout(title=title, yaxis_title="share of the load", xaxis_title="pkrange", legend_title_text="")
    figure.update_layout(height=BAR_HEIGHT, margin=_margin(title))
    figure.update_yaxes(rangemode="tozero", tickformat=".0%")
    if shares.empty:
        return empty_note(figure, "No load per pkrange in this view.")
    labels = shares["label"].astype(str).to_numpy(dtype=object)
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    figure.add_trace(
        go.Bar(
            x=labels,
            y=shares["share"].to_numpy(dtype=float),
            name="share",
            marker_color=DEMAND_COLOR,
            hovertemplate="%{x}: %{y:.1%}<extra></extra>",
        )
    )
    figure.add_trace(
        go.Scatter(
            x=labels,
            y=shares["even_share"].to_numpy(dtype=float),
            name="even share (1/n)",
            mode="lines+markers",
            line={"dash": "dash", "color": BUDGET_COLOR},
        )
    )
    return figure


@readable
def build_demand_figure(demand: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """RU/s demand per pkrange from the replayed queries next to its budget: a partition over its budget is a
    red bar of its own trace, so the legend says what red means (`OVER_BUDGET_NAME`)."""
    figure = go.Figure()
    figure.update_layout(title=title, barmode="group", yaxis_title="RU/s", xaxis_title="pkrange", legend_title_text="")
    figure.update_layout(height=BAR_HEIGHT, margin=_margin(title))
    figure.update_yaxes(rangemode="tozero")
    if demand.empty:
        return empty_note(figure, "No replayed data pages in this view.")
    labels = demand["label"].astype(str).to_numpy(dtype=object)
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    over = demand["utilization_pct"].astype(float).to_numpy() >= 100
    ru_s = demand["ru_s"].to_numpy(dtype=float)
    for name, color, mine in (("demand RU/s", DEMAND_COLOR, ~over), (OVER_BUDGET_NAME, OVER_BUDGET_COLOR, over)):
        if mine.any() or name == "demand RU/s":  # the red one only when a partition is over its budget
            figure.add_trace(
                go.Bar(
                    x=labels[mine],
                    y=ru_s[mine],
                    name=name,
                    marker_color=color,
                    offsetgroup="demand",  # one slot per pkrange, whichever trace its bar is in
                    hovertemplate="%{x}: %{y:.2f} RU/s demand<extra>" + name + "</extra>",
                )
            )
    budget = demand["budget_ru_s"].astype(float).to_numpy()
    if not np.isnan(budget).all():
        figure.add_trace(
            go.Bar(
                x=labels,
                y=budget,
                name="budget RU/s",
                marker_color=BUDGET_COLOR,
                offsetgroup="budget",
                hovertemplate="%{x}: %{y:.2f} RU/s budget<extra></extra>",
            )
        )
    return figure


def heatmap_height(rows: int, *, title: bool = False) -> int:
    """`ROW_HEIGHT` per row plus the axis title and margins (and a title's line), within MIN and MAX_HEIGHT."""
    return min(MAX_HEIGHT, max(MIN_HEIGHT, ROW_HEIGHT * rows + MARGIN["t"] + MARGIN["b"] + 40 + 30 * title))


def _heatmap_layout(title: str | None, heatmap: Heatmap, *, y_title: str) -> go.Figure:
    figure = go.Figure()
    rows = max(len(heatmap.rows), 1)
    figure.update_layout(
        title=title,
        xaxis_title=f"time (UTC), {_bin_text(heatmap.bin)} bins",
        yaxis_title=y_title,
        height=heatmap_height(rows, title=bool(title)),
        margin=_margin(title),
    )
    figure.update_yaxes(type="category", autorange="reversed")
    return figure if heatmap.empty else with_time_range(figure, heatmap.times)


def _margin(title: str | None) -> dict[str, int]:
    """`MARGIN`, with a line for the title when there is one."""
    return {**MARGIN, "t": MARGIN["t"] + 30 * bool(title)}


def _bin_text(step: pd.Timedelta) -> str:
    minutes = int(step.total_seconds() // 60)
    if minutes % 1440 == 0:
        return f"{minutes // 1440}-day"
    return f"{minutes // 60}-hour" if minutes % 60 == 0 else f"{minutes}-minute"
