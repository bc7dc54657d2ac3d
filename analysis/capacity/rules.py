"""The capacity report's action rules: each a pure function with its thresholds named as constants and
their sources, returning an `Action` (a recommendation in plain words) or None. `analysis.capacity.review` runs
them per container, query and logical key.

**A hot partition is not a throughput problem.** Provisioned RU/s are split evenly across the physical
partitions (ru-cost-model.md P4: 18,000 RU/s over 3 partitions is 6,000 each), so one partition can throttle
while the container as a whole is nearly idle (P13). When the 429s come from a hot partition (the hottest
range at `fleet.HOT_NORMALIZED_RU` or more of its share while the container's p95 used under
`LOWER_PEAK_UTILIZATION` of the provisioned RU/s), raising the RU/s would spread the extra over every
partition and mostly pay for idle ones: the action is the skewed key (`hot_partition_action`), not
`raise_throughput`.

**Share, saturation, throttling are three findings.** `range_share` (share: a range's share of the RU
against an even 1/N), `partition_saturated` (saturation: the hottest range's *sustained* normalized RU near
its budget) and `raise_throughput` / `skewed_key` (throttling: 429s observed; `skewed_key` when they come from
one hot partition, its value that range's peak normalized RU). NormalizedRUConsumption is the
largest per-second share of a partition's budget in the minute (P11; azure-monitor.md R10): one busy second
makes a minute 100%, so a single minute proves little. "Sustained" is the p95 over the window of a range's
per-minute NormalizedRUConsumption at `SATURATION_NORMALIZED_RU` or more (5% of the minutes above it: more
than a burst). **A lower target holds against the partitions:** never `lower_throughput` while a range is
saturated, and never below what the hottest range needs times the partition count (P4: every range gets
provisioned / N, the hottest used `hot_normalized_ru`% of it at its busiest second, so it needs that share
of the current per-partition budget: need x N = hot% x provisioned, filled to 80% as any target), nor below the service's minimum.

**Numbers in columns.** Each `Action` also carries its `target` and `target_unit`, the `change` that applies
it (`analysis.capacity.commands.az_command` writes the Azure CLI command: `throughput update --throughput` / `--max-throughput`,
`throughput migrate --throughput-type autoscale`, `redistribute-partition-throughput --target-partition-info
--source-partition-info` (the calls of `analysis.capacity.planner`'s plan), `merge`, `az cosmosdb update
--enable-burst-capacity`; `ruscope advise` for a key design; azure-monitor.md R90-R97), its `risk` in plain
words and a `severity`
(`SEVERITY`). A single hot logical key (`HOT_KEY_SHARE` of its range's RU) gains nothing from a split or a
redistribution (R92: a key lives on one partition, at most 10,000 RU/s): no redistribution then, the advisor.
**Cheaper than a raise, or a layout to tidy:** `burst_absorbs` replaces `raise_throughput` when every
partition is under 3,000 RU/s and the idle capacity each banked would have served its 429s (R97, not
guaranteed); `merge_candidate` names a container whose partitions are fragmented (under 3,000 RU/s and 20 GB
each, R96), with what enabling merge blocks.
The catalogue of every finding, its evidence, action and thresholds: docs/findings.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from analysis import fleet, overview
from analysis.capacity.planner import (
    BURST_RATE_RU_S,
    BURST_SECONDS,
    RedistributionPlan,
)
from analysis.capacity.planner import RU_STEP as RU_STEP  # the RU step the rules, autoscale and cost share
from analysis.cost import queries as query_cost
from cosmoscore import billing
from cosmoscore.limits import GB, Limits

# -- thresholds of the rules, with why ------------------------------------------------------------------
THROTTLE_HEALTHY_MAX = overview.THROTTLE_HEALTHY_MAX  # ru-cost-model.md P12: 1-5% of requests 429 is healthy
THROTTLE_QUIET_MAX = 0.01  # the band's low end: lowering RU/s is advised only below it
LOWER_PEAK_UTILIZATION = 0.5  # even the busiest interval used under half the provisioned RU/s: paying 2x
TARGET_PEAK_UTILIZATION = 0.8  # a suggested rate the peak fills to 80%: a per-minute average hides bursts
AUTOSCALE_MIN_MAX = 1000  # ru-cost-model.md P9: the smallest autoscale max RU/s
# learn "how-to-choose-offer": autoscale bills each hour at the highest RU/s it scaled to (at least 10% of
# the max, P10) at 1.5x the manual rate per RU/s: the billing rules' own (`cosmoscore.billing`, B2)
AUTOSCALE_MIN_FRACTION = billing.AUTOSCALE_MIN_FRACTION
AUTOSCALE_SAVES_BELOW = 0.9  # advise autoscale when it would cost under 90% of manual: a clear saving
AUTOSCALE_MIN_HOURS = 24  # at least a day of metrics: a daily cycle decides whether hours are quiet
# Each physical partition gets an equal share of the RU/s (ru-cost-model.md P4; azure-monitor.md §5): a range
# at 1.5x its even share throttles when the container runs at 2/3 of its provisioned rate (a third paid for
# and unusable); 2x would never fire with two ranges.
SKEW_FACTOR = 1.5
# Saturation (module docstring): a range whose p95 of per-minute NormalizedRUConsumption (P11) is at 90% or
# more ran at its per-second budget in more than 1 minute in 20: lowering the RU/s would throttle it.
SATURATION_NORMALIZED_RU = 90.0
SATURATION_QUANTILE = 0.95
HOT_KEY_SHARE = 0.5  # one key with most of a hot range's RU: the range cannot be split below one key (P1)
KEY_STORAGE_WARN = 0.8  # a logical key at 80% of 20 GB (P1): changing the key takes a migration; start now
KEY_STORAGE_CRITICAL = 0.95  # at 95% of 20 GB a burst of writes reaches the limit: writes to the key fail
# Raising: Microsoft's redistribution page, "Increase the RU/s by a percentage, measure the rate of 429
# responses, and repeat ... start with 10% to be conservative" (azure-monitor.md R90): the target is one step.
RAISE_STEP = 0.1
# Merge (R96, merge.md): "The current RU/s per physical partition is <3000 RU/s" and "The current average
# storage in GB per physical partition is <20 GB"; at least two partitions to merge.
MERGE_MAX_PARTITION_RU_S = 3000.0
MERGE_MAX_PARTITION_GB = 20.0
# The severity of a finding (the catalogue in docs/findings.md): critical when requests fail now or a limit
# is about to make them fail (429s above the healthy band, a key at 95% of 20 GB); warning when a partition
# runs at its budget or the load is skewed (429s are the next step); info for a saving or a cheaper query.
SEVERITY = {
    "raise_throughput": "critical",
    "skewed_key": "critical",
    "partition_saturated": "warning",
    "range_share": "warning",
    "key_near_limit": "warning",  # critical from KEY_STORAGE_CRITICAL (`severity`)
    "lower_throughput": "info",
    "move_to_autoscale": "info",
    "query_fans_out": "info",
    "burst_absorbs": "critical",  # the 429s of the raise it replaces happen now
    "merge_candidate": "info",
    "order_by_needs_composite_index": "info",
}
# What applies a change (`commands.az_command`); R90-R97 cite each command and flag.
CHANGES = ("throughput", "autoscale", "redistribute", "advise", "query", "index", "merge", "burst")
TOP = re.compile(r"\bTOP\b", re.IGNORECASE)
ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Action:
    """A recommendation: the rule (`measure`), the number that fired it and what to do, in plain words; and
    in columns (module docstring): the `target` and its unit, the `change` that applies it (a `CHANGES` key,
    from which `commands.az_command` writes the command), the `risk` of applying it, and for a redistribution the RU/s
    per pkrange after it (`partitions`) and the calls that set them (`plan`); for burst capacity the raise it
    replaces (`instead_of`, whose cost is what it saves); for a query change the RU/s it saves at the
    query's rate (`saved_ru_s`, priced by `analysis.cost.queries.finding_saving`) and for an index change the
    `compositeIndexes` entry to add (JSON)."""

    measure: str
    value: float
    unit: str
    detail: str
    target: float | None = None
    target_unit: str = ""
    change: str = ""
    risk: str = ""
    partitions: tuple[tuple[str, float], ...] = ()
    plan: RedistributionPlan | None = None
    instead_of: Action | None = None
    saved_ru_s: float | None = None
    composite_index: str = ""


def hot_partition_action(
    throttle_rate: float,
    hot_normalized_ru: float,
    p95_utilization: float,
    hot_pkrange: str,
    pkranges: int,
    hot_key: str | None = None,
    hot_key_share: float = math.nan,
) -> Action | None:
    """More than the healthy 1-5% of requests throttled while the hottest range is at its share and the
    container is mostly idle: the 429s come from one hot partition, so fix the key (module docstring).
    `hot_key`: the logical key with the most RU on that range in the diagnostic logs, named when known; when
    it carries `HOT_KEY_SHARE` of the range's RU, a split or redistribution gains nothing (the key design
    does: `change` "advise"); else the RU/s can be moved to that range (`change` "redistribute", the
    plan from `planner.redistribution_plan`, set by the report). The value: the range's peak normalized
    RU (%), the number that says the 429s are one partition's."""
    hot = throttle_rate > THROTTLE_HEALTHY_MAX and hot_normalized_ru >= fleet.HOT_NORMALIZED_RU
    if not (hot and p95_utilization < LOWER_PEAK_UTILIZATION):
        return None
    split = f"split evenly over its {pkranges} partitions" if pkranges >= 2 else "split evenly over its partitions"
    detail = (
        f"The 429s ({throttle_rate:.1%} of requests) come from one hot partition: pkrange {hot_pkrange} reached "
        f"{hot_normalized_ru:.0f}% of its share of the RU/s (peak normalized RU) while the container used "
        f"{p95_utilization:.1%} of its provisioned RU/s (p95). The RU/s are {split}, so raising them mostly pays "
        f"for idle partitions: spread the hot key{f' {hot_key}' if hot_key else ''}'s load (a key with more, "
        "evenly used values, a synthetic suffix or a hierarchical key)."
    )
    if hot_key and hot_key_share >= HOT_KEY_SHARE:
        detail += (
            f" One logical key carries {hot_key_share:.0%} of that range's RU (diagnostic logs): a split or a "
            "redistribution of RU/s gains nothing (a key lives on one partition, at most 10,000 RU/s); change the "
            "key design (ruscope advise)."
        )
        return Action("skewed_key", round(hot_normalized_ru, 2), "%", detail, change="advise", risk=KEY_CHANGE_RISK)
    detail += " Until then, more of the RU/s can go to that partition (the command: a redistribution)."
    return Action("skewed_key", round(hot_normalized_ru, 2), "%", detail, change="redistribute", risk=REDISTRIBUTE_RISK)


