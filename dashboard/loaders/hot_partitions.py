"""The Hot partitions page's cached loader: the store's frames (through `dashboard.loaders.tables`) reduced once
to what the page draws, and that small result cached.

Why a second cache: a month of one-minute NormalizedRUConsumption for 100 pkranges is 4.3 million points. The
page draws a few hundred columns of them; copying the points out of `load_table`'s cache and reducing them again
on every widget change would cost seconds, while the reduced heatmap is a few hundred KB. So this loader reads
through `tables.load_view` (one store read, shared with other pages) and caches only the reductions, keyed
by the view and the store's versions as every page loader is (`tables.cached_view`). The numbers all come from `analysis`.

The metrics are read with `cells.metrics_with_cells`: the whole days' NormalizedRUConsumption as their span
cells and the metrics' rollup cells (the heatmap's maxima per bin are the cells' maxima where a tier nests
in its bins), the other days' points. They and the logs' RU per key (and per key and operation) are read
uncached (`tables.read_view`): caching 4.3 million points would pickle them (0.5 GB, and a peak of twice that while pickling) only for this loader to
reduce them once per view, so the page's peak memory would pass the 2 GB `benchmarks/bench_dashboard.py`
holds it to.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from analysis import hottest, load, overview, regions
from analysis.hot import bins
from analysis.hot import keys as hk
from analysis.hot import partitions as hp
from analysis.hot import replay as hr
from analysis.hot.current import CONTAINER_KEY, ROW_KEY
from analysis.load import stored
from dashboard.loaders import cells, tables
from dashboard.state import FrameState
from store.records import SHARED_OFFER_CONTAINER
from store.rollups import tiers
from store.rollups.tiers import CELL_TIERS

# The skew's per-pkrange load: name -> (column, unit). The first is the model's (`analysis.hottest.range_loads`:
# Azure Monitor's mean normalized RU of the workload, ruscope's replay minutes left out), whose hottest share the
# Overview, Fleet and the report show; the others are cross-checks of the same layout.
LOAD_SOURCES = {
    "Azure Monitor: mean normalized RU % (the workload's)": ("mean", "%"),
    "Diagnostic logs: RU per pkrange": ("ru", "RU"),
    "Replay: RU per pkrange of the replayed queries": ("ru", "RU"),
}


@dataclass(frozen=True)
class HotData:
    """What the Hot partitions page shows, reduced from the store's frames in one view."""

    heatmap: hp.Heatmap  # normalized RU, pkrange x time
    key_heatmap: hp.Heatmap  # the top hk.TOP_KEY_CHOICES[-1] logical keys x time by RU/s (hk.top_keys cuts it)
    key_totals: pd.DataFrame  # RU and busiest second per (container, pkrange, logical key) from the logs,
    # against the partition's budget (hk.against_budget)
    key_operations: pd.DataFrame  # RU per (container, pkrange, logical key, operation) from the logs
    key_sizes: pd.DataFrame  # the latest storage snapshot's largest logical keys
    loads: dict[str, pd.DataFrame]  # LOAD_SOURCES name -> ROW_KEY, label, load column (key-space order) of
    # the pkranges that exist at the end of the view, since their layout is complete (analysis.hot.current)
    pkranges: pd.DataFrame  # every pkrange any source knows: ROW_KEY and label, in key-space order
    hottest: str | None  # the label (in `pkranges`) of the hottest existing pkrange: the heatmap's peak, else a load's
    by_query: pd.DataFrame  # hr.query_demand
    demand: pd.DataFrame  # hr.summarize_demand
    headroom: pd.DataFrame  # hr.summarize_headroom
    has_replay: bool
    warnings: tuple[str, ...]
    shared_database: str | None = None  # the scoped container's database, when its partitions are that offer's
    region: str | None = None  # the region whose metrics these are (None: the store names at most one)

    @property
    def empty(self) -> bool:
        return self.heatmap.empty and self.key_totals.empty and self.key_sizes.empty and not self.has_replay


def load_hot(view: FrameState) -> HotData:
    """The page's data in the frame's view (cached: see the module docstring)."""
    return _load_hot(tables.cached_view(view))


