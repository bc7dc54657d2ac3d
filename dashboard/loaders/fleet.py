"""The Fleet page's cached loader: every container ranked by risk and the throughput units, computed once
per view and cached (`tables.cached_view`: keyed by the store's versions; the ranking runs the container model for every container;
uncached, each rerun of the page paid for it again). The numbers all come from `analysis`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analysis import fleet, overview, throttling
from dashboard.loaders import cells, tables
from dashboard.state import FrameState


@dataclass(frozen=True)
class FleetData:
    ranked: pd.DataFrame  # analysis.overview.summarize_fleet_table, riskiest first
    units: pd.DataFrame  # analysis.fleet.summarize_throughput_units
    warnings: tuple[str, ...]


def load_fleet(view: FrameState) -> FleetData:
    """The ranked fleet and its throughput units in the frame's view (cached: see the module docstring)."""
    return _load_fleet(tables.cached_view(view))


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Ranking the fleet...", max_entries=tables.PAGE_ENTRIES)
def _load_fleet(view: FrameState) -> FleetData:
    region = view.region
    executions = tables.load_view(view, "executions", columns=fleet.EXECUTION_COLUMNS)
    requests = tables.load_view(view, "requests", columns=fleet.REQUEST_COLUMNS)
    # millions of points: read, not cached (this loader caches its result; pickling them costs as much); the
    # whole days' NormalizedRUConsumption as their stored span cells (`cells`)
    read = cells.metrics_with_cells(view, fleet.FLEET_METRIC_COLUMNS, [])
    metrics = read.metrics
    partitions = tables.load_view(view, "partitions", columns=fleet.PARTITION_COLUMNS)
    logged = tables.load_view(view, "log_throttles", columns=throttling.LOG_THROTTLE_COLUMNS)
    loaded = (executions, requests, metrics, partitions, logged)
    model = overview.region_model(metrics.frame, requests.frame, partitions.frame, read.cells, region)
    ranked = overview.summarize_fleet_table(
        executions.frame, requests.frame, metrics.frame, partitions.frame, logged.frame, region=region, model=model
    )
    reporting = None if model is None else model.reporting
    units = fleet.summarize_throughput_units(
        ranked, metrics.frame, partitions.frame, region=region, reporting=reporting
    )
    return FleetData(ranked, units, tuple(dict.fromkeys(w for one in loaded for w in one.warnings)))
