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
- **Keys from two sources**: a key's size comes from the container's sampled statistics (`logical_keys`,
  "statistics") and from the diagnostic logs (`log_key_sizes`, "logs"), measured differently. A key is one
  row with both sizes (`statistics_kb`, `logs_kb`); its size, fill and growth are those of `source`: the
  source with more snapshots in the range (a growth line needs two), ties going to the newer snapshot,
  then to the statistics.
- **Units**: sizes are stored in KB; a page shows them in the unit that fits the largest (`size_unit`: KB,
  MB or GB) and the fill as a percentage with enough decimals that the smallest non-zero fill shows two
  significant digits (`percent_decimals`), so 19 KB of 50 GB reads 0.000036%, not 0.0000.
- **Shared throughput**: a container created without RU/s of its own in a database that has some spends the
  database's shared offer; the storage snapshots record that offer's RU/s (`database_throughput_ru`), and
  `shared_throughput` lists such databases with their containers, so a page says which containers share one
  throughput unit (their physical partitions' sizes here are still each container's own, from its statistics).
- **Labels**: rows are named by their pkrange (or key) alone in one container, `container/pkrange` when the
  frame spans several containers (`database/container/...` when two databases share a container name);
  `label_title` names the column accordingly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosmoscore.limits import GB, Limits
from store.records import LOG_KEY_SIZES, LOGICAL_KEYS, PARTITIONS, SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
KB = 1024
INDEX_NOT_REPORTED = "index size not reported"
NOT_GROWING = "not growing"
ONE_SNAPSHOT = "fewer than 2 snapshots"
AT_LIMIT = "at the limit"
SOURCES = ("statistics", "logs")  # a tie between the sources goes to the first
HORIZON_DAYS = 100 * 365  # a projection further out is noise (and past what a timestamp can hold)
BEYOND_HORIZON = "not within 100 years"

# The store columns these functions read: a view loads only these.
PARTITION_COLUMNS = PARTITIONS.pick(
    *KEY,
    "run_id",
    "time",
    "pkrange_id",
    "size_kb",
    "document_count",
    "usage_collection_kb",
    "usage_documents_kb",
    "min_epk",
)
SHARED_COLUMNS = PARTITIONS.pick(*KEY, "time", "database_throughput_ru")  # shared_throughput's
SHARED_THROUGHPUT_COLUMNS = ["account", "database", "containers", "database_throughput_ru"]
LOGICAL_KEY_COLUMNS = LOGICAL_KEYS.pick(*KEY, "run_id", "time", "pkrange_id", "partition_key", "size_kb")
LOG_KEY_SIZE_COLUMNS = LOG_KEY_SIZES.pick(*KEY, "run_id", "time", "partition_key", "size_kb")

GROWTH_COLUMNS = ["snapshots", "growth_kb_per_day", "projected_full", "projection_note"]
SIZE_COLUMNS = ["size_kb", "size_gb", "fill", "fill_pct"]
FILL_COLUMNS = [*KEY, "label", "pkrange_id", *SIZE_COLUMNS, "document_count", *GROWTH_COLUMNS]
KEY_FILL_COLUMNS = [
    *KEY,
    "label",
    "partition_key",
    "source",
    "statistics_kb",
    "logs_kb",
    *SIZE_COLUMNS,
    *GROWTH_COLUMNS,
]
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
    """The `top` largest logical keys of the containers' latest snapshots against 20 GB, one row per key
    (`KEY_FILL_COLUMNS`), largest first: each source's latest size ("statistics": the container's sampled
    partition-key statistics, `ruscope storage`; "logs": CDBPartitionKeyStatistics), and the size, fill and
    growth of the source the module docstring picks, named in `source`."""
    limit_kb = (limits or Limits()).logical_partition_max_bytes / KB
    parts = [_key_sizes(frame, source, limit_kb) for source, frame in zip(SOURCES, (logical_keys, log_key_sizes))]
    found = [part for part in parts if not part.empty]
    if not found:
        return pd.DataFrame(columns=KEY_FILL_COLUMNS)
    rows = pd.concat(found, ignore_index=True)
    by_source = rows.pivot_table(index=[*KEY, "partition_key"], columns="source", values="size_kb", aggfunc="max")
    by_source = by_source.reindex(columns=list(SOURCES)).add_suffix("_kb").reset_index()
    by_source.columns.name = None
    rank = rows["source"].map({name: n for n, name in enumerate(SOURCES)})
    order = rows.assign(rank=rank).sort_values(["snapshots", "time", "rank"], ascending=[False, False, True])
    keys = order.drop_duplicates([*KEY, "partition_key"]).merge(by_source, on=[*KEY, "partition_key"])
    keys = keys.assign(label=labels(keys, keys["partition_key"]), **_fill(keys["size_kb"], limit_kb))
    keys = keys.sort_values([*KEY, "partition_key"]).sort_values("size_kb", ascending=False, kind="stable")
    return keys.head(top).reset_index(drop=True).astype({"snapshots": "Int64"})[KEY_FILL_COLUMNS]


