"""analysis.cost.summary on bills built here: the Cost page's sums, windows, notes and ranking read the bills
and the report as they are (one definition of each number)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.cost import bill, summary
from analysis.cost.hours import unit_hours
from cosmoscore import billing
from tests.analysis.test_overview import frame, metric

END = pd.Timestamp("2026-05-31 09:00", tz="UTC")


def bill_row(container: str, days: int, monthly: float, **values: object) -> dict:
    row = dict.fromkeys(bill.BILL_COLUMNS, math.nan)
    row.update(account="a", database="shop", container=container, window_days=days, hours=24 * days, regions=1,
               autoscale=False, serverless_fits=False, serverless_throttled_hours=0, recommended="today",
               monthly=monthly, storage_monthly=math.nan, monthly_saving=0.0, currency="USD",
               start=END - pd.Timedelta(days=days) + pd.Timedelta(hours=1), end=END, price_note="n")  # fmt: skip
    return {**row, **values}


def test_units_and_accounts_add_storage_where_a_snapshot_priced_it() -> None:
    main = pd.DataFrame([bill_row("orders", 30, 58.4, storage_monthly=2.5), bill_row("", 30, 10.0)])
    units = summary.summarize_units(main)
    assert units["unit"].tolist() == ["shop / orders", "shop (shared)"]
    assert units["unit_kind"].tolist() == ["container", "shared database"]
    assert units["total_monthly"].tolist() == [pytest.approx(60.9), pytest.approx(10.0)]
    [account] = summary.summarize_accounts(units).to_dict("records")
    assert (account["units"], account["monthly"], account["storage_monthly"]) == (2, pytest.approx(68.4), 2.5)
    whole = summary.fleet_bill(main)
    assert whole is not None and whole.total_monthly == pytest.approx(70.9) and whole.end == END + pd.Timedelta(hours=1)


def test_two_accounts_name_their_units_with_the_account() -> None:
    main = pd.DataFrame([bill_row("orders", 7, 1.0), bill_row("orders", 7, 2.0, account="b")])
    assert summary.summarize_units(main)["unit"].tolist() == ["b · shop / orders", "a · shop / orders"]


def test_a_window_the_store_does_not_fill_shows_the_shorter_one_it_repeats() -> None:
    """orders has 7- and 30-day rows (its 90 days would hold no more hours); people only a 7-day row."""
    bills = pd.DataFrame([
        bill_row("orders", 7, 10.0), bill_row("orders", 30, 12.0, monthly_saving=3.0), bill_row("people", 7, 5.0),
    ])  # fmt: skip
    assert summary.window_choices(bills) == [7, 30] and summary.main_window_days(bills) == 30
    ninety = summary.summarize_alternatives(bills, 90)
    assert ninety[["container", "window_days"]].values.tolist() == [["orders", 30], ["people", 7]]
    assert summary.summarize_alternatives(bills, 7)["monthly"].tolist() == [10.0, 5.0]


def test_serverless_is_priced_only_where_it_fits_and_says_why_not() -> None:
    rows = [
        bill_row("orders", 7, 1.0, serverless=0.5, serverless_fits=True, recommended="today"),
        bill_row("big", 7, 1.0, serverless=0.5, serverless_throttled_hours=3, manual_ru_s=400.0,
                 recommended="manual"),
        bill_row("wide", 7, 1.0, serverless=0.5, regions=2, autoscale_max=4000.0, recommended="autoscale"),
        bill_row("", 7, 1.0),
    ]  # fmt: skip
    shown = summary.summarize_alternatives(pd.DataFrame(rows), 7).set_index("container")
    assert shown.loc["orders", "serverless"] == 0.5 and math.isnan(shown.loc["big", "serverless"])
    assert shown.loc["big", "serverless_note"] == "does not fit: a partition needed over 5,000 RU/s in 3 hours"
    assert shown.loc["wide", "serverless_note"] == "does not fit: 2 regions (serverless runs in one)"
    assert shown.loc["", "serverless_note"].startswith("does not fit: a shared database offer")
    assert shown["recommendation"].to_dict() == {
        "orders": "keep as billed (manual)", "big": "manual at 400 RU/s", "wide": "autoscale at max 4,000 RU/s",
        "": "keep as billed (manual)",
    }  # fmt: skip


def test_the_reservation_is_planned_on_the_main_window_s_hours() -> None:
    """1,000 RU/s manual for 48 hours, the main window the last 24 (a 1-day window: every hour uses it all)."""
    rows = [metric("ProvisionedThroughput", 1000.0)] + [
        metric("TotalRequestUnits", 60.0, minute=60 * h) for h in range(48)
    ]
    metrics = frame("metrics", *rows)
    hours = unit_hours(metrics, None, None)
    main = bill.main_bills(bill.bills(hours, None, billing.Prices(), metrics=metrics, windows=(1,)))
    outlook = summary.plan_fleet_reservation(hours, main, billing.Prices(), 0.2)
    assert outlook.hours == 24 and outlook.plan.ru_s == 1000
    assert outlook.payg_monthly == pytest.approx(58.40) and outlook.best_monthly == pytest.approx(46.72)
    assert outlook.saving_monthly == pytest.approx(11.68) and math.isnan(outlook.held_monthly)
    held = summary.plan_fleet_reservation(hours, main, billing.Prices(), 0.2, held=[billing.Reservation(500, 0.3)])
    assert held.held_ru_s == 500 and held.held_monthly == pytest.approx((0.028 + 0.04) * 730)


def test_findings_in_money_are_the_report_s_largest_saving_first() -> None:
    actions = pd.DataFrame([
        {"account": "a", "database": "shop", "container": "orders", "measure": "lower_throughput", "monthly_saving": 35.04},
        {"account": "a", "database": "shop", "container": "orders", "measure": "query_fans_out", "monthly_saving": None},
        {"account": "a", "database": "shop", "container": "orders", "measure": "move_to_autoscale", "monthly_saving": 49.64},
        {"account": "a", "database": "shop", "container": "x", "measure": "raise_throughput", "monthly_saving": -5.0},
    ])  # fmt: skip
    found = summary.money_findings(actions)
    assert found["measure"].tolist() == ["move_to_autoscale", "lower_throughput", "raise_throughput"]
    assert found.columns.tolist() == summary.FINDING_COLUMNS