def raise_action(
    throttle_rate: float, skewed: bool, provisioned_ru_s: float = math.nan, autoscale: bool = False
) -> Action | None:
    """More than the healthy 1-5% of requests throttled: raise RU/s (or first fix a skewed key), by
    `RAISE_STEP` of the `provisioned_ru_s` (the target; none for a container without RU/s of its own)."""
    if not throttle_rate > THROTTLE_HEALTHY_MAX:
        return None
    detail = f"Raise the RU/s: {throttle_rate:.1%} of requests were throttled (429), above the 1-5% the service documents as healthy."
    if skewed:
        detail += " One partition takes most of the load, so fixing the key (below) may cost less than more RU/s."
    if not provisioned_ru_s > 0:
        return Action("raise_throughput", round(throttle_rate * 100, 2), "%", detail, risk=RAISE_RISK)
    step = RU_STEP[autoscale]
    target = float(math.ceil(provisioned_ru_s * (1 + RAISE_STEP) / step) * step)
    detail += (
        f" Target {target:,.0f} ({RAISE_STEP:.0%} more, Microsoft's conservative step): measure the 429 rate "
        "again, and repeat while it stays above 5%."
    )
    return Action(
        "raise_throughput", round(throttle_rate * 100, 2), "%", detail,
        target=target, target_unit=target_unit(autoscale), change="throughput", risk=RAISE_RISK,
    )  # fmt: skip


