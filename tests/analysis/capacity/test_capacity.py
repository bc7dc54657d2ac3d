"""analysis.capacity (rules and review): each action rule at and around its threshold, the autoscale cost, the whole report as a
golden CSV, and formula injection through the CSV and xlsx writers."""

from __future__ import annotations

import datetime as dt
import io
import math
import re
import zipfile

import pandas as pd
import pytest

from analysis import overview, own_traffic
from analysis.capacity import about, actions, autoscale, commands, evidence, review, rules
from analysis.capacity.actions import ACTION_COLUMNS, ACTION_TEXT_COLUMNS
from analysis.report import to_csv_bytes, to_xlsx_bytes
from cosmoscore.billing import Prices
from cosmoscore.keys import key_text
from cosmoscore.limits import Limits
from tests.analysis.test_overview import assert_golden, frame, metric, row, shop_frames


def test_raise_above_the_healthy_band_only() -> None:
    assert rules.raise_action(0.05, skewed=False) is None  # the band's top is still healthy
    action = rules.raise_action(0.0725, skewed=False)
    assert action is not None and (action.measure, action.value, action.unit, action.detail) == (
        "raise_throughput",
        7.25,
        "%",
        "Raise the RU/s: 7.2% of requests were throttled (429), above the 1-5% the service documents as healthy.",
    )
    assert action.target is None and commands.az_command(action, "acc", "shop", "orders") == ""  # no RU/s known
    raised = rules.raise_action(0.0725, skewed=False, provisioned_ru_s=18000.0)
    assert raised is not None and (raised.target, raised.target_unit) == (19800.0, "RU/s manual")  # +10%
    assert commands.az_command(raised, "acc", "shop", "orders") == (
        "az cosmosdb sql container throughput update --account-name acc --resource-group <rg> "
        "--database-name shop --name orders --throughput 19800"
    )
    auto = rules.raise_action(0.0725, skewed=False, provisioned_ru_s=4000.0, autoscale=True)
    assert (
        auto is not None
        and auto.target == 5000.0
        and commands.az_command(auto, "a", "d", "c").endswith("--max-throughput 5000")
    )
    assert rules.severity(raised) == "critical" and "Costs more" in raised.risk
    assert "fixing the key" in rules.raise_action(0.2, skewed=True).detail
    assert rules.raise_action(math.nan, skewed=False) is None


def test_lower_when_even_the_peak_uses_under_half() -> None:
    action = rules.lower_action(300.0, 1000.0, 0.0, autoscale=False)
    assert action is not None and (action.measure, action.value, action.unit) == ("lower_throughput", 400.0, "RU/s")
    assert "from 1,000 to about 400" in action.detail  # 300 / 0.8 = 375, in steps of 100
    assert rules.lower_action(500.0, 1000.0, 0.0, autoscale=False) is None  # half: not under half
    assert rules.lower_action(300.0, 1000.0, 0.02, autoscale=False) is None  # throttled: do not lower
    assert rules.lower_action(100.0, 400.0, 0.0, autoscale=False) is None  # already at the 400 minimum
    auto = rules.lower_action(1000.0, 10000.0, 0.0, autoscale=True)
    assert "autoscale max RU/s from 10,000 to about 2,000" in auto.detail  # 1250 in steps of 1,000
    assert rules.lower_action(math.nan, 1000.0, 0.0, autoscale=False) is None


def test_autoscale_against_the_manual_ru_s_in_force_hour_by_hour() -> None:
    hours = pd.date_range("2026-05-01", periods=24, freq="h", tz="UTC")
    manual = pd.Series(1000.0, index=hours)
    spiky = pd.Series([800.0] + [50.0] * 23, index=hours)  # one busy hour, quiet otherwise
    found = autoscale.autoscale_estimate(spiky, manual)
    # max: 800 / 0.8 = 1,000; each quiet hour bills its 10% floor (100), the busy one 800, all at 1.5x
    assert (found.max_ru_s, found.hours) == (1000.0, 24)
    assert found.ratio == round(1.5 * (800 + 23 * 100) / (24 * 1000), 4)
    saturated = autoscale.autoscale_estimate(pd.Series(1000.0, index=hours), manual)  # the hottest partition at 100%
    assert saturated.ratio == 1.5 and saturated.max_ru_s == 2000.0  # autoscale at its need costs 1.5x: never
    minutes = pd.Series([10.0, 30.0], index=pd.to_datetime(["2026-05-01T10:05Z", "2026-05-01T10:50Z"]))
    one_hour = autoscale.autoscale_estimate(minutes, pd.Series(400.0, index=minutes.index))
    assert one_hour.hours == 1 and one_hour.ratio == round(1.5 * 100 / 400, 4)  # an hour bills its busiest minute
    assert math.isnan(autoscale.autoscale_estimate(pd.Series(0.0, index=hours), manual).ratio)


