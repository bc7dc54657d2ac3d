"""The throughput planner (analysis.capacity.rules and actions): a redistribution by Microsoft's formula
within the service's documented limits, the merge candidate on each of merge.md's thresholds, and burst
capacity in place of a raise when the banked idle capacity would have served the 429s. Expected values are
computed by hand in the comments."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.capacity import commands, evidence, planner, review, rules
from tests.analysis.capacity.test_capacity import hot_partition_frames
from tests.analysis.test_overview import frame, metric, row

SQL = "az cosmosdb sql container"
NAMES = "--account-name 127.0.0.1 --resource-group <rg> --database-name shop --name orders"


def test_a_partition_needs_its_consumed_ru_s_plus_its_429s_times_their_charge() -> None:
    # 6,000 RU/s each: pkrange 0 used 100% (6,000) and had 50 429s/s at 10 RU each (500): 6,500
    needs = planner.partition_needs({"0": 100.0, "1": 10.0, "2": 10.0}, 6000.0, {"0": 50.0}, 10.0)
    assert needs == {"0": 6500.0, "1": 600.0, "2": 600.0}
    # 1,000 429s/s x 10 RU would be 16,000: at most 10,000 per partition (R92)
    assert planner.partition_needs({"0": 100.0}, 6000.0, {"0": 1000.0}, 10.0) == {"0": 10000.0}
    # no 429 count: the page's other rule for a range at 100%, twice its share; at least 100 RU/s each
    assert planner.partition_needs({"0": 100.0, "1": 0.0}, 1000.0, {}, math.nan) == {"0": 2000.0, "1": 100.0}


def test_one_hot_partition_takes_its_need_from_the_most_idle_one() -> None:
    plan = planner.redistribution_plan({"0": 6500.0, "1": 600.0, "2": 600.0}, 18000.0)
    assert plan is not None and plan.raise_to is None
    # pkrange 0 gains 500; 1 and 2 could each give 5,400: the first in id order gives it, exactly
    assert plan.requests == (planner.RedistributeRequest((("0", 6500.0),), "1"),)
    assert plan.partitions == (("0", 6500.0), ("1", 5500.0), ("2", 6000.0))
    assert sum(ru for _, ru in plan.partitions) == 18000.0  # the total is unchanged
    command = commands.az_command(
        rules.Action("skewed_key", 100.0, "%", "", change="redistribute", plan=plan), "127.0.0.1", "shop", "orders"
    )
    assert command == (
        f"{SQL} redistribute-partition-throughput {NAMES} --target-partition-info 0=6500 --source-partition-info 1"
    )
    assert planner.redistribution_plan({"0": 500.0, "1": 500.0}, 2000.0) is None  # nobody needs more than its share
    assert planner.redistribution_plan({}, 1000.0) is None and planner.redistribution_plan({"0": 1.0}, math.nan) is None


def test_more_than_20_targets_take_several_requests() -> None:
    # 45 partitions at 3,000 RU/s: 0-24 need 3,100 (100 more each: 2,500), 25-44 need 100 (2,900 spare each)
    needs = {str(pk): 3100.0 if pk < 25 else 100.0 for pk in range(45)}
    plan = planner.redistribution_plan(needs, 45 * 3000.0)
    assert plan is not None and plan.raise_to is None
    assert [len(r.targets) for r in plan.requests] == [20, 5]  # at most 20 targets a request (the FAQ)
    assert {r.source for r in plan.requests} == {"25"}  # one source, enough for all: it gives 2,500
    after = dict(plan.partitions)
    assert after["25"] == 500.0 and after["26"] == 3000.0 and all(after[str(pk)] == 3100.0 for pk in range(25))
    assert max(after.values()) <= planner.PARTITION_MAX_RU_S and sum(after.values()) == 45 * 3000.0
    assert all(after[pk] >= needs[pk] for pk in needs)  # every source keeps at least its need
    commands = planner.redistribution_commands(plan, SQL, NAMES)
    assert len(commands) == 2 and commands[1].endswith("--target-partition-info 20=3100 21=3100 22=3100 "
                                                       "23=3100 24=3100 --source-partition-info 25")  # fmt: skip


def test_when_the_others_cannot_give_enough_the_total_is_raised_first() -> None:
    # 12 partitions at 1,000: pkrange 0 needs 6,000, the 11 others 600 each: 12,600 in all against 12,000, so
    # the total is raised to 12,600 first (1,050 each); then each other gives 450, one call each: 11 calls
    needs = {str(pk): 6000.0 if pk == 0 else 600.0 for pk in range(12)}
    plan = planner.redistribution_plan(needs, 12000.0)
    assert plan is not None and plan.raise_to == 12600.0 and len(plan.requests) == 11
    assert plan.requests[0] == planner.RedistributeRequest((("0", 1500.0),), "1")  # 1,050 + 450
    assert plan.requests[-1].targets == (("0", 6000.0),) and dict(plan.partitions)["11"] == 600.0
    commands = planner.redistribution_commands(plan, SQL, NAMES)
    assert commands[0] == f"{SQL} throughput update {NAMES} --throughput 12600"  # before any Custom policy
    assert commands.count("sleep 60") == 2 and commands[6] == "sleep 60"  # at most 5 calls a minute
    assert sum(ru for _, ru in plan.partitions) == pytest.approx(12600.0)


def test_the_report_redistributes_by_the_formula() -> None:
    """2,000 RU/s over 2 partitions (1,000 each): pkrange 1 at 100% (1,000) with 200 429s in one minute
    (3.33/s) at 2,100 RU / 1,800 requests served (1.17 RU): 1,003.9, up to 1,100; pkrange 0 10% (100): it gives 100."""
    report = review.build_capacity_report(**hot_partition_frames(provisioned=2000.0))
    [hot] = review.section(report, "action").query("measure == 'skewed_key'").to_dict("records")
    assert hot["command"] == (
        f"{SQL} redistribute-partition-throughput {NAMES} --target-partition-info 1=1100 --source-partition-info 0"
    )
    assert hot["target"] == 1100.0 and hot["target_unit"] == "RU/s per partition (pkrange 1)"
    assert "pkrange 1 consumed 1,000 RU/s (100% of 1,000) + 3.33 429s/s x 1.17 RU a request" in hot["detail"]
    assert "the container's, all given to pkrange 1" in hot["detail"]  # TotalRequests has no partition split
    assert "pkrange 0 900, pkrange 1 1,100 RU/s, 2,000 in total against 2,000 now, in 1 call" in hot["detail"]
    assert hot["monthly_saving"] == 0.0  # the total is unchanged: so is the bill


def test_the_logs_count_429s_per_partition_where_their_ids_are_the_ranges() -> None:
    frames = hot_partition_frames(provisioned=2000.0)
    logs = frame("log_throttles", row("log_throttles", partition_id="1", operation_name="Query", throttled=600,
                                      requests=1000, bin_minutes=5))  # fmt: skip
    terms = evidence.throttle_terms(frames["metrics"], logs)[("127.0.0.1", "shop", "orders")]
    assert terms.per_pkrange == {"1": 2.0}  # 600 in a 5-minute bin
    guid = frame("log_throttles", row("log_throttles", partition_id="a1b2", operation_name="Query", throttled=600,
                                      requests=1000, bin_minutes=5))  # fmt: skip
    assert evidence.throttle_terms(frames["metrics"], guid)[("127.0.0.1", "shop", "orders")].per_pkrange == {}


def small_container_frames(*, throttled_minute: int, partition_kb: int = 1024) -> dict[str, pd.DataFrame]:
    """1,000 RU/s over 2 small partitions (500 each); 11 minutes of 36,000 RU (600 RU/s: busy, not one hot
    partition), both ranges at 60% and 200 requests a minute, except `throttled_minute`: pkrange 0 at 100%,
    1,000 requests served and 300 answered 429 (9.1% of 3,300)."""
    metrics = [metric("ProvisionedThroughput", 1000.0)]
    for m in range(11):
        hit = m == throttled_minute
        metrics += [metric("TotalRequestUnits", 36000.0, minute=m)]
        metrics += [metric("NormalizedRUConsumption", 100.0 if hit else 60.0, minute=m, pkrange_id="0")]
        metrics += [metric("NormalizedRUConsumption", 60.0, minute=m, pkrange_id="1")]
        metrics += [metric("TotalRequests", 1000.0 if hit else 200.0, minute=m, status_code="200")]
        metrics += [metric("TotalRequests", 300.0, minute=m, status_code="429")] if hit else []
    partitions = [row("partitions", pkrange_id=pk, size_kb=partition_kb, document_count=10) for pk in ("0", "1")]
    return {
        "executions": frame("executions"),
        "requests": frame("requests"),
        "metrics": frame("metrics", *metrics),
        "partitions": frame("partitions", *partitions),
        "logical_keys": frame("logical_keys"),
    }


def test_burst_capacity_absorbs_a_short_peak_after_idle_minutes() -> None:
    # 10 minutes at 60% bank 0.4 x 500 x 60 = 12,000 RU each: 120,000 (at most 300 x 500 = 150,000)
    assert planner.burst_absorbs(500.0, [(60.0, 0.0)] * 10 + [(100.0, 39600.0)]) == (True, 1)
    assert planner.burst_absorbs(500.0, [(100.0, 39600.0)]) == (False, 1)  # nothing banked yet
    assert planner.burst_absorbs(500.0, [(0.0, 0.0)] * 10 + [(100.0, 160000.0)])[0] is False  # over the 150,000 bank
    # 2,000 RU/s: 600,000 banked; 70,000 RU in a minute is 2,000 + 1,167 RU/s, over the 3,000 a burst is spent at
    assert planner.burst_absorbs(2000.0, [(0.0, 0.0)] * 10 + [(100.0, 70000.0)])[0] is False
    assert planner.burst_absorbs(2000.0, [(0.0, 0.0)] * 10 + [(100.0, 50000.0)]) == (True, 1)  # 2,833 RU/s
    assert planner.burst_absorbs(500.0, [(0.0, 0.0)] * 10 + [(100.0, 100000.0)] * 2)[0] is False  # the bank runs dry
    assert planner.burst_absorbs(3000.0, [(0.0, 0.0)] * 10 + [(100.0, 1.0)]) == (False, 0)  # 3,000 RU/s: no burst


def test_the_report_enables_burst_capacity_instead_of_a_raise() -> None:
    """The 300 429s of minute 10 asked for 300 x 132 RU (396,000 RU over the 3,000 requests served) = 39,600,
    within the 120,000 banked: burst capacity, saving the raise to 1,100 RU/s (100 RU/s x 730 h x $0.00008)."""
    report = review.build_capacity_report(**small_container_frames(throttled_minute=10))
    found = review.section(report, "action").set_index("measure")
    assert "raise_throughput" not in found.index
    burst = found.loc["burst_absorbs"]
    assert burst["command"] == "az cosmosdb update --name 127.0.0.1 --resource-group <rg> --enable-burst-capacity true"
    assert burst["severity"] == "critical" and burst["monthly_saving"] == pytest.approx(5.84)
    assert "raise to 1,100 (RU/s manual)" in burst["detail"] and "Not guaranteed" in burst["detail"]
    assert "per minute" in burst["detail"] and "not guaranteed" in burst["risk"].lower()
    early = review.section(review.build_capacity_report(**small_container_frames(throttled_minute=0)), "action")
    assert "raise_throughput" in early["measure"].tolist() and "burst_absorbs" not in early["measure"].tolist()


def test_a_merge_candidate_on_each_threshold() -> None:
    assert rules.merge_action(2, 2999.0, 39.9) is not None
    assert rules.merge_action(2, 3000.0, 1.0) is None  # RU/s per partition not under 3,000
    assert rules.merge_action(2, 1000.0, 40.0) is None  # 20 GB a partition: not under 20
    assert rules.merge_action(1, 1000.0, 1.0) is None  # one partition: nothing to merge
    report = review.build_capacity_report(**small_container_frames(throttled_minute=10))
    [merge] = review.section(report, "action").query("measure == 'merge_candidate'").to_dict("records")
    assert (merge["value"], merge["unit"], merge["severity"]) == (500.0, "RU/s", "info")
    assert merge["command"] == f"{SQL} merge {NAMES}"
    assert merge["monthly_saving"] == 0.0 and "does not change the RU/s billed" in merge["detail"]
    assert "any Python SDK (ruscope's own replay uses it)" in merge["risk"] and "Preview" in merge["risk"]
    large = review.build_capacity_report(**small_container_frames(throttled_minute=10, partition_kb=20 * 1024**2))
    assert "merge_candidate" not in review.section(large, "action")["measure"].tolist()