def target_unit(autoscale: bool) -> str:
    """What a throughput target is: manual RU/s or an autoscale maximum."""
    return "RU/s autoscale max" if autoscale else "RU/s manual"


def lower_floor(provisioned_ru_s: float, hot_normalized_ru: float, autoscale: bool) -> float:
    """The least RU/s a lowered target may have (module docstring): the hottest range's need x the partition
    count (= its peak normalized share x the provisioned RU/s), filled to `TARGET_PEAK_UTILIZATION` as the
    container's target is, and the service's minimum; up to the RU step."""
    step = RU_STEP[autoscale]
    minimum = AUTOSCALE_MIN_MAX if autoscale else Limits().min_throughput
    need = provisioned_ru_s * (hot_normalized_ru / 100 if hot_normalized_ru >= 0 else 0.0) / TARGET_PEAK_UTILIZATION
    return float(max(minimum, math.ceil(need / step) * step))


def lower_action(
    peak_ru_s: float,
    provisioned_ru_s: float,
    throttle_rate: float,
    autoscale: bool,
    *,
    hot_normalized_ru: float = math.nan,
    saturated: bool = False,
    evidence: str = "",
) -> Action | None:
    """The busiest interval used under half the provisioned RU/s, with (almost) no 429s and no saturated
    range: lower it, to a target (the action's value, RU/s) never below `lower_floor`."""
    if not (provisioned_ru_s > 0 and peak_ru_s >= 0) or throttle_rate > THROTTLE_QUIET_MAX or saturated:
        return None
    utilization = peak_ru_s / provisioned_ru_s
    if utilization >= LOWER_PEAK_UTILIZATION:
        return None
    step = RU_STEP[autoscale]
    floor = lower_floor(provisioned_ru_s, hot_normalized_ru, autoscale)
    target = max(floor, math.ceil(peak_ru_s / TARGET_PEAK_UTILIZATION / step) * step)
    if target >= provisioned_ru_s:
        return None
    what = "autoscale max RU/s" if autoscale else "RU/s"
    hot = f", the hottest range peaked at {hot_normalized_ru:.0f}% of its budget" if hot_normalized_ru >= 0 else ""
    detail = (
        f"Lower the {what} from {provisioned_ru_s:,.0f} to about {target:,.0f}: the busiest minute used "
        f"{utilization:.0%} of it ({peak_ru_s:,.0f} RU/s, a per-minute average){hot} and requests were not "
        f"throttled; the target is at least {floor:,.0f} (the hottest range's need x the partitions, the "
        f"service's minimum).{f' {evidence}' if evidence else ''}"
    )
    return Action(
        "lower_throughput", float(target), "RU/s", detail,
        target=float(target), target_unit=target_unit(autoscale), change="throughput", risk=LOWER_RISK,
    )  # fmt: skip