def test_autoscale_for_a_manual_spiky_container_with_a_day_of_data() -> None:
    action = rules.autoscale_action(0.2, 24, False, 1000.0, 800.0)
    assert action is not None and action.measure == "move_to_autoscale" and action.target == 1000.0
    assert action.detail.startswith("Move to autoscale with a max of 1,000 RU/s: over 24 hours it would have")
    assert "about 20% of the manual 800 RU/s" in action.detail
    assert rules.autoscale_action(0.9, 24, autoscale=False) is None  # a saving under 10%: not worth it
    assert rules.autoscale_action(0.2, 23, autoscale=False) is None  # less than a day
    assert rules.autoscale_action(0.2, 24, autoscale=True) is None  # already autoscale
    assert rules.autoscale_action(math.nan, 24, autoscale=False) is None


def test_autoscale_in_the_report_from_a_day_of_metrics() -> None:
    hours = [metric("TotalRequestUnits", 48_000.0 if h == 0 else 600.0, minute=60 * h) for h in range(24)]
    frames = {**{k: f.iloc[0:0] for k, f in shop_frames().items()}, "metrics": frame("metrics", *hours)}
    frames["metrics"] = pd.concat([frames["metrics"], frame("metrics", metric("ProvisionedThroughput", 1000.0))])
    actions = review.section(review.build_capacity_report(**frames), "action")
    assert actions["measure"].tolist() == ["move_to_autoscale"]
    # 800 RU/s in the busy hour, 10 in the others: max 1,000; 1.5 x (800 + 23 x 100) / 24,000 = 0.194
    assert actions["value"].tolist() == [0.19] and actions["target"].tolist() == [1000.0]


def test_no_autoscale_for_a_container_whose_hottest_partition_is_busy_every_hour() -> None:
    """The container's consumed RU/s are low, but its hottest range reaches 100% of its share every hour:
    autoscale would have to scale to the whole RU/s each hour, at 1.5x: no saving, no recommendation (the
    consumed RU/s alone said 20%)."""
    hours = [metric("TotalRequestUnits", 600.0, minute=60 * h) for h in range(24)]
    hours += [metric("NormalizedRUConsumption", 100.0, minute=60 * h, pkrange_id="0") for h in range(24)]
    hours += [metric("NormalizedRUConsumption", 5.0, minute=60 * h, pkrange_id="1") for h in range(24)]
    frames = {**{k: f.iloc[0:0] for k, f in shop_frames().items()}, "metrics": frame("metrics", *hours)}
    frames["metrics"] = pd.concat([frames["metrics"], frame("metrics", metric("ProvisionedThroughput", 1000.0))])
    report = review.build_capacity_report(**frames)
    assert "move_to_autoscale" not in review.section(report, "action")["measure"].tolist()
    ratio = report[report["measure"].eq("autoscale_cost_ratio")]["value"].tolist()
    assert ratio == [1.5]


def test_skewed_key_against_an_even_share() -> None:
    action = rules.skew_action(0.75, 2, "1", "monitor")
    assert action is not None and (action.value, action.unit) == (75.0, "%")  # the report writes shares in %
    assert "pkrange 1 takes 75% of the RU in Azure Monitor, against an even 50% of 2 ranges" in action.detail
    assert rules.skew_action(0.74, 2, "1", "monitor") is None
    assert rules.skew_action(0.15, 10, "3", "replay").detail.count("replayed queries") == 1
    assert rules.skew_action(1.0, 1, "0", "replay") is None  # one range cannot be skewed
    assert rules.skew_action(math.nan, 4, "", "") is None


