"""What the Cost page shows, read from the bills (`analysis.cost.bill`), the hours they are computed from
(`analysis.cost.hours`), the reservation planner (`analysis.cost.reservation`) and the capacity report's
actions: no number here is computed a second way, only gathered, labelled and summed.

- `summarize_units`: per throughput unit (a container with RU/s of its own, or a shared database), its
  main window's month as billed (`bill.main_bills`), its storage and the two together;
- `summarize_accounts`, `fleet_bill`: the same summed per account and over the fleet;
- `summarize_alternatives`: per unit, over a 7/30/90-day window, the month as billed, manual at the right
  RU/s, autoscale at the right max and serverless (or why it does not fit), each with the hours it would
  have throttled, and the recommendation with its monthly saving;
- `plan_fleet_reservation`: the reservation that minimises the fleet's bill over the main window's hours
  (`reservation.fleet_usage`, `plan_reservation`), its curve per month, and the bill with the reservations
  held (`reservation.held_bill`);
- `summarize_serverless_accounts`: per account, its units as one new serverless account (B16);
- `money_findings`: the report's actions that carry a monthly saving, the largest first.

Money is in the prices' currency, per month (`cosmoscore.billing.HOURS_PER_MONTH` hours: the measured hours
projected as `bill` projects them), unrounded (the page shows cents).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from analysis import fleet
from analysis.cost import bill, reservation
from cosmoscore import billing
from store.records import SHARED_OFFER_CONTAINER

KEY = bill.KEY
SHARED_UNIT, CONTAINER_UNIT = "shared database", "container"
UNIT_COLUMNS = [*KEY, "unit", "unit_kind", "offer", "regions", "window_days", "start", "end", "hours",
                "monthly", "storage_monthly", "total_monthly", "throttled_hours", "currency"]  # fmt: skip
ACCOUNT_COLUMNS = ["account", "units", "monthly", "storage_monthly", "total_monthly", "currency"]
ALTERNATIVE_COLUMNS = [
    *KEY, "unit", "window_days", "hours", "offer", "monthly", "throttled_hours",
    "manual_ru_s", "manual_right", "manual_throttled_hours",
    "autoscale_max", "autoscale_right", "autoscale_throttled_hours",
    "serverless", "serverless_note", "serverless_throttled_hours",
    "recommendation", "recommended_monthly", "monthly_saving", "currency",
]  # fmt: skip
FINDING_COLUMNS = [*KEY, "severity", "measure", "subject", "detail", "target", "target_unit",
                   "monthly_saving", "saving_unit", "command", "risk"]  # fmt: skip


def unit_name(key: tuple[str, str, str], *, with_account: bool = False) -> str:
    """A unit as a page names it (`analysis.fleet.unit_label`): `database / container`, `database (shared)`;
    `with_account`: prefixed `account · ` (a fleet of accounts may hold the same names twice)."""
    label = fleet.unit_label(key)
    return f"{key[0]} · {label}" if with_account else label


def unit_names(frame: pd.DataFrame) -> list[str]:
    """`unit_name` of each row of `frame` (`KEY` columns), with the account when the frame spans several."""
    several = frame["account"].astype(str).nunique() > 1
    keys = frame[KEY].astype(str).itertuples(index=False, name=None)
    return [unit_name(k, with_account=several) for k in keys]


def summarize_units(main: pd.DataFrame) -> pd.DataFrame:
    """`UNIT_COLUMNS` per unit of `main` (`bill.main_bills`), the dearest first: `total_monthly` is the
    throughput as billed plus the storage (the throughput alone where no storage snapshot priced it)."""
    if main.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    shared = main["container"].astype(str).eq(SHARED_OFFER_CONTAINER)
    units = main.assign(
        unit=unit_names(main),
        unit_kind=shared.map({True: SHARED_UNIT, False: CONTAINER_UNIT}),
        offer=main["autoscale"].astype(bool).map({True: "autoscale", False: "manual"}),
        total_monthly=main["monthly"].astype(float) + main["storage_monthly"].astype(float).fillna(0.0),
    )
    ranked = units.sort_values(["total_monthly", *KEY], ascending=[False, True, True, True], kind="stable")
    return ranked[UNIT_COLUMNS].reset_index(drop=True)


def summarize_accounts(units: pd.DataFrame) -> pd.DataFrame:
    """`ACCOUNT_COLUMNS` per account of `units` (`summarize_units`), the dearest first; storage blank where
    no unit of the account has a storage snapshot."""
    if units.empty:
        return pd.DataFrame(columns=ACCOUNT_COLUMNS)
    grouped = units.groupby("account", sort=True)
    accounts = pd.DataFrame(
        {
            "units": grouped.size(),
            "monthly": grouped["monthly"].sum(),
            "storage_monthly": grouped["storage_monthly"].sum(min_count=1),
            "total_monthly": grouped["total_monthly"].sum(),
            "currency": grouped["currency"].first(),
        }
    ).reset_index()
    return accounts.sort_values("total_monthly", ascending=False, kind="stable")[ACCOUNT_COLUMNS].reset_index(drop=True)


@dataclass(frozen=True, slots=True)
class FleetBill:
    """The fleet's month as billed over the main window: throughput, storage (NaN: no snapshot), both."""

    monthly: float
    storage_monthly: float
    total_monthly: float
    currency: str
    units: int
    start: pd.Timestamp  # the first clock hour of the main window (the longest of the units')
    end: pd.Timestamp  # the end of the last measured clock hour
    window_days: int
    price_note: str