def saturation_action(sustained_normalized_ru: float, pkrange: str, pkranges: int, evidence: str = "") -> Action | None:
    """A range whose sustained (p95 per-minute) normalized RU is at `SATURATION_NORMALIZED_RU` or more: it
    runs at its per-second budget; no lower RU/s (module docstring). Not a 429 finding: 100% may not throttle."""
    if not sustained_normalized_ru >= SATURATION_NORMALIZED_RU:
        return None
    of = f" of {pkranges} partitions (layout)" if pkranges >= 1 else ""
    detail = (
        f"pkrange {pkrange}{of} is saturated: the p95 of its per-minute normalized RU (Azure Monitor, the "
        f"largest per-second share of its budget in each minute) is {sustained_normalized_ru:.0f}%, at or above "
        f"{SATURATION_NORMALIZED_RU:.0f}%; do not lower the RU/s. 100% does not by itself mean 429s (see the "
        f"throttle rate).{f' {evidence}' if evidence else ''}"
    )
    return Action("partition_saturated", round(sustained_normalized_ru, 2), "%", detail)


def merge_action(pkranges: int, partition_ru_s: float, storage_gb: float) -> Action | None:
    """A container whose `pkranges` (at least two) each have under `MERGE_MAX_PARTITION_RU_S` (`partition_ru_s`:
    one region's RU/s, or autoscale max, / partitions) and hold under `MERGE_MAX_PARTITION_GB` on average
    (`storage_gb`: the latest snapshot's total): merge.md's two conditions for a merge (R96). Its value: the
    RU/s per partition. No target: the service picks the partition count."""
    if not (pkranges >= 2 and 0 < partition_ru_s < MERGE_MAX_PARTITION_RU_S and storage_gb >= 0):
        return None
    average = storage_gb / pkranges
    if not average < MERGE_MAX_PARTITION_GB:
        return None
    detail = (
        f"Merge candidate: {pkranges} partitions with {partition_ru_s:,.0f} RU/s each (under "
        f"{MERGE_MAX_PARTITION_RU_S:,.0f}) and {average:,.1f} GB each on average (under {MERGE_MAX_PARTITION_GB:g} GB, "
        "the latest storage snapshot): a merge reduces the partitions in place, so each gets more of the same "
        "RU/s and a hot one throttles later. It does not change the RU/s billed, so it saves nothing by itself "
        "(lowering the RU/s afterwards is a change of its own). Before the command, Partition merge (preview) "
        "must be enabled on the account (its Features page, or az cosmosdb update --enable-partition-merge true): "
        "read the risk first; allow 5-6 hours."
    )
    return Action("merge_candidate", round(partition_ru_s, 1), "RU/s", detail, change="merge", risk=MERGE_RISK)


