"""The capacity report's frames in the frame's view (`analysis.capacity.review.REPORT_TABLES`), read through
`tables.load_view` (cached there): the Reports page builds the report from them, the Cost page its findings
ranked by money, so both read the same rows."""

from __future__ import annotations

import pandas as pd

from analysis.capacity import review
from dashboard.loaders.tables import load_view
from dashboard.state import FrameState


def load_report_frames(view: FrameState) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    """Each table of `REPORT_TABLES` in the view (only its columns), and the store's warnings, once each."""
    frames: dict[str, pd.DataFrame] = {}
    messages: tuple[str, ...] = ()
    for table, columns in review.REPORT_TABLES.items():
        loaded = load_view(view, table, columns=columns)
        frames[table], messages = loaded.frame, messages + loaded.warnings
    return frames, tuple(dict.fromkeys(messages))
