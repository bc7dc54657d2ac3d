"""The fleet summary on a store filled by the real collectors (`ruscope metrics` through the real
`MetricsClient` against the Azure Monitor stand-in), not on hand-built frames: the column names the
analysis reads are the ones the collectors write."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from analysis import fleet, overview, regions, throttling
from collectors.config import parse_config
from collectors.registry import Options, collector, run_collector
from emulator.engine.facade import Context, ThroughputSpec
from emulator.rest.server import RunningEmulator
from store import read_table, store_location
from tests.collectors.test_metrics import RESOURCE, StandIn, collect, stand_in, token  # noqa: F401 (fixtures)
from tests.collectors.test_metrics_regions import REGIONS, two_regions  # noqa: F401 (a fixture)
from tests.collectors.test_replay import run
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


def test_the_replays_own_minutes_are_no_risk_and_its_ru_no_peak(
    stand_in: StandIn,  # noqa: F811
    make_emulator: Callable[..., RunningEmulator],
    tmp_path: Path,
    token: None,  # noqa: F811
) -> None:
    """Through the real SDK: `c` has a hot range (in-engine reads past its budget, the workload), `quiet` a
    trickle of writes and then ruscope's replay, unpaced, all in one second of one range. The replay's
    requests (the store's `requests`) and the metrics the stand-in reported (the real `MetricsClient`):
    `quiet`'s busiest minute is the replay's, so it shows no hot risk and its peak RU/s leaves the replay's
    RU out; `c` is still at risk."""
    engine, clock = stand_in.engine, stand_in.clock
    emu = make_emulator(engine)
    _hot_workload(engine, clock, minutes=2)
    body = {"id": "quiet", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(Context(), "t", body, ThroughputSpec(600))
    for i in range(10):  # the workload: a few small writes, one a second
        engine.create_item(Context(), "t", "quiet", {"id": f"d{i}", "k": "k0", "text": "x" * 200}, ["k0"])
        clock.advance(1.0)
    clock.advance(60.0 - clock.now % 60)  # the replay in a minute of its own
    account = {"name": "local", "endpoint": emu.url, "database": "t", "monitor_resource": RESOURCE}
    query = {"name": "all", "container": "quiet", "sql": "SELECT * FROM c", "partition_key": "k0", "repeat": 20}
    cfg = parse_config(
        {
            "accounts": [account],
            "monitor": {"endpoint": stand_in.url, "ca_bundle": str(stand_in.certs.ca)},
            "replay": {"max_ru_per_s": float("inf")},
            "queries": [query],
        },
        Path("own.toml"),
    )
    summary, _, err = run(emu, cfg, tmp_path, clock=clock)
    assert summary.exit_code == 0, err
    clock.advance(120.0)
    code, _, err = collect(stand_in, tmp_path, cfg)
    assert (code, err) == (0, [])
    location = store_location(tmp_path)
    layout = run_collector(collector("storage"), cfg, store=location, clock=clock, options=Options(credential=emu.key))
    assert layout.exit_code == 0  # the layout: each partition's budget is 600 RU/s over the snapshot's pkranges
    metrics = read_table(location, "metrics", columns=fleet.FLEET_METRIC_COLUMNS)
    requests = read_table(location, "requests", columns=fleet.REQUEST_COLUMNS)
    executions = read_table(location, "executions", columns=fleet.EXECUTION_COLUMNS)
    partitions = read_table(location, "partitions", columns=fleet.PARTITION_COLUMNS)
    ranked, monitor_only = (fleet.summarize_fleet(executions, r, metrics, partitions) for r in (requests, requests[:0]))
    rows, blind = ({r["container"]: r for r in f.to_dict("records")} for f in (ranked, monitor_only))
    quiet, seen = rows["quiet"], blind["quiet"]
    assert seen["max_normalized_ru"] >= 2 * quiet["max_normalized_ru"]  # Monitor's busiest minute: the replay's
    assert quiet["own_minutes_excluded"] >= 1 and quiet["risk"] < 0.1 <= seen["risk"], quiet
    assert rows["c"]["risk"] >= 0.99 and rows["c"]["risk_driver"] == "hot partition"  # genuinely hot: still
    replay_ru = requests[requests["container"].eq("quiet")]["request_charge"].sum()
    assert quiet["own_ru_subtracted"] == pytest.approx(replay_ru, abs=0.01)
    empty = pd.DataFrame(columns=overview.LOGICAL_KEY_COLUMNS)
    shown = overview.summarize_containers(executions, requests, metrics, partitions, empty)
    monitor = overview.summarize_containers(executions, requests.iloc[0:0], metrics, partitions, empty)
    [peak], [peak_all] = (f[f["container"].eq("quiet")]["peak_ru_s"].tolist() for f in (shown, monitor))
    assert peak < peak_all and peak_all - peak <= replay_ru / 60 + 0.01  # the replay's RU is not the peak
