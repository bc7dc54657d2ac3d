"""analysis.cost.reservation on generated hourly series whose cheapest reservation is known by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.cost.reservation import plan_reservation
from cosmoscore import billing

LIST = billing.Prices()


def test_the_best_size_is_reached_by_more_hours_than_one_minus_the_discount() -> None:
    """100 hours: 10,000 RU/s in all of them, 20,000 in 85, 30,000 in 70. At 20% off, a unit pays while more
    than 80% of hours use it: 20,000 RU/s (85% of hours), not 30,000 (70%). By hand, at $0.008 per 100 RU/s:
    pay-as-you-go is each 10,000 RU/s layer at $0.80 an hour in the hours that reach it, 0.8 x (100 + 85 +
    70) = $204; with 20,000 reserved, 200 units at $0.0064 cost $1.28 an hour ($128) and the 70 hours at
    30,000 pay the third layer at list ($56): $184."""
    usage = pd.Series([10_000.0] * 15 + [20_000.0] * 15 + [30_000.0] * 70)
    plan = plan_reservation(usage, LIST, discount=0.20)
    assert plan.ru_s == 20_000
    assert plan.payg == pytest.approx(0.8 * 100 + 0.8 * 85 + 0.8 * 70)
    assert plan.bill == pytest.approx(1.28 * 100 + 0.8 * 70)
    at = plan.curve.set_index("ru_s")
    assert at.loc[20_000, "hours_fully_used"] == 0.85 and at.loc[30_000, "hours_fully_used"] == 0.70
    assert at.loc[30_000, "bill"] == pytest.approx(1.92 * 100) and at["bill"].min() == plan.bill
    held = billing.Reservation(ru_s=plan.ru_s, discount=0.20)  # the curve is billing.reserved_hour, summed
    by_hour = sum(billing.reserved_hour(ru_s / 100 * 0.008, held, LIST) for ru_s in usage)
    assert plan.bill == pytest.approx(by_hour)


def test_a_spiky_fleet_reserves_its_floor_and_an_idle_one_nothing() -> None:
    spiky = pd.Series([1000.0] * 95 + [50_000.0] * 5)  # the floor in every hour, a peak in 5%
    assert plan_reservation(spiky, LIST, discount=0.30).ru_s == 1000
    assert plan_reservation(pd.Series([0.0] * 24), LIST, discount=0.2).ru_s == 0
    assert plan_reservation(pd.Series(dtype=float), LIST, discount=0.2).ru_s == 0


def test_the_fleet_s_usage_is_what_a_reservation_covers_and_the_held_one_is_netted() -> None:
    """Two units in one hour: 1,000 RU/s manual in two regions (2,000 list RU/s) and an autoscale max of
    4,000 that needed 1,000 RU/s (B10: consumes at 1.5x, 1,500): 3,500 RU/s. Holding 2,000 RU/s at 20% off:
    $0.128 an hour for $0.16 of credit, plus list beyond it: 1,500 RU/s at $0.008 = $0.12, $0.248 in all
    (against $0.28 at list)."""
    from analysis.cost.reservation import fleet_usage, held_bill

    hour = pd.Timestamp("2026-05-01T10:00Z")
    hours = pd.DataFrame(
        {
            "account": ["a", "a"], "database": ["d", "d"], "container": ["m", "x"], "hour": [hour, hour],
            "need": [500.0, 1000.0], "in_force": [1000.0, 4000.0], "ru": [0.0, 0.0], "throttled": [False, False],
            "autoscale": [False, True], "regions": [2, 1], "pkranges": [1, 1],
        }
    )  # fmt: skip
    usage = fleet_usage(hours, LIST)
    assert usage.tolist() == [3500.0]
    assert held_bill(usage, (), LIST) == pytest.approx(0.28)
    assert held_bill(usage, (billing.Reservation(ru_s=2000, discount=0.20),), LIST) == pytest.approx(0.248)
    # multi-region writes draw the credit at their own rate ($0.016 against $0.008: 2x)
    assert fleet_usage(hours, LIST, multi_write=["a"]).tolist() == [2 * 2000.0 + 2 * 1000.0]
