"""analysis.regions and the figures that read it, on frames of a two-region account built here: utilisation
is a region's RU against that region's RU/s (in total: every region's RU against T x N), combined rows
(stored before the collector split by Region) are never added to per-region rows of the same minute."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from analysis import alerts, fleet, hottest, regions, throttling
from analysis.capacity import review
from tests.analysis.test_fleet import metric

EMPTY = pd.DataFrame(columns=fleet.REQUEST_COLUMNS)
NO_EXECUTIONS = pd.DataFrame(columns=fleet.EXECUTION_COLUMNS)
WEST, EAST = "West US", "East US"


def two_regions(*, autoscale: bool = False) -> pd.DataFrame:
    """Container `orders` with 400 RU/s in each of two regions; it consumes 200 RU/s in West US, 100 in East
    US, every minute for 20 minutes; pkrange 1 in East US is the hottest range of either region."""
    rows: list[dict[str, Any]] = []
    for region, ru_s, hot in ((WEST, 200.0, 50.0), (EAST, 100.0, 85.0)):
        if autoscale:
            rows.append(metric("orders", "AutoscaleMaxThroughput", 400.0, aggregation="Maximum"))
        else:
            rows.append(metric("orders", "ProvisionedThroughput", 400.0, aggregation="Maximum", region=region))
        for minute in range(20):
            rows.append(metric("orders", "TotalRequestUnits", ru_s * 60, minute=minute, region=region))
            for pkrange, value in (("0", 10.0), ("1", hot)):
                extra = {"aggregation": "Maximum", "pkrange_id": pkrange, "region": region}
                rows.append(metric("orders", "NormalizedRUConsumption", value, minute=minute, **extra))
    frame = pd.DataFrame(rows, columns=fleet.FLEET_METRIC_COLUMNS)
    return frame.drop_duplicates(subset=["metric", "time", "region", "pkrange_id"]).reset_index(drop=True)


def row(frame: pd.DataFrame) -> dict[str, Any]:
    (only,) = frame.to_dict("records")
    return only


def test_the_total_divides_every_region_s_ru_by_every_region_s_ru_s() -> None:
    total = row(fleet.summarize_fleet(NO_EXECUTIONS, EMPTY, two_regions()))
    assert total["provisioned_ru_s"] == 800.0  # 400 RU/s reserved in each of two regions
    assert total["p95_ru_s"] == 300.0 and total["waste"] == pytest.approx(1 - 300 / 800)
    assert total["max_normalized_ru"] == 85.0  # the hottest range of any region


def test_one_region_is_that_region_s_ru_against_its_ru_s() -> None:
    west = row(fleet.summarize_fleet(NO_EXECUTIONS, EMPTY, two_regions(), region=WEST))
    assert (west["provisioned_ru_s"], west["p95_ru_s"], west["waste"]) == (400.0, 200.0, 0.5)
    assert west["max_normalized_ru"] == 50.0
    east = row(fleet.summarize_fleet(NO_EXECUTIONS, EMPTY, two_regions(), region=EAST))
    assert (east["provisioned_ru_s"], east["p95_ru_s"], east["max_normalized_ru"]) == (400.0, 100.0, 85.0)


def test_autoscale_max_has_no_region_and_holds_in_each() -> None:
    metrics = two_regions(autoscale=True)
    assert row(fleet.summarize_fleet(NO_EXECUTIONS, EMPTY, metrics))["provisioned_ru_s"] == 800.0
    assert row(fleet.summarize_fleet(NO_EXECUTIONS, EMPTY, metrics, region=EAST))["provisioned_ru_s"] == 400.0


def test_a_combined_row_is_never_added_to_the_regions_of_its_minute() -> None:
    split = pd.DataFrame(
        [
            metric("orders", "TotalRequests", 90.0, aggregation="Count", status_code="200", region=WEST),
            metric("orders", "TotalRequests", 10.0, aggregation="Count", status_code="429", region=EAST),
            # the same minute as stored before the split: all regions combined
            metric("orders", "TotalRequests", 100.0, aggregation="Count", status_code="200"),
            # an older minute stored only combined: it counts
            metric("orders", "TotalRequests", 100.0, minute=-5, aggregation="Count", status_code="200"),
        ],
        columns=fleet.FLEET_METRIC_COLUMNS,
    )
    summary = row(throttling.throttle_summary(split, EMPTY))
    assert (summary["requests"], summary["throttled"]) == (200.0, 10.0)
    assert len(regions.select_region(split, WEST)) == 1  # one region: its own rows, no combined ones
    assert regions.regions(split) == [EAST, WEST]


def test_a_store_without_regions_reads_as_before() -> None:
    metrics = two_regions().assign(region=None)
    metrics = metrics[metrics["time"].ne(metrics["time"].min()) | metrics["metric"].ne("x")]
    assert regions.per_region_choice(metrics, None) is None
    assert regions.region_counts(metrics)["regions"].tolist() == [1]
    assert regions.select_region(metrics, None).equals(metrics)


def test_overview_hottest_range_is_one_region_s_with_its_region_s_share() -> None:
    hot = row(hottest.hottest_range(two_regions()))
    assert (hot["monitor_hot"], hot["hot_normalized_ru"], hot["monitor_pkranges"]) == ("1", 85.0, 2)
    assert hot["monitor_share"] == pytest.approx(85 / 95, abs=1e-4)  # of East US's ranges, not of four


def test_a_hot_range_alerts_once_per_region() -> None:
    fired = alerts.hot_partition_alerts(two_regions(), percent=80, minutes=5)
    assert fired["subject"].tolist() == [f"1 ({EAST})"]
    assert "in East US" in fired["message"].iloc[0]


def test_a_per_region_page_shows_the_first_region_unless_one_is_chosen() -> None:
    assert regions.per_region_choice(two_regions(), None) == EAST
    assert regions.per_region_choice(two_regions(), WEST) == WEST


def report(metrics: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    frames = {table: pd.DataFrame(columns=columns) for table, columns in review.REPORT_TABLES.items()}
    frames["metrics"] = metrics.reindex(columns=review.REPORT_TABLES["metrics"])
    return review.build_capacity_report(**frames, **kwargs)


def test_the_report_says_which_regions_a_figure_covers() -> None:
    total = report(two_regions())
    provisioned = total[total["measure"].eq("provisioned_ru_s")]
    assert provisioned[["value", "detail"]].values.tolist() == [[800.0, "manual, summed over 2 regions"]]
    peaks = total[total["measure"].eq("max_normalized_ru")]
    assert sorted(peaks[["subject", "detail", "value"]].values.tolist()) == [
        ["0", "region East US", 10.0],
        ["0", "region West US", 10.0],
        ["1", "region East US", 85.0],
        ["1", "region West US", 50.0],
    ]
    west = report(two_regions(), region=WEST)
    provisioned = west[west["measure"].eq("provisioned_ru_s")]
    assert provisioned[["value", "detail"]].values.tolist() == [[400.0, "manual, region West US"]]
    peaks = west[west["measure"].eq("max_normalized_ru")]  # West US's own: the report names it above
    assert sorted(peaks[["subject", "value"]].values.tolist()) == [["0", 10.0], ["1", 50.0]]


def test_a_one_region_account_is_not_labelled_with_its_region() -> None:
    metrics = two_regions()
    metrics = metrics[metrics["region"].eq(WEST)]
    rows = report(metrics)
    assert rows.loc[rows["measure"].eq("max_normalized_ru"), "detail"].eq("").all()
    assert rows.loc[rows["measure"].eq("provisioned_ru_s"), "detail"].tolist() == ["manual"]
    assert alerts.hot_partition_alerts(metrics, percent=40, minutes=5)["subject"].tolist() == ["1"]
