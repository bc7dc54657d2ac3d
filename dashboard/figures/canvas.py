"""What every figure module shares: the readable layout every builder's figure ends with (`@readable`: no text
under `MIN_FONT_PX`, axis labels pushing the margins rather than being cut), times drawn in UTC on an axis that
never ticks in fractions of a second (`time_range`), the note of a figure with nothing to draw, and its text
drawn as written (`plain_figure`).

Font sizes are set in the figure, not left to the theme: Streamlit's theme happens to draw 12 px today, but a
figure shown with `theme=None`, exported, or drawn by a later Streamlit keeps its sizes. Text plotly shrinks
to fit (a bar's label) is held at `MIN_FONT_PX` by `uniformtext`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ParamSpec

import numpy as np
import pandas as pd
import plotly.graph_objects as go

P = ParamSpec("P")
BASE_FONT_PX = 12  # tick labels, legend, hover, annotations, colour bars
MIN_FONT_PX = 11  # no text of a figure is smaller (issue 23: labels of at least 11 px)
TITLE_FONT_PX = 16
AXIS_TITLE_FONT_PX = 14
# a line marks each of its points up to this many: beyond, a marker per point is a blur and costs the browser
# one SVG path each (Query costs' 50 lines of 240 points took headless Chromium ~2 s to draw with markers)
MARKED_POINTS = 60
MIN_TIME_SPAN = pd.Timedelta(minutes=10)  # a time axis spans at least this: one point ticks in minutes, not in µs
_AXIS = {"automargin": True, "tickfont": {"size": BASE_FONT_PX}, "title": {"font": {"size": AXIS_TITLE_FONT_PX}}}
READABLE_LAYOUT: dict[str, Any] = {
    "font": {"size": BASE_FONT_PX},
    "title": {"font": {"size": TITLE_FONT_PX}},
    "legend": {"font": {"size": BASE_FONT_PX}, "title": {"font": {"size": BASE_FONT_PX}}},
    "hoverlabel": {"font": {"size": BASE_FONT_PX}},
    "uniformtext": {"minsize": MIN_FONT_PX, "mode": "show"},  # a bar's text is never shrunk below it
    "xaxis": _AXIS,
    "yaxis": _AXIS,
}

# plotly.js draws <a href>, <b>, <span style> ... in any text (titles, tick labels, legend and hover text,
# values put into a hover template): only the tags the builders write themselves are kept as tags
_NOT_OURS = re.compile(r"<(?!(?:br|/?extra)>)")


def line_mode(points: int) -> str:
    """A scatter line's mode: its points marked when it has at most `MARKED_POINTS` (hover finds a point on an
    unmarked line all the same)."""
    return "lines+markers" if points <= MARKED_POINTS else "lines"


def readable(build: Callable[P, go.Figure]) -> Callable[P, go.Figure]:
    """Decorates every `build_*_figure`: its figure with `READABLE_LAYOUT` merged in last, so a builder's own
    `update_layout(title=...)` or `xaxis_title=...` (which replace the title object) cannot drop a size."""

    @functools.wraps(build)
    def built(*args: P.args, **kwargs: P.kwargs) -> go.Figure:
        return build(*args, **kwargs).update_layout(READABLE_LAYOUT)

    return built


def note_font(**font: Any) -> dict[str, Any]:
    """The font of a note or annotation a builder adds: `BASE_FONT_PX` unless told (never under `MIN_FONT_PX`)."""
    return {"size": BASE_FONT_PX, **font}


def colorbar(title: str, **options: Any) -> dict[str, Any]:
    """A heatmap's colour bar with its title and ticks at readable sizes."""
    return {
        "title": {"text": title, "font": {"size": BASE_FONT_PX}},
        "tickfont": {"size": BASE_FONT_PX},
        **options,
    }


def time_range(times: pd.Series | np.ndarray, *, least: pd.Timedelta = MIN_TIME_SPAN) -> list[pd.Timestamp] | None:
    """An x range of at least `least` around `times` (naive UTC), or None when they span more (plotly's own
    range then): plotly.js draws one point, or points a few ms apart, on an axis ticked in fractions of a
    millisecond ("10:00:00.0005")."""
    values = pd.Series(pd.to_datetime(np.asarray(times))).dropna()
    if values.empty:
        return None
    start, end = values.min(), values.max()
    if end - start >= least:
        return None
    middle = start + (end - start) / 2
    return [middle - least / 2, middle + least / 2]


def with_time_range(figure: go.Figure, times: pd.Series | np.ndarray) -> go.Figure:
    """`figure` with its x axis at least `MIN_TIME_SPAN` wide (`time_range`)."""
    shown = time_range(times)
    return figure.update_xaxes(range=shown) if shown is not None else figure


def utc_naive(times: pd.Series) -> pd.Series:
    """Times in UTC without a zone (plotly.js ignores zones); every figure module draws times through it."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def empty_note(figure: go.Figure, message: str) -> go.Figure:
    """A figure with nothing to draw says so in its middle, rather than showing empty axes."""
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5, font=note_font())
    return figure


def plotly_text(text: str) -> str:
    """`text` drawn by plotly as written: `&` and every `<` but the builders' own `<br>` and `<extra>` as
    entities (plotly.js turns them back into characters)."""
    return _NOT_OURS.sub("&lt;", text.replace("&", "&amp;"))


def plain_figure(figure: go.Figure) -> go.Figure:
    """The figure with every string in it through `plotly_text`: a name from the store (a container called
    `<a href=...>`) is drawn as text, never as a link. Applied where a page shows a figure
    (`widgets.render_figure`), so the builders and their tests keep the plain values."""
    return go.Figure(_plain(figure.to_dict()))


def _plain(node: Any) -> Any:
    if isinstance(node, str):
        return plotly_text(node)
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list | tuple):
        return [_plain(value) for value in node]
    if isinstance(node, np.ndarray) and node.dtype == object:
        return np.array([_plain(value) for value in node.ravel()], dtype=object).reshape(node.shape)
    return node
