"""The Cost page's cached loader: the capacity report's build of the view (`report.load_capacity`, shared with
the Reports page: the report, the hours, the bills and the query money, computed once per view and prices)
with the reservation planner on top, cached per view (`tables.cached_view`), so the page's window selector is a
cache hit rather than the hours billed again.

The numbers all come from `analysis`: the hours (`analysis.cost.hours.unit_hours`), the bills
(`analysis.cost.bill.bills`), the query and key money (`analysis.cost.queries.report_costs`), the report
(`analysis.capacity.review.build_capacity`, whose actions carry the money) and the reservation planner
(`analysis.cost.summary.plan_fleet_reservation`), all at the same prices (`dashboard.state.pricing`: the
config's `[pricing]`, else the list price example).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from analysis.capacity import review
from analysis.cost import summary
from collectors.config.pricing import PricingSettings
from dashboard.loaders import tables
from dashboard.loaders.report import load_capacity
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


@st.cache_data(ttl=tables.TTL_SECONDS, show_spinner="Billing the measured hours...", max_entries=tables.PAGE_ENTRIES)
def _load_cost(view: FrameState, pricing_json: str) -> CostData:
    pricing = PricingSettings.model_validate_json(pricing_json)
    built = load_capacity(view, pricing)  # the Reports page's: one build per view and prices, cached
    capacity, prices, writes = built.capacity, pricing.prices(), pricing.multi_write_accounts
    outlook = summary.plan_fleet_reservation(
        capacity.hours, capacity.main, prices, pricing.reservation_plan_discount, held=pricing.held(),
        multi_write=writes,
    )  # fmt: skip
    return CostData(
        bills=capacity.bills,
        main=capacity.main,
        reservation=outlook,
        actions=review.section(capacity.report, "action"),
        queries=capacity.query_costs,
        keys=capacity.key_costs,
        has_metrics=capacity.has_metrics,
        has_data=built.has_data,
        warnings=built.warnings,
    )
