"""The session-state contract between the frame (`app.py`) and the pages.

The frame asks for the store, the time range and the scope once, in the sidebar, and publishes what was
chosen under these `st.session_state` keys before it runs the page:

| key | type | meaning |
|---|---|---|
| `store` | `str` | the store directory (or URI) to read |
| `window` | `analysis.scope.Window` | the time range: rows in [start, end), UTC; a None bound open (all time: both) |
| `scope` | `analysis.scope.Scope` | the database and container shown; a None part: all |
| `region` | `str` or `None` | the Azure region whose Monitor figures are shown; None: the account in total |
| `regions` | `tuple[str, ...]` | the regions the store's metrics name (the picker is shown for two or more) |

A page that links into another page's view (the Fleet page opening one container) asks for a scope with
`request_scope`: the frame's pickers take it at the start of the next run, before they render (a widget's
value cannot change once it has rendered in a run), so the sidebar shows what the page asked for.

Pages read them with `frame_state()` rather than by key, so a page cannot misspell a key or a type. A page
run without the frame (a test of the page file alone) gets the defaults: the default store, all time, all
databases.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import streamlit as st

from analysis.scope import Scope, Window
from collectors.config.pricing import PricingSettings
from dashboard.environment import ANY_STORE_ENV, PRICING_ENV, STORE_ENV
from store.location import DEFAULT_STORE

STORE, WINDOW, SCOPE, REGION, REGIONS = "store", "window", "scope", "region", "regions"
REQUESTED_SCOPE = "frame_requested_scope"  # a scope a page asked the frame to show from the next run on


@dataclass(frozen=True, slots=True)
class FrameState:
    """What the frame chose: where to read, which window of time, and which database and container."""

    store: str
    window: Window = field(default_factory=Window)
    scope: Scope = field(default_factory=Scope)
    region: str | None = None  # one region's Azure Monitor figures; None: the account in total
    regions: tuple[str, ...] = ()  # the regions the store's metrics name (analysis.regions)
    # the store's table versions a cached loader's result is read at (`dashboard.loaders.tables.cached_view`
    # sets them: part of its cache key); empty in the frame's own view
    versions: tuple[tuple[str, int | None], ...] = ()

    @property
    def since(self) -> dt.datetime | None:
        """The window's start (None: from the first row), what the store's reader prunes its days by."""
        return self.window.start

    @property
    def until(self) -> dt.datetime | None:
        """The window's end (None: up to the newest row)."""
        return self.window.end


def default_store() -> str:
    """The store directory: $RUSCOPE_STORE, else `ruscope-data` (relative to the working directory)."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def any_store_allowed() -> bool:
    """Whether a visitor may open another store than the one named at start (`--allow-any-store`): the
    dashboard reads with the server's files and credentials, so by default it shows only what its user named."""
    return os.environ.get(ANY_STORE_ENV) == "1"


def pricing() -> PricingSettings:
    """The prices the pages cost in: the config's `[pricing]` that `ruscope dashboard --config F` passed as
    $RUSCOPE_PRICING (JSON), else Microsoft's list price example (`PricingSettings()`, which says so). A
    value that is not a valid `[pricing]` is an error naming the variable, never a silent list price."""
    text = os.environ.get(PRICING_ENV)
    if not text:
        return PricingSettings()
    try:
        return PricingSettings.model_validate_json(text)
    except ValueError as exc:
        raise ValueError(f"${PRICING_ENV} is not a valid [pricing]: {exc}") from exc


def publish(state: FrameState) -> None:
    """Put the frame's choices under the contract's keys, for the page about to run."""
    st.session_state[STORE] = state.store
    st.session_state[WINDOW] = state.window
    st.session_state[SCOPE] = state.scope
    st.session_state[REGION] = state.region
    st.session_state[REGIONS] = state.regions


def frame_state() -> FrameState:
    """The frame's choices, as published; the defaults for a key the frame has not set."""
    return FrameState(
        store=st.session_state.get(STORE) or default_store(),
        window=st.session_state.get(WINDOW) or Window(),
        scope=st.session_state.get(SCOPE) or Scope(),
        region=st.session_state.get(REGION),
        regions=tuple(st.session_state.get(REGIONS) or ()),
    )


def request_scope(scope: Scope) -> None:
    """Ask the frame to show `scope` from the next run on (then switch page or rerun)."""
    st.session_state[REQUESTED_SCOPE] = scope


def take_requested_scope() -> Scope | None:
    """The scope a page asked for, once: the frame takes it before its pickers render."""
    requested = st.session_state.pop(REQUESTED_SCOPE, None)
    return requested if isinstance(requested, Scope) else None
