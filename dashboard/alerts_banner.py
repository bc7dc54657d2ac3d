"""The alerts banner: what the latest evaluation of the config's `[alerts]` found open, above a page.

`ruscope collect` evaluates the thresholds after each pass into the store's `alerts` table
(`collectors.alerts`); `analysis.alerts.latest_alerts` keeps each account's latest evaluation, so an alert
a later, clean evaluation no longer finds is gone from the banner. The frame (`app.py`) calls
`render_alert_banner(view)` before the page runs; it shows nothing when nothing is open in the view's scope
(the time range does not matter: open is now). An alert says its own window as the frame's time ranges
are named ("in the last 1 hour" beside "Last 1 hour": `analysis.scope.span_text`), so the range that shows
the same rows is the one that reads the same.
A hot partition or a 429 rate (load that throttles now) is an error banner; storage and query cost are a warning.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis import alerts
from analysis.scope import minute_text
from dashboard.display import markdown_text
from dashboard.loaders.tables import load_table
from dashboard.state import FrameState

MAX_LINES = 8  # alerts listed in the banner; the rest are counted
URGENT = (alerts.HOT, alerts.THROTTLE)  # throttling now, or about to: an error, not a warning


def render_alert_banner(view: FrameState) -> None:
    """The open alerts in the view's scope as one banner; nothing when none is open. Whatever the time range:
    what is open now does not depend on the period looked at (the Overview's "Open alerts" agree)."""
    stored = load_table(view.store, "alerts", columns=tuple(alerts.STORED_COLUMNS)).frame
    open_now = alerts.open_alerts(stored, view.scope)
    if open_now.empty:
        return
    body = alert_banner_text(open_now)
    if open_now["rule"].isin(URGENT).any():
        st.error(body, icon=":material/error:")
    else:
        st.warning(body, icon=":material/warning:")


def alert_banner_text(open_now: pd.DataFrame) -> str:
    """The banner's markdown: how many alerts, when evaluated, one line per alert (at most `MAX_LINES`)."""
    count = len(open_now)
    when = minute_text(open_now["time"].max())  # as the pages write an instant, and the alerts' windows
    several = open_now["account"].nunique() > 1
    lines = [
        (f"[{markdown_text(row.account)}] " if several else "") + markdown_text(row.message)
        for row in open_now.head(MAX_LINES).itertuples()
    ]
    more = [f"and {count - MAX_LINES} more"] if count > MAX_LINES else []
    heading = f"**{count} alert{'s' if count != 1 else ''} open** (evaluated {when} by `ruscope collect`):"
    return "\n".join([heading, "", *(f"- {line}" for line in [*lines, *more])])
