"""The capacity report's sections as long rows (`analysis.capacity.review.REPORT_COLUMNS`): one function per
section (`container_rows`, `partition_rows`, `key_rows`, `query_rows`, `offer_rows`) turning the figures the
report computed into its rows; `analysis.capacity.review` documents every measure and assembles them."""

from __future__ import annotations

import pandas as pd

from analysis import fleet, overview, regions
from analysis.capacity.actions import COLUMNS as REPORT_COLUMNS
from analysis.cost import queries as query_cost
from analysis.hot import keys as hot_keys
from analysis.scope import in_containers, window_text
from analysis.units import size_text
from cosmoscore.limits import GB, Limits
from cosmoscore.monitor.metrics import NORMALIZED_RU
from store.records import SHARED_OFFER_CONTAINER

KEY = overview.KEY
TOP_KEYS = 5

# The store columns the report reads, per table (`ruscope report` reads only these), in the order of
# `build_capacity_report`'s positional frames: every caller passes them as `*(frames[t] for t in REPORT_TABLES)`.
SOURCES = {"monitor": "Azure Monitor", "replay": "replay"}
CONTAINER_MEASURES = [  # (column, unit, subject column, detail column)
    ("ru_consumed", "RU", None, "ru_source"),
    ("provisioned_ru_s", "RU/s", None, "throughput_kind"),
    ("peak_interval_ru_s", "RU/s", None, "peak_detail"),
    ("p95_ru_s", "RU/s", None, "p95_detail"),
    ("p95_utilization", "share", None, None),  # "share": written in % (`_long`)
    ("hot_normalized_ru", "%", "hot_peak_pkrange", None),
    ("hot_range_share", "share", "hot_pkrange", "skew_source"),
    ("throttle_rate", "share", None, "throttle_detail"),
    ("largest_partition_gb", "GB", None, "largest_partition_text"),
    ("storage_headroom", "share", None, None),
    ("largest_key_gb", "GB", None, "largest_key_text"),
    ("key_headroom", "share", None, None),
    ("autoscale_cost_ratio", "ratio", None, "autoscale_hours"),
    ("replay_ru", "RU", None, "replay_detail"),
]
PEAK_DETAIL = (
    "RU/s, the average of the busiest metrics interval (Azure Monitor TotalRequestUnits over its grain: a"
    " per-minute average at PT1M), not a per-second peak"
)
P95_DETAIL = "RU/s, the p95 of the per-interval averages (Azure Monitor TotalRequestUnits over its grain)"
P95_DETAIL = "RU/s, the p95 of the per-interval averages (Azure Monitor TotalRequestUnits over its grain)"
KEY_PEAK_DETAIL = f"RU in the busiest second (diagnostic logs, {hot_keys.PEAK_WINDOW} bins)"


def _per_region_peaks(normalized: pd.DataFrame) -> pd.DataFrame:
    """The largest NormalizedRUConsumption per pkrange and region (a range is one region's), with `region` as
    the report rows' detail: "region X" where the account has several, else "" (as a one-region report was)."""
    region = normalized["region"].astype(object).fillna("") if "region" in normalized.columns else ""
    rows = normalized.assign(region=region)
    peaks = rows.groupby([*KEY, "pkrange_id", "region"])["value"].max().rename("max_normalized_ru").reset_index()
    return _region_named(peaks, normalized)


def _range_peaks(ranges: pd.DataFrame) -> pd.DataFrame:
    """`_per_region_peaks` of the ranges' `reported_max` (every point's largest: the same figure, counted once
    in the model's spans rather than grouped again over the points)."""
    peaks = ranges.dropna(subset=["reported_max"]).rename(columns={"reported_max": "max_normalized_ru"})
    peaks = peaks.sort_values([*KEY, "pkrange_id", "region"], kind="stable").reset_index(drop=True)
    counted = ranges.assign(region=ranges["region"].where(ranges["region"].ne("")))  # "": rows combining them
    return _region_named(peaks[[*KEY, "pkrange_id", "region", "max_normalized_ru"]], counted)


def _region_named(peaks: pd.DataFrame, counted: pd.DataFrame) -> pd.DataFrame:
    """`peaks` with `region` as the report rows' detail: "region X" where the account has several regions in
    `counted` (`analysis.regions.region_counts`), else ""."""
    several = peaks["account"].map(regions.region_counts(counted).set_index("account")["regions"]).gt(1)
    named = peaks["region"].map(lambda r: f"region {r}" if r else "")
    return peaks.assign(region=named.where(several, ""))


