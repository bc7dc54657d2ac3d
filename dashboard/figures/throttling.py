"""Pure plotly builders of the Throttling page: frames from `analysis.throttling` in, a `go.Figure` out.

No Streamlit, no I/O: tests assert on the traces. Values go to plotly as numpy arrays; y axes start at zero.
The frames are already binned (`analysis.throttling.pick_bin`) and cut to their top series, so a figure
draws at most a few thousand points.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from analysis.throttling import HEALTHY_429_RATE, pick_bin
from dashboard.figures.canvas import empty_note, line_mode, readable, utc_naive, with_time_range

BAND_COLOR = "rgba(44, 160, 44, 0.15)"
BAND_NAME = "healthy 1-5% of requests (ru-cost-model.md P12)"


@readable
def build_throttle_rate_figure(rate: pd.DataFrame, *, top: int = 10, title: str | None = None) -> go.Figure:
    """One line per container and source: the 429 rate (%) per time bin (`analysis.throttling.throttle_rate`),
    over the band the service documents as healthy, drawn as a shaded strip named in the legend. Only the
    `top` lines with the most 429s are drawn (a fleet's hundred containers would be thousands of points)."""
    figure = go.Figure()
    figure.update_layout(
        title=title, xaxis_title="time (UTC)", yaxis_title="429 rate (% of requests)", legend_title_text=""
    )
    figure.update_yaxes(rangemode="tozero")
    if rate.empty:
        return empty_note(figure, "No requests in this view.")
    low, high = (100 * bound for bound in HEALTHY_429_RATE)
    times = utc_naive(rate["time"])
    start, end = times.min(), times.max()
    figure.add_trace(
        go.Scatter(
            x=[start, end, end, start],
            y=[low, low, high, high],
            fill="toself",
            fillcolor=BAND_COLOR,
            line={"width": 0},
            mode="lines",
            name=BAND_NAME,
            hoverinfo="skip",
        )
    )
    names = rate["label"].astype(str) + " (" + rate["source"].astype(str) + ")"
    most = rate["throttled"].astype(float).groupby(names).sum().sort_index().sort_values(ascending=False, kind="stable")
    for name in sorted(most.index[:top]):
        mine = names.eq(name)
        figure.add_trace(
            go.Scatter(
                x=times[mine].to_numpy(),
                y=(rate.loc[mine, "rate"].astype(float) * 100).to_numpy(),
                customdata=rate.loc[mine, ["throttled", "requests"]].astype(float).to_numpy(),
                name=name,
                mode=line_mode(int(mine.sum())),
                hovertemplate="%{x}<br>%{y:.2f}% (%{customdata[0]:.0f} of %{customdata[1]:.0f})<extra>"
                + name
                + "</extra>",
            )
        )
    return with_time_range(figure, times)


@readable
def build_throttle_series_figure(
    series: pd.DataFrame, *, title: str | None = None, legend: str = "", empty: str = "No 429s in this view."
) -> go.Figure:
    """Stacked bars of 429s per time bin, one trace per series (`analysis.throttling.monitor_throttles`,
    `log_throttles`, `replay_throttles`): an operation, a physical partition, or a pkrange. The legend is
    shown even for one series (plotly hides a lone trace's), so a single bar colour is still named. A page
    with nothing to draw shows a message instead (`empty` here only keeps a lone figure honest)."""
    figure = go.Figure()
    figure.update_layout(
        title=title, barmode="stack", xaxis_title="time (UTC)", yaxis_title="429 responses", legend_title_text=legend
    )
    figure.update_yaxes(rangemode="tozero")
    if series.empty:
        return empty_note(figure, empty)
    figure.update_layout(showlegend=True)
    times = utc_naive(series["time"])
    width = bar_width(times)
    for name in series["series"].astype(str).unique():
        mine = series["series"].astype(str).eq(name)
        figure.add_trace(
            go.Bar(
                x=times[mine].to_numpy(),
                y=series.loc[mine, "throttled"].astype(float).to_numpy(),
                name=name,
                width=width,
                hovertemplate="%{x}<br>%{y:.0f} 429s<extra>" + name + "</extra>",
            )
        )
    return with_time_range(figure, times)


def bar_width(times: pd.Series) -> float | None:
    """A bar's width in ms when the series have a single bin (plotly.js draws it 1 ms wide, `pick_bin`'s
    smallest bin instead); None, plotly's own (the bins' spacing), otherwise."""
    if times.nunique() != 1:
        return None
    return 0.8 * pick_bin(times).total_seconds() * 1000
