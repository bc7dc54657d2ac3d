"""The capacity report's frames in the frame's view (`analysis.capacity.review.REPORT_TABLES`), read through
`tables.load_view` (cached there): the Reports page builds the report from them, the Cost page its findings
ranked by money, so both read the same rows.

`load_capacity` is the Reports and Cost pages' cached loader: the report and its money figures
(`review.build_capacity`) built once per view and `[pricing]` and cached (`tables.cached_view`; building
it runs the load model over every point; uncached, every rerun of a page built it again, and the Cost page
built a second report of its own); `load_report` is its report."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analysis.capacity import about, review
from collectors.client import installed_version
from collectors.config.pricing import PricingSettings
from dashboard.loaders.tables import PAGE_ENTRIES, TTL_SECONDS, cached_view, load_view, read_view
from dashboard.state import FrameState


def load_report_frames(view: FrameState) -> tuple[dict[str, pd.DataFrame], tuple[str, ...]]:
    """Each table of `REPORT_TABLES` in the view (only its columns), and the store's warnings, once each."""
    frames: dict[str, pd.DataFrame] = {}
    messages: tuple[str, ...] = ()
    for table, columns in review.REPORT_TABLES.items():
        # the metrics are millions of points: read, not cached; both callers cache what they build of them
        loaded = (read_view if table == "metrics" else load_view)(view, table, columns=columns)
        frames[table], messages = loaded.frame, messages + loaded.warnings
    return frames, tuple(dict.fromkeys(messages))


def load_report(view: FrameState, pricing: PricingSettings) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The capacity report of the view at `pricing` (generated when the store last changed, or the view), and the store's
    warnings."""
    built = load_capacity(view, pricing)
    return built.capacity.report, built.warnings


@dataclass(frozen=True)
class BuiltReport:
    """`review.build_capacity` of one view and `[pricing]`, with what the pages say beside it."""

    capacity: review.CapacityBuild
    warnings: tuple[str, ...]
    has_data: bool  # any row the report reads: replay only still has findings, never a bill


def load_capacity(view: FrameState, pricing: PricingSettings) -> BuiltReport:
    """The report and its money figures of the view at `pricing`: built once for the Reports and the Cost
    pages, cached per view and the store's versions (`cached_view`)."""
    return _load_capacity(cached_view(view), pricing.model_dump_json())


@st.cache_data(ttl=TTL_SECONDS, show_spinner="Building the capacity report...", max_entries=PAGE_ENTRIES)
def _load_capacity(view: FrameState, pricing_json: str) -> BuiltReport:
    region, now = view.region, dt.datetime.now(dt.UTC)
    pricing = PricingSettings.model_validate_json(pricing_json)
    frames, messages = load_report_frames(view)
    built = review.build_capacity(
        *(frames[table] for table in review.REPORT_TABLES),  # the report's inputs, in its signature's order
        limits=None,
        region=region,
        about=report_about(view, frames, now),  # no config here: commands name the endpoint's account and <rg>
        azure=None,
        prices=pricing.prices(),  # the config's [pricing], else the list price example (the cost rows say which)
        multi_write=pricing.multi_write_accounts,
    )
    return BuiltReport(built, messages, any(not frame.empty for frame in frames.values()))


def report_about(view: FrameState, frames: dict[str, pd.DataFrame], now: dt.datetime) -> about.ReportAbout:
    """The report's first section: the view's time range (else the data's first and last row), its store."""
    first, last = about.data_window(frames)
    return about.ReportAbout(
        window_start=view.since or first,
        window_end=view.until or (now if view.since else last),  # a custom range's end, else now
        store=view.store,
        generated=now,
        region=view.region,
        version=installed_version(),
        window_note="the page's time range" if view.since else "all time: the first and last row read",
    )
