"""The Cost page's cached loader: the store's frames in the view (`report.load_report_frames`, the rows the
capacity report reads) billed once per view and prices, and that result cached for `tables.TTL_SECONDS`, so
the page's window selector is a cache hit rather than the hours billed again.

The numbers all come from `analysis`: the hours (`analysis.cost.hours.unit_hours`), the bills
(`analysis.cost.bill.bills`), the reservation planner (`analysis.cost.summary.plan_fleet_reservation`) and
the capacity report (`analysis.capacity.review.build_capacity_report`, whose actions carry the money: the
Reports page's cached one, `report.load_report`, so the two pages build it once per view and prices), all
at the same prices (`dashboard.state.pricing`: the config's `[pricing]`, else the list price example).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analysis import load, overview, regions
from analysis.capacity import review
from analysis.cost import bill, summary
from analysis.cost import queries as query_cost
from analysis.cost.hours import unit_hours
from collectors.config.pricing import PricingSettings
from dashboard.loaders import tables
from dashboard.loaders.report import load_report, load_report_frames
from dashboard.state import FrameState


@dataclass(frozen=True)
class CostData:
    """What the Cost page shows of one view, at one `[pricing]`."""

    bills: pd.DataFrame  # bill.BILL_COLUMNS: every unit and window
    main: pd.DataFrame  # bill.main_bills: the one row per unit the report reads
    reservation: summary.ReservationOutlook
    actions: pd.DataFrame  # the report's action section (review.section)
    queries: pd.DataFrame  # analysis.cost.queries.QUERY_COST_COLUMNS: replayed and logged queries
    keys: pd.DataFrame  # analysis.cost.queries.KEY_COST_COLUMNS: the logs' logical keys
    has_metrics: bool
    has_data: bool  # any row the report reads: replay only still has findings, never a bill
    warnings: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.has_data


def load_cost(view: FrameState, pricing: PricingSettings) -> CostData:
    """The page's data in the frame's view, at `pricing` (cached: see the module docstring)."""
    return _load_cost(tables.cached_view(view), pricing.model_dump_json())


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Billing the measured hours...", max_entries=16)
def _load_cost(view: FrameState, pricing_json: str) -> CostData:
    region = view.region
    pricing = PricingSettings.model_validate_json(pricing_json)
    prices, writes = pricing.prices(), pricing.multi_write_accounts
    frames, warnings = load_report_frames(view)
    metrics = regions.select_region(frames["metrics"], region)
    requests, partitions = frames["requests"], frames["partitions"]
    model = load.build(metrics, requests, partitions)  # once: the hours and the money read it
    hours = unit_hours(metrics, requests, partitions, model=model)
    bills = bill.bills(hours, partitions, prices, metrics=metrics, multi_write=writes)
    main = bill.main_bills(bills)
    outlook = summary.plan_fleet_reservation(
        hours, main, prices, pricing.reservation_plan_discount, held=pricing.held(), multi_write=writes
    )
    report, _ = load_report(view, pricing)  # the Reports page's: one build per view and prices, cached
    query_money, key_money = query_cost.report_costs(  # as the report prices them: one definition
        overview.query_stats(frames["executions"]), frames["executions"], requests, metrics, main, prices,
        frames["log_query_ru"], frames["log_key_ru"], model=model,
    )  # fmt: skip
    return CostData(
        bills=bills,
        main=main,
        reservation=outlook,
        actions=review.section(report, "action"),
        queries=query_money,
        keys=key_money,
        has_metrics=not metrics.empty,
        has_data=any(not frame.empty for frame in frames.values()),
        warnings=warnings,
    )
