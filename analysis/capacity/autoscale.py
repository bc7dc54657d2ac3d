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

from analysis import load, regions, throttling
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


NEED_COLUMNS = [*KEY, "time", "need", "manual", "denied_ru_s"]


def interval_needs(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """Per container and interval, one region's figures (`NEED_COLUMNS`): `need`, the RU/s the container
    needed, the workload's consumed RU/s (the replay's RU out, `analysis.load`) over the regions, or what the
    hottest current range's busiest second needed, its NormalizedRUConsumption x the RU/s in force (each range
    gets RU/s / N, P4: a range at x% needs x% of the RU/s), whichever is more, plus what the 429s were denied
    (`denied_ru_s`, `denied_intervals`: B13's 429/s x average RU per request, added to the consumed RU/s, and
    to the hottest range's where it ran at 100%, there x N, the RU/s that give one range that much); `manual`,
    the RU/s in force then (from the same budgets, else the latest). What autoscale would scale to, and what
    any offer must hold. `model`: the caller's `analysis.load.build` of these frames, else built here."""
    model = model if model is not None else load.build(metrics, requests, partitions)
    consumed = model.consumed
    if consumed.empty:
        return pd.DataFrame(columns=NEED_COLUMNS)
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    per_region = consumed["account"].map(counts).fillna(1).clip(lower=1)
    denied = consumed[[*KEY, "time"]].merge(denied_intervals(metrics, consumed), on=[*KEY, "time"], how="left")
    denied_ru_s = denied["denied_ru_s"].astype(float).fillna(0.0).to_numpy() / per_region.to_numpy()
    consumed = consumed.assign(need=consumed["workload_ru_s"] / per_region + denied_ru_s, denied_ru_s=denied_ru_s)
    minutes = load.workload_minutes(model.require_minutes())
    minutes = minutes.merge(consumed[[*KEY, "time", "denied_ru_s"]], on=[*KEY, "time"], how="left")
    saturated = minutes["normalized_ru"].astype(float).ge(100.0)
    minutes = minutes.assign(
        need=(
            minutes["normalized_ru"] / 100 * minutes["budget_ru_s"]
            + minutes["denied_ru_s"].fillna(0.0).where(saturated, 0.0)
        )
        * minutes["partitions"],
        manual=minutes["budget_ru_s"] * minutes["partitions"],
    ).dropna(subset=["need", "manual"])
    by_minute = minutes.groupby([*KEY, "time"])[["need", "manual"]].max().reset_index()
    both = pd.concat([consumed[[*KEY, "time", "need", "denied_ru_s"]], by_minute], ignore_index=True)
    out = (
        both.groupby([*KEY, "time"])
        .agg(need=("need", "max"), manual=("manual", "max"), denied_ru_s=("denied_ru_s", "max"))
        .reset_index()
    )
    in_force = load.latest_provisioned(metrics)
    latest = in_force.assign(
        latest=in_force["provisioned_ru_s"] / in_force["account"].map(counts).fillna(1).clip(lower=1)
    )[[*KEY, "latest"]]
    out = out.merge(latest, on=KEY, how="left").sort_values([*KEY, "time"], kind="stable")
    # an interval without a partition's point takes the RU/s in force around it (a raise is not back-dated),
    # and only a container without any the latest
    around = out.groupby(KEY)["manual"].transform(lambda manual: manual.astype(float).ffill().bfill())
    out["manual"] = around.astype(float).fillna(out.pop("latest").astype(float))
    out["denied_ru_s"] = out["denied_ru_s"].astype(float).fillna(0.0)
    return out.astype({"need": float, "manual": float})[NEED_COLUMNS]


DENIED_COLUMNS = [*KEY, "time", "throttled", "throttled_per_s", "ru_per_request", "denied_ru_s"]


def denied_intervals(metrics: pd.DataFrame, consumed: pd.DataFrame) -> pd.DataFrame:
    """Per container and interval with 429s in Azure Monitor's TotalRequests: the 429s and the RU/s they were
    denied, B13 (Microsoft's redistribution page): 429 responses per second x the average RU charge per
    request, the interval's TotalRequestUnits over its requests answered otherwise (a 429 is charged
    nothing); `throttled_per_s` and `ru_per_request` are the two terms (the planner reads the busiest
    interval's 429/s). All regions' (the caller divides). Monitor's counts only: the logs' and the replay's see a part
    of the traffic."""
    counts = throttling.request_counts(metrics, pd.DataFrame(columns=throttling.REQUEST_COLUMNS))
    counts = counts[counts["source"].eq(throttling.MONITOR)]
    if counts.empty:
        return pd.DataFrame(columns=DENIED_COLUMNS)
    counts = counts.assign(time=pd.to_datetime(counts["time"], utc=True).astype("datetime64[ns, UTC]"))
    per = counts.groupby([*KEY, "time"])[["requests", "throttled"]].sum().reset_index()
    per = per[per["throttled"] > 0].merge(consumed[[*KEY, "time", "grain_s", "ru_s"]], on=[*KEY, "time"], how="inner")
    served = (per["requests"] - per["throttled"]).where(per["requests"] > per["throttled"])
    per["throttled_per_s"] = per["throttled"] / per["grain_s"]
    per["ru_per_request"] = per["ru_s"] * per["grain_s"] / served
    per["denied_ru_s"] = (per["throttled_per_s"] * per["ru_per_request"]).fillna(0.0).round(4)
    return per[DENIED_COLUMNS]
