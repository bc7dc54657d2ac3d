"""Logical keys of hot partitions: which keys carry the RU (Log Analytics' CDBPartitionKeyRUConsumption, the
`log_key_ru` table) and which are largest (the storage snapshot's `logical_keys`), per pkrange.

Pure functions over those frames (only the `*_COLUMNS` below are read); `analysis.hot.partitions` orders the
pkranges and draws nothing here. A key heatmap's cell is RU per second over its bin (the logs' RU summed over
the bin, over the bin's seconds), so cells of different bins compare.

**The busiest second.** A partition's RU/s budget is spent per second: a request is throttled (429) when its
partition has used its RU/s in the current second, and the count resets every second. A bin's mean RU/s hides
a burst, so `key_totals` also carries each key's busiest second: the most RU the key consumed in one second
(its operations summed) in any bin of the view, from the logs' `peak_request_charge` (the collector sums the
log's rows per key, pkrange, region and second, and keeps each bin's largest sum). Its unit is RU/s, its
window one second (`PEAK_WINDOW`) and its source says which rows it comes from (`peak_source`): rows stored
before the busiest second was collected have none, so a key with none is unknown (NaN), never 0, and a key
with some is a lower bound over the bins that have it. `against_budget` compares it with the key's physical
partition's budget (`analysis.hot.replay.partition_budgets`: the provisioned RU/s over the partitions).

**By operation.** `operation_totals` splits a key's RU by the operation that spent it (the logs'
`log_key_operation_ru`), with each operation's busiest second: which operation heats the key.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.hot.bins import MAX_CELLS, MAX_COLUMNS, binned, naive_ns, smallest_step
from analysis.hot.current import CONTAINER_KEY, ROW_KEY, current_totals
from analysis.hot.partitions import Heatmap, empty_heatmap, row_labels
from analysis.pkrange_ids import pkrange_sort_key
from store.records import LOG_KEY_OPERATION_RU, LOG_KEY_RU, LOGICAL_KEYS

TOP_KEY_CHOICES = (10, 20, 50, 100)  # how many of the hottest keys a heatmap may show

# The store columns these functions read: a view loads only these.
KEY_RU_COLUMNS = LOG_KEY_RU.pick(
    *ROW_KEY, "time", "partition_key", "request_charge", "peak_request_charge", "bin_minutes"
)
KEY_OPERATION_COLUMNS = LOG_KEY_OPERATION_RU.pick(
    *ROW_KEY, "time", "partition_key", "operation_name", "request_charge", "peak_request_charge"
)
OPERATION_TOTAL_COLUMNS = [*ROW_KEY, "partition_key", "operation_name", "ru", "ru_share_pct", "peak_ru_s"]
LOGICAL_KEY_COLUMNS = LOGICAL_KEYS.pick(*ROW_KEY, "time", "partition_key", "size_kb")
PEAK_COLUMNS = ["busiest_bin_ru_s", "peak_ru_s", "peak_time", "peak_window", "peak_source"]
KEY_TOTAL_COLUMNS = [*ROW_KEY, "partition_key", "ru", *PEAK_COLUMNS]
BUDGET_COLUMNS = ["budget_ru_s", "budget_source", "peak_budget_pct", "peak_verdict"]
KEY_SIZE_COLUMNS = LOGICAL_KEYS.pick(*ROW_KEY, "partition_key", "size_kb")
KEYS_IN_RANGE_COLUMNS = [
    *ROW_KEY,
    "label",
    "partition_key",
    "ru",
    "ru_share_pct",
    *PEAK_COLUMNS,
    *BUDGET_COLUMNS,
    "size_kb",
]
PEAK_WINDOW = "1 s"  # the span a partition's RU/s budget is spent in, and the busiest second's window
PEAK_SOURCE = "diagnostic logs (CDBPartitionKeyRUConsumption): the key's RU summed per second, its busiest second"
PEAK_NONE = "unknown: these rows were stored before ruscope collected the busiest second"
REACHED = "reached the partition's budget"
BELOW = "below the partition's budget"
NO_PEAK = "unknown: no busiest second collected"
NO_BUDGET = "unknown: the partition's budget is not known"


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
    """RU per (container, pkrange, logical key) over the view, from the logs' bins, with the key's busiest
    second (module docstring) beside its busiest bin's mean RU/s (`KEY_TOTAL_COLUMNS`)."""
    rows = key_ru.dropna(subset=["pkrange_id", "partition_key", "request_charge"])
    if rows.empty:
        return pd.DataFrame(columns=KEY_TOTAL_COLUMNS)
    key = [*ROW_KEY, "partition_key"]
    charge = rows["request_charge"].astype(float)
    peak = rows["peak_request_charge"].astype(float) if "peak_request_charge" in rows else charge * np.nan
    seconds = 60 * rows["bin_minutes"].astype(float) if "bin_minutes" in rows else charge * np.nan
    rows = rows[key].assign(ru=charge, bin_ru_s=charge / seconds, peak=peak, time=rows["time"])
    grouped = rows.groupby(key)
    totals = pd.DataFrame(
        {
            "ru": grouped["ru"].sum().round(4),
            "busiest_bin_ru_s": grouped["bin_ru_s"].max().round(4),
            "peak_ru_s": grouped["peak"].max().round(4),
            "with_peak": grouped["peak"].count(),
            "bins": grouped.size(),
        }
    ).reset_index()
    busiest = rows.dropna(subset=["peak"]).sort_values("peak", ascending=False, kind="stable")
    busiest = busiest.drop_duplicates(subset=key)[[*key, "time"]].rename(columns={"time": "peak_time"})
    totals = totals.merge(busiest, on=key, how="left")
    totals["peak_window"] = PEAK_WINDOW
    totals["peak_source"] = [_peak_source(n, of) for n, of in zip(totals["with_peak"], totals["bins"])]
    return totals[KEY_TOTAL_COLUMNS]


