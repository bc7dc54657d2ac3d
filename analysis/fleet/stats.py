"""Per container, one group of the fleet's columns each: the replay's executions and requests, the one 429 rate,
the throughput and partition load of the container model, storage (the package docstring says how)."""

from __future__ import annotations

import pandas as pd

from analysis import load, throttling
from analysis.fleet.columns import (
    FLEET_KEY,
    HOT_NORMALIZED_RU,
    HOT_WASTE_NOTE,
    LOAD_STATS,
    PARTITION_LOAD_STATS,
    THROTTLE_WINDOW,
)
from analysis.queries import costs as qc
from analysis.scope import in_containers
from cosmoscore.limits import GB, Limits
from cosmoscore.monitor.metrics import NORMALIZED_RU


def execution_stats(executions: pd.DataFrame) -> pd.DataFrame:
    """Per container: logical executions, their RU, mean RU and fan-out share of the successful ones."""
    columns = [*FLEET_KEY, "executions", "total_ru", "mean_ru", "fan_out_share", "last_seen"]
    frame = in_containers(executions)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    logical = qc.account_logical_executions(frame)
    logical = logical.assign(
        ok_ru=logical["total_ru"].where(logical["ok"]),
        fan_out=(logical["routing"] == "fan-out").where(logical["ok"]).astype("float"),
    )
    stats = logical.groupby(FLEET_KEY).agg(
        executions=("run_id", "size"),
        total_ru=("total_ru", "sum"),
        mean_ru=("ok_ru", "mean"),
        fan_out_share=("fan_out", "mean"),
        last_seen=("last_time", "max"),
    )
    return stats.round({"total_ru": 2, "mean_ru": 2, "fan_out_share": 4}).reset_index()[columns]


def throttle_stats(
    metrics: pd.DataFrame,
    requests: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    region: str | None = None,
) -> pd.DataFrame:
    """Per container: the requests and 429 rate of `analysis.throttling.preferred_rate` (Azure Monitor's
    where it counted the container, else the logs', else the replay's), their source (named for `region`:
    `throttling.source_name`) and window."""
    columns = [*FLEET_KEY, "requests", "throttle_rate", "throttle_source", *THROTTLE_WINDOW]
    frame = in_containers(requests)
    keep = [name for name in throttling.METRIC_COLUMNS if name in metrics.columns]
    metrics = in_containers(metrics)[keep].reindex(columns=throttling.METRIC_COLUMNS)
    rate = throttling.preferred_rate(metrics, frame, log_throttles)
    rate = rate.assign(
        throttle_rate=rate["rate"].astype(float).round(4),
        throttle_source=rate["source"].astype(object).map(lambda source: throttling.source_name(source, region)),
        throttle_start=rate["start"],
        throttle_end=rate["end"],
    )
    return rate.astype({"requests": "float64"})[columns]


def request_stats(requests: pd.DataFrame) -> pd.DataFrame:
    """Per container: the hottest pkrange of the replay's data pages' RU, its share, the pkranges seen."""
    columns = [*FLEET_KEY, "pkranges_seen", "hot_pkrange", "hot_pkrange_share"]
    frame = in_containers(requests)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    pages = frame[frame["request_kind"].eq("page").fillna(False) & frame["pkrange_id"].fillna("").ne("")]
    by_pkrange = pages.groupby([*FLEET_KEY, "pkrange_id"])["request_charge"].sum().astype(float).reset_index()
    by_pkrange = by_pkrange.sort_values("request_charge", ascending=False, kind="stable")
    per_container = by_pkrange.groupby(FLEET_KEY)
    hot = per_container.agg(
        pkranges_seen=("pkrange_id", "size"), hot_pkrange=("pkrange_id", "first"), hot=("request_charge", "first")
    )
    total = per_container["request_charge"].sum()
    hot["hot_pkrange_share"] = (hot.pop("hot") / total.where(total > 0)).round(4)
    return hot.reset_index().reindex(columns=columns)


