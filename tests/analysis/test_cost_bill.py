"""analysis.cost.bill on frames built here: the measured hours billed as Azure bills them (Microsoft's
worked example through the whole pipeline, from metrics), and the alternatives over the same hours."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.cost import bill
from cosmoscore import billing
from tests.analysis.test_overview import frame, metric

LIST = billing.Prices()


def bills(*rows: dict, partitions: pd.DataFrame | None = None, **options: object) -> pd.DataFrame:
    """The main window's bill per container (container "" for a shared database)."""
    found = bill.container_bills(frame("metrics", *rows), None, partitions, LIST, **options)  # type: ignore[arg-type]
    return bill.main_bills(found).set_index("container")


def test_an_autoscale_container_bills_the_pages_example_from_its_metrics() -> None:
    """how-to-choose-offer's variable workload: autoscale max 30,000 RU/s, one partition, hours at 6%, 100%
    and 11% normalized RU: billed 3,000, 30,000 and 3,300 RU/s, $0.36 + $3.60 + $0.40 = $4.36 (B2)."""
    rows = [metric("AutoscaleMaxThroughput", 30_000.0, minute=0)]
    for hour, percent in enumerate([6.0, 100.0, 11.0]):
        rows.append(metric("NormalizedRUConsumption", percent, minute=60 * hour, pkrange_id="0"))
        rows.append(metric("TotalRequestUnits", 60.0, minute=60 * hour))
    orders = bills(*rows).loc["orders"]
    assert bool(orders["autoscale"]) and orders["hours"] == 3
    assert orders["billed"] == pytest.approx(4.356) and round(orders["billed"], 2) == 4.36
    assert orders["monthly"] == pytest.approx(4.356 / 3 * 730)
    # manual at the right size keeps the busiest hour's need (30,000) at 80%: 37,500 RU/s, $3.00 an hour
    assert orders["manual_ru_s"] == 37_500 and orders["manual_right"] == pytest.approx(3.00 * 730)
    assert "list price example" in orders["price_note"] and orders["currency"] == "USD"


def test_a_quiet_manual_container_and_its_alternatives() -> None:
    """1,000 RU/s manual for 24 hours, consuming 1 RU/s in one minute of each hour: billed $0.08 an hour
    ($58.40 a month); the right manual size is the 400 RU/s minimum ($23.36), autoscale at its 1,000 max
    bills its 100 RU/s floor at 1.5x ($8.76), serverless the 1,440 RU consumed."""
    rows = [metric("ProvisionedThroughput", 1000.0, minute=0)]
    rows += [metric("TotalRequestUnits", 60.0, minute=60 * h) for h in range(24)]
    orders = bills(*rows).loc["orders"]
    assert not bool(orders["autoscale"]) and orders["hours"] == 24
    assert orders["billed"] == pytest.approx(24 * 0.08) and orders["monthly"] == pytest.approx(58.40)
    assert orders["manual_ru_s"] == 400 and orders["manual_right"] == pytest.approx(23.36)
    assert orders["autoscale_max"] == 1000 and orders["autoscale_right"] == pytest.approx(8.76)
    assert orders["serverless"] == pytest.approx(1440 / 1e6 * 0.25 / 24 * 730) and bool(orders["serverless_fits"])


def test_throughput_is_billed_in_every_region_and_serverless_does_not_fit_two() -> None:
    rows = []
    for region in ("West US", "East US"):
        rows.append(metric("ProvisionedThroughput", 1000.0, minute=0, region=region))
        rows += [metric("TotalRequestUnits", 60.0, minute=60 * h, region=region) for h in range(2)]
    orders = bills(*rows).loc["orders"]
    assert orders["regions"] == 2 and orders["billed"] == pytest.approx(2 * 2 * 0.08)  # T x N (B3)
    assert not bool(orders["serverless_fits"])  # serverless runs in one region (B9)


def test_a_container_without_ru_s_of_its_own_has_no_bill_of_its_own() -> None:
    """A container that spends its database's shared offer reports consumed RU but no throughput of its own:
    no row (its RU/s are the database's)."""
    rows = [metric("TotalRequestUnits", 60.0, minute=60 * h, container="shared") for h in range(3)]
    rows += [metric("ProvisionedThroughput", 1000.0, minute=0)]
    rows += [metric("TotalRequestUnits", 60.0, minute=60 * h) for h in range(3)]
    found = bills(*rows)
    assert found.index.tolist() == ["orders"] and found.loc["orders", "billed"] == pytest.approx(3 * 0.08)


