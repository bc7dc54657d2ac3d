"""analysis.cost.bill on frames built here: the measured hours billed as Azure bills them (Microsoft's
worked example through the whole pipeline, from metrics), and the alternatives over the same hours."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.cost import bill
from cosmoscore import billing
from tests.analysis.test_overview import frame, metric

LIST = billing.Prices()


def bills(*rows: dict) -> pd.DataFrame:
    return bill.container_bills(frame("metrics", *rows), None, None, LIST).set_index("container")


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
    from analysis.capacity.autoscale import autoscale_ratios, interval_needs

    rows = [metric("ProvisionedThroughput", 800.0, minute=0), metric("ProvisionedThroughput", 2000.0, minute=600)]
    rows += [metric("TotalRequestUnits", 6000.0 if h == 3 else 60.0, minute=60 * h) for h in range(24)]
    rows += [metric("NormalizedRUConsumption", 12.5, minute=60 * h + 1, pkrange_id="0") for h in range(24)]
    metrics = frame("metrics", *rows)
    orders = bill.container_bills(metrics, None, None, LIST).set_index("container").loc["orders"]
    ratio = autoscale_ratios(interval_needs(metrics)).set_index("container").loc["orders", "autoscale_cost_ratio"]
    assert ratio == pytest.approx(orders["autoscale_right"] / orders["monthly"], abs=1e-4)
    assert orders["billed"] == pytest.approx(10 * 0.064 + 14 * 0.16)  # 10 hours at 800, 14 at 2,000