def test_a_fan_out_query_needs_the_key_or_top() -> None:
    action = rules.fan_out_action("wide", "fan-out", 4, "SELECT * FROM c")
    assert action is not None and (action.measure, action.value, action.unit, action.detail) == (
        "query_fans_out",
        4.0,
        "count",
        "Query wide fans out to all 4 partitions: add the partition key filter or TOP.",
    )
    assert (action.target, action.target_unit, rules.severity(action)) == (1.0, "partitions per execution", "info")
    assert commands.az_command(action, "a", "d", "c") == ""  # a change to the application, not the account
    with_top = rules.fan_out_action("wide", "fan-out", 4, "SELECT top 10 * FROM c")
    assert with_top.detail.endswith("add the partition key filter.")
    assert rules.fan_out_action("one", "fan-out", 1, "SELECT * FROM c") is None  # one partition: nothing to fix
    assert rules.fan_out_action("some", "targeted", 3, "SELECT * FROM c") is None


def test_a_key_near_20_gb() -> None:
    action = rules.key_storage_action('["t1"]', 16.0)
    assert action is not None and action.value == 80.0 and 'key ["t1"] holds 16.0 GB of the 20 GB' in action.detail
    assert rules.key_storage_action('["t1"]', 15.9) is None


def test_report_golden() -> None:
    report = review.build_capacity_report(**shop_frames())
    assert report.columns.tolist() == review.REPORT_COLUMNS
    assert_golden(to_csv_bytes(report), "capacity_report.csv")
    actions = review.section(report, "action")
    assert actions[["container", "subject", "measure"]].values.tolist() == [
        ["orders", "1", "partition_saturated"],
        ["orders", "1", "range_share"],
        ["orders", "wide", "query_fans_out"],
        ["orders", '["t1"]', "key_near_limit"],
    ]


def test_the_container_summary_is_one_row_per_container() -> None:
    summary = review.container_summary(review.build_capacity_report(**shop_frames()))
    assert summary["container"].tolist() == ["orders", "people"]
    assert summary.columns.tolist()[:5] == ["account", "database", "container", "ru_consumed", "provisioned_ru_s"]
    assert summary.loc[0, "peak_interval_ru_s"] == 20.0 and pd.isna(summary.loc[1, "peak_interval_ru_s"])


def test_formula_cells_are_neutralised_in_csv_and_xlsx() -> None:
    report = review.build_capacity_report(**shop_frames())
    csv = to_csv_bytes(report).decode()
    assert "query,127.0.0.1,shop,people,'=cmd,total_ru,1.0,RU," in csv
    assert '"[""=cmd""]"' in csv  # a key in JSON text starts with [: nothing to neutralise
    assert ",=cmd" not in csv
    book = zipfile.ZipFile(io.BytesIO(to_xlsx_bytes(report)))
    assert [n for n in book.namelist() if n.startswith("xl/worksheets/sheet")] == [
        f"xl/worksheets/sheet{n}.xml" for n in range(1, 7)
    ]  # container, cost, partition, key, query, action
    strings = book.read("xl/sharedStrings.xml").decode()
    assert "&apos;=cmd" in strings or "'=cmd" in strings
    assert not any(b"<f>" in book.read(name) for name in book.namelist() if name.startswith("xl/worksheets/"))


def test_an_empty_store_gives_an_empty_report() -> None:
    empty = {name: f.iloc[0:0] for name, f in shop_frames().items()}
    report = review.build_capacity_report(**empty)
    assert report.empty and report.columns.tolist() == review.REPORT_COLUMNS


def hot_partition_frames(*, provisioned: float) -> dict[str, pd.DataFrame]:
    """shop_frames with 10% of requests throttled (200 of 2,000) by pkrange 1 at 100% of its share, and the
    container's peak of 20 RU/s against `provisioned` RU/s."""
    frames = shop_frames()
    metrics = frames["metrics"]
    metrics = metrics[~metrics["metric"].isin(["TotalRequests", "ProvisionedThroughput"])]
    more = [metric("TotalRequests", 1800.0, status_code="200"), metric("TotalRequests", 200.0, status_code="429")]
    more.append(metric("ProvisionedThroughput", provisioned))
    return {**frames, "metrics": pd.concat([metrics, frame("metrics", *more)], ignore_index=True)}