def test_the_autoscale_ratio_is_the_cost_section_s_autoscale_bill_over_its_manual_one() -> None:
    """One definition: the report's autoscale_cost_ratio is the bill of autoscale at its max over the bill of
    the manual RU/s in force, each hour in whole 100 RU/s units, whatever the prices; and a raise in the
    window is not back-dated to the hours before it (800 RU/s, then 2,000)."""
    rows = [metric("ProvisionedThroughput", 800.0, minute=0), metric("ProvisionedThroughput", 2000.0, minute=600)]
    rows += [metric("TotalRequestUnits", 6000.0 if h == 3 else 60.0, minute=60 * h) for h in range(24)]
    rows += [metric("NormalizedRUConsumption", 12.5, minute=60 * h + 1, pkrange_id="0") for h in range(24)]
    metrics = frame("metrics", *rows)
    orders = bill.container_bills(metrics, None, None, LIST).set_index("container").loc["orders"]
    main = bill.main_bills(bill.container_bills(metrics, None, None, LIST))
    ratio = bill.autoscale_ratios(main).set_index("container").loc["orders", "autoscale_cost_ratio"]
    assert ratio == pytest.approx(orders["autoscale_right"] / orders["monthly"], abs=1e-4)
    assert orders["billed"] == pytest.approx(10 * 0.064 + 14 * 0.16)  # 10 hours at 800, 14 at 2,000


HOUR = 60  # minutes


def hourly(name: str, values: list[float], **dims: object) -> list[dict]:
    """One `name` point at the start of each hour."""
    return [metric(name, v, minute=HOUR * h, **dims) for h, v in enumerate(values)]


def test_manual_is_cheapest_for_a_steady_workload_and_today_s_throttling_bounds_the_choice() -> None:
    """2,000 RU/s manual, consuming 1,200 RU/s in one measured minute of each of 48 hours (72,000 RU over
    60 s): the need is flat, so manual at 1,200 / 0.8 = 1,500 RU/s is cheapest ($0.12 an hour);
    autoscale's max 2,000 bills 1,200 RU/s at 1.5x ($0.144); serverless bills 1,200 x 60 RU per hour
    measured ($0.018 an hour: the one minute of each hour Monitor counted). None throttles."""
    rows = [metric("ProvisionedThroughput", 2000.0)] + hourly("TotalRequestUnits", [72_000.0] * 48)
    orders = bills(*rows).loc["orders"]
    assert orders["manual_ru_s"] == 1500 and orders["manual_right"] == pytest.approx(0.12 * 730)
    assert orders["autoscale_max"] == 2000 and orders["autoscale_right"] == pytest.approx(0.144 * 730)
    assert orders["throttled_hours"] == 0 and orders["manual_throttled_hours"] == 0
    assert orders["serverless"] == pytest.approx(72_000 / 1e6 * 0.25 * 730)
    # serverless bills only the RU Monitor counted: cheapest, and it fits, but it is the account's mode (B16):
    # the unit's recommendation is manual, the account's serverless figure stands apart
    assert orders["recommended"] == "manual" and bool(orders["serverless_fits"])
    assert orders["monthly_saving"] == pytest.approx(round(0.16 * 730 - 0.12 * 730, 2))
    [account] = bill.account_serverless(bills(*rows).reset_index()).to_dict("records")
    assert account["fits"] and account["monthly_saving"] == pytest.approx(
        round(0.16 * 730 - 72_000 / 1e6 * 0.25 * 730, 2)
    )


def test_autoscale_is_cheapest_for_a_spiky_workload() -> None:
    """10,000 RU/s manual in two regions; one hour in 24 needs 8,000 RU/s, the rest 100: manual at the right
    size is 10,000 (8,000 / 0.8), autoscale at max 10,000 bills 1,000 RU/s (its floor) 23 hours and 8,000
    one, at 1.5x, in both regions: 2 x (23 x 0.12 + 0.96) = $7.44 a day against manual's 2 x 24 x 0.80 =
    $38.40; serverless does not fit two regions."""
    needs = [8000.0 if h == 5 else 100.0 for h in range(24)]
    rows = []
    for region in ("West US", "East US"):
        rows.append(metric("ProvisionedThroughput", 10_000.0, region=region))
        rows += hourly("TotalRequestUnits", [60 * v for v in needs], region=region)
    orders = bills(*rows).loc["orders"]
    assert orders["regions"] == 2 and not bool(orders["serverless_fits"])
    assert orders["autoscale_max"] == 10_000
    assert orders["autoscale_right"] == pytest.approx(2 * (23 * 0.12 + 0.96) / 24 * 730)
    assert orders["manual_right"] == pytest.approx(2 * 0.80 * 730) and orders["monthly"] == pytest.approx(
        2 * 0.80 * 730
    )
    assert orders["recommended"] == "autoscale"


