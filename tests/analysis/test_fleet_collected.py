"""The fleet summary on a store filled by the real collectors (`ruscope metrics` through the real
`MetricsClient` against the Azure Monitor stand-in), not on hand-built frames: the column names the
analysis reads are the ones the collectors write."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis import fleet, regions, throttling
from store import read_table, store_location
from tests.collectors.test_metrics import StandIn, collect, stand_in, token  # noqa: F401 (fixtures)
from tests.collectors.test_metrics_regions import REGIONS, two_regions  # noqa: F401 (a fixture)
from tests.emulator.history.test_history import _hot_workload


def test_a_hot_partition_collected_from_azure_monitor_drives_the_risk(
    stand_in: StandIn,  # noqa: F811
    tmp_path: Path,
    token: None,  # noqa: F811
) -> None:
    _hot_workload(stand_in.engine, stand_in.clock, minutes=2)
    code, _, err = collect(stand_in, tmp_path)
    assert (code, err) == (0, [])
    metrics = read_table(store_location(tmp_path), "metrics", columns=fleet.FLEET_METRIC_COLUMNS)
    empty = pd.DataFrame()
    executions, requests = empty.reindex(columns=fleet.EXECUTION_COLUMNS), empty.reindex(columns=fleet.REQUEST_COLUMNS)
    ranked = fleet.summarize_fleet(executions, requests, metrics)
    [row] = ranked.to_dict("records")
    assert (row["account"], row["database"], row["container"]) == ("local", "t", "c")
    assert row["max_normalized_ru"] >= 99  # the hot key's range spent its whole share
    assert row["risk"] >= 0.99 and row["risk_driver"] == "hot partition"
    assert row["p95_ru_s"] > 0  # consumed RU/s, from TotalRequestUnits
    # a hot range: its RU/s are not wasted, whatever the average says
    assert math.isnan(row["waste"]) and row["waste_note"] == fleet.HOT_WASTE_NOTE
    assert row["throttle_source"] == throttling.MONITOR and row["requests"] > 0  # TotalRequests by status code


def test_a_two_region_account_collected_from_azure_monitor_reserves_its_ru_s_in_each(
    two_regions: StandIn,  # noqa: F811
    tmp_path: Path,
    token: None,  # noqa: F811
) -> None:
    """The stand-in's two-region account (600 RU/s in each region, the requests served in the first) through
    the metrics collector: the fleet's total reserves 2 x 600 RU/s, each region 600, and the consumed RU/s is
    the first region's, so the total's waste is not one region's RU/s against the sum (R40)."""
    code, _, err = collect(two_regions, tmp_path)
    assert (code, err) == (0, []), err
    metrics = read_table(store_location(tmp_path), "metrics", columns=fleet.FLEET_METRIC_COLUMNS)
    assert regions.regions(metrics) == sorted(REGIONS)
    empty = pd.DataFrame()
    executions, requests = empty.reindex(columns=fleet.EXECUTION_COLUMNS), empty.reindex(columns=fleet.REQUEST_COLUMNS)
    by_region = {
        region: fleet.summarize_fleet(executions, requests, metrics, region=region).to_dict("records")
        for region in (None, *REGIONS)
    }
    [total], [first], [second] = by_region.values()
    assert (total["provisioned_ru_s"], first["provisioned_ru_s"], second["provisioned_ru_s"]) == (1200, 600, 600)
    assert first["p95_ru_s"] > 0 and total["p95_ru_s"] == first["p95_ru_s"]
    assert math.isnan(second["p95_ru_s"])  # no requests were served there
