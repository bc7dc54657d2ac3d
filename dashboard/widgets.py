"""The widgets every page shares, in one place so that they look and behave the same on every page.

The frame (`app.py`) renders the pickers in the sidebar once per run; pages render the empty state, the
store's warnings and the CSV download. Every widget takes a fixed `key=` (tests drive them by key):
`frame_store`, `frame_time_range` (and, for its "Custom" choice, `frame_custom_start_date`,
`frame_custom_start_time`, `frame_custom_end_date`, `frame_custom_end_time`), `frame_account` (shown only when the store holds several accounts),
`frame_database`, `frame_container`, `frame_region` (shown only when the store's metrics name several
regions) for the frame's pickers, and the key a page passes for its downloads.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from analysis import regions, scope, throttling
from analysis.report import to_csv_bytes
from dashboard.display import display_table, markdown_code, markdown_fence, markdown_text
from dashboard.figures.canvas import plain_figure
from dashboard.state import FrameState, any_store_allowed, default_store, take_requested_scope

ALL = "(all)"  # the picker's label for "no filter"

EMPTY_STATE = """No {what} in {store}{when} yet. {how}:

{fence}sh
{commands}
ruscope dashboard --store {path}
{fence}
"""


FIXED_STORE_HELP = "The store `ruscope dashboard` was started on; start it with --allow-any-store to type another."


def render_store_picker() -> str:
    """The store directory (or URI): $RUSCOPE_STORE, as `ruscope dashboard --store` sets it.

    Only that store is shown, the box read-only, unless the dashboard was started with `--allow-any-store`
    (any path or URI typed is then read, with the server's files and credentials; a cleared box means the
    default again, not the working directory).
    """
    named = default_store()
    if not any_store_allowed():
        st.sidebar.text_input("Store directory", value=named, key="frame_store", disabled=True, help=FIXED_STORE_HELP)
        return named
    return st.sidebar.text_input("Store directory", value=named, key="frame_store").strip() or named


def render_time_range_picker(*, now: dt.datetime | None = None) -> scope.Window | None:
    """The time range as a `scope.Window` (UTC; `now` defaults to the wall clock): a preset ending now, or a
    custom start and end; the window it covers is said under the picker. A custom end not after its start
    is said on the page, and None returned (the frame runs no page on it)."""
    clock = now or dt.datetime.now(dt.UTC)
    names = scope.RANGE_CHOICES
    name = st.sidebar.selectbox(
        "Time range (UTC)", names, index=names.index(scope.DEFAULT_TIME_RANGE), key="frame_time_range"
    )
    if name != scope.CUSTOM:
        window = scope.window_for(name, clock)
    else:
        try:
            window = scope.custom_window(*_render_custom_bounds(clock))
        except scope.WindowError as error:
            st.sidebar.caption(CUSTOM_INVALID)
            st.error(str(error), icon=":material/error:")
            return None
    st.sidebar.caption(f"Showing {window.text()}.")
    return window


CUSTOM_INVALID = "The custom range is not valid: see the page."


def _render_custom_bounds(now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """A custom range's start and end, in UTC, from a date and a time input each. The defaults (the 24 hours
    up to the next whole hour) change once an hour, not on every rerun."""
    hour = now.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0, tzinfo=None) + dt.timedelta(hours=1)
    bounds = []
    for name, default in (("start", hour - dt.timedelta(hours=24)), ("end", hour)):
        left, right = st.sidebar.columns(2)
        day = left.date_input(f"{name.title()} date (UTC)", value=default.date(), key=f"frame_custom_{name}_date")
        time = right.time_input(
            f"{name.title()} time (UTC)", value=default.time(), step=60, key=f"frame_custom_{name}_time"
        )
        bounds.append(dt.datetime.combine(day, time, tzinfo=dt.UTC))
    return bounds[0], bounds[1]


def render_scope_picker(choices: pd.DataFrame) -> scope.Scope:
    """An account (when there are several), a database, then a container of it ("(all)" for any), among
    the choices with data; a scope a page requested (`state.request_scope`) is taken first."""
    _apply_requested_scope(choices, take_requested_scope())
    account = _render_account_picker(choices)
    mine = scope.select_scope(choices, scope.Scope(account=account))
    picked = st.sidebar.selectbox("Database", [ALL, *scope.databases(mine)], key="frame_database")
    database = None if picked == ALL else picked
    container = st.sidebar.selectbox("Container", [ALL, *scope.containers(mine, database)], key="frame_container")
    return scope.Scope(database=database, container=None if container == ALL else container, account=account)


def render_region_picker(names: list[str]) -> str | None:
    """The region whose Azure Monitor figures the pages show, or the account in total (None), only when the
    store's metrics name two regions or more (else: None, unshown: one region reads as the total)."""
    if len(names) < 2:
        return None
    picked = st.sidebar.selectbox(
        "Azure region", [regions.TOTAL_LABEL, *names], key="frame_region", help=REGION_HELP.format(n=len(names))
    )
    return None if picked == regions.TOTAL_LABEL else picked