@st.cache_data(
    ttl=tables.TTL_SECONDS, show_spinner="Reducing the partitions' metrics...", max_entries=tables.PAGE_ENTRIES
)
def _load_hot(view: FrameState) -> HotData:
    database, container, region = view.scope.database, view.scope.container, view.region
    read, shared = _metrics(view), None
    metrics, span_rows = read.metrics, read.cells
    # a partition's normalized RU and RU/s budget are its region's: one region at a time (analysis.regions)
    region = regions.per_region_choice(_with_cell_regions(metrics.frame, span_rows), region)
    metrics = tables.Loaded(regions.select_region(metrics.frame, region), metrics.warnings)
    span_rows = stored.in_region(span_rows, region)
    if database is not None and container is not None:
        frame = metrics.frame  # the database's rows (`_metrics`): the container's, and its database's offer's
        mine = frame[frame["container"].eq(container).fillna(False)].reset_index(drop=True)
        offer = frame[frame["container"].eq(SHARED_OFFER_CONTAINER).fillna(False)]
        span_rows = span_rows[span_rows["container"].eq(container).fillna(False)].reset_index(drop=True)
        if container == SHARED_OFFER_CONTAINER or len(span_rows):  # its partitions are its own (some in cells)
            joined, spends = mine, False
        else:
            joined, spends = hp.with_shared_partitions(mine, offer)
        metrics, shared = tables.Loaded(joined, metrics.warnings), database if spends else None
    partitions = tables.load_view(view, "partitions", columns=hp.PARTITION_COLUMNS)
    key_ru = tables.read_view(view, "log_key_ru", columns=hk.KEY_RU_COLUMNS)
    key_operations = tables.read_view(view, "log_key_operation_ru", columns=hk.KEY_OPERATION_COLUMNS)
    logical = tables.load_view(view, "logical_keys", columns=hk.LOGICAL_KEY_COLUMNS)
    executions = tables.load_view(view, "executions", columns=hr.EXECUTION_COLUMNS)
    latest = tuple(sorted(hr.latest_runs(executions.frame)["run_id"].astype(str).unique()))
    requests = tables.load_view(view, "requests", columns=hr.REQUEST_COLUMNS, run_ids=latest)  # the demand's runs
    loaded = (metrics, partitions, key_ru, key_operations, logical, requests, executions)
    key_totals = _key_totals(key_ru.frame, partitions.frame, metrics.frame)
    by_query = hr.query_demand(requests.frame, executions.frame)
    demand = hr.summarize_demand(requests.frame, executions.frame, partitions.frame, metrics.frame)
    own = tables.load_view(view, "requests", columns=load.REQUEST_COLUMNS)  # the replay's minutes, left out
    heatmap, monitor, own_minutes = _normalized(
        _database_view(view), metrics.frame, own.frame, partitions.frame, span_rows, read, region
    )
    heatmap = hp.with_own_minutes(heatmap, own_minutes)  # marked, not hidden
    monitor = monitor.drop_duplicates(subset=ROW_KEY)
    loads = {
        name: frame
        for name, frame in zip(
            LOAD_SOURCES, (monitor, hk.pkrange_totals(key_ru.frame, partitions.frame), hr.replay_pkrange_ru(by_query))
        )
        if not frame.empty
    }
    loads = {
        name: _ordered(
            _on_layout(frame, LOAD_SOURCES[name][0], partitions.frame), LOAD_SOURCES[name][0], partitions.frame
        )
        for name, frame in loads.items()
    }
    pkranges = hp.known_pkranges([heatmap.rows, key_totals, demand], partitions.frame)
    current = hp.current_pkrange_rows(heatmap.rows)  # the hottest is one that exists (not a split's parent)
    candidates = [(current, "peak"), *[(load, LOAD_SOURCES[name][0]) for name, load in loads.items()]]
    return HotData(
        heatmap=heatmap,
        key_totals=key_totals,
        key_heatmap=hk.summarize_key_heatmap(key_ru.frame, top=max(hk.TOP_KEY_CHOICES)),
        key_operations=hk.operation_totals(key_operations.frame),
        key_sizes=hk.latest_key_sizes(logical.frame),
        loads=loads,
        pkranges=pkranges,
        hottest=next(filter(None, (hp.hottest_label(rows, column, pkranges) for rows, column in candidates)), None),
        by_query=by_query,
        demand=demand,
        headroom=hr.summarize_headroom(demand, by_query),
        has_replay=not executions.frame.empty,
        warnings=tuple(dict.fromkeys(w for part in loaded for w in part.warnings)),
        shared_database=shared,
        region=region,
    )


def _metrics(view: FrameState) -> cells.WithCells:
    """The view's metrics, the whole days' NormalizedRUConsumption as their span cells (`cells`: days the
    rollup cells are fresh for too, none a container's layout starts in, for the heatmap); for a view of one
    container, its database's (read once, cut by `_load_hot`): a container that spends its database's
    shared offer has its partitions there (`hp.with_shared_partitions`)."""
    return cells.metrics_with_cells(_database_view(view), hp.METRIC_COLUMNS, [], cuts_of=hp.layout_days, rollup=True)


