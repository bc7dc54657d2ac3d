"""What every figure module shares: times drawn in UTC, the note of a figure with nothing to draw, and its
text drawn as written (`plain_figure`)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

# plotly.js draws <a href>, <b>, <span style> ... in any text (titles, tick labels, legend and hover text,
# values put into a hover template): only the tags the builders write themselves are kept as tags
_NOT_OURS = re.compile(r"<(?!(?:br|/?extra)>)")


def utc_naive(times: pd.Series) -> pd.Series:
    """Times in UTC without a zone (plotly.js ignores zones); every figure module draws times through it."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def empty_note(figure: go.Figure, message: str) -> go.Figure:
    """A figure with nothing to draw says so in its middle, rather than showing empty axes."""
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
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