REGION_HELP = """Azure Monitor reports each region apart: an account in {n} regions reserves its RU/s in each
(T RU/s provisioned: T x {n} in total) and keeps a copy of its data in each. A region shows its own RU against
its own RU/s; the total shows every region's RU against every region's RU/s."""


def render_region_note(view: FrameState, *, per_region: str | None = None) -> None:
    """Which region the page's Azure Monitor figures cover, when the store names several; `per_region`: the
    region a page of per-region figures shows while the frame asks for the total."""
    if len(view.regions) < 2:
        return
    if per_region is not None and view.region is None:
        st.caption(
            f"Per region: these figures are each region's own (a partition's RU/s budget is its region's). "
            f"Showing **{markdown_text(per_region)}**; choose another region in the sidebar."
        )
    elif view.region is None:
        st.caption(f"Azure Monitor figures: all {len(view.regions)} regions in total (RU/s reserved in each).")
    else:
        st.caption(f"Azure Monitor figures: region **{markdown_text(view.region)}** only.")


def render_logs_region_note(view: FrameState, logs: str, *, per_region: str | None = None) -> None:
    """Beside one region's Azure Monitor figures (the frame's region, or `per_region` that a page of
    per-region figures shows), say that the page's `logs` figures are all regions': the diagnostic logs have
    no region in the store (the logs collector sums their RegionName), so they are never one region's."""
    if len(view.regions) >= 2 and (view.region or per_region) is not None:
        st.caption(
            f"{logs}: {throttling.ALL_REGIONS} in total, whatever the region (the logs are stored summed over the regions)."
        )


RATE_WINDOW = """429 rate: 429s over all requests of the whole window, {window} (the time range's data), {sources}.
An alert's rate is of its own last minutes (the config's `window_minutes`)."""
ONE_SOURCE = """from the source *429s from* names: Azure Monitor where it counted the container's requests, else the
diagnostic logs, else the replay"""
EVERY_SOURCE = """per source; a container's one rate (the Fleet's, the Overview's, the report's, the alert's) is Azure
Monitor's where it counted the container's requests, else the diagnostic logs', else the replay's"""
# how a table heads a 429 rate's window (`analysis.fleet.THROTTLE_WINDOW`): its first and last time counted
RATE_WINDOW_COLUMNS = {
    "throttle_start": st.column_config.DatetimeColumn("429s counted from (UTC)", timezone="UTC"),
    "throttle_end": st.column_config.DatetimeColumn("to (UTC)", timezone="UTC"),
}


def render_rate_window(starts: pd.Series, ends: pd.Series, *, every_source: bool = False) -> None:
    """The window and the source of a page's 429 rates (`analysis.throttling.rate_window`; `every_source`:
    a row per source, not a container's one), in one caption beside them, so a page's rate and an alert's
    (of its last minutes) never read as one number."""
    window = throttling.rate_window(starts, ends)
    if window is not None:
        sources = EVERY_SOURCE if every_source else ONE_SOURCE
        st.caption(RATE_WINDOW.format(window=scope.window_text(*window), sources=sources))