def burst_action(raised: Action, pkranges: int, partition_ru_s: float, throttled_minutes: int, evidence: str) -> Action:
    """Burst capacity in place of `raised` (a `raise_throughput`): every partition is under `BURST_RATE_RU_S`
    and `burst_absorbs` held for each over the window, so banked idle capacity would have served the 429s
    (R97; not guaranteed). Its money: the raise it avoids (`instead_of`)."""
    bank = BURST_SECONDS * partition_ru_s
    then = f" raise to {raised.target:,.0f} ({raised.target_unit})," if raised.target else " raise the RU/s,"
    detail = (
        f"Enable burst capacity instead of a raise: each of the {pkranges} partitions has {partition_ru_s:,.0f} RU/s "
        f"(under {BURST_RATE_RU_S:,.0f}), and each of the {throttled_minutes} minutes with 429s asked for less than "
        f"the idle capacity its partition banked in the minutes before (up to {BURST_SECONDS:.0f} s x "
        f"{partition_ru_s:,.0f} = {bank:,.0f} RU, spent at up to {BURST_RATE_RU_S:,.0f} RU/s), so burst capacity "
        "would have served them. Not guaranteed: the service serves it as its resources allow; if the 429s stay "
        f"above 5% after it takes effect (15-20 minutes),{then} the raise this avoids. The evidence is per minute: "
        "NormalizedRUConsumption keeps each minute's busiest second, not how many seconds were over, so the bank "
        "is a lower bound and the burst's rate a minute's average; the 429s are the container's (TotalRequests "
        f"has no partition dimension), each minute's given to its partitions at 100%. {evidence}"
    ).rstrip()
    return Action(
        "burst_absorbs", raised.value, raised.unit, detail, change="burst", risk=BURST_RISK, instead_of=raised
    )


def autoscale_action(
    cost_ratio: float, hours: int, autoscale: bool, max_ru_s: float = math.nan, provisioned_ru_s: float = math.nan
) -> Action | None:
    """A manual container whose hours are mostly quiet: autoscale at `max_ru_s` (`autoscale_estimate`'s, the
    max the ratio was computed for) would have billed clearly less than the manual RU/s in force."""
    if autoscale or hours < AUTOSCALE_MIN_HOURS or not cost_ratio < AUTOSCALE_SAVES_BELOW:
        return None
    now = f" {provisioned_ru_s:,.0f}" if provisioned_ru_s > 0 else ""
    if not max_ru_s > 0:
        detail = f"Move to autoscale: over {hours} hours it would have billed about {cost_ratio:.0%} of the manual{now} RU/s."
        return Action("move_to_autoscale", cost_ratio, "ratio", detail, risk=AUTOSCALE_RISK)
    detail = (
        f"Move to autoscale with a max of {max_ru_s:,.0f} RU/s: over {hours} hours it would have billed about "
        f"{cost_ratio:.0%} of the manual{now} RU/s (each hour at 1.5x the RU/s it scales to: what the hottest "
        f"partition's busiest second and the consumed RU/s needed, at least {AUTOSCALE_MIN_FRACTION:.0%} of the "
        f"max). The max keeps the busiest hour's need at {TARGET_PEAK_UTILIZATION:.0%}."
    )
    return Action(
        "move_to_autoscale", cost_ratio, "ratio", detail,
        target=max_ru_s, target_unit=target_unit(True), change="autoscale", risk=AUTOSCALE_RISK,
    )  # fmt: skip