def _long(
    frame: pd.DataFrame, section: str, column: str, unit: str, *, subject: str | None = None, detail: str | None = None
) -> pd.DataFrame:
    """One report row per frame row with a `column` value: `measure` named after the column; a `share`
    (0..1) is written in percent."""
    rows = frame[frame[column].notna()] if column in frame else frame.iloc[0:0]
    scale, unit = (100.0, "%") if unit == "share" else (1.0, unit)
    return pd.DataFrame(
        {
            "section": section,
            **{name: rows[name].astype(str) for name in KEY},
            "subject": rows[subject].fillna("").astype(str) if subject else "",
            "measure": column,
            "value": rows[column].astype(float) * scale,
            "unit": unit,
            "detail": rows[detail].fillna("").astype(str) if detail else "",
        },
        index=rows.index,
    )


def offer_rows(containers: pd.DataFrame, metrics: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
    """The `offer` section: each shared-throughput database's throughput unit and its partitions' peaks."""
    units = fleet.summarize_throughput_units(containers, metrics, partitions)
    units = units[units["throughput_unit"].eq(fleet.SHARED_UNIT)]
    if units.empty:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    provisioned = units["provisioned_ru_s"].astype(float)
    units = units.assign(
        count=[float(len(str(names).split(", "))) for names in units["containers"]],
        p95_utilization=(units["p95_ru_s"].astype(float) / provisioned.where(provisioned > 0)).round(4),
    )
    parts = [
        _long(
            units.rename(columns={"count": "containers", "containers": "names"}),
            "offer",
            "containers",
            "count",
            detail="names",
        )
    ]
    parts += [
        _long(units, "offer", column, unit)
        for column, unit in (("provisioned_ru_s", "RU/s"), ("p95_ru_s", "RU/s"), ("p95_utilization", "share"))
    ]
    parts.append(_long(units, "offer", "max_normalized_ru", "%"))
    offered = metrics.dropna(subset=KEY)
    offered = offered[offered["container"].astype(str).eq(SHARED_OFFER_CONTAINER)]
    offered = offered[offered["metric"].eq(NORMALIZED_RU).fillna(False)].dropna(subset=["pkrange_id", "value"])
    peaks = _per_region_peaks(offered.merge(units[KEY], on=KEY))
    parts.append(_long(peaks, "offer", "max_normalized_ru", "%", subject="pkrange_id", detail="region"))
    return pd.concat(parts, ignore_index=True)


def container_rows(containers: pd.DataFrame) -> pd.DataFrame:
    """The `container` section: one row per measure of `CONTAINER_MEASURES` that has a number."""
    named = containers.rename(columns={"peak_ru_s": "peak_interval_ru_s"}).assign(
        peak_detail=PEAK_DETAIL,
        p95_detail=P95_DETAIL,
        ru_source=containers["ru_source"].map(SOURCES),
        skew_source=containers["skew_source"].map(SOURCES),
        throttle_detail=[
            f"{source}, {window_text(start, end)}" if pd.notna(start) else source
            for source, start, end in zip(
                containers["throttle_source"], containers["throttle_start"], containers["throttle_end"]
            )
        ],
        autoscale_hours=containers["autoscale_hours"].map(lambda h: count_text(h, "hour") if pd.notna(h) else ""),
        largest_partition_text=containers["largest_partition_gb"].map(size_text),
        largest_key_text=containers["largest_key_gb"].map(size_text),
    )
    parts = [
        _long(named, "container", column, unit, subject=subject, detail=detail)
        for column, unit, subject, detail in CONTAINER_MEASURES
    ]
    return pd.concat(parts).sort_index(kind="stable")


def partition_rows(
    partitions: pd.DataFrame, metrics: pd.DataFrame, limits: Limits | None, ranges: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The `partition` section: each physical partition of the latest snapshot, and its peak normalized RU
    (`ranges`: the model's `analysis.spans.range_spans` of these metrics, whose `reported_max` it is)."""
    latest = overview.latest_snapshot(partitions).sort_values([*KEY, "pkrange_id"], kind="stable")
    size = latest["size_kb"].astype(float) * 1024
    limit = (limits or Limits()).physical_partition_max_bytes
    latest = latest.assign(
        size_gb=(size / GB).round(6), headroom=(1 - size / limit).round(6), documents=latest["document_count"]
    )
    latest = latest.assign(size_text=(size / GB).map(size_text))  # from the bytes: not the rounded GB
    normalized = overview.metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id"])
    peaks = _per_region_peaks(normalized) if ranges is None else _range_peaks(ranges)
    parts = [
        _long(latest, "partition", c, u, subject="pkrange_id", detail=d)
        for c, u, d in (("size_gb", "GB", "size_text"), ("headroom", "share", None), ("documents", "count", None))
    ]
    parts.append(_long(peaks, "partition", "max_normalized_ru", "%", subject="pkrange_id", detail="region"))
    return pd.concat(parts, ignore_index=True)


def key_rows(
    keys: pd.DataFrame, log_key_ru: pd.DataFrame | None, limits: Limits | None, money: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The `key` section: the largest logical keys (latest snapshot), the costliest in the logs, and their money."""
    limit_gb = (limits or Limits()).logical_partition_max_bytes / GB
    largest = _top(keys.assign(size_gb=(keys["size_kb"].astype(float) * 1024 / GB).round(6)), "size_gb")
    largest = largest.assign(
        detail=[
            f"{size_text(kb * 1024 / GB)}, {gb / limit_gb:.1%} of {limit_gb:g} GB, pkrange {pk}"
            for kb, gb, pk in zip(largest["size_kb"].astype(float), largest["size_gb"], largest["pkrange_id"])
        ]
    )
    parts = [_long(largest, "key", "size_gb", "GB", subject="partition_key", detail="detail")]
    if log_key_ru is not None and not log_key_ru.empty:
        rows = in_containers(log_key_ru)
        ru = rows.groupby([*KEY, "partition_key"])["request_charge"].sum().round(2).rename("ru").reset_index()
        costly = _top(ru, "ru").assign(detail="diagnostic logs")
        parts.append(_long(costly, "key", "ru", "RU", subject="partition_key", detail="detail"))
        peaks = busiest_seconds(rows, costly).assign(detail=KEY_PEAK_DETAIL)
        peaks = peaks.rename(columns={"peak_ru_s": "peak_second_ru"})
        parts.append(_long(peaks, "key", "peak_second_ru", "RU", subject="partition_key", detail="detail"))
        parts.append(query_cost.key_report_rows(money, costly))  # `money`: `analysis.cost.queries.key_costs`
    return pd.concat(parts, ignore_index=True)


def busiest_seconds(log_key_ru: pd.DataFrame, keys: pd.DataFrame) -> pd.DataFrame:
    """The busiest second (RU/s, `analysis.hot.keys.key_totals`) of each of `keys` (KEY, partition_key) over
    its pkranges; NaN (no report row) where the logs' rows were stored before it was collected."""
    totals = hot_keys.key_totals(log_key_ru)
    peaks = totals.groupby([*KEY, "partition_key"])["peak_ru_s"].max().reset_index()
    return keys[[*KEY, "partition_key"]].merge(peaks, on=[*KEY, "partition_key"], how="left")


def _top(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The `TOP_KEYS` rows of each container with the largest `column`."""
    ordered = frame.sort_values([column, "partition_key"], ascending=[False, True], kind="stable")
    return ordered.groupby(KEY, sort=False).head(TOP_KEYS)


def query_rows(queries: pd.DataFrame, costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The `query` section: each replayed query's total and mean RU and executions, with its routing; then what
    it costs and the logs' costliest workload texts (`costs`: `analysis.cost.queries.query_costs`)."""
    named = queries.assign(
        detail=[
            f"{routing}, {count_text(n, 'partition')}"
            for routing, n in zip(queries["routing"], queries["pkrange_count"])
        ]
    )
    parts = [
        _long(named, "query", c, u, subject="query_name", detail="detail")
        for c, u in (("total_ru", "RU"), ("mean_ru", "RU"), ("executions", "count"))
    ]
    rows = query_cost.say_unrated(pd.concat(parts).sort_index(kind="stable"), costs)  # why no money: no rate
    return pd.concat([rows, query_cost.query_report_rows(costs, top=TOP_KEYS)], ignore_index=True)


def count_text(n: float, noun: str) -> str:
    """`n` whole, with its noun in the plural unless one ("1 partition", "3 hours")."""
    return f"{n:.0f} {noun}{'s' * bool(n != 1)}"