def test_429s_of_a_hot_partition_in_an_idle_container_ask_for_the_key_not_more_ru() -> None:
    report = review.build_capacity_report(**hot_partition_frames(provisioned=2000.0))  # p95 19 RU/s: 0.95%
    actions = review.section(report, "action")
    orders = actions[actions["container"].eq("orders")]
    assert "raise_throughput" not in orders["measure"].tolist()
    [hot] = orders[orders["measure"].eq("skewed_key")].to_dict("records")
    assert (hot["subject"], hot["value"], hot["unit"]) == ("1", 100.0, "%")
    assert hot["detail"].startswith("The 429s (10.0% of requests) come from one hot partition: pkrange 1 reached 100%")
    assert (
        "used 0.9% of its provisioned RU/s (p95)" in hot["detail"]
        and "split evenly over its 2 partitions" in hot["detail"]
    )
    assert "spread the hot key's load" in hot["detail"]  # no logs: no key to name
    logs = [
        row("log_key_ru", pkrange_id="1", partition_key=k, request_charge=ru)
        for k, ru in [('["t1"]', 90.0), ('["t2"]', 9.0)]
    ]
    logs.append(row("log_key_ru", pkrange_id="0", partition_key='["t3"]', request_charge=500.0))
    named = review.build_capacity_report(
        **hot_partition_frames(provisioned=2000.0), log_key_ru=frame("log_key_ru", *logs)
    )
    named_actions = review.section(named, "action")
    assert (
        'spread the hot key ["t1"]\'s load'
        in named_actions[named_actions["measure"].eq("skewed_key")]["detail"].iloc[0]
    )
    keys = review.section(named, "key").set_index(["subject", "measure"])
    assert ('["t1"]', "peak_second_ru") not in keys.index  # rows stored before the busiest second: none, never 0
    logs[0] = {**logs[0], "peak_request_charge": 40.0, "bin_minutes": 5}
    peaked = review.section(
        review.build_capacity_report(**hot_partition_frames(provisioned=2000.0), log_key_ru=frame("log_key_ru", *logs)),
        "key",
    ).set_index(["subject", "measure"])
    assert peaked.loc[('["t1"]', "peak_second_ru"), ["value", "unit"]].tolist() == [40.0, "RU"]
    assert peaked.loc[('["t1"]', "peak_second_ru"), "detail"] == "RU in the busiest second (diagnostic logs, 1 s bins)"
    busy = review.section(review.build_capacity_report(**hot_partition_frames(provisioned=30.0)), "action")
    assert "raise_throughput" in busy["measure"].tolist()  # p95 19 of 30 RU/s: the container is busy too


def test_the_report_names_the_range_that_peaked_and_the_range_with_the_most_ru_each_for_its_own_figure() -> None:
    """3 ranges over 3 minutes: pkrange 0 carries most of the RU (70% each minute), pkrange 1 little but its
    busiest second hit 100%, and 10% of requests were throttled: the 429s are pkrange 1's (the hot-partition
    finding and its row name 1), the RU share is pkrange 0's (its row names 0)."""
    frames = hot_partition_frames(provisioned=3000.0)
    metrics = frames["metrics"][frames["metrics"]["metric"].ne("NormalizedRUConsumption")]
    series = {"0": [70.0, 70.0, 70.0], "1": [10.0, 100.0, 10.0], "2": [5.0, 5.0, 5.0]}
    normalized = [
        metric("NormalizedRUConsumption", v, minute=m, pkrange_id=pk)
        for pk, vs in series.items()
        for m, v in enumerate(vs)
    ]
    partitions = [row("partitions", pkrange_id=pk, size_kb=1024.0, document_count=1) for pk in series]
    frames = {
        **frames,
        "metrics": pd.concat([metrics, frame("metrics", *normalized)], ignore_index=True),
        "partitions": frame("partitions", *partitions),
    }
    report = review.build_capacity_report(**frames)
    rows = review.section(report, "container").query("container == 'orders'").set_index("measure")
    assert (rows.loc["hot_normalized_ru", "subject"], rows.loc["hot_normalized_ru", "value"]) == ("1", 100.0)
    assert rows.loc["hot_range_share", "subject"] == "0"
    assert rows.loc["hot_range_share", "value"] == pytest.approx(100 * 210 / 345, abs=0.01)  # means 70, 40, 5
    actions = review.section(report, "action").query("container == 'orders'")
    [hot] = actions[actions["measure"].eq("skewed_key")].to_dict("records")
    assert hot["subject"] == "1" and "pkrange 1 reached 100%" in hot["detail"]
    assert hot["target_unit"] == "RU/s per partition (pkrange 1)"


