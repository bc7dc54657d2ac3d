"""analysis.load on frames built here with the schema's columns: the budget in force, the rule that marks a
minute's normalized RU as ruscope's own, the workload's sustained load and peaks, and the consumers that
read them (fleet's risk, overview's figures, the capacity review's saturation finding)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from analysis import fleet, load, overview
from analysis.capacity import evidence, review, rules
from store.records import PARTITIONS
from tests.analysis.queries.test_costs import T0, executions_frame, request, requests_frame
from tests.analysis.test_fleet import by_container

BUDGET = 400.0  # RU/s per partition: 800 RU/s over 2 partitions


def metric(container: str, name: str, value: float, *, minute: float = 0, **extra: Any) -> dict[str, Any]:
    row = dict.fromkeys(fleet.FLEET_METRIC_COLUMNS)
    aggregation = "Maximum" if name == "NormalizedRUConsumption" else "Total"
    row.update(account="127.0.0.1", database="shop", container=container, time=T0 + pd.Timedelta(minutes=minute))
    row.update({"metric": name, "aggregation": aggregation, "value": value, "grain": "PT1M", **extra})
    return row


def snapshot(container: str, pkranges: list[str], *, minute: float = 0) -> list[dict[str, Any]]:
    rows = []
    for pk in pkranges:
        row = dict.fromkeys(PARTITIONS.columns)
        row.update(account="127.0.0.1", database="shop", container=container, pkrange_id=pk, size_kb=1.0)
        rows.append({**row, "time": T0 + pd.Timedelta(minutes=minute)})
    return rows


def replay_minute(container: str, minute: int, *, per_second: float, seconds: int = 60, pk: str = "0") -> list[dict]:
    """The replay's data pages in one minute: `per_second` RU in each of its first `seconds` seconds."""
    return [
        request(
            "r",
            "q",
            f"{container}-{minute}",
            "page",
            pk,
            per_second,
            seq=s,
            minute=minute + s / 60,
            container=container,
        )
        for s in range(seconds)
    ]


def normalized(container: str, values: dict[int, float], *, pk: str = "0", minutes: int = 60, rest: float = 10.0):
    return [
        metric(container, "NormalizedRUConsumption", values.get(m, rest), minute=m, pkrange_id=pk)
        for m in range(minutes)
    ]


def frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """`messages`: even ranges at 10%; its only 100% minutes (10 and 30) are the replay's, which sent 400 RU
    (the whole partition budget) in each of their seconds. `hot`: range 0 at 100% every minute, a small
    replay in minute 5 (160 RU at most in a second: 40% of the budget, under half the minute's 100%).
    `burst`: one bulk-load minute at 100%, the rest at 10%. Each 800 RU/s over 2 partitions."""
    metrics, requests, partitions = [], [], []
    for name in ("messages", "hot", "burst"):
        metrics.append(metric(name, "ProvisionedThroughput", 800.0))
        metrics += normalized(name, {}, pk="1")
        partitions += snapshot(name, ["0", "1"])
    metrics += normalized("messages", {10: 100.0, 30: 100.0})
    metrics += [metric("messages", "TotalRequestUnits", 6000.0, minute=m) for m in range(60) if m not in (10, 30)]
    metrics += [metric("messages", "TotalRequestUnits", 30000.0, minute=m) for m in (10, 30)]
    requests += replay_minute("messages", 10, per_second=BUDGET) + replay_minute("messages", 30, per_second=BUDGET)
    metrics += normalized("hot", {}, rest=100.0)
    requests += replay_minute("hot", 5, per_second=160.0, seconds=1)
    metrics += normalized("burst", {20: 100.0})
    return pd.DataFrame(metrics), requests_frame(*requests), pd.DataFrame(partitions, columns=PARTITIONS.columns)


def test_the_rule_marks_the_replays_minutes_own_and_keeps_the_workloads() -> None:
    metrics, requests, partitions = frames()
    minutes = load.partition_minutes(metrics, requests, partitions)
    assert minutes.columns.tolist() == load.MINUTE_COLUMNS
    assert set(minutes["budget_ru_s"]) == {BUDGET}  # 800 RU/s over the snapshot's 2 partitions
    own = minutes[minutes["own"]]
    assert own[["container", "pkrange_id"]].drop_duplicates().values.tolist() == [["messages", "0"]]
    assert sorted(own["time"]) == [T0 + pd.Timedelta(minutes=m) for m in (10, 30)]
    assert set(own["own_ru"]) == {60 * BUDGET} and set(own["own_normalized_ru"]) == {100.0}
    # the hot range's replay second used 40% of the budget: under half the minute's 100%, the workload's
    [small] = minutes[(minutes["container"] == "hot") & minutes["own_ru"].gt(0)].to_dict("records")
    assert (small["own_normalized_ru"], small["own"]) == (40.0, False)