def fleet_bill(main: pd.DataFrame) -> FleetBill | None:
    """The fleet's `FleetBill` from `main` (`bill.main_bills`); None without a bill."""
    if main.empty:
        return None
    units = summarize_units(main)
    start, end = fleet_window(main)
    return FleetBill(
        monthly=float(units["monthly"].sum()),
        storage_monthly=float(units["storage_monthly"].sum(min_count=1)),
        total_monthly=float(units["total_monthly"].sum()),
        currency=str(main["currency"].iloc[0]),
        units=len(units),
        start=start,
        end=end + pd.Timedelta(hours=1),
        window_days=int(main["window_days"].max()),
        price_note=str(main["price_note"].iloc[0]),
    )


def fleet_window(main: pd.DataFrame) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The first and the last clock hour of the main window: every unit's main window ends at the store's
    latest measured hour, and the longest starts first (a unit whose main window is shorter has no hours
    before its start)."""
    return pd.Timestamp(main["start"].min()), pd.Timestamp(main["end"].max())


def window_choices(bills: pd.DataFrame) -> list[int]:
    """The windows (days) the bills hold, shortest first."""
    return sorted({int(d) for d in bills["window_days"]}) if not bills.empty else []


def main_window_days(bills: pd.DataFrame) -> int | None:
    """The window the report reads (`bill.MAIN_WINDOW_DAYS` where the store holds it, else the shortest)."""
    choices = window_choices(bills)
    if not choices:
        return None
    return bill.MAIN_WINDOW_DAYS if bill.MAIN_WINDOW_DAYS in choices else choices[0]


def summarize_alternatives(bills: pd.DataFrame, days: int) -> pd.DataFrame:
    """`ALTERNATIVE_COLUMNS` per unit over the last `days`: its row of that window, or of the longest shorter
    one where the longer held no more hours (`bill.bills` leaves such a window out: it would repeat it); the
    largest saving first. Serverless is priced only where it fits; `serverless_note` says why not."""
    if bills.empty:
        return pd.DataFrame(columns=ALTERNATIVE_COLUMNS)
    within = bills[bills["window_days"].astype(int) <= days].sort_values([*KEY, "window_days"], kind="stable")
    rows = within.drop_duplicates(subset=KEY, keep="last")
    if rows.empty:
        return pd.DataFrame(columns=ALTERNATIVE_COLUMNS)
    records = [{str(k): v for k, v in r.items()} for r in rows.to_dict("records")]
    fits = rows["serverless_fits"].astype(bool)
    shown = rows.assign(
        unit=unit_names(rows),
        offer=rows["autoscale"].astype(bool).map({True: "autoscale", False: "manual"}),
        serverless=rows["serverless"].astype(float).where(fits),
        serverless_note=[serverless_note(r) for r in records],
        recommendation=[recommendation_text(r) for r in records],
    )
    ranked = shown.sort_values(["monthly_saving", *KEY], ascending=[False, True, True, True], kind="stable")
    return ranked[ALTERNATIVE_COLUMNS].reset_index(drop=True)


def summarize_serverless_accounts(main: pd.DataFrame) -> pd.DataFrame:
    """Per account, its units as one new serverless account (`bill.account_serverless`, B16), the largest
    saving first."""
    found = bill.account_serverless(main)
    return found.sort_values(["monthly_saving", "account"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )


def serverless_note(row: dict[str, object]) -> str:
    """Whether serverless fits a unit's bill row, and if not why (B9 in docs/reference/pricing.md)."""
    if row["serverless_fits"]:
        return f"fits: one region, at most {bill.SERVERLESS_PARTITION_RU_S:,} RU/s a partition"
    if str(row["container"]) == SHARED_OFFER_CONTAINER:
        return "does not fit: a shared database offer (serverless has none)"
    regions = int(str(row["regions"]))
    if regions > 1:
        return f"does not fit: {regions} regions (serverless runs in one)"
    hours = row["serverless_throttled_hours"]
    return f"does not fit: a partition needed over {bill.SERVERLESS_PARTITION_RU_S:,} RU/s in {int(str(hours))} hours"