def _peak_source(with_peak: int, bins: int) -> str:
    if with_peak == 0:
        return PEAK_NONE
    if with_peak < bins:
        return f"{PEAK_SOURCE}, in {with_peak} of its {bins} bins (the others were stored before it was collected)"
    return PEAK_SOURCE


def against_budget(totals: pd.DataFrame, budgets: pd.DataFrame) -> pd.DataFrame:
    """`key_totals` with each key's partition budget (`budgets`: ROW_KEY, budget_ru_s, budget_source, from
    `analysis.hot.replay.partition_budgets`), its busiest second as a percent of it, and whether that second
    reached it (`peak_verdict`: REACHED, BELOW, NO_PEAK or NO_BUDGET; never a guess)."""
    rows = totals.drop(columns=[c for c in BUDGET_COLUMNS if c in totals.columns])
    if rows.empty:
        return pd.DataFrame(columns=[*rows.columns, *BUDGET_COLUMNS])
    budget = budgets[[*ROW_KEY, "budget_ru_s", "budget_source"]].astype({"pkrange_id": str})
    rows = rows.astype({"pkrange_id": str}).merge(budget.drop_duplicates(subset=ROW_KEY), on=ROW_KEY, how="left")
    limit = rows["budget_ru_s"].astype(float).where(rows["budget_ru_s"].astype(float) > 0)
    peak = rows["peak_ru_s"].astype(float)
    rows["budget_source"] = rows["budget_source"].fillna("unknown")
    rows["peak_budget_pct"] = (100 * peak / limit).round(1)
    rows["peak_verdict"] = np.select(
        [peak.isna(), limit.isna(), peak >= limit], [NO_PEAK, NO_BUDGET, REACHED], default=BELOW
    )
    return rows


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
    """The logical keys on the chosen pkranges (`pkranges`: ROW_KEY and `label`): their RU and busiest second
    from the logs (`key_totals`, with `against_budget`'s columns when given) and their size in the latest
    snapshot (`latest_key_sizes`), the most RU first, then the largest (`KEYS_IN_RANGE_COLUMNS`; NaN: not
    known). `ru_share_pct` is the percent of the chosen pkranges' RU."""
    chosen = pkranges[[*ROW_KEY, "label"]].drop_duplicates(subset=ROW_KEY)
    key = [*ROW_KEY, "partition_key"]
    logged = [c for c in ["ru", *PEAK_COLUMNS, *BUDGET_COLUMNS] if c in totals.columns]
    ru = totals.merge(chosen[ROW_KEY], on=ROW_KEY)[[*key, *logged]]
    size = sizes.merge(chosen[ROW_KEY], on=ROW_KEY)[[*key, "size_kb"]]
    both = ru.merge(size, on=key, how="outer")
    if both.empty:
        return pd.DataFrame(columns=KEYS_IN_RANGE_COLUMNS)
    both = both.merge(chosen, on=ROW_KEY, how="left").astype({"ru": float, "size_kb": float})
    total = both["ru"].sum()
    both["ru_share_pct"] = (100 * both["ru"] / total).round(2) if total > 0 else np.nan
    order = ["ru", "size_kb", "partition_key"]
    both = both.sort_values(order, ascending=[False, False, True], na_position="last", kind="stable")
    return both.reset_index(drop=True).reindex(columns=KEYS_IN_RANGE_COLUMNS)


