"""What every figure module shares: times drawn in UTC, and the note of a figure with nothing to draw."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go


def utc_naive(times: pd.Series) -> pd.Series:
    """Times in UTC without a zone (plotly.js ignores zones); every figure module draws times through it."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def empty_note(figure: go.Figure, message: str) -> go.Figure:
    """A figure with nothing to draw says so in its middle, rather than showing empty axes."""
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5)
    return figure