def throughput_stats(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """Per container with Azure Monitor rows: provisioned and p95 consumed RU/s (the workload's: the replay's
    RU subtracted), waste, and the workload's hot-partition load (`analysis.load`: peak minute, sustained,
    ruscope's own minutes left out); `model`: `analysis.load.build` of these frames, else built here."""
    frame = in_containers(metrics)
    model = model if model is not None else load.build(frame, requests, partitions)
    stats = pd.DataFrame(columns=FLEET_KEY)
    parts = (
        load.latest_provisioned(frame),
        model.consumed_summary[[*FLEET_KEY, "p95_ru_s", "own_ru_subtracted"]],
        partition_load(frame, model.load),
    )
    for part in parts:
        stats = stats.merge(part, on=FLEET_KEY, how="outer")
    provisioned = stats["provisioned_ru_s"].astype(float)
    waste = (1 - stats["p95_ru_s"].astype(float) / provisioned.where(provisioned > 0)).round(4)
    hot = stats["sustained_normalized_ru"].astype(float).ge(HOT_NORMALIZED_RU)
    stats["waste"] = waste.where(~hot)
    stats["waste_note"] = pd.Series("", index=stats.index, dtype=object).where(~hot, HOT_WASTE_NOTE)
    return stats[[*FLEET_KEY, "provisioned_ru_s", "p95_ru_s", "waste", "waste_note", *LOAD_STATS]]


def storage_stats(partitions: pd.DataFrame, limits: Limits | None = None) -> pd.DataFrame:
    """Per container with partition rows: its largest physical partition (latest snapshot) and the headroom."""
    columns = [*FLEET_KEY, "largest_partition_gb", "storage_headroom"]
    frame = in_containers(partitions).dropna(subset=["time", "size_kb"])
    if frame.empty:
        return pd.DataFrame(columns=columns)
    latest = frame[frame["time"].eq(frame.groupby(FLEET_KEY)["time"].transform("max"))]
    largest = latest.groupby(FLEET_KEY)["size_kb"].max().astype(float) * 1024
    limit = (limits or Limits()).physical_partition_max_bytes
    stats = pd.DataFrame({"largest_partition_gb": (largest / GB).round(3), "storage_headroom": (1 - largest / limit)})
    return stats.round({"storage_headroom": 4}).reset_index()[columns]


def p95_consumed(metrics: pd.DataFrame, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """The 95th percentile of the workload's TotalRequestUnits per second (an interval's total less the
    replay's RU in it, over its grain: `analysis.load.consumed_intervals`), and the replay's RU subtracted."""
    consumed = load.summarize_consumed(load.consumed_intervals(metrics, requests))
    return consumed[[*FLEET_KEY, "p95_ru_s", "own_ru_subtracted"]]


def partition_load(metrics: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The workload's per-partition load (`summary`: `analysis.load.summarize_partition_load` of `metrics`):
    `max_normalized_ru` (the peak minute of the rows split by PartitionKeyRangeId; of the unsplit rows where a
    container has none), `sustained_normalized_ru` and its range and window, and the own minutes left out."""
    unsplit = _max_normalized(metrics[metrics["pkrange_id"].isna()])  # a store collected without the split
    unsplit = unsplit[~unsplit.set_index(FLEET_KEY).index.isin(summary.set_index(FLEET_KEY).index)]
    return pd.concat([summary, unsplit], ignore_index=True)[[*FLEET_KEY, *PARTITION_LOAD_STATS]]


def _max_normalized(metrics: pd.DataFrame) -> pd.DataFrame:
    """The largest NormalizedRUConsumption (percent) of the rows split by PartitionKeyRangeId (`pkrange_id`),
    else of the unsplit rows: Azure Monitor's figure as it is, ruscope's own minutes in (a shared offer's)."""
    rows = metrics[metrics["metric"].eq(NORMALIZED_RU).fillna(False)].dropna(subset=["value"])
    by_pkrange = rows.dropna(subset=["pkrange_id"])
    rows = by_pkrange if not by_pkrange.empty else rows
    peak = rows.groupby(FLEET_KEY)["value"].max().astype(float).reset_index()
    return peak.rename(columns={"value": "max_normalized_ru"})[[*FLEET_KEY, "max_normalized_ru"]]