def _database_view(view: FrameState) -> FrameState:
    """A view of one container widened to its database (its shared offer's rows are the database's)."""
    if view.scope.container is None or view.scope.database is None:
        return view
    return FrameState(store=view.store, window=view.window, scope=replace(view.scope, container=None))


def _with_cell_regions(metrics: pd.DataFrame, span_rows: pd.DataFrame) -> pd.DataFrame:
    """The metrics' region column with the span cells' regions (their points were not read)."""
    if span_rows.empty:
        return metrics
    return pd.concat([metrics[["region"]], span_rows[["region"]]], ignore_index=True)


def _normalized(
    view: FrameState,
    metrics: pd.DataFrame,
    requests: pd.DataFrame,
    partitions: pd.DataFrame,
    span_rows: pd.DataFrame,
    read: cells.WithCells,
    region: str | None,
) -> tuple[hp.Heatmap, pd.DataFrame, pd.DataFrame]:
    """The heatmap, the per-range load (`hottest`: the replay's minutes out) and the replay's own minutes: of
    the points, or of the span cells and the rollup cells of the cell days with the other days' points (the
    same figures: `analysis.hot.partitions.summarize_normalized_heatmap`); where no rollup tier nests in the
    heatmap's bins (a window of a few days), the cell days' points are read for the heatmap."""
    if span_rows.empty:
        minutes = load.partition_minutes(metrics, requests, partitions)
        heatmap = hp.summarize_normalized_heatmap(metrics, partitions)
        return heatmap, hottest.loads_of_minutes(minutes, partitions), minutes[minutes["own"].astype(bool)]
    model = load.build(metrics, requests, partitions, span_cells=span_rows)
    containers = sorted(set(span_rows["container"].astype(str)))
    step = hp.heatmap_step(metrics, span_rows)
    tier = bins.cell_tier(step, CELL_TIERS)
    now = dt.datetime.now(dt.UTC)
    if tier is not None and all(tiers.retained(tier, cells.midnight(day), now) for day in read.days):
        rolled = stored.in_region(cells.rollup_cells(view, read.days, tier, containers), region)
        heatmap = hp.summarize_normalized_heatmap(metrics, partitions, cells=rolled)
    else:  # no rollup tier nests in the heatmap's bins (a window of a few days): those days' points
        points = cells.points_of_days(view, read.days, hp.METRIC_COLUMNS, containers)
        every = pd.concat([metrics, regions.select_region(points, region)], ignore_index=True)
        heatmap = hp.summarize_normalized_heatmap(every, partitions)
    return heatmap, hottest.loads_of_ranges(model.ranges, partitions), model.own_minutes


def _key_totals(key_ru: pd.DataFrame, partitions: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """Each logical key's RU and busiest second, against its partition's RU/s budget."""
    totals = hk.key_totals(key_ru)
    if totals.empty:
        return hk.against_budget(totals, pd.DataFrame(columns=[*ROW_KEY, "budget_ru_s", "budget_source"]))
    return hk.against_budget(totals, hr.partition_budgets(partitions, metrics, totals))


def _on_layout(frame: pd.DataFrame, column: str, partitions: pd.DataFrame) -> pd.DataFrame:
    """A per-pkrange load over the layout (the latest storage snapshot's pkranges, when there is one): a range
    no request reached carries 0 of the load, so every source counts the partitions the report counts."""
    latest = overview.latest_snapshot(partitions).dropna(subset=["pkrange_id"])
    if latest.empty:
        return frame
    layout = latest[ROW_KEY].astype(str).drop_duplicates()
    layout = layout[layout.set_index(CONTAINER_KEY).index.isin(frame.set_index(CONTAINER_KEY).index)]
    rows = frame[[*ROW_KEY, column]].astype({name: str for name in ROW_KEY})
    current = rows.merge(layout, on=ROW_KEY, how="right")
    return current.assign(**{column: current[column].astype(float).fillna(0.0)})


def _ordered(frame: pd.DataFrame, column: str, partitions: pd.DataFrame) -> pd.DataFrame:
    """A per-pkrange load in key-space order, with its labels."""
    rows = hp.order_pkranges(frame[[*ROW_KEY, column]].drop_duplicates(subset=ROW_KEY), partitions)
    return rows[[*ROW_KEY, "label", column]]