def test_the_hot_partition_rule_at_its_thresholds() -> None:
    assert rules.hot_partition_action(0.1, 100.0, 0.005, "5", 5).measure == "skewed_key"
    assert rules.hot_partition_action(0.05, 100.0, 0.005, "5", 5) is None  # 429s within the healthy band
    assert rules.hot_partition_action(0.1, 89.0, 0.005, "5", 5) is None  # no range at its share
    assert rules.hot_partition_action(0.1, 100.0, 0.5, "5", 5) is None  # half the RU/s used: raise them
    assert rules.hot_partition_action(0.1, math.nan, math.nan, "", 0) is None


def test_values_are_rounded_per_unit_and_the_csv_has_no_scientific_notation() -> None:
    frames = hot_partition_frames(provisioned=2000.0)
    tiny = [row("partitions", pkrange_id=pk, size_kb=kb, document_count=3) for pk, kb in [("0", 18.0), ("1", 230.0)]]
    frames["partitions"] = frame("partitions", *tiny)
    report = review.build_capacity_report(**frames)
    orders = report[report["container"].eq("orders")]
    values = orders.set_index(["section", "subject", "measure"])["value"]
    assert values[("container", "", "p95_utilization")] == 0.95  # 19 of 2,000 RU/s, in %
    assert values[("container", "", "throttle_rate")] == 10.0 and values[("container", "1", "hot_range_share")] == 90.32
    assert values[("partition", "0", "size_gb")] == 0.0 and values[("partition", "0", "headroom")] == 100.0
    sizes = report[report["measure"].eq("size_gb") & report["section"].eq("partition")]["detail"].tolist()
    assert sizes == ["18 KB", "230 KB"]  # the size in the unit that fits
    csv = to_csv_bytes(report).decode()
    assert not re.search(r",-?[0-9.]+e[-+][0-9]+,", csv), csv  # plain decimals only
    assert set(report["unit"]) <= {"RU", "RU/s", "%", "GB", "count", "ratio", "USD"}  # USD: the cost section


def _operator_frames(minutes: int = 60) -> dict[str, pd.DataFrame]:
    """Issue 23's container: 18,000 RU/s, 5 pkranges in the layout, pkrange 0 at 97% normalized RU for every
    minute, the container at ~14% (2,520 RU/s per minute average); only 3 ranges report in the last minute."""
    rows = []
    for m in range(minutes):
        rows += [metric("ProvisionedThroughput", 18000.0, minute=m), metric("TotalRequestUnits", 2520.0 * 60, minute=m)]
        ranges = ("0", "1", "2") if m == minutes - 1 else ("0", "1", "2", "3", "4")
        rows += [
            metric("NormalizedRUConsumption", 97.0 if pk == "0" else 10.0, minute=m, pkrange_id=pk) for pk in ranges
        ]
    frames = shop_frames()
    layout = [row("partitions", pkrange_id=pk, size_kb=1024.0, document_count=10) for pk in ("0", "1", "2", "3", "4")]
    return {
        **{name: f.iloc[0:0] for name, f in frames.items()},
        "metrics": frame("metrics", *rows),
        "partitions": frame("partitions", *layout),
    }


def test_no_lower_action_while_a_partition_is_saturated() -> None:
    report = review.build_capacity_report(**_operator_frames())
    actions = review.section(report, "action")
    assert "lower_throughput" not in actions["measure"].tolist()
    [sat] = actions[actions["measure"].eq("partition_saturated")].to_dict("records")
    assert sat["subject"] == "0" and sat["value"] == 97.0 and "of 5 partitions (layout)" in sat["detail"]
    assert "60 minutes" in sat["detail"] and "storage snapshot" in sat["detail"]


def test_partitions_are_counted_from_the_layout() -> None:
    containers = overview.summarize_containers(**_operator_frames())
    laid = evidence.with_layout(containers, _operator_frames()["partitions"], _operator_frames()["metrics"])
    # one count on the Overview and in the report: the layout's 5, not the 3 that reported in the last minute
    assert containers["pkranges"].tolist() == [5] and laid["pkranges"].tolist() == [5.0]
    assert containers["layout_source"].tolist() == ["storage snapshot"]


def test_a_skewed_container_gets_a_share_finding_and_a_uniform_one_none() -> None:
    skew = rules.skew_action(0.476, 4, "0", "monitor")
    assert skew is not None and (skew.measure, skew.value) == ("range_share", 47.6)
    assert rules.skew_action(0.26, 4, "0", "monitor") is None
    one_key = rules.skew_action(0.476, 4, "0", "monitor", hot_key_share=0.8, hot_key='["t1"]')
    assert one_key is not None and "cannot spread one key" in one_key.detail