def test_an_offer_that_would_throttle_more_than_today_is_not_recommended() -> None:
    """Serverless would be cheapest, but one partition needs 6,000 RU/s in one hour (above serverless's 5,000 a
    partition): the hour counts against it, so the account's serverless figure says it does not fit."""
    needs = [6000.0 if h == 0 else 10.0 for h in range(24)]
    rows = [metric("ProvisionedThroughput", 8000.0)] + hourly("TotalRequestUnits", [60 * v for v in needs])
    orders = bills(*rows).loc["orders"]
    assert orders["serverless_throttled_hours"] == 1 and not bool(orders["serverless_fits"])
    assert orders["throttled_hours"] == 0 and orders["recommended"] != "serverless"
    [account] = bill.account_serverless(bills(*rows).reset_index()).to_dict("records")
    assert not account["fits"] and account["why_not"] == "does not fit: shop/orders"


def test_429s_count_as_need_the_redistribution_formula() -> None:
    """A one-partition container at 100% normalized RU with 429s: 600 429s in the minute (10 a second) at
    5 RU per served request (60,000 RU over 12,000 served): 50 RU/s denied on top of its 1,000 consumed.
    Today's 1,000 RU/s throttled that hour; the right manual size holds 1,050 / 0.8 = 1,400."""
    from analysis.capacity.autoscale import interval_needs

    rows = [metric("ProvisionedThroughput", 1000.0), metric("TotalRequestUnits", 60_000.0)]
    rows += [metric("NormalizedRUConsumption", 100.0, pkrange_id="0")]
    rows += [metric("TotalRequests", 12_000.0, status_code="200"), metric("TotalRequests", 600.0, status_code="429")]
    needs = interval_needs(frame("metrics", *rows))
    assert needs.loc[0, "denied_ru_s"] == pytest.approx(50.0) and needs.loc[0, "need"] == pytest.approx(1050.0)
    orders = bills(*rows).loc["orders"]
    assert orders["throttled_hours"] == 1 and orders["manual_ru_s"] == 1400 and orders["manual_throttled_hours"] == 0


def test_the_windows_end_at_the_latest_hour_and_a_longer_one_that_adds_nothing_is_left_out() -> None:
    """10 days of hours: the 7-day window holds the last 168, the 30-day all 240, and the 90-day window (no
    more hours than 30) is not repeated; the main bill is the 30-day one."""
    rows = [metric("ProvisionedThroughput", 400.0)] + hourly("TotalRequestUnits", [60.0] * 240)
    found = bill.container_bills(frame("metrics", *rows), None, None, LIST)
    assert found["window_days"].tolist() == [7, 30] and found["hours"].tolist() == [168, 240]
    assert (found["end"] - found["start"]).tolist() == [pd.Timedelta(hours=167), pd.Timedelta(hours=719)]
    assert bill.main_bills(found)["window_days"].tolist() == [30]
    assert found["monthly"].tolist() == pytest.approx([0.032 * 730] * 2)


def test_a_shared_database_is_billed_as_one_offer_over_its_containers_consumption() -> None:
    """A database offer of 2,000 RU/s manual (container "", R2) shared by two containers each consuming
    300 RU/s: one bill for the offer ($0.16 an hour), the right size 600 / 0.8 = 800 RU/s (above the 400
    minimum), no serverless (no shared offers there, B9); the containers have no bill of their own."""
    rows = [metric("ProvisionedThroughput", 2000.0, container="")]
    for name in ("a", "b"):
        rows += hourly("TotalRequestUnits", [18_000.0] * 24, container=name)
    found = bills(*rows)
    assert found.index.tolist() == [""]
    offer = found.loc[""]
    assert offer["monthly"] == pytest.approx(0.16 * 730) and offer["manual_ru_s"] == 800
    assert not bool(offer["serverless_fits"]) and offer["recommended"] == "manual"


def test_multi_region_writes_bill_manual_and_autoscale_at_their_own_rate() -> None:
    """B4: with multi-region writes, 1,000 RU/s in two regions bill 10 x $0.016 x 2 = $0.32 an hour, and
    autoscale at the same rate (no 1.5x): the 800 RU/s each region needs, 8 x $0.016 x 2 = $0.256."""
    rows = []
    for region in ("West US", "East US"):
        rows.append(metric("ProvisionedThroughput", 1000.0, region=region))
        rows += hourly("TotalRequestUnits", [48_000.0] * 24, region=region)
    orders = bills(*rows, multi_write=["127.0.0.1"]).loc["orders"]
    assert bool(orders["multi_write"]) and orders["monthly"] == pytest.approx(0.32 * 730)
    assert orders["autoscale_max"] == 1000
    assert orders["autoscale_right"] == pytest.approx(8 * 0.016 * 2 * 730)
