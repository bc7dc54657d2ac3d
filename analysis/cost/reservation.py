"""The reservation size that minimises the bill, from the fleet's hourly usage (B10, B11 in
docs/reference/pricing.md): a reservation is bought in 100 RU/s units and used or lost hour by hour, so each
unit pays its discounted price every hour and saves the list price only in the hours the usage reaches it.

Pure functions over an hourly series of RU/s in list-price terms (manual RU/s as they are; autoscale RU/s x
1.5, as autoscale consumes a reservation, B10; summed over the regions, T x N, B3).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosmoscore import billing


@dataclass(frozen=True, slots=True)
class ReservationPlan:
    """The best size (`ru_s`, 0: none pays), the window's bill with it and without (pay-as-you-go), and the
    coverage curve: for each size considered, the share of hours that use all of it and the bill."""

    ru_s: float
    bill: float
    payg: float
    curve: pd.DataFrame  # ru_s, hours_fully_used (share), bill


def plan_reservation(usage_ru_s: pd.Series, prices: billing.Prices, discount: float) -> ReservationPlan:
    """The reservation size minimising the window's bill (module docstring). Adding a 100 RU/s unit costs its
    discounted price in every hour and saves the list price in each hour whose usage covers it, so it pays
    while the share of hours using it is above 1 - `discount`: the best size is the largest 100 RU/s step
    that at least that share of hours reach. The curve covers every step up to the peak."""
    usage = usage_ru_s.astype(float).clip(lower=0).to_numpy()
    if usage.size == 0:
        return ReservationPlan(0.0, 0.0, 0.0, pd.DataFrame(columns=["ru_s", "hours_fully_used", "bill"]))
    unit = billing.UNIT_RU_S
    sizes = np.arange(0, math.ceil(usage.max() / unit) * unit + unit, unit, dtype=float)
    bills = _bills(usage, sizes, prices, discount)
    used = (usage[None, :] >= sizes[:, None]).mean(axis=1)
    best = int(np.argmin(bills))  # the smallest of equal bills: no unit that saves nothing
    curve = pd.DataFrame({"ru_s": sizes, "hours_fully_used": used.round(4), "bill": bills})
    return ReservationPlan(float(sizes[best]), float(bills[best]), float(bills[0]), curve)


def _bills(usage: np.ndarray, sizes: np.ndarray, prices: billing.Prices, discount: float) -> np.ndarray:
    """The window's throughput bill for each reserved size: `cosmoscore.billing.reserved_hour` summed over
    the hours, for every size at once (sizes x hours; the peak's hundred-RU/s steps times a year of hours is
    a few million cells): each hour the reservation's price and the list cost beyond its credit."""
    rate = prices.manual_per_100_ru_s_hour / billing.UNIT_RU_S
    price = np.array(
        [billing.Reservation(ru_s=float(size), discount=discount).price_per_hour(prices) for size in sizes]
    )
    credit = np.array(
        [billing.Reservation(ru_s=float(size), discount=discount).credit_per_hour(prices) for size in sizes]
    )
    beyond = np.clip(usage[None, :] * rate - credit[:, None], 0.0, None).sum(axis=1) * (1 - prices.discount)
    return np.asarray(price * usage.size + beyond, dtype=float)


def fleet_usage(hours: pd.DataFrame, prices: billing.Prices, multi_write: Collection[str] = ()) -> pd.Series:
    """Per clock hour, the fleet's provisioned throughput in list-price RU/s, what a reservation covers
    (`analysis.cost.hours` frames of every unit, one region's RU/s each): manual the RU/s in force, autoscale
    the RU/s billed (`billing.autoscale_billed_ru_s` of the hour's need) x its 1.5 factor, each in whole 100
    RU/s units x the regions (B3, B10), at the multi-region-write rate over the manual one where the account
    writes in several regions (B4). Indexed by hour."""
    if hours.empty:
        return pd.Series(dtype=float)
    in_force, need = hours["in_force"].astype(float), hours["need"].astype(float)
    auto = hours["autoscale"].astype(bool)
    scaled = [billing.autoscale_billed_ru_s(t, v) for t, v in zip(in_force, need)]
    ru_s = pd.Series(scaled, index=hours.index).where(auto, in_force)
    units = ru_s.map(billing.throughput_units).astype(float) * billing.UNIT_RU_S
    writes = hours["account"].astype(str).isin(set(multi_write))
    factor = pd.Series(1.0, index=hours.index).where(~auto, prices.autoscale_factor)
    factor = factor.where(~writes, prices.multi_write_per_100_ru_s_hour / prices.manual_per_100_ru_s_hour)
    usage = units * factor * hours["regions"].astype(float)
    return usage.groupby(pd.DatetimeIndex(hours["hour"])).sum().rename("ru_s")


def held_bill(usage_ru_s: pd.Series, held: Sequence[billing.Reservation], prices: billing.Prices) -> float:
    """The window's throughput bill with the reservations held (B10): each hour their price, plus the list
    cost beyond their credit at the account's discount (B7: pay-as-you-go as every other bill; the
    reservation's own price is its discount's, B11); several reservations add their credits and prices."""
    rate = prices.manual_per_100_ru_s_hour / billing.UNIT_RU_S
    listed = usage_ru_s.astype(float).clip(lower=0) * rate
    if not held:
        return float(listed.sum() * (1 - prices.discount))
    credit = sum(r.credit_per_hour(prices) for r in held)
    price = sum(r.price_per_hour(prices) for r in held)
    return float(price * len(listed) + (listed - credit).clip(lower=0).sum() * (1 - prices.discount))