def keys_at_budget(keys: pd.DataFrame) -> pd.DataFrame:
    """The rows of `keys` (`keys_in_pkranges`) whose busiest second reached their partition's budget, the
    busiest first."""
    if "peak_verdict" not in keys:
        return keys.iloc[0:0]
    hot = keys[keys["peak_verdict"].eq(REACHED).fillna(False).to_numpy(dtype=bool)]
    return hot.sort_values(["peak_ru_s", "partition_key"], ascending=[False, True], kind="stable")


def operation_totals(key_operations: pd.DataFrame) -> pd.DataFrame:
    """RU per (container, pkrange, logical key, operation) over the view (the logs' `log_key_operation_ru`):
    its share of the key's RU on that pkrange, and the operation's busiest second on the key (RU/s; NaN when
    unknown) (`OPERATION_TOTAL_COLUMNS`, each key's costliest operation first)."""
    rows = key_operations.dropna(subset=["pkrange_id", "partition_key", "operation_name", "request_charge"])
    if rows.empty:
        return pd.DataFrame(columns=OPERATION_TOTAL_COLUMNS)
    key = [*ROW_KEY, "partition_key"]
    rows = rows.assign(
        request_charge=rows["request_charge"].astype(float), peak=rows["peak_request_charge"].astype(float)
    )
    grouped = rows.groupby([*key, "operation_name"])
    totals = pd.DataFrame({"ru": grouped["request_charge"].sum(), "peak_ru_s": grouped["peak"].max()}).reset_index()
    of_key = totals.groupby(key)["ru"].transform("sum")
    totals["ru_share_pct"] = (100 * totals["ru"] / of_key.where(of_key > 0)).round(2)
    totals = totals.assign(ru=totals["ru"].round(4), peak_ru_s=totals["peak_ru_s"].round(4))
    order = [*key, "ru", "operation_name"]
    totals = totals.sort_values(order, ascending=[True] * len(key) + [False, True], kind="stable")
    return totals.reset_index(drop=True)[OPERATION_TOTAL_COLUMNS]


def operations_of(totals: pd.DataFrame, key: pd.Series) -> pd.DataFrame:
    """The rows of `operation_totals` of one logical key on one pkrange (`key`: ROW_KEY and partition_key)."""
    columns = [*ROW_KEY, "partition_key"]
    if totals.empty:
        return totals
    mine = np.logical_and.reduce([totals[c].astype(str).eq(str(key[c])).to_numpy() for c in columns])
    return totals[mine].reset_index(drop=True)


def _ids(values: pd.Series) -> str:
    """The distinct pkrange ids, in numeric order, comma-separated."""
    return ",".join(sorted({str(v) for v in values.dropna()}, key=pkrange_sort_key))
