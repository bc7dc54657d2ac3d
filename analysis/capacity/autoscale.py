"""What autoscale would have billed: each container's measured hours re-billed at the autoscale max it would
need, against the manual RU/s in force (`autoscale_ratios`, the report's `autoscale_cost_ratio` and the
`move_to_autoscale` finding's target). Pure functions over the store's `metrics`, `requests` and `partitions`
(the per-partition load model, `analysis.load`); the billing rule is learn "how-to-choose-offer" and
"provision-throughput-autoscale" (ru-cost-model.md P10): each hour bills the highest RU/s autoscale scaled to,
at least 10% of the max, at 1.5x the manual rate per RU/s."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import load, regions
from analysis.capacity.rules import (
    AUTOSCALE_MIN_MAX,
    RU_STEP,
    TARGET_PEAK_UTILIZATION,
)
from cosmoscore import billing
from store.records import SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)


@dataclass(frozen=True, slots=True)
class AutoscaleEstimate:
    """What autoscale would have billed against the manual RU/s in force over the measured hours (`ratio`,
    `hours`), at the max it would need (`max_ru_s`)."""

    ratio: float
    hours: int
    max_ru_s: float


def autoscale_estimate(need: pd.Series, manual: pd.Series) -> AutoscaleEstimate:
    """Autoscale against manual, hour by hour (P10): `need` is the RU/s the container needed each interval
    (indexed by time: its workload's consumed RU/s, or what its hottest partition's busiest second needed,
    whichever is more: autoscale scales all partitions together, so the hottest decides), `manual` the
    provisioned RU/s in force then. The max: the busiest hour's need at `TARGET_PEAK_UTILIZATION` (as a
    lowered target keeps the hottest range's need), in steps of 1,000, at least 1,000. Each hour bills 1.5x
    the RU/s it scaled to, its need between 10% of the max and the max; manual bills its RU/s. NaN without a
    need or a manual RU/s."""
    hour = pd.DatetimeIndex(need.index).floor("h")
    hourly = need.groupby(hour).max()
    paid = manual.groupby(pd.DatetimeIndex(manual.index).floor("h")).max().reindex(hourly.index)
    peak = float(hourly.max()) if not hourly.empty else 0.0
    if not peak > 0 or not float(paid.sum()) > 0:
        return AutoscaleEstimate(math.nan, len(hourly), math.nan)
    step = RU_STEP[True]
    top = float(max(AUTOSCALE_MIN_MAX, math.ceil(peak / TARGET_PEAK_UTILIZATION / step) * step))
    # billed as Azure bills it (`cosmoscore.billing`: whole 100 RU/s units, the 10% floor, 1.5x), so the ratio
    # is the cost section's autoscale bill over its manual one, whatever the prices
    rates = billing.Prices()
    billed = billing.hours_cost(billing.autoscale_hour(top, float(v), rates) for v in hourly.to_list())
    paid_for = billing.hours_cost(billing.manual_hour(float(v), rates) for v in paid.dropna().to_list())
    return AutoscaleEstimate(round(billed / paid_for, 4), len(hourly), top)


AUTOSCALE_COLUMNS = [*KEY, "autoscale_cost_ratio", "autoscale_hours", "autoscale_max"]
NEED_COLUMNS = [*KEY, "time", "need", "manual"]


def interval_needs(
    metrics: pd.DataFrame, requests: pd.DataFrame | None = None, partitions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container and interval, one region's figures (`NEED_COLUMNS`): `need`, the RU/s the container
    needed, the workload's consumed RU/s (the replay's RU out, `analysis.load`) over the regions, or what the
    hottest current range's busiest second needed, its NormalizedRUConsumption x the RU/s in force (each range
    gets RU/s / N, P4: a range at x% needs x% of the RU/s), whichever is more; `manual`, the RU/s in force
    then (from the same budgets, else the latest). What autoscale would scale to, and what any offer must hold."""
    consumed = load.consumed_intervals(metrics, requests)
    if consumed.empty:
        return pd.DataFrame(columns=NEED_COLUMNS)
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    consumed = consumed.assign(need=consumed["workload_ru_s"] / consumed["account"].map(counts).fillna(1).clip(lower=1))
    minutes = load.workload_minutes(load.partition_minutes(metrics, requests, partitions))
    minutes = minutes.assign(
        need=minutes["normalized_ru"] / 100 * minutes["budget_ru_s"] * minutes["partitions"],
        manual=minutes["budget_ru_s"] * minutes["partitions"],
    ).dropna(subset=["need", "manual"])
    by_minute = minutes.groupby([*KEY, "time"])[["need", "manual"]].max().reset_index()
    both = pd.concat([consumed[[*KEY, "time", "need"]], by_minute], ignore_index=True)
    out = both.groupby([*KEY, "time"]).agg(need=("need", "max"), manual=("manual", "max")).reset_index()
    in_force = load.latest_provisioned(metrics)
    per_region = in_force.assign(
        latest=in_force["provisioned_ru_s"] / in_force["account"].map(counts).fillna(1).clip(lower=1)
    )[[*KEY, "latest"]]
    out = out.merge(per_region, on=KEY, how="left").sort_values([*KEY, "time"], kind="stable")
    # an interval without a partition's point takes the RU/s in force around it (a raise is not back-dated),
    # and only a container without any the latest
    around = out.groupby(KEY)["manual"].transform(lambda manual: manual.astype(float).ffill().bfill())
    out["manual"] = around.astype(float).fillna(out.pop("latest").astype(float))
    return out.astype({"need": float, "manual": float})[NEED_COLUMNS]


def autoscale_ratios(needs: pd.DataFrame) -> pd.DataFrame:
    """Per container of `needs` (`interval_needs`): `autoscale_estimate` over its intervals' needs and manual
    RU/s in force (`AUTOSCALE_COLUMNS`), one region's figures."""
    rows = []
    for key, mine in needs.groupby(KEY):
        series = mine.set_index("time")
        found = autoscale_estimate(series["need"], series["manual"])
        rows.append((*key, found.ratio, found.hours, found.max_ru_s))
    return pd.DataFrame(rows, columns=AUTOSCALE_COLUMNS)
