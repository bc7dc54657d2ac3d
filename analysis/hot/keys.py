"""Logical keys of hot partitions: which keys carry the RU (Log Analytics' CDBPartitionKeyRUConsumption, the
`log_key_ru` table) and which are largest (the storage snapshot's `logical_keys`), per pkrange.

Pure functions over those frames (only the `*_COLUMNS` below are read); `analysis.hot.partitions` orders the
pkranges and draws nothing here. A key heatmap's cell is RU per second over its bin (the logs' RU summed over
the bin, over the bin's seconds), so cells of different bins compare.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.hot.current import CONTAINER_KEY, ROW_KEY, current_totals
from analysis.hot.partitions import (
    MAX_CELLS,
    MAX_COLUMNS,
    Heatmap,
    binned,
    empty_heatmap,
    naive_ns,
    row_labels,
    smallest_step,
)
from analysis.pkrange_ids import pkrange_sort_key
from store.records import LOG_KEY_RU, LOGICAL_KEYS

TOP_KEY_CHOICES = (10, 20, 50, 100)  # how many of the hottest keys a heatmap may show

# The store columns these functions read: a view loads only these.
KEY_RU_COLUMNS = LOG_KEY_RU.pick(*ROW_KEY, "time", "partition_key", "request_charge")
LOGICAL_KEY_COLUMNS = LOGICAL_KEYS.pick(*ROW_KEY, "time", "partition_key", "size_kb")
KEY_TOTAL_COLUMNS = [*ROW_KEY, "partition_key", "ru"]
KEY_SIZE_COLUMNS = LOGICAL_KEYS.pick(*ROW_KEY, "partition_key", "size_kb")
KEYS_IN_RANGE_COLUMNS = [*ROW_KEY, "label", "partition_key", "ru", "ru_share_pct", "size_kb"]


def summarize_key_heatmap(
    key_ru: pd.DataFrame, *, top: int = 20, max_cells: int = MAX_CELLS, max_columns: int = MAX_COLUMNS
) -> Heatmap:
    """The `top` logical keys by total RU x time: a cell is the key's RU per second over its bin (the log's
    RU summed over the bin, divided by the bin's seconds). `rows`: label, pkranges, total RU, hottest first."""
    rows = key_ru.dropna(subset=["time", "partition_key", "request_charge"])
    if rows.empty:
        return empty_heatmap()
    key = [*CONTAINER_KEY, "partition_key"]
    ru = rows.groupby(key, sort=False)["request_charge"].sum().rename("ru")
    totals = ru.reset_index().sort_values(["ru", *key], ascending=[False, True, True, True, True], kind="stable")
    totals = totals.head(top).reset_index(drop=True)
    totals["label"] = row_labels(totals, name="partition_key")
    where = pd.MultiIndex.from_frame(totals[key]).get_indexer(pd.MultiIndex.from_frame(rows[key]))
    mine = where >= 0
    on = rows.loc[mine, "pkrange_id"].groupby(where[mine]).agg(_ids)  # one call per top key, not per row
    totals["pkranges"] = on.reindex(range(len(totals))).fillna("").to_numpy()
    ns = naive_ns(rows["time"])
    z, starts, step = binned(
        where[mine],
        ns[mine],
        rows["request_charge"].to_numpy(dtype=float)[mine],
        len(totals),
        max_cells=max_cells,
        max_columns=max_columns,
        how="sum",
        smallest=smallest_step(ns),
    )
    return Heatmap(z=z / step.total_seconds(), times=starts, rows=totals[["label", *key, "pkranges", "ru"]], bin=step)


def top_keys(heatmap: Heatmap, top: int) -> Heatmap:
    """The first `top` rows of a key heatmap (hottest first): the same bins while the larger one fits its cells."""
    return Heatmap(z=heatmap.z[:top], times=heatmap.times, rows=heatmap.rows.head(top), bin=heatmap.bin)


def key_totals(key_ru: pd.DataFrame) -> pd.DataFrame:
    """RU per (container, pkrange, logical key) over the view, from the logs' bins (`KEY_TOTAL_COLUMNS`)."""
    rows = key_ru.dropna(subset=["pkrange_id", "partition_key", "request_charge"])
    if rows.empty:
        return pd.DataFrame(columns=KEY_TOTAL_COLUMNS)
    totals = rows.groupby([*ROW_KEY, "partition_key"])["request_charge"].sum().astype(float).round(4)
    return totals.rename("ru").reset_index()[KEY_TOTAL_COLUMNS]


def pkrange_totals(key_ru: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
    """RU per (container, pkrange) in the logs, of the pkranges that exist at the end of the view and since
    their layout is complete (`analysis.hot.current`): the logs' load per partition, for the skew."""
    totals = current_totals(key_ru, partitions, value="request_charge")
    return totals.rename(columns={"request_charge": "ru"})


def latest_key_sizes(logical_keys: pd.DataFrame) -> pd.DataFrame:
    """The largest logical keys of each container's latest storage snapshot (`KEY_SIZE_COLUMNS`)."""
    rows = logical_keys.dropna(subset=["time", "pkrange_id", "partition_key"])
    rows = rows[rows["time"].eq(rows.groupby(CONTAINER_KEY)["time"].transform("max"))]
    if rows.empty:
        return pd.DataFrame(columns=KEY_SIZE_COLUMNS)
    sizes = rows.groupby([*ROW_KEY, "partition_key"])["size_kb"].max().astype(float)
    return sizes.reset_index()[KEY_SIZE_COLUMNS]


def keys_in_pkranges(totals: pd.DataFrame, sizes: pd.DataFrame, pkranges: pd.DataFrame) -> pd.DataFrame:
    """The logical keys on the chosen pkranges (`pkranges`: ROW_KEY and `label`): their RU from the logs
    (`key_totals`) and their size in the latest snapshot (`latest_key_sizes`), the most RU first, then the
    largest (`KEYS_IN_RANGE_COLUMNS`; NaN: not known). `ru_share_pct` is the percent of the chosen pkranges' RU."""
    chosen = pkranges[[*ROW_KEY, "label"]].drop_duplicates(subset=ROW_KEY)
    key = [*ROW_KEY, "partition_key"]
    ru = totals.merge(chosen[ROW_KEY], on=ROW_KEY)[[*key, "ru"]]
    size = sizes.merge(chosen[ROW_KEY], on=ROW_KEY)[[*key, "size_kb"]]
    both = ru.merge(size, on=key, how="outer")
    if both.empty:
        return pd.DataFrame(columns=KEYS_IN_RANGE_COLUMNS)
    both = both.merge(chosen, on=ROW_KEY, how="left").astype({"ru": float, "size_kb": float})
    total = both["ru"].sum()
    both["ru_share_pct"] = (100 * both["ru"] / total).round(2) if total > 0 else np.nan
    order = ["ru", "size_kb", "partition_key"]
    both = both.sort_values(order, ascending=[False, False, True], na_position="last", kind="stable")
    return both.reset_index(drop=True)[KEYS_IN_RANGE_COLUMNS]


def _ids(values: pd.Series) -> str:
    """The distinct pkrange ids, in numeric order, comma-separated."""
    return ",".join(sorted({str(v) for v in values.dropna()}, key=pkrange_sort_key))