def test_a_lowered_target_holds_the_hottest_partition_and_the_minimum() -> None:
    assert rules.lower_action(2520.0, 18000.0, 0.0, False, hot_normalized_ru=97.0) is None  # needs 17,460 / 0.8
    held = rules.lower_action(2520.0, 18000.0, 0.0, False, hot_normalized_ru=40.0)
    assert held is not None and held.value == 9000.0  # 40% x 18,000 (the hottest range's need x 3) / 0.8
    assert rules.lower_action(10.0, 1000.0, 0.0, False).value == Limits().min_throughput  # type: ignore[union-attr]
    assert rules.lower_action(10.0, 4000.0, 0.0, True).value == rules.AUTOSCALE_MIN_MAX  # type: ignore[union-attr]
    assert rules.lower_action(2520.0, 18000.0, 0.0, False, saturated=True) is None
    assert rules.saturation_action(89.9, "0", 3) is None


def test_a_hot_partition_gets_a_redistribution_command_unless_one_key_carries_it() -> None:
    report = review.build_capacity_report(**hot_partition_frames(provisioned=2000.0))
    [hot] = review.section(report, "action").query("measure == 'skewed_key'").to_dict("records")
    assert (hot["severity"], hot["target_unit"]) == ("critical", "RU/s per partition (pkrange 1)")
    assert hot["command"] == (
        "az cosmosdb sql container redistribute-partition-throughput --account-name 127.0.0.1 --resource-group <rg>"
        " --database-name shop --name orders --target-partition-info 1=1100 --source-partition-info 0"
    )  # Microsoft's formula (tests/analysis/capacity/test_planner.py): pkrange 0 gives the 100 pkrange 1 gains
    assert "pkrange 0 900, pkrange 1 1,100 RU/s, 2,000 in total against 2,000 now" in hot["detail"]
    assert hot["target"] == 1100.0 and "Custom" in hot["risk"]
    logs = [row("log_key_ru", pkrange_id="1", partition_key='["t1"]', request_charge=90.0)]
    logs.append(row("log_key_ru", pkrange_id="1", partition_key='["t2"]', request_charge=9.0))
    one_key = review.build_capacity_report(
        **hot_partition_frames(provisioned=2000.0), log_key_ru=frame("log_key_ru", *logs)
    )
    [hot] = review.section(one_key, "action").query("measure == 'skewed_key'").to_dict("records")
    assert hot["command"] == commands.ADVISE_COMMAND and pd.isna(hot["target"])  # no redistribution then
    assert "a split or a redistribution of RU/s gains nothing" in hot["detail"]


def test_a_command_names_the_account_as_azure_resource_manager_does() -> None:
    arm = "/subscriptions/s/resourceGroups/rg-1/providers/Microsoft.DocumentDB/databaseAccounts/shopacct"
    assert commands.azure_account("prod", "shopacct.documents.azure.com", arm) == commands.AzureAccount(
        "shopacct", "rg-1"
    )
    # the endpoint's host names the account (https://N.documents.azure.com); the resource group stays unknown
    assert commands.azure_account("prod", "shopacct.documents.azure.com") == commands.AzureAccount("shopacct", "<rg>")
    assert commands.azure_account("shopacct.documents.azure.com") == commands.AzureAccount("shopacct", "<rg>")
    assert commands.azure_account("127.0.0.1") == commands.AzureAccount("127.0.0.1", "<rg>")
    action = rules.Action("lower_throughput", 1.0, "RU/s", "", target=400.0, target_unit="RU/s", change="throughput")
    known = commands.az_command(action, "prod", "shop", "orders", commands.AzureAccount("shopacct", "rg 1"))
    assert "--account-name shopacct --resource-group 'rg 1' " in known  # quoted for the shell
    assert "--resource-group <rg> " in commands.az_command(action, "prod", "shop", "orders")  # the shell refuses it


