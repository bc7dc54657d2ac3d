"""Storage: how full each physical partition and each large logical key is, how fast it grows, and when it
would reach its limit.

Pure functions over the store's `partitions` and `logical_keys` tables (`ruscope storage`, one snapshot per
run) and `log_key_sizes` (`ruscope logs`, CDBPartitionKeyStatistics), of which they read only the
`*_COLUMNS` below; the time range and scope are cut before these run (`analysis.scope`).

- **Fill**: the latest snapshot of each container, each pkrange's bytes against
  `Limits.physical_partition_max_bytes` (50 GB: a partition splits past it) and each listed key's bytes
  against `Limits.logical_partition_max_bytes` (20 GB: a logical partition cannot grow past it).
- **Growth**: a least-squares line through a pkrange's (or a key's, or a container's) size at each snapshot
  in the time range, in KB per day. The projected date is when that line crosses the limit: blank when
  fewer than two snapshots at different times exist or the size is not growing, because a flat or
  shrinking line never gets there and one point has no slope; blank too past 100 years (noise, and past
  what a timestamp holds). A pkrange that split is a new range with a
  new id, so its history starts at the split.
- **Index**: `usage_collection_kb - usage_documents_kb` (x-ms-resource-usage collectionSize and
  documentsSize). The local emulator reports documentsSize equal to collectionSize, so an equal or missing
  pair reads as "index size not reported", never as an index of 0.
- **Labels**: rows are named by their pkrange (or key) alone in one container, `container/pkrange` when the
  frame spans several containers (`database/container/...` when two databases share a container name).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosmoscore.limits import GB, Limits

KEY = ["account", "database", "container"]
KB = 1024
INDEX_NOT_REPORTED = "index size not reported"
NOT_GROWING = "not growing"
ONE_SNAPSHOT = "fewer than 2 snapshots"
AT_LIMIT = "at the limit"
HORIZON_DAYS = 100 * 365  # a projection further out is noise (and past what a timestamp can hold)
BEYOND_HORIZON = "not within 100 years"

# The store columns these functions read: a view loads only these.
PARTITION_COLUMNS = [
    *KEY,
    "run_id",
    "time",
    "pkrange_id",
    "size_kb",
    "document_count",
    "usage_collection_kb",
    "usage_documents_kb",
    "min_epk",
]
LOGICAL_KEY_COLUMNS = [*KEY, "run_id", "time", "pkrange_id", "partition_key", "size_kb"]
LOG_KEY_SIZE_COLUMNS = [*KEY, "run_id", "time", "partition_key", "size_kb"]

GROWTH_COLUMNS = ["snapshots", "growth_kb_per_day", "projected_full", "projection_note"]
FILL_COLUMNS = [*KEY, "label", "pkrange_id", "size_kb", "size_gb", "fill", "document_count", *GROWTH_COLUMNS]
KEY_FILL_COLUMNS = [*KEY, "label", "partition_key", "source", "size_kb", "size_gb", "fill", *GROWTH_COLUMNS]
CONTAINER_COLUMNS = [*KEY, "label", "run_id", "time", "size_kb", "document_count", "pkranges"]
INDEX_COLUMNS = [*KEY, "label", "time", "data_kb", "index_kb", "index_to_data", "note"]


def partition_fill(partitions: pd.DataFrame, *, limits: Limits | None = None) -> pd.DataFrame:
    """Each pkrange of each container's latest snapshot: its size against 50 GB, its documents, and its
    growth over the snapshots in the frame (`FILL_COLUMNS`), fullest first."""
    limit_kb = (limits or Limits()).physical_partition_max_bytes / KB
    frame = _sized(partitions)
    if frame.empty:
        return pd.DataFrame(columns=FILL_COLUMNS)
    latest = _latest_snapshot(frame)
    growth = growth_rates(frame, by=[*KEY, "pkrange_id"], limit_kb=limit_kb)
    fill = latest.merge(growth, on=[*KEY, "pkrange_id"], how="left")
    fill = fill.assign(label=labels(fill, fill["pkrange_id"]), **_fill(fill["size_kb"], limit_kb))
    fill = fill.sort_values([*KEY, "pkrange_id"]).sort_values("fill", ascending=False, kind="stable")
    return fill.reset_index(drop=True).astype({"document_count": "Int64"})[FILL_COLUMNS]


def key_fill(
    logical_keys: pd.DataFrame,
    log_key_sizes: pd.DataFrame | None = None,
    *,
    top: int = 50,
    limits: Limits | None = None,
) -> pd.DataFrame:
    """The `top` largest logical keys of the containers' latest snapshots against 20 GB, with their growth
    (`KEY_FILL_COLUMNS`), largest first. `source` says where a size came from: "statistics" (the container's
    sampled partition-key statistics, `ruscope storage`) or "logs" (CDBPartitionKeyStatistics); a key in
    both is listed once per source, since their sizes are measured differently."""
    limit_kb = (limits or Limits()).logical_partition_max_bytes / KB
    sources = [("statistics", logical_keys), ("logs", log_key_sizes)]
    parts = []
    for source, frame in sources:
        sized = _sized(frame) if frame is not None else pd.DataFrame()
        if sized.empty:
            continue
        # a key is listed per pkrange it was sampled on; sum them so a key is one row per snapshot
        per_key = sized.groupby([*KEY, "run_id", "partition_key"], as_index=False).agg(
            time=("time", "max"), size_kb=("size_kb", "sum")
        )
        growth = growth_rates(per_key, by=[*KEY, "partition_key"], limit_kb=limit_kb)
        latest = _latest_snapshot(per_key).merge(growth, on=[*KEY, "partition_key"], how="left")
        parts.append(latest.assign(source=source))
    if not parts:
        return pd.DataFrame(columns=KEY_FILL_COLUMNS)
    keys = pd.concat(parts, ignore_index=True)
    keys = keys.assign(label=labels(keys, keys["partition_key"]), **_fill(keys["size_kb"], limit_kb))
    keys = keys.sort_values([*KEY, "partition_key", "source"]).sort_values("size_kb", ascending=False, kind="stable")
    return keys.head(top).reset_index(drop=True)[KEY_FILL_COLUMNS]


def growth_rates(frame: pd.DataFrame, *, by: list[str], limit_kb: float) -> pd.DataFrame:
    """Per group of `by`: the snapshots seen, the least-squares growth in KB/day of `size_kb` over `time`,
    and the projected UTC time the line reaches `limit_kb` (NaT, with `projection_note` saying why, when
    fewer than two snapshot times, not growing, already at the limit, or more than 100 years away)."""
    rows = []
    for group, mine in frame.dropna(subset=["time", "size_kb"]).groupby(by, sort=True):
        days = (mine["time"] - mine["time"].min()) / pd.Timedelta(days=1)
        sizes = mine["size_kb"].astype(float)
        latest = sizes[mine["time"].eq(mine["time"].max())].iloc[-1]
        snapshots = int(mine["time"].nunique())
        slope, projected, note = np.nan, pd.NaT, ONE_SNAPSHOT
        if snapshots >= 2:
            slope = round(float(np.polyfit(days.to_numpy(float), sizes.to_numpy(float), 1)[0]), 3)
            note = NOT_GROWING if slope <= 0 else (AT_LIMIT if latest >= limit_kb else "")
            if note == "" and (limit_kb - latest) / slope > HORIZON_DAYS:
                note = BEYOND_HORIZON
            if note == "":
                projected = (mine["time"].max() + pd.Timedelta(days=(limit_kb - latest) / slope)).round("s")
        rows.append((*group, snapshots, slope, projected, note))
    growth = pd.DataFrame(rows, columns=[*by, *GROWTH_COLUMNS])
    growth["projected_full"] = pd.to_datetime(growth["projected_full"], utc=True).astype("datetime64[us, UTC]")
    return growth.astype({"snapshots": "Int64", "growth_kb_per_day": "float64"})


def container_sizes(partitions: pd.DataFrame) -> pd.DataFrame:
    """Each container's total size, documents and pkrange count at each snapshot (`CONTAINER_COLUMNS`), in
    time order: the growth-over-time series."""
    frame = _sized(partitions)
    if frame.empty:
        return pd.DataFrame(columns=CONTAINER_COLUMNS)
    sizes = frame.groupby([*KEY, "run_id"], as_index=False).agg(
        time=("time", "max"),
        size_kb=("size_kb", "sum"),
        document_count=("document_count", "sum"),
        pkranges=("pkrange_id", "nunique"),
    )
    sizes = sizes.assign(label=container_labels(sizes)).sort_values([*KEY, "time"], ignore_index=True)
    return sizes.astype({"size_kb": "float64", "document_count": "Int64", "pkranges": "Int64"})[CONTAINER_COLUMNS]


def index_sizes(partitions: pd.DataFrame) -> pd.DataFrame:
    """Each container's data and index size at its latest snapshot (`INDEX_COLUMNS`). The index is
    collectionSize - documentsSize; when they are equal or either is missing the index is blank and `note`
    says "index size not reported" (the emulator reports no index: see the module docstring)."""
    frame = _sized(partitions)
    if frame.empty:
        return pd.DataFrame(columns=INDEX_COLUMNS)
    latest = _latest_snapshot(frame)
    usage = latest.groupby(KEY, as_index=False).agg(
        time=("time", "max"),
        collection=("usage_collection_kb", "max"),
        documents=("usage_documents_kb", "max"),
        summed=("size_kb", "sum"),
    )
    collection, documents = usage["collection"].astype(float), usage["documents"].astype(float)
    reported = collection.notna() & documents.notna() & collection.gt(documents)
    index = (collection - documents).where(reported)
    data = documents.combine_first(usage["summed"].astype(float))
    usage = usage.assign(
        label=container_labels(usage),
        data_kb=data,
        index_kb=index,
        index_to_data=(index / data.where(data > 0)).round(4),
        note=np.where(reported, "", INDEX_NOT_REPORTED),
    )
    return usage.sort_values(KEY, ignore_index=True)[INDEX_COLUMNS]


def labels(frame: pd.DataFrame, names: pd.Series) -> pd.Series:
    """`names` (pkrange ids or keys) alone in one container, else prefixed `container/` (see the docstring)."""
    prefix = container_labels(frame)
    several = frame[KEY].drop_duplicates().shape[0] > 1
    return (prefix + "/" + names.astype(str)) if several else names.astype(str)


def container_labels(frame: pd.DataFrame) -> pd.Series:
    """A container's short name: `container`, or `database/container` when two databases share the name."""
    pairs = frame[["database", "container"]].drop_duplicates()
    ambiguous = pairs["container"].duplicated(keep=False).any()
    if ambiguous:
        return frame["database"].astype(str) + "/" + frame["container"].astype(str)
    return frame["container"].astype(str)


def _sized(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a container with a time and a size (the account's or database's rows have no container)."""
    if frame is None or frame.empty:
        return pd.DataFrame(columns=frame.columns if frame is not None else [])
    keyed = frame.dropna(subset=[*KEY, "time", "size_kb"])
    return keyed[keyed["container"].astype(str).ne("")].astype({"size_kb": "float64"})


def _latest_snapshot(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of each container's latest snapshot (its latest time)."""
    return frame[frame["time"].eq(frame.groupby(KEY)["time"].transform("max"))]


def _fill(size_kb: pd.Series, limit_kb: float) -> dict[str, pd.Series]:
    sizes = size_kb.astype(float)
    return {"size_gb": (sizes * KB / GB).round(6), "fill": (sizes / limit_kb).round(6)}