def _render_account_picker(choices: pd.DataFrame) -> str | None:
    """The account picker, only when the choices span more than one account (else: all, unshown)."""
    accounts = scope.accounts(choices)
    if len(accounts) < 2:
        return None
    picked = st.sidebar.selectbox("Account", [ALL, *accounts], key="frame_account")
    return None if picked == ALL else picked


def _apply_requested_scope(choices: pd.DataFrame, requested: scope.Scope | None) -> None:
    """Set the pickers' values to a requested scope, before they render; a part not among the choices: all."""
    if requested is None:
        return
    accounts = scope.accounts(choices)
    account = requested.account if len(accounts) > 1 and requested.account in accounts else None
    if len(accounts) > 1:
        st.session_state["frame_account"] = account or ALL
    mine = scope.select_scope(choices, scope.Scope(account=account))
    database = requested.database if requested.database in scope.databases(mine) else None
    st.session_state["frame_database"] = database or ALL
    container = requested.container if requested.container in scope.containers(mine, database) else None
    st.session_state["frame_container"] = container or ALL


def render_empty_state(view: FrameState, *, what: str, how: str, commands: list[str]) -> None:
    """Nothing to show: say what is missing in this view and which commands collect it (`{store}` filled in)."""
    window = view.window
    open_ended = window.start is None or window.end is None
    when = "" if window == scope.Window() else f" {window.text()}" if open_ended else f" in {window.text()}"
    if window != scope.Window():
        how = f"Choose a longer time range in the sidebar. {how}"
    commands_text = "\n".join(command.format(store=view.store) for command in commands)
    fence = markdown_fence(commands_text + view.store)
    store = markdown_code(view.store)
    text = EMPTY_STATE.format(
        what=what, store=store, path=view.store, when=when, how=how, commands=commands_text, fence=fence
    )
    st.info(text, icon=":material/info:")


def render_store_warnings(messages: tuple[str, ...]) -> None:
    """The store's warnings of a read (a skipped corrupt file, a stale temp file), one box each."""
    for message in messages:
        st.warning(markdown_text(message), icon=":material/warning:")


def render_figure(figure: go.Figure, *, key: str) -> None:
    """A figure of a page, its text drawn as written (`figures.canvas.plain_figure`): every page's figures
    go through here, so no name from the store becomes a link in a title, a label or a hover."""
    st.plotly_chart(plain_figure(figure), key=key)


def render_csv_download(frame: pd.DataFrame, *, file_name: str, key: str) -> None:
    """The frame as CSV through `analysis.report.to_csv_bytes`, the same bytes `ruscope report` writes."""
    st.download_button(
        "Download CSV",
        data=to_csv_bytes(frame),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )


def render_table(
    frame: pd.DataFrame,
    *,
    key: str,
    file_name: str,
    column_config: dict[str, Any] | None = None,
    csv: pd.DataFrame | None = None,
) -> None:
    """A table with its CSV download under it: every table of every page goes through here, so none lacks
    one, and none shows "None" for a missing value (`dashboard.display`). The download holds `csv` when given (e.g. raw numbers behind a formatted view), else the frame."""
    styled, config = display_table(frame, column_config)
    st.dataframe(styled, hide_index=True, column_config=config, key=key)
    render_csv_download(frame if csv is None else csv, file_name=file_name, key=f"{key}_download")


MONITOR_MISSING = """This store has no Azure Monitor {what} yet, so this page shows {shown}. {adds} Collect them with:

```sh
{commands}
```
"""
MONITOR_COMMANDS = [
    "ruscope metrics --config ruscope.toml   # [monitor] and the account's monitor_resource",
    "ruscope logs --config ruscope.toml      # [monitor] workspace_id: diagnostic logs",
    "ruscope storage --config ruscope.toml   # partition sizes and the largest logical keys",
]


def render_monitor_missing(*, what: str, shown: str, adds: str, commands: list[str] | None = None) -> None:
    """A store with replay data but not the Azure Monitor (or storage) data a section needs: say what the
    page shows instead and what that data would add, with the commands that collect it."""
    text = MONITOR_MISSING.format(what=what, shown=shown, adds=adds, commands="\n".join(commands or MONITOR_COMMANDS))
    st.info(text, icon=":material/info:")