def skew_action(
    hot_share: float, pkranges: int, hot_pkrange: str, source: str, hot_key_share: float = math.nan, hot_key: str = ""
) -> Action | None:
    """The hottest range takes at least `SKEW_FACTOR` times its even share (`pkranges`: the layout's count):
    the partition key is skewed. When one logical key carries most (`HOT_KEY_SHARE`) of that range's RU in
    the logs, a split or redistribution gains nothing (a key lives on one range): point at the key design."""
    if not (pkranges >= 2 and hot_share >= SKEW_FACTOR / pkranges):
        return None
    seen = "in Azure Monitor" if source == "monitor" else "in the replayed queries"
    detail = (
        f"The partition key is skewed: pkrange {hot_pkrange} takes {hot_share:.0%} of the RU {seen}, against an "
        f"even {1 / pkranges:.0%} of {pkranges} ranges. Each range gets an equal share of the RU/s, so it throttles "
        "first; choose a key with more, evenly used values (or a hierarchical key)."
    )
    if hot_key and hot_key_share >= HOT_KEY_SHARE:
        detail += (
            f" One logical key, {hot_key}, carries {hot_key_share:.0%} of that range's RU (diagnostic logs): a split"
            " or a redistribution of RU/s cannot spread one key; change the key design (ruscope advise)."
        )
    return Action("range_share", round(hot_share * 100, 2), "%", detail, change="advise", risk=KEY_CHANGE_RISK)


def fan_out_action(
    query_name: str,
    routing: str,
    pkrange_count: int,
    sql: str,
    *,
    ru: float = math.nan,
    single_partition_ru: float | None = None,
    rate_per_s: float | None = None,
) -> Action | None:
    """A query that reads every partition: add the partition key filter (or TOP when it has none). With its
    `ru` per execution, what one partition would cost (`single_partition_ru`, measured; else Q3's 2.5 RU per
    other partition, `analysis.cost.queries.fan_out_saving`) and its `rate_per_s`: the RU/s the filter saves."""
    if routing != "fan-out" or not pkrange_count >= 2:
        return None
    fix = "add the partition key filter" if TOP.search(sql or "") else "add the partition key filter or TOP"
    detail = f"Query {query_name} fans out to all {pkrange_count} partitions: {fix}."
    saved_ru_s = None
    if not math.isnan(ru):
        saved, how = query_cost.fan_out_saving(ru, pkrange_count, single_partition_ru)
        basis = (
            "measured: its costliest partition's data pages"
            if how == "measured"
            else f"estimate: about {query_cost.PARTITION_MINIMUM_RU} RU for each other partition, ru-cost-model.md Q3"
        )
        detail += f" On one partition it saves {saved:,.2f} of its {ru:,.2f} RU per execution ({basis})"
        saved_ru_s, detail = _at_rate(saved, rate_per_s, detail)
    return Action(
        "query_fans_out", float(pkrange_count), "count", detail,
        target=1.0, target_unit="partitions per execution", change="query", risk=QUERY_RISK, saved_ru_s=saved_ru_s,
    )  # fmt: skip


def composite_index_action(
    query_name: str, sql: str, ru: float, composite: str, rate_per_s: float | None = None
) -> Action | None:
    """An ORDER BY query whose composite index the service reports missing (the replay's index metrics): add
    it; Q11 measured x5 less RU with it (`analysis.cost.queries.COMPOSITE_INDEX_FACTOR`): an estimate."""
    if not composite or not ru > 0 or not ORDER_BY.search(sql or ""):
        return None
    saved = query_cost.composite_index_saving(ru)
    detail = (
        f"Query {query_name}: the service reports a missing composite index for it ({composite}); add it to the "
        f"indexing policy, with the ORDER BY on the filtered property too. Estimate (ru-cost-model.md Q11: 44.28 RU "
        f"without, 8.86 RU with, x{query_cost.COMPOSITE_INDEX_FACTOR:g}): {ru:,.2f} RU per execution to about "
        f"{ru - saved:,.2f}"
    )
    saved_ru_s, detail = _at_rate(saved, rate_per_s, detail)
    return Action(
        "order_by_needs_composite_index", round(ru, 2), "RU", detail,
        target=round(ru - saved, 2), target_unit="RU per execution (estimate)", change="index", risk=INDEX_RISK,
        saved_ru_s=saved_ru_s, composite_index=composite,
    )  # fmt: skip


