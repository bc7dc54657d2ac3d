"""Azure Cosmos DB's billing rules, as pure functions over hourly figures: provisioned throughput (manual and
autoscale) in every region, serverless RU, storage, the free tier and reserved capacity.

Every rule cites its row in docs/reference/pricing.md (B1-B16, each with Microsoft's page). The prices are
configuration (`Prices`; the config's `[pricing]`); the defaults are Microsoft's published example prices for
a single-write-region account in a non-government US region, which are list prices, not a quote:
`LIST_PRICE_NOTE` says so wherever a cost is shown. Money is a float in `Prices.currency`, rounded only where
it is shown (the pages round each row to the cent).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

UNIT_RU_S = 100  # B1: provisioned throughput is billed in units of 100 RU/s per hour
AUTOSCALE_MIN_FRACTION = 0.1  # B2: autoscale scales between 10% of its max and the max
FREE_TIER_RU_S, FREE_TIER_GB = 1000, 25  # B8: the free tier's RU/s and storage, per account
HOURS_PER_MONTH = 730  # B3: "all 730 hours in one month" (how-to-choose-offer, throughput-serverless)
LIST_CURRENCY = "USD"  # the currency of Microsoft's example prices
LIST_PRICE_NOTE = "list price example (Microsoft's published US single-region rates); set yours in [pricing]"


@dataclass(frozen=True, slots=True)
class Prices:
    """What one unit costs (B1-B7); `discount` is an account-level discount (an agreement's) taken off every
    price, `list_example` whether these are still the published example prices (then `LIST_PRICE_NOTE`)."""

    currency: str = LIST_CURRENCY
    manual_per_100_ru_s_hour: float = 0.008  # B1
    autoscale_factor: float = 1.5  # B2: single-write autoscale at 1.5x the manual rate
    multi_write_per_100_ru_s_hour: float = 0.016  # B4: manual and autoscale alike with multi-region writes
    serverless_per_million_ru: float = 0.25  # B5
    storage_per_gb_month: float = 0.25  # B6: data and index, per region
    discount: float = 0.0
    list_example: bool = True

    def _net(self, amount: float) -> float:
        return amount * (1 - self.discount)


def throughput_units(ru_s: float) -> int:
    """The 100 RU/s units an hour of `ru_s` is billed in (B1: "in increments of 100 RU/s")."""
    return max(0, math.ceil(ru_s / UNIT_RU_S - 1e-9))


def manual_hour(ru_s: float, prices: Prices, *, regions: int = 1, multi_write: bool = False) -> float:
    """One hour of manual throughput: the RU/s provisioned, used or not (B1), in each of the `regions` (B3:
    T x N), at the multi-region-write rate when writes go to several regions (B4)."""
    rate = prices.multi_write_per_100_ru_s_hour if multi_write else prices.manual_per_100_ru_s_hour
    return prices._net(throughput_units(ru_s) * rate * regions)


def autoscale_billed_ru_s(max_ru_s: float, highest_ru_s: float) -> float:
    """The RU/s an autoscale hour bills (B2): the highest the system scaled to in the hour, never under 10%
    of the max ("if your resource had no requests during the hour ... the minimum of 0.1 x Tmax"), at most the max."""
    return min(max_ru_s, max(AUTOSCALE_MIN_FRACTION * max_ru_s, highest_ru_s))


def autoscale_hour(
    max_ru_s: float, highest_ru_s: float, prices: Prices, *, regions: int = 1, multi_write: bool = False
) -> float:
    """One hour of autoscale (B2): `autoscale_billed_ru_s` at 1.5x the manual rate in single-write accounts;
    with multi-region writes at the multi-write rate, no extra for autoscale (B4); in each region (B3)."""
    billed = autoscale_billed_ru_s(max_ru_s, highest_ru_s)
    if multi_write:
        rate = prices.multi_write_per_100_ru_s_hour
    else:
        rate = prices.manual_per_100_ru_s_hour * prices.autoscale_factor
    return prices._net(throughput_units(billed) * rate * regions)


def serverless_cost(request_units: float, prices: Prices) -> float:
    """Serverless: the RU consumed, at the price per million (B5); one region only (B9)."""
    return prices._net(request_units / 1_000_000 * prices.serverless_per_million_ru)


def storage_month(gb: float, prices: Prices, *, regions: int = 1) -> float:
    """A month of storage (B6): GB of data and index (the month's hourly maximum, averaged over the month), in
    every region."""
    return prices._net(gb * prices.storage_per_gb_month * regions)


def hours_cost(costs: Iterable[float]) -> float:
    """A bill of hours: the sum of each hour's cost (B1: "billed hourly")."""
    return float(sum(costs))


def free_tier_ru_s(ru_s: float) -> float:
    """What the free tier leaves billed of an hour's RU/s, summed over the regions (B8: the first 1000 RU/s of
    the account are free)."""
    return max(0.0, ru_s - FREE_TIER_RU_S)


def free_tier_gb(gb: float) -> float:
    """What the free tier leaves billed of the account's storage, summed over the regions (B8: 25 GB free)."""
    return max(0.0, gb - FREE_TIER_GB)


@dataclass(frozen=True, slots=True)
class Reservation:
    """Reserved capacity held (B10): `ru_s` in 100 RU/s units, its `discount` off the list price for its
    term and size (B11), bought at the list rate of `prices`."""

    ru_s: float
    discount: float

    def credit_per_hour(self, prices: Prices) -> float:
        """The list-price value it covers each hour: $8 for 100,000 RU/s at $0.008 (B10)."""
        return self.ru_s / UNIT_RU_S * prices.manual_per_100_ru_s_hour

    def price_per_hour(self, prices: Prices) -> float:
        """What the reservation itself costs per hour ($6.40 for that $8 at 20% off, B10)."""
        return self.credit_per_hour(prices) * (1 - self.discount)


def reserved_hour(list_cost: float, reservation: Reservation, prices: Prices) -> float:
    """An hour of provisioned throughput with a reservation (B10): the reservation's price, plus what the hour
    cost at list prices beyond the reservation's credit (use it or lose it: an hour under it loses the rest;
    autoscale's 1.5x and a dearer region's rate draw more of the credit, as their list cost says); the
    overage is pay-as-you-go, so an account's discount (B7) applies to it and not to the reservation's price."""
    return reservation.price_per_hour(prices) + prices._net(max(0.0, list_cost - reservation.credit_per_hour(prices)))


def min_manual_ru_s(storage_gb: float, highest_ru_s_ever: float) -> float:
    """A container's minimum manual RU/s (B12): MAX(400, storage GB x 1, highest RU/s ever / 100)."""
    return max(400.0, storage_gb * 1, highest_ru_s_ever / 100)


def min_autoscale_max_ru_s(storage_gb: float, highest_ru_s_ever: float) -> float:
    """A container's smallest autoscale max (B12): MAX(1000, storage GB x 10, highest RU/s ever / 10)."""
    return max(1000.0, storage_gb * 10, highest_ru_s_ever / 10)


def min_database_manual_ru_s(storage_gb: float, highest_ru_s_ever: float, containers: int) -> float:
    """A shared database's minimum manual RU/s (B12): also 400 + 100 for each container beyond 25."""
    return max(min_manual_ru_s(storage_gb, highest_ru_s_ever), 400.0 + max(containers - 25, 0) * 100)


def min_database_autoscale_max_ru_s(storage_gb: float, highest_ru_s_ever: float, containers: int) -> float:
    """A shared database's smallest autoscale max (B12): also 1000 + 1000 for each container beyond 25."""
    return max(min_autoscale_max_ru_s(storage_gb, highest_ru_s_ever), 1000.0 + max(containers - 25, 0) * 1000)