def _key_sizes(frame: pd.DataFrame | None, source: str, limit_kb: float) -> pd.DataFrame:
    """One source's keys of each container's latest snapshot, with their growth over its snapshots."""
    sized = _sized(frame) if frame is not None else pd.DataFrame()
    if sized.empty:
        return pd.DataFrame()
    # a key is listed per pkrange it was sampled on; sum them so a key is one row per snapshot
    per_key = sized.groupby([*KEY, "run_id", "partition_key"], as_index=False).agg(
        time=("time", "max"), size_kb=("size_kb", "sum")
    )
    growth = growth_rates(per_key, by=[*KEY, "partition_key"], limit_kb=limit_kb)
    return _latest_snapshot(per_key).merge(growth, on=[*KEY, "partition_key"], how="left").assign(source=source)


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


@dataclass(frozen=True)
class SizeUnit:
    """A unit sizes are shown in: its name and how many KB it holds."""

    name: str
    kb: float


UNITS = (SizeUnit("GB", GB / KB), SizeUnit("MB", 1024.0), SizeUnit("KB", 1.0))


def size_unit(size_kb: pd.Series) -> SizeUnit:
    """The largest unit in which the largest size is at least 1 (KB for none): 361 KB reads 361 KB, not
    0.0003 GB, and 30 GB reads 30 GB."""
    largest = pd.to_numeric(size_kb, errors="coerce").max()
    return next((unit for unit in UNITS if largest >= unit.kb), UNITS[-1])


def in_unit(size_kb: pd.Series, unit: SizeUnit) -> pd.Series:
    """Sizes in KB expressed in `unit`, as floats (NaN stays NaN)."""
    return size_kb.astype(float) / unit.kb


def percent_decimals(percent: pd.Series, *, digits: int = 2, most: int = 10) -> int:
    """How many decimals show the smallest positive percentage with `digits` significant digits (at least
    `digits`, at most `most`): 0.00044% needs 5, 60% needs 2."""
    positive = pd.to_numeric(percent, errors="coerce")
    positive = positive[positive > 0]
    if positive.empty:
        return digits
    return int(min(most, max(digits, digits - 1 - math.floor(math.log10(positive.min())))))


def label_title(frame: pd.DataFrame, name: str) -> str:
    """The header of a column of `labels(frame, ...)`: `name` when they are bare names (one container), else
    says the container prefix (`container/name`, `database/container/name`)."""
    if frame.empty or frame[KEY].drop_duplicates().shape[0] <= 1:
        return name
    return f"{container_title(frame)}/{name}"


def container_title(frame: pd.DataFrame) -> str:
    """The header of a column of `container_labels(frame)`: "database/container" when they carry the database."""
    if frame.empty:
        return "container"
    pairs = frame[["database", "container"]].drop_duplicates()
    return "database/container" if pairs["container"].duplicated(keep=False).any() else "container"


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
    """Size in GB, fill of the limit (0..1) and the same in percent; 12 decimals keep a few KB of 50 GB."""
    sizes = size_kb.astype(float)
    fill = sizes / limit_kb
    return {"size_gb": (sizes * KB / GB).round(6), "fill": fill.round(12), "fill_pct": (fill * 100).round(10)}


def shared_throughput(partitions: pd.DataFrame) -> pd.DataFrame:
    """Each database whose containers spend its shared offer in the latest snapshot of each container: its
    containers (comma-separated, sorted) and the offer's RU/s (`SHARED_THROUGHPUT_COLUMNS`)."""
    frame = partitions.reindex(columns=SHARED_COLUMNS).dropna(subset=[*KEY, "time"])
    latest = frame[frame["time"].eq(frame.groupby(KEY)["time"].transform("max"))]
    sharing = latest.dropna(subset=["database_throughput_ru"])
    if sharing.empty:
        return pd.DataFrame(columns=SHARED_THROUGHPUT_COLUMNS)
    by_database = sharing.groupby(["account", "database"]).agg(
        containers=("container", lambda c: ", ".join(sorted(set(c)))),
        database_throughput_ru=("database_throughput_ru", "max"),
    )
    return by_database.reset_index()[SHARED_THROUGHPUT_COLUMNS]