def _at_rate(saved_ru: float, rate_per_s: float | None, detail: str) -> tuple[float | None, str]:
    """The RU/s a query change saves at the query's rate, and the detail's last words (why none without one)."""
    if rate_per_s is None or math.isnan(rate_per_s):
        return None, f"{detail}; no rate_per_s in the config, so no RU/s or money."
    saved_ru_s = saved_ru * rate_per_s
    return saved_ru_s, f"{detail}; at its {rate_per_s:g} executions/s (rate_per_s), {saved_ru_s:,.2f} RU/s."


def key_storage_action(partition_key: str, size_gb: float, limits: Limits | None = None) -> Action | None:
    """A logical key near 20 GB: writes to it fail at the limit, and only a new key (a migration) helps."""
    limit_gb = (limits or Limits()).logical_partition_max_bytes / GB
    fill = size_gb / limit_gb
    if not fill >= KEY_STORAGE_WARN:
        return None
    detail = (
        f"Logical key {partition_key} holds {size_gb:,.1f} GB of the {limit_gb:g} GB one key may hold; writes to it "
        "fail at the limit: plan a more granular or hierarchical partition key."
    )
    return Action("key_near_limit", round(fill * 100, 1), "%", detail, change="advise", risk=KEY_CHANGE_RISK)


# -- what applying an action risks (plain words) ----------------------------------------------------------
RAISE_RISK = (
    "Costs more every hour, on every partition and region; past partitions x 10,000 RU/s the service splits "
    "partitions (hours), and the lowest RU/s you may later set rises to a hundredth of the highest ever set."
)
LOWER_RISK = (
    "A load above the target, or a partition's busiest second above its new share (target / partitions), is "
    "throttled (429); the minimum you may set stays a hundredth of the highest RU/s ever set."
)
AUTOSCALE_RISK = (
    "Each hour bills the highest RU/s it scaled to (at least 10% of the max) at 1.5x the manual rate: a load "
    "that stays high costs more than manual; a burst above the max is throttled as before."
)
REDISTRIBUTE_RISK = (
    "The throughput policy becomes Custom: the container's RU/s can then only be changed with this command "
    "until reset (--evenly-distribute); the sources keep only their measured need, so at their busiest second "
    "they run at 100% and a load that moves to them is throttled; a raise first (when the plan has one) adds "
    "to the bill. The plan assumes the RU/s are split evenly now: check the ids and RU/s first "
    "(retrieve-partition-throughput --all-partitions); run the calls in order (at most 5 a minute)."
)
MERGE_RISK = (
    "Preview. Once Partition merge is enabled on the account, requests from any Python SDK (ruscope's own "
    "replay uses it), any Go SDK, .NET below 3.27.0, Java below 4.42.0 and JavaScript below 4.3 are blocked and "
    "fail, whether or not a merge runs, until 15-20 minutes after it is disabled; so are Azure Data Factory, "
    "Azure Search and Azure Functions extension 3.x or older. Not for multi-region-write accounts, nor with "
    "point-in-time restore or customer-managed keys. A merge takes hours (allow 5-6, no SLA); changing the "
    "container's settings or raising its RU/s meanwhile cancels it; afterwards the change feed cannot be read "
    "from a start time."
)
BURST_RISK = (
    "Account-wide: it applies to every container whose partitions have under 3,000 RU/s. Not guaranteed: "
    "subject to the service's resources (it may also spend the bank on background maintenance), so a burst it "
    "cannot serve is throttled as now; a load above the RU/s for more than the banked minutes still needs a raise."
)
KEY_CHANGE_RISK = (
    "A partition key cannot be changed in place: a new container and a copy of the data (change feed or a "
    "copy job), and the application's queries rewritten for the new key; the advisor measures candidates first."
)
QUERY_RISK = "None to the account; the application must then send the key (one query per key value it needs)."
INDEX_RISK = (
    "The index is built in the background from the container's own RU/s (queries may read an incomplete index "
    "until it finishes); every write then also maintains it, a few RU more each; `--idx` replaces the whole "
    "policy, so the command adds the entry to the current one."
)


def severity(action: Action) -> str:
    """The finding's severity (`SEVERITY`; a key at `KEY_STORAGE_CRITICAL` of 20 GB is critical)."""
    if action.measure == "key_near_limit" and action.value >= KEY_STORAGE_CRITICAL * 100:
        return "critical"
    return SEVERITY.get(action.measure, "info")