def test_the_workloads_peak_and_sustained_load_leave_the_replay_out() -> None:
    metrics, requests, partitions = frames()
    summary = load.summarize_partition_load(load.partition_minutes(metrics, requests, partitions))
    assert summary.columns.tolist() == load.LOAD_COLUMNS
    rows = by_container(summary)
    assert (rows["messages"]["max_normalized_ru"], rows["messages"]["own_minutes_excluded"]) == (10.0, 2)
    assert rows["messages"]["sustained_normalized_ru"] == 10.0 and rows["messages"]["sustained_minutes"] == 58
    assert rows["hot"]["sustained_normalized_ru"] == 100.0 and rows["hot"]["sustained_pkrange"] == "0"
    # one bulk-load minute is the peak minute (evidence), not the sustained load
    assert rows["burst"]["max_normalized_ru"] == 100.0 and rows["burst"]["sustained_normalized_ru"] == 10.0
    assert rows["burst"]["peak_time"] == T0 + pd.Timedelta(minutes=20)
    # the measure can fail: without the replay's requests, the 100% minutes are the workload's
    blind = by_container(load.summarize_partition_load(load.partition_minutes(metrics, None, partitions)))
    assert blind["messages"]["max_normalized_ru"] == 100.0 and blind["messages"]["own_minutes_excluded"] == 0


def test_fleet_risk_reads_the_workloads_sustained_load() -> None:
    metrics, requests, partitions = frames()
    ranked = fleet.summarize_fleet(executions_frame(), requests, metrics, partitions)
    assert ranked.columns.tolist() == fleet.FLEET_COLUMNS
    rows = by_container(ranked)
    assert ranked["container"].tolist()[0] == "hot"
    assert (rows["hot"]["risk"], rows["hot"]["risk_driver"]) == (1.0, "hot partition")  # genuinely hot: still
    assert rows["messages"]["risk"] == 0.1 and rows["messages"]["max_normalized_ru"] == 10.0  # not 1.00
    assert rows["messages"]["own_minutes_excluded"] == 2
    assert rows["burst"]["risk"] == 0.1 and rows["burst"]["max_normalized_ru"] == 100.0  # a bulk minute: evidence
    # the replay's RU is subtracted from the consumed RU/s: 30,000 RU less its 24,000 in minutes 10 and 30
    assert rows["messages"]["p95_ru_s"] == 100.0 and rows["messages"]["own_ru_subtracted"] == 2 * 60 * BUDGET
    assert rows["messages"]["waste"] == round(1 - 100 / 800, 4)


def test_overview_peaks_and_hottest_range_are_the_workloads() -> None:
    metrics, requests, partitions = frames()
    empty = pd.DataFrame(columns=overview.LOGICAL_KEY_COLUMNS)
    rows = by_container(overview.summarize_containers(executions_frame(), requests, metrics, partitions, empty))
    messages = rows["messages"]
    assert messages["peak_ru_s"] == 100.0 and messages["p95_ru_s"] == 100.0  # 500 RU/s with the replay in
    assert messages["hot_normalized_ru"] == 10.0 and messages["hot_range_share"] == 0.5  # even, the replay out
    assert messages["own_minutes_excluded"] == 2 and messages["own_ru_subtracted"] == 2 * 60 * BUDGET
    assert (
        messages["own_note"]
        == "ruscope's replay left out: 2 pkrange-minutes of normalized RU and 48,000 RU of consumed RU"
    )
    assert rows["burst"]["own_note"] == ""  # nothing of ruscope's there: nothing said
    assert rows["hot"]["hot_normalized_ru"] == 100.0 and rows["hot"]["hot_pkrange"] == "0"
    blind = by_container(
        overview.summarize_containers(executions_frame(), requests.iloc[0:0], metrics, partitions, empty)
    )
    assert blind["messages"]["peak_ru_s"] == 500.0 and blind["messages"]["hot_normalized_ru"] == 100.0


def test_the_saturation_finding_leaves_the_replays_minutes_out() -> None:
    """`messages` with the replay in every other minute at its partition's whole budget: Monitor's p95 is
    100% (saturated), the workload's 10%; the report's saturation and lower-throughput rules read the latter."""
    metrics, requests, partitions = frames()
    busy = [m for m in range(0, 60, 2)]
    metrics = pd.concat(
        [metrics[~((metrics["container"] == "messages") & metrics["metric"].eq("NormalizedRUConsumption"))],
         pd.DataFrame(normalized("messages", dict.fromkeys(busy, 100.0)) + normalized("messages", {}, pk="1"))],
        ignore_index=True,
    )  # fmt: skip
    requests = requests_frame(*[r for m in busy for r in replay_minute("messages", m, per_second=BUDGET, seconds=2)])
    blind = by_container(evidence.saturation_stats(metrics, None, partitions))
    assert blind["messages"]["sat_normalized_ru"] == 100.0
    mine = by_container(evidence.saturation_stats(metrics, requests, partitions))
    assert mine["messages"]["sat_normalized_ru"] == 10.0 and mine["messages"]["sat_minutes"] == 30
    empty = pd.DataFrame(columns=overview.LOGICAL_KEY_COLUMNS)
    report = review.build_capacity_report(executions_frame(), requests, metrics, partitions, empty)
    actions = review.section(report, "action")
    assert not (actions["container"].eq("messages") & actions["measure"].eq("partition_saturated")).any()
    assert (actions["container"].eq("hot") & actions["measure"].eq("partition_saturated")).any()