def test_a_throughput_change_says_what_it_saves_or_costs_a_month() -> None:
    """The redistribution of a hot partition in an idle 2,000 RU/s container keeps the total (0 a month); a
    manual target of 2,200 RU/s costs 200 RU/s more a month at the cost section's prices (730 x 2 units x $0.008)."""
    report = review.build_capacity_report(**hot_partition_frames(provisioned=2000.0))
    [hot] = review.section(report, "action").query("measure == 'skewed_key'").to_dict("records")
    assert hot["monthly_saving"] == 0.0 and hot["saving_unit"] == "USD a month"
    raised = rules.Action(
        "raise_throughput", 10.0, "%", "", target=2200.0, target_unit="RU/s manual", change="throughput"
    )
    bill = {"regions": 1, "monthly": 730 * 20 * 0.008, "autoscale_right": math.nan, "autoscale": False}
    assert actions._saving(raised, bill, Prices())["monthly_saving"] == pytest.approx(-730 * 2 * 0.008)
    autoscale = rules.Action("move_to_autoscale", 0.2, "ratio", "", target=1000.0, target_unit="RU/s autoscale max",
                             change="autoscale")  # fmt: skip
    bill = {"regions": 1, "monthly": 58.40, "autoscale_right": 8.76, "autoscale": False}
    assert actions._saving(autoscale, bill, Prices()) == {"monthly_saving": 49.64, "saving_unit": "USD a month"}
    assert math.isnan(actions._saving(autoscale, None, Prices())["monthly_saving"])  # no bill: no figure


def test_rows_that_are_not_actions_leave_the_action_columns_blank() -> None:
    report = review.build_capacity_report(**shop_frames())
    others = report[report["section"].ne("action")]
    assert others["target"].isna().all() and others["monthly_saving"].isna().all()  # the numbers: NaN
    assert (others[ACTION_TEXT_COLUMNS] == "").all().all()
    assert set(ACTION_TEXT_COLUMNS) | {"target", "monthly_saving"} == set(ACTION_COLUMNS)
    actions = review.section(report, "action")
    assert actions["severity"].isin(["critical", "warning", "info"]).all()


def test_the_replay_row_is_own_traffic_s_spend() -> None:
    frames = shop_frames()
    report = review.build_capacity_report(**frames)
    rows = report[report["measure"].eq("replay_ru")].set_index("container")
    spend = own_traffic.summarize_replay_spend(frames["requests"]).set_index("container")
    assert rows["value"].to_dict() == spend["ru"].round(1).to_dict() and set(rows["unit"]) == {"RU"}
    assert rows["detail"].str.startswith("ruscope's replay: charged to the account, counted in Azure Monitor").all()


def test_the_report_says_what_it_is_of_and_never_a_token() -> None:
    told = about.ReportAbout(
        window_start=dt.datetime(2026, 5, 1, 10, tzinfo=dt.UTC),
        window_end=dt.datetime(2026, 5, 2, 10, tzinfo=dt.UTC),
        store="https://acct.blob.core.windows.net/data/store?sv=2024&sig=SECRET",
        generated=dt.datetime(2026, 5, 2, 10, 5, tzinfo=dt.UTC),
        region=None,
        version="0.1.0",
        window_note="--since 1d",
    )
    report = review.build_capacity_report(**shop_frames(), about=told)
    first = report.head(6)
    assert first["section"].eq("report").all() and first["value"].isna().all()
    assert first.set_index("measure")["detail"].to_dict() == {
        "window_start": "2026-05-01T10:00:00Z (--since 1d)",
        "window_end": "2026-05-02T10:00:00Z",
        "store": "https://acct.blob.core.windows.net/data/store",
        "generated_at": "2026-05-02T10:05:00Z",
        "region": "all regions",
        "ruscope_version": "0.1.0",
    }
    assert "SECRET" not in to_csv_bytes(report).decode()
    assert review.report_summary(report) == "2 containers, 4 recommended actions"  # the first section is no container
    assert (
        about.public_store_text("abfss://data@acct.dfs.core.windows.net/s")
        == "abfss://data@acct.dfs.core.windows.net/s"
    )
    assert about.public_store_text("https://user:pw@host/s?x=1") == "https://host/s"
    assert about.public_store_text("ruscope-data") == "ruscope-data"


def test_one_spelling_of_a_key() -> None:
    assert key_text('["a", "b"]') == key_text(["a", "b"]) == '["a","b"]'
    assert key_text('["é", 1, null, {}]') == '["é",1,null,{}]'  # non-ASCII as is, undefined as {}
    assert key_text("") == "" and key_text("not json") == "not json" and key_text(None) == ""
