"""A view's metrics with the stored span cells in place of the NormalizedRUConsumption points of its whole days
(`analysis.load.stored`), so a page over months reads days of cells, not millions of points.

Which days: those `analysis.load.stored.cell_days` allows (stored, not stale since the last refresh, not cut
by one of the page's period boundaries); the metrics of those days are read without their
NormalizedRUConsumption rows (left out in the Arrow read, never converted), every other day's whole. Without
a refresh yet (or a store that cannot say what is stale) every point is read, as before. The stale spans are
cached per store and its versions (`tables.store_versions`): reading them walks the sources' Delta logs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence

import pandas as pd
import streamlit as st
from deltalake.exceptions import DeltaError

from analysis.hot.partitions import CELL_FIGURES
from analysis.load import stored
from analysis.scope import Window
from cosmoscore.monitor.metrics import NORMALIZED_RU
from dashboard.loaders import tables
from dashboard.state import FrameState
from store.records import METRIC_CELLS, SCOPE_COLUMNS, SPAN_CELLS
from store.rollups.derived import stale_spans
from store.rollups.increment import stale_spans as rollup_stale_spans
from store.rollups.periods import Period
from store.rollups.tiers import Tier

DAY = dt.timedelta(days=1)
CELL_COLUMNS = tuple(name for name in SPAN_CELLS.columns if name != "run_id")
ROLLUP_COLUMNS = tuple(
    METRIC_CELLS.pick(*SCOPE_COLUMNS, "tier", "metric", "aggregation", "pkrange_id", "region", *CELL_FIGURES)
)


@dataclasses.dataclass(frozen=True)
class WithCells:
    metrics: tables.Loaded  # the view's metrics, NormalizedRUConsumption only on the days not in `cells`
    cells: pd.DataFrame  # the `span_cells` rows of the days read from cells (none: every point read)
    days: tuple[dt.date, ...]  # those days


def metrics_with_cells(
    view: FrameState,
    columns: Sequence[str],
    boundaries: Sequence[dt.datetime | pd.Timestamp | None],
    *,
    cuts_of: Callable[[pd.DataFrame], Sequence[pd.Timestamp | dt.datetime | None]] | None = None,
    rollup: bool = False,
) -> WithCells:
    """The view's metrics (`columns`, the database's shared offer's rows too: `tables.load_with_shared_offer`)
    and span cells, the days of cells chosen by `boundaries` (where the page's periods start and end) and
    `cuts_of` the span cells (more such times, a page's own: `analysis.hot.partitions.layout_days`); with
    `rollup`, only days the metrics' rollup cells (`metric_cells`) are up to date for too (a page that draws
    them: `rollup_cells`)."""
    rows = tables.load_with_shared_offer(view, SPAN_CELLS.name, columns=CELL_COLUMNS, cached=False)
    stored_days = set(pd.to_datetime(rows.frame["time"], utc=True).dt.date) if len(rows.frame) else set()
    cuts = [*boundaries, view.window.start, view.window.end]  # a day the window itself cuts is read as points
    cuts += list(cuts_of(rows.frame)) if cuts_of is not None and len(rows.frame) else []
    versions = tables.store_versions(view.store)
    stale = _stale(view.store, versions)
    if rollup and stale is not None:
        rolled = _stale_rollup(view.store, versions)
        stale = None if rolled is None else [*stale, *rolled]
    days = stored.cell_days(stored_days, stale, cuts) if stored_days else []
    if not days:
        every = tables.load_with_shared_offer(view, "metrics", columns=columns, cached=False)
        return WithCells(every, rows.frame.iloc[0:0], ())
    parts, warnings = [], list(rows.warnings)
    ranges = rows.frame[rows.frame["kind"].eq("range").fillna(False).astype(bool)]
    # exactly the points the cells hold: NormalizedRUConsumption split by pkrange, of a container (a shared
    # offer's rows, container "", and rows without a pkrange are not in cells and are read)
    points: dict[str, tuple[str, ...]] = {
        "metric": (NORMALIZED_RU,),
        "container": tuple(sorted(set(ranges["container"].dropna().astype(str)) - {""})),
        "pkrange_id": tuple(sorted(set(ranges["pkrange_id"].dropna().astype(str)))),
    }
    for start, end, cells in _pieces(view.window, days):
        piece = dataclasses.replace(view, window=Window(start, end, view.window.label))
        exclude = points if cells else None
        loaded = tables.load_with_shared_offer(piece, "metrics", columns=columns, cached=False, exclude=exclude)
        parts.append(loaded.frame)
        warnings += loaded.warnings
    chosen = pd.to_datetime(rows.frame["time"], utc=True).dt.date.isin(days).to_numpy(dtype=bool)
    metrics = pd.concat([part for part in parts if len(part)] or parts[:1], ignore_index=True)
    frame = rows.frame[chosen].reset_index(drop=True)
    return WithCells(tables.Loaded(metrics, tuple(dict.fromkeys(warnings))), frame, tuple(days))


def _pieces(window: Window, days: Sequence[dt.date]) -> list[tuple[dt.datetime | None, dt.datetime | None, bool]]:
    """The window cut into runs of cell days (True) and the rest (False), in time order."""
    out: list[tuple[dt.datetime | None, dt.datetime | None, bool]] = []
    cursor: dt.datetime | None = window.start
    for run in _runs(days):
        first, last = midnight(run[0]), midnight(run[-1])
        if cursor is None or cursor < first:
            out.append((cursor, first, False))
        out.append((first, last + DAY, True))
        cursor = last + DAY
    if window.end is None or cursor is None or cursor < window.end:
        out.append((cursor, window.end, False))
    return out


def _runs(days: Sequence[dt.date]) -> list[list[dt.date]]:
    runs: list[list[dt.date]] = []
    for day in sorted(days):
        if runs and (day - runs[-1][-1]).days == 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    return runs


def rollup_cells(view: FrameState, days: Sequence[dt.date], tier: Tier, containers: Sequence[str]) -> pd.DataFrame:
    """The `metric_cells` of `tier` on `days` (runs of whole days) of NormalizedRUConsumption split by pkrange
    (aggregation Maximum) of `containers`: what the points the span-cell days left out drew (a heatmap)."""

    def keep(frame: pd.DataFrame) -> pd.Series:
        maximum = frame["aggregation"].fillna("Maximum").eq("Maximum")
        return frame["tier"].eq(tier.name) & _normalized_of(frame, containers) & maximum

    return _on_days(view, days, METRIC_CELLS.name, ROLLUP_COLUMNS, keep)


def points_of_days(
    view: FrameState, days: Sequence[dt.date], columns: Sequence[str], containers: Sequence[str]
) -> pd.DataFrame:
    """The NormalizedRUConsumption points split by pkrange of `containers` on `days`: what the span-cell days
    left out, for a figure no rollup tier draws exactly."""
    return _on_days(view, days, "metrics", columns, lambda frame: _normalized_of(frame, containers))


def _normalized_of(frame: pd.DataFrame, containers: Sequence[str]) -> pd.Series:
    """The rows of NormalizedRUConsumption split by pkrange of `containers` (the points the span cells hold)."""
    return frame["metric"].eq(NORMALIZED_RU) & frame["pkrange_id"].notna() & frame["container"].isin(containers)


def _on_days(
    view: FrameState,
    days: Sequence[dt.date],
    table: str,
    columns: Sequence[str],
    keep: Callable[[pd.DataFrame], pd.Series],
) -> pd.DataFrame:
    """The rows of `table` (`columns`) on `days`, one read per run of days, those `keep` says."""
    parts = []
    for run in _runs(days):
        piece = dataclasses.replace(view, window=Window(midnight(run[0]), midnight(run[-1]) + DAY, view.window.label))
        frame = tables.read_view(piece, table, columns=columns).frame
        parts.append(frame[keep(frame).fillna(False).astype(bool).to_numpy()])
    found = [part for part in parts if len(part)]
    return pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=list(columns))


def midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), dt.UTC)


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner=False, max_entries=tables.SMALL_ENTRIES)
def _stale_rollup(store: str, versions: tuple[tuple[str, int | None], ...]) -> list[Period] | None:
    """What the metrics added since their last rollup (None: never rolled up, or it cannot be told)."""
    try:
        return rollup_stale_spans(tables.store_at(store))
    except (DeltaError, OSError, ValueError):  # a damaged or unreachable table: the points are read instead
        return None


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner=False, max_entries=tables.SMALL_ENTRIES)
def _stale(store: str, versions: tuple[tuple[str, int | None], ...]) -> list[Period] | None:
    """What the sources added since the span cells' last refresh (None: read every point)."""
    try:
        return stale_spans(tables.store_at(store), stored.DERIVATION)
    except (DeltaError, OSError, ValueError):  # a damaged or unreachable table: the points are read instead
        return None