def recommendation_text(row: dict[str, object]) -> str:
    """The recommended option of a bill row (`bill.recommend`) in words, with its RU/s."""
    chosen = str(row["recommended"])
    if chosen == "manual":
        return f"manual at {float(str(row['manual_ru_s'])):,.0f} RU/s"
    if chosen == "autoscale":
        return f"autoscale at max {float(str(row['autoscale_max'])):,.0f} RU/s"
    return f"keep as billed ({'autoscale' if row['autoscale'] else 'manual'})"


@dataclass(frozen=True, slots=True)
class ReservationOutlook:
    """The reservation planner on the fleet's main window: the best size, the curve, the bills per month."""

    plan: reservation.ReservationPlan
    curve: pd.DataFrame  # ru_s, hours_fully_used (share), bill (the window's), monthly
    hours: int  # the clock hours of the usage series
    start: pd.Timestamp | None
    end: pd.Timestamp | None  # the end of the last hour
    discount: float  # what a new reservation is priced at ([pricing] reservation_plan_discount)
    best_monthly: float
    payg_monthly: float  # the month without a reservation (size 0 on the curve)
    saving_monthly: float  # payg_monthly - best_monthly
    held_ru_s: float  # the RU/s of the reservations held ([[pricing.reservations]]), 0: none
    held_monthly: float  # the month with them held; NaN when none is held
    currency: str


def plan_fleet_reservation(
    hours: pd.DataFrame,
    main: pd.DataFrame,
    prices: billing.Prices,
    discount: float,
    *,
    held: Sequence[billing.Reservation] = (),
    multi_write: Collection[str] = (),
) -> ReservationOutlook:
    """The reservation planner over the main window's hours (`fleet_window` of `main`) of every unit in
    `hours` (`analysis.cost.hours.unit_hours`), each bill projected to a month over the usage's hours."""
    if not main.empty:
        start, last = fleet_window(main)
        hours = hours[(pd.DatetimeIndex(hours["hour"]) >= start) & (pd.DatetimeIndex(hours["hour"]) <= last)]
    usage = reservation.fleet_usage(hours, prices, multi_write)
    plan = reservation.plan_reservation(usage, prices, discount)
    n = len(usage)
    month = billing.HOURS_PER_MONTH / n if n else math.nan
    held_total = float(sum(r.ru_s for r in held))
    held_monthly = reservation.held_bill(usage, held, prices) * month if held and n else math.nan
    curve = plan.curve.assign(monthly=plan.curve["bill"].astype(float) * month)
    times = pd.DatetimeIndex(usage.index)
    return ReservationOutlook(
        plan=plan,
        curve=curve,
        hours=n,
        start=times.min() if n else None,
        end=times.max() + pd.Timedelta(hours=1) if n else None,
        discount=discount,
        best_monthly=plan.bill * month if n else math.nan,
        payg_monthly=plan.payg * month if n else math.nan,
        saving_monthly=(plan.payg - plan.bill) * month if n else math.nan,
        held_ru_s=held_total,
        held_monthly=held_monthly,
        currency=prices.currency,
    )


def money_findings(actions: pd.DataFrame) -> pd.DataFrame:
    """`FINDING_COLUMNS` of the report's `action` section (`analysis.capacity.review.section`) that carry a
    `monthly_saving`, the largest saving first (a negative one costs: last)."""
    if actions.empty or "monthly_saving" not in actions:
        return pd.DataFrame(columns=FINDING_COLUMNS)
    priced = actions[pd.to_numeric(actions["monthly_saving"], errors="coerce").notna()]
    priced = priced.assign(monthly_saving=priced["monthly_saving"].astype(float))
    ranked = priced.sort_values("monthly_saving", ascending=False, kind="stable")
    return ranked.reindex(columns=FINDING_COLUMNS).reset_index(drop=True)
