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

**Share, saturation, throttling are three findings.** `skewed_key` (share: a range's share of the RU against
an even 1/N), `partition_saturated` (saturation: the hottest range's *sustained* normalized RU near its
budget) and `raise_throughput` / the hot partition (throttling: 429s observed). NormalizedRUConsumption is the
largest per-second share of a partition's budget in the minute (P11; azure-monitor.md R10): one busy second
makes a minute 100%, so a single minute proves little. "Sustained" is the p95 over the window of a range's
per-minute NormalizedRUConsumption at `SATURATION_NORMALIZED_RU` or more (5% of the minutes above it: more
than a burst). **A lower target holds against the partitions:** never `lower_throughput` while a range is
saturated, and never below what the hottest range needs times the partition count (P4: every range gets
provisioned / N, the hottest used `hot_normalized_ru`% of it at its busiest second, so it needs that share
of the current per-partition budget: need x N = hot% x provisioned, filled to 80% as any target), nor below the service's minimum.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from analysis import fleet, overview
from cosmoscore.limits import GB, Limits

# -- thresholds of the rules, with why ------------------------------------------------------------------
THROTTLE_HEALTHY_MAX = overview.THROTTLE_HEALTHY_MAX  # ru-cost-model.md P12: 1-5% of requests 429 is healthy
THROTTLE_QUIET_MAX = 0.01  # the band's low end: lowering RU/s is advised only below it
LOWER_PEAK_UTILIZATION = 0.5  # even the busiest interval used under half the provisioned RU/s: paying 2x
TARGET_PEAK_UTILIZATION = 0.8  # a suggested rate the peak fills to 80%: a per-minute average hides bursts
RU_STEP = {False: 100, True: 1000}  # concepts-limits: manual RU/s in steps of 100, autoscale max of 1,000
AUTOSCALE_MIN_MAX = 1000  # ru-cost-model.md P9: the smallest autoscale max RU/s
# learn "how-to-choose-offer": autoscale bills each hour at the highest RU/s it scaled to (at least 10% of
# the max, P10) at 1.5x the manual rate per RU/s; manual must be set at the peak to avoid 429s.
AUTOSCALE_PRICE_FACTOR = 1.5
AUTOSCALE_MIN_FRACTION = 0.1
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
TOP = re.compile(r"\bTOP\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Action:
    """A recommendation: the rule (`measure`), the number that fired it and what to do, in plain words."""

    measure: str
    value: float
    unit: str
    detail: str


def hot_partition_action(
    throttle_rate: float,
    hot_normalized_ru: float,
    p95_utilization: float,
    hot_pkrange: str,
    pkranges: int,
    hot_key: str | None = None,
) -> Action | None:
    """More than the healthy 1-5% of requests throttled while the hottest range is at its share and the
    container is mostly idle: the 429s come from one hot partition, so fix the key (module docstring).
    `hot_key`: the logical key with the most RU on that range in the diagnostic logs, named when known."""
    hot = throttle_rate > THROTTLE_HEALTHY_MAX and hot_normalized_ru >= fleet.HOT_NORMALIZED_RU
    if not (hot and p95_utilization < LOWER_PEAK_UTILIZATION):
        return None
    split = f"split evenly over its {pkranges} partitions" if pkranges >= 2 else "split evenly over its partitions"
    detail = (
        f"The 429s ({throttle_rate:.1%} of requests) come from one hot partition: pkrange {hot_pkrange} reached "
        f"{hot_normalized_ru:.0f}% of its share of the RU/s while the container used {p95_utilization:.1%} of its "
        f"provisioned RU/s (p95). The RU/s are {split}, so raising them mostly pays for idle partitions: "
        f"spread the hot key{f' {hot_key}' if hot_key else ''}'s load (a key with more, evenly used values, a "
        "synthetic suffix or a hierarchical key)."
    )
    return Action("skewed_key", round(hot_normalized_ru, 2), "%", detail)


def raise_action(throttle_rate: float, skewed: bool) -> Action | None:
    """More than the healthy 1-5% of requests throttled: raise RU/s (or first fix a skewed key)."""
    if not throttle_rate > THROTTLE_HEALTHY_MAX:
        return None
    detail = f"Raise the RU/s: {throttle_rate:.1%} of requests were throttled (429), above the 1-5% the service documents as healthy."
    if skewed:
        detail += " One partition takes most of the load, so fixing the key (below) may cost less than more RU/s."
    return Action("raise_throughput", round(throttle_rate * 100, 2), "%", detail)


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
    return Action("lower_throughput", float(target), "RU/s", detail)


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


def autoscale_cost_ratio(per_second: pd.Series) -> tuple[float, int]:
    """What autoscale with its max at the peak would cost against manual RU/s at the peak, from a series of
    consumed RU/s indexed by time: 1.5 x the mean over hours of max(10%, the hour's peak / the peak); and
    the number of hours. NaN when nothing was consumed."""
    hourly = per_second.groupby(pd.DatetimeIndex(per_second.index).floor("h")).max()
    peak = float(hourly.max()) if not hourly.empty else 0.0
    if not peak > 0:
        return math.nan, len(hourly)
    billed = (hourly / peak).clip(lower=AUTOSCALE_MIN_FRACTION).mean()
    return round(AUTOSCALE_PRICE_FACTOR * float(billed), 4), len(hourly)


def autoscale_action(cost_ratio: float, hours: int, autoscale: bool) -> Action | None:
    """A manual container whose hours are mostly quiet: autoscale would bill less than manual at the peak."""
    if autoscale or hours < AUTOSCALE_MIN_HOURS or not cost_ratio < AUTOSCALE_SAVES_BELOW:
        return None
    detail = (
        f"Move to autoscale (max at the peak): the load is spiky, and over {hours} hours autoscale would have "
        f"cost about {cost_ratio:.0%} of manual RU/s set high enough for the peak."
    )
    return Action("move_to_autoscale", cost_ratio, "ratio", detail)


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
    return Action("range_share", round(hot_share * 100, 2), "%", detail)


def fan_out_action(query_name: str, routing: str, pkrange_count: int, sql: str) -> Action | None:
    """A query that reads every partition: add the partition key filter (or TOP when it has none)."""
    if routing != "fan-out" or not pkrange_count >= 2:
        return None
    fix = "add the partition key filter" if TOP.search(sql or "") else "add the partition key filter or TOP"
    detail = f"Query {query_name} fans out to all {pkrange_count} partitions: {fix}."
    return Action("query_fans_out", float(pkrange_count), "count", detail)


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
    return Action("key_near_limit", round(fill * 100, 1), "%", detail)