def test_the_budget_in_force_follows_throughput_and_layout_changes() -> None:
    """400 RU/s over 2 partitions until minute 30, then 1,600 over 4: each minute's budget is the one in
    force then (a minute before the first snapshot takes the first); without snapshots, the ranges the
    metrics reported last."""
    metrics = pd.DataFrame(
        [
            metric("c", "ProvisionedThroughput", 400.0, minute=0),
            metric("c", "ProvisionedThroughput", 1600.0, minute=30),
            *[metric("c", "NormalizedRUConsumption", 50.0, minute=m, pkrange_id="0") for m in (10, 40)],
            *[metric("c", "NormalizedRUConsumption", 50.0, minute=40, pkrange_id=pk) for pk in ("1", "2")],
        ]
    )
    partitions = pd.DataFrame(snapshot("c", ["0", "1"], minute=5) + snapshot("c", list("0123"), minute=30))
    minutes = load.partition_minutes(metrics, None, partitions)
    budgets = minutes.drop_duplicates("time").set_index("time")["budget_ru_s"]
    assert budgets.to_dict() == {T0 + pd.Timedelta(minutes=10): 200.0, T0 + pd.Timedelta(minutes=40): 400.0}
    layout = load.partition_layout(partitions, metrics).to_dict("records")
    assert [(r["partitions"], r["layout_source"]) for r in layout] == [(4.0, load.STORAGE_LAYOUT)]
    reported = load.partition_layout(None, metrics).to_dict("records")
    assert [(r["partitions"], r["layout_source"]) for r in reported] == [(3.0, load.METRICS_LAYOUT)]
    assert set(load.partition_minutes(metrics, None, None)["budget_ru_s"]) == {round(400 / 3, 4), round(1600 / 3, 4)}


def test_without_a_budget_no_minute_is_own_and_a_container_of_only_own_minutes_has_no_hot_risk() -> None:
    metrics, requests, partitions = frames()
    no_throughput = metrics[metrics["metric"].ne("ProvisionedThroughput")]
    assert not load.partition_minutes(no_throughput, requests, partitions)["own"].any()
    only_own = pd.DataFrame(
        [
            metric("solo", "ProvisionedThroughput", 400.0),
            metric("solo", "NormalizedRUConsumption", 100.0, pkrange_id="0"),
        ]
    )
    ranked = fleet.summarize_fleet(
        executions_frame(), requests_frame(*replay_minute("solo", 0, per_second=400.0, seconds=1)), only_own
    )
    [row] = ranked.to_dict("records")
    assert row["own_minutes_excluded"] == 1 and math.isnan(row["max_normalized_ru"])
    assert row["risk"] == 0.0 and row["risk_driver"] == ""


def test_the_sustained_statistic_is_the_saturation_findings() -> None:
    assert load.SUSTAINED_QUANTILE == rules.SATURATION_QUANTILE
    assert fleet.grain_seconds("PT5M") == pytest.approx(300.0)


def test_a_range_that_reported_only_its_bulk_load_minute_is_idle_the_rest_of_the_window() -> None:
    """The demo's `query-logs-by-month`: range 0 reported one minute (the bulk load, 100%), then nothing while
    range 1 reported every minute: the minutes without a point are 0%, so its sustained load is 0, not 100;
    a range the latest snapshot no longer lists (a split's parent) is not the sustained one: it is gone."""
    metrics = pd.DataFrame(
        [metric("m", "ProvisionedThroughput", 800.0), *normalized("m", {0: 100.0}, minutes=1)]
        + normalized("m", {}, pk="1", rest=20.0)
        + normalized("m", {}, pk="2", minutes=10, rest=90.0)  # retired after 10 minutes: a split's parent
    )
    partitions = pd.DataFrame(snapshot("m", ["0", "1"], minute=59), columns=PARTITIONS.columns)
    summary = by_container(load.summarize_partition_load(load.partition_minutes(metrics, None, partitions)))
    assert summary["m"]["max_normalized_ru"] == 100.0  # the evidence: the peak minute
    # range 2 ran at 90% but a split retired it: history, not a partition an action can name; range 1 is current
    assert (summary["m"]["sustained_pkrange"], summary["m"]["sustained_normalized_ru"]) == ("1", 20.0)
    assert summary["m"]["sustained_minutes"] == 60
    minutes = load.partition_minutes(metrics, None, partitions)
    current = load.summarize_partition_load(minutes[minutes["pkrange_id"].ne("2")])
    assert by_container(current)["m"]["sustained_pkrange"] == "1"  # range 0's p95 over 60 minutes is 0
    assert fleet.summarize_fleet(executions_frame(), requests_frame(), metrics[metrics["pkrange_id"].ne("2")])[
        "risk"
    ].tolist() == [0.2]
