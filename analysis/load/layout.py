"""Each container's partition layout and the throughput in force: how many physical partitions it has (the
latest storage snapshot, else the ranges metrics reported in their latest interval) and its provisioned RU/s over
time, from which every partition's budget is derived (`analysis.load.minutes`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import joins, regions
from analysis.load.frames import KEY, metric_rows, utc
from analysis.scope import in_containers
from cosmoscore.monitor.metrics import AUTOSCALE_MAX, NORMALIZED_RU, PROVISIONED

PROVISIONED_METRICS = (AUTOSCALE_MAX, PROVISIONED)  # preferred first
STORAGE_LAYOUT = "storage snapshot"
METRICS_LAYOUT = "metrics' latest minute"
LAYOUT_COLUMNS = [*KEY, "partitions", "layout_source"]


def partition_layout(
    partitions: pd.DataFrame | None, metrics: pd.DataFrame, *, reported: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container: its physical partitions now (`LAYOUT_COLUMNS`): the latest storage snapshot's pkranges,
    else the ranges that reported NormalizedRUConsumption in the latest interval (the most of any region);
    `layout_source` says which. `reported`: that count when the caller has it (KEY, partitions: from span
    cells, whose metrics hold only some days' points)."""
    snapshot = snapshot_counts(partitions)
    latest = snapshot[snapshot["time"].eq(snapshot.groupby(KEY)["time"].transform("max"))]
    stored = latest.groupby(KEY)["partitions"].max().reset_index().assign(layout_source=STORAGE_LAYOUT)
    reported = (_reported_counts(metrics) if reported is None else reported).assign(layout_source=METRICS_LAYOUT)
    both = pd.concat([stored, reported], ignore_index=True).drop_duplicates(subset=KEY, keep="first")
    return both.astype({"partitions": "float64"}).reset_index(drop=True)[LAYOUT_COLUMNS]


def latest_provisioned(metrics: pd.DataFrame) -> pd.DataFrame:
    """The throughput in force: the latest AutoscaleMaxThroughput per container, else its latest
    ProvisionedThroughput (`provisioned_ru_s`, `analysis.fleet`'s): each region's
    latest, summed over the regions (an account reserves the RU/s in each: `analysis.regions`); a container's
    rows that combine the regions (stored before the split) count only where it has no per-region row."""
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    found = []
    for metric in PROVISIONED_METRICS:
        rows = per_region_else_combined(metrics[metrics["metric"].eq(metric).fillna(False)])
        per_region = [*KEY, "_region"]
        latest = rows[rows["time"].eq(rows.groupby(per_region)["time"].transform("max"))]
        total = latest.groupby(per_region)["value"].max().astype(float).groupby(KEY).sum().reset_index()
        if metric in regions.UNREGIONED_METRICS:  # one setting that holds in every region of the account
            total["value"] = total["value"] * total["account"].map(counts).fillna(1).astype(float)
        found.append(total)
    values = pd.concat(found, ignore_index=True).drop_duplicates(subset=KEY, keep="first")
    return values.rename(columns={"value": "provisioned_ru_s"})[[*KEY, "provisioned_ru_s"]]


def per_region_else_combined(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` (one metric's, with a time and a value) with `_region` ("" for a combined row), less a
    container's combined rows when it has rows per region."""
    rows = rows.dropna(subset=["time", "value"])
    region = rows["region"].astype(object).fillna("") if "region" in rows.columns else ""
    rows = rows.assign(_region=region)
    split = rows["_region"].ne("").groupby([rows[name] for name in KEY]).transform("any")
    return rows[rows["_region"].ne("") | ~split.reindex(rows.index).fillna(False).astype(bool)]


def provisioned_timeline(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container and time: one region's provisioned RU/s (the largest of the regions' rows at that time),
    from AutoscaleMaxThroughput where the container reports it, else ProvisionedThroughput."""
    columns = [*KEY, "time", "provisioned_ru_s"]
    found = []
    for metric in PROVISIONED_METRICS:
        rows = metric_rows(metrics, metric).dropna(subset=["time"])
        per_time = rows.groupby([*KEY, "time"])["value"].max().astype(float).reset_index()
        found.append(per_time.rename(columns={"value": "provisioned_ru_s"}))
    if not any(len(part) for part in found):
        return pd.DataFrame(columns=columns)
    autoscale, manual = found
    manual = manual.merge(autoscale[KEY].drop_duplicates(), on=KEY, how="left", indicator=True)
    manual = manual[manual.pop("_merge").eq("left_only")]
    out = pd.concat([autoscale, manual], ignore_index=True)
    return out.assign(**{name: out[name].astype(str) for name in KEY}, time=utc(out["time"]))[columns]


def snapshot_counts(partitions: pd.DataFrame | None) -> pd.DataFrame:
    """Per container and storage snapshot time: how many pkranges it listed."""
    columns = [*KEY, "time", "partitions"]
    if partitions is None or partitions.empty or "pkrange_id" not in partitions:
        return pd.DataFrame(columns=columns)
    rows = in_containers(partitions).dropna(subset=["time", "pkrange_id"])
    counts = rows.groupby(KEY + ["time"])["pkrange_id"].nunique().astype(float).rename("partitions").reset_index()
    return counts.assign(**{name: counts[name].astype(str) for name in KEY}, time=utc(counts["time"]))[columns]


def _reported_counts(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container: how many pkranges reported NormalizedRUConsumption in its latest interval (the most of
    any region: a range is one region's)."""
    rows = metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id", "time"])
    if rows.empty:
        return pd.DataFrame(columns=[*KEY, "partitions"])
    rows = rows.assign(region=rows["region"].astype(object).fillna("") if "region" in rows.columns else "")
    fine = joins.group_codes(rows, [*KEY, "pkrange_id", "region"])
    return reported_of(
        joins.coarser(fine, [*KEY, "region"]),
        joins.coarser(fine, [*KEY, "pkrange_id"]),
        joins.times_ns(rows["time"]),
        joins.coarser(fine, KEY),
    )


def reported_of(regional: joins.Codes, ranges: joins.Codes, times: np.ndarray, containers: joins.Codes) -> pd.DataFrame:
    """`_reported_counts` of NormalizedRUConsumption rows already numbered by region, range and container."""
    latest = pd.Series(times).groupby(regional.codes).max().to_numpy()
    at_latest = times == latest[regional.codes]
    pairs = pd.DataFrame({"regional": regional.codes[at_latest], "range": ranges.codes[at_latest]}).drop_duplicates()
    per_region = np.bincount(pairs["regional"].to_numpy(), minlength=regional.size)
    region_container = pd.Series(containers.codes).groupby(regional.codes).first().to_numpy()
    most = pd.Series(per_region).groupby(region_container).max()
    keys = containers.keys.iloc[most.index.to_numpy()]
    counts = pd.DataFrame({name: keys[name].astype(str).to_numpy() for name in KEY})
    return counts.assign(partitions=most.to_numpy(dtype=float))
