"""Hot partitions: which physical partition (pkrange) is hot over time, and which logical keys make it hot.

Pure functions over the store's `metrics`, `partitions`, `log_key_ru` and `logical_keys` frames (only the
`*_COLUMNS` below are read; scope and time range are cut before these run). The logical keys are in
`analysis.hot.keys`; the replay-only view (RU/s demand per partition from the configured queries) and the skew
measures in `analysis.hot.replay`.

**Rows: one per pkrange, in key-space order.** A pkrange covers the effective partition keys
[min_epk, max_epk) (the `partitions` table, from `/pkranges`). Rows sort by min_epk, then the wider range
first: after a split the parent [a, c) is followed by its children [a, b) and [b, c), so the children sit
where their parent was and the parent's row ends where theirs begin. A pkrange the snapshots no longer list
(a parent gone since its split) takes the span of the ranges that name it in `parents`. Without EPK bounds
(a store written before they were collected) rows follow the lineage: each pkrange after its ancestors
(`parents`, oldest first), ids in numeric order otherwise. Containers follow each other, and rows are
labelled `container/pkrange` when the view spans several, so two containers never share a row.

**A shared-throughput database's partitions** are its offer's, not a container's: Azure Monitor reports them
for the database (stored under `container` = `store.records.SHARED_OFFER_CONTAINER`), so they are one set of
rows labelled `database (shared)/pkrange` beside any container's; a view of one container that spends its
database's offer shows the database's partitions (`with_shared_partitions`), since they are what throttles it.

**Splits** are marked where a parent's children first have a point: one mark per parent with children.

**Downsampling** (`analysis.hot.bins`). A heatmap column is a time bin chosen so that rows x columns stays
within `MAX_CELLS` (and columns within `MAX_COLUMNS`), from a list of round bins; a cell is the *maximum* of
the points in its bin, since a minute at 100% is what throttles, and an average would hide it. Over a long
range the maxima come from the metrics' rollup cells of a tier that nests in the bins (the same maxima),
on the days the stored span cells cover (`dashboard.loaders.cells`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from analysis import joins
from analysis.hot.bins import MAX_CELLS, MAX_COLUMNS, NICE_BINS, binned, heatmap_bin, naive_ns
from analysis.hot.current import CONTAINER_KEY, ROW_KEY, current_rows
from analysis.pkrange_ids import pkrange_sort_key
from cosmoscore.monitor.metrics import NORMALIZED_RU
from store.records import METRIC_CELLS, METRICS, PARTITIONS, SHARED_OFFER_CONTAINER

NORMALIZED = NORMALIZED_RU  # percent of a pkrange's share of the RU/s, max per interval

# The store columns these functions read: a view loads only these.
METRIC_COLUMNS = METRICS.pick(*CONTAINER_KEY, "time", "metric", "aggregation", "pkrange_id", "value", "region")
PARTITION_COLUMNS = PARTITIONS.pick(
    *ROW_KEY, "time", "parents", "min_epk", "max_epk", "size_kb", "document_count", "throughput_share"
)
ROW_COLUMNS = [*ROW_KEY, "label", "min_epk", "max_epk", "parent", "first_time", "last_time"]
SPLIT_COLUMNS = [*CONTAINER_KEY, "parent", "children", "time", "first_row", "last_row"]
HEATMAP_ROW_COLUMNS = [*ROW_COLUMNS, "peak", "mean", "current", "current_mean"]  # summarize_normalized_heatmap's
KEY_SPACE = {"": "(start)", "FF": "(end)"}  # the EPK bounds of the whole key space, as the tables say them
PKRANGE_TABLE_COLUMNS = ["label", "min_epk", "max_epk", "parent", "current", "first_time", "last_time", "peak", "mean"]


@dataclass(frozen=True)
class Heatmap:
    """A downsampled rows x time matrix: `z[i, j]` is row i's value in the bin starting at `times[j]` (NaN: no
    point). `rows` describes each row (at least `label`), `splits` the split marks (`SPLIT_COLUMNS`)."""

    z: np.ndarray
    times: np.ndarray  # datetime64[ns], naive UTC, one per column
    rows: pd.DataFrame
    bin: pd.Timedelta
    splits: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SPLIT_COLUMNS))
    # per cell: how many of its minutes were ruscope's own replay (`with_own_minutes`); None: not known
    own: np.ndarray | None = None

    @property
    def own_minutes(self) -> int:
        """How many minutes in the view were ruscope's own replay (0 when not known)."""
        return int(self.own.sum()) if self.own is not None else 0

    @property
    def labels(self) -> list[str]:
        return self.rows["label"].astype(str).tolist()

    @property
    def empty(self) -> bool:
        return self.z.size == 0


def normalized_mask(metrics: pd.DataFrame) -> np.ndarray:
    """Which rows are NormalizedRUConsumption points split by pkrange (aggregation Maximum, or none recorded),
    with a time and a value: a mask, so that 4 million points are not copied to be selected."""
    keep = metrics["metric"].eq(NORMALIZED).fillna(False) & metrics["pkrange_id"].notna()
    keep &= metrics["aggregation"].fillna("Maximum").eq("Maximum").fillna(False)
    keep &= metrics["time"].notna() & metrics["value"].notna()
    return keep.to_numpy(dtype=bool)


def summarize_normalized_heatmap(
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    *,
    cells: pd.DataFrame | None = None,
    max_cells: int = MAX_CELLS,
    max_columns: int = MAX_COLUMNS,
) -> Heatmap:
    """The pkrange x time heatmap of normalized RU (percent, max per bin), rows in key-space order, splits
    marked. `rows` also carries each pkrange's `peak` and `mean` (of its points), whether it is `current`
    (exists at the end of the view) and its `current_mean` since the current layout start (`analysis.hot.current`:
    what the skew compares; NaN for a retired pkrange).

    `cells`: the rollup cells (`metric_cells` rows of one tier: ROW_KEY, `time`, `max`, `sum`, `count`,
    `first_time`, `last_time`) of NormalizedRUConsumption on days `metrics` holds no points of; the same
    heatmap when the tier's width divides the heatmap's bin (`cell_tier`) and no container's current layout
    starts inside one of those days (`layout_days`: the caller reads those days' points)."""
    mask = normalized_mask(metrics)
    extra = cells if cells is not None else pd.DataFrame(columns=[*ROW_KEY, *CELL_FIGURES])
    if not mask.any() and extra.empty:
        return empty_heatmap()
    points = _Points.of(metrics, mask, extra)
    keys = points.keys
    by_row = len(keys)
    latest, earliest = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    keys["first_time"] = pd.to_datetime(
        joins.reduce_at(points.code, points.first, by_row, np.minimum, latest), utc=True
    )
    keys["last_time"] = pd.to_datetime(
        joins.reduce_at(points.code, points.last, by_row, np.maximum, earliest), utc=True
    )
    counts = np.bincount(points.code, weights=points.count, minlength=by_row)
    keys["peak"] = joins.reduce_at(points.code, points.peak, by_row, np.fmax, np.nan)
    keys["mean"] = np.bincount(points.code, weights=points.sum, minlength=by_row) / np.maximum(counts, 1)
    keys = _with_current_mean(keys, partitions, points)
    rows = order_pkranges(keys, partitions)
    position = np.empty(len(keys), dtype=np.int64)
    position[rows.pop("code").to_numpy(dtype=np.int64)] = np.arange(len(rows))
    span = (int(points.first.min()), int(points.last.max()))
    z, starts, step = binned(
        position[points.code], points.bin, points.peak, len(rows), max_cells=max_cells, max_columns=max_columns,
        how="max", span=span,
    )  # fmt: skip
    return Heatmap(z=z, times=starts, rows=rows, bin=step, splits=split_marks(rows))


CELL_FIGURES = METRIC_CELLS.pick("time", "max", "sum", "count", "first_time", "last_time")


@dataclass(frozen=True)
class _Points:
    """The heatmap's inputs, one entry per point or rollup cell: its row, bin start, peak, sum and count, and
    the first and last time it covers (a point is a cell of one: its value, itself, once)."""

    code: np.ndarray
    keys: pd.DataFrame
    bin: np.ndarray
    peak: np.ndarray
    sum: np.ndarray
    count: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def of(cls, metrics: pd.DataFrame, mask: np.ndarray, cells: pd.DataFrame) -> _Points:
        if mask.any():
            codes, keys = _row_codes(metrics, mask)
        else:
            codes, keys = np.zeros(0, dtype=np.int64), pd.DataFrame(columns=[*ROW_KEY, "code"])
        values = metrics["value"].to_numpy(dtype=float, na_value=np.nan)[mask]
        ns = naive_ns(metrics["time"])[mask]
        if cells.empty:
            return cls(codes, keys, ns, values, values, np.ones(len(values)), ns, ns)
        cell_keys = cells[ROW_KEY].astype(object).astype({"pkrange_id": str})
        at = joins.match(cell_keys, keys[ROW_KEY], ROW_KEY)
        new = cell_keys[at < 0].drop_duplicates().reset_index(drop=True)
        new["code"] = np.arange(len(keys), len(keys) + len(new))
        keys = pd.concat([keys, new], ignore_index=True)
        at = joins.match(cell_keys, keys[ROW_KEY], ROW_KEY)

        def times(column: str) -> np.ndarray:
            return naive_ns(pd.to_datetime(cells[column], utc=True))

        def numbers(column: str) -> np.ndarray:
            return cells[column].to_numpy(dtype=float, na_value=np.nan)

        return cls(
            np.concatenate([codes, at]),
            keys,
            np.concatenate([ns, times("time")]),
            np.concatenate([values, numbers("max")]),
            np.concatenate([values, numbers("sum")]),
            np.concatenate([np.ones(len(values)), numbers("count")]),
            np.concatenate([ns, times("first_time")]),
            np.concatenate([ns, times("last_time")]),
        )


def heatmap_step(
    metrics: pd.DataFrame,
    span_cells: pd.DataFrame,
    *,
    max_cells: int = MAX_CELLS,
    max_columns: int = MAX_COLUMNS,
) -> pd.Timedelta:
    """The bin `summarize_normalized_heatmap` draws `metrics`' points and the points the span cells hold
    (`analysis.load.stored`'s "range" rows: each range's first and last point per day) in, before those
    points are read: the rollup tier that draws it is chosen by it (`cell_tier`)."""
    mask = normalized_mask(metrics)
    ranges = span_cells[span_cells["kind"].eq("range").fillna(False).astype(bool)]
    keys = [metrics.loc[mask, ROW_KEY].astype(object).astype({"pkrange_id": str}).drop_duplicates()]
    keys.append(ranges[ROW_KEY].astype(object).astype({"pkrange_id": str}).drop_duplicates())
    n_rows = len(pd.concat(keys, ignore_index=True).drop_duplicates())
    times = naive_ns(metrics["time"])[mask]
    firsts = np.concatenate([times, naive_ns(pd.to_datetime(ranges["first_time"], utc=True))])
    lasts = np.concatenate([times, naive_ns(pd.to_datetime(ranges["last_time"], utc=True))])
    span = pd.Timedelta(int(lasts.max()) - int(firsts.min()), "ns") + NICE_BINS[0]
    return heatmap_bin(span, n_rows, max_cells=max_cells, max_columns=max_columns)


def with_own_minutes(heatmap: Heatmap, own: pd.DataFrame) -> Heatmap:
    """`heatmap` with `own`: per cell, how many of the points in it were ruscope's own replay (`own`: one row
    per container, pkrange and time, `analysis.load.partition_minutes`' own rows). The cells keep Azure
    Monitor's value (what its portal shows); the mark says which of them the risk, the Overview and the report
    leave out, so a 100% cell from the replay is not read as the workload's."""
    counts = np.zeros(heatmap.z.shape, dtype=np.int64)
    if heatmap.empty or own.empty:
        return replace(heatmap, own=counts)
    rows = heatmap.rows[ROW_KEY].astype(str).reset_index(drop=True)
    position = pd.Series(np.arange(len(rows)), index=pd.MultiIndex.from_frame(rows))
    keys = pd.MultiIndex.from_frame(own[ROW_KEY].astype(str))
    row = position.reindex(keys).to_numpy(dtype=float)
    origin, width = int(heatmap.times[0].astype("datetime64[ns]").astype(np.int64)), heatmap.bin.value
    column = (naive_ns(own["time"]) - origin) // width
    inside = ~np.isnan(row) & (column >= 0) & (column < len(heatmap.times))
    np.add.at(counts, (row[inside].astype(np.int64), column[inside]), 1)
    return replace(heatmap, own=counts)


def _with_current_mean(keys: pd.DataFrame, partitions: pd.DataFrame, points: _Points) -> pd.DataFrame:
    """`keys` (one row per code) with `current` and `current_mean`: the mean of the points at or after the
    container's current layout start, of the pkranges that exist at the end (`analysis.hot.current`); a cell
    counts whole by its start (a caller reads the points of a day a layout starts in: `layout_days`)."""
    layout = current_rows(keys[[*ROW_KEY, "first_time", "last_time"]], partitions)
    current = layout["current"].to_numpy(dtype=bool)
    since = np.where(current, naive_ns(layout["since"].where(layout["current"], layout["first_time"])), 0)
    codes = points.code
    ok = current[codes] & (points.bin >= since[codes])
    n = np.bincount(codes[ok], weights=points.count[ok], minlength=len(keys))
    total = np.bincount(codes[ok], weights=points.sum[ok], minlength=len(keys))
    return keys.assign(current=current, current_mean=np.where(n > 0, total / np.maximum(n, 1), np.nan).round(4))


def layout_days(cells: pd.DataFrame) -> list[pd.Timestamp]:
    """The first point of each pkrange the span cells hold (`analysis.load.stored`'s "range" rows): the days a
    current layout may start in, whose points a heatmap from rollup cells reads (`summarize_normalized_heatmap`)."""
    ranges = cells[cells["kind"].eq("range").fillna(False).astype(bool)]
    if ranges.empty:
        return []
    firsts = pd.to_datetime(ranges["first_time"], utc=True).groupby([ranges[c] for c in ROW_KEY]).min()
    return sorted(set(firsts.dropna().tolist()))


def order_pkranges(keys: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
    """The rows of `keys` (one per container and pkrange_id, other columns kept) in key-space order, with
    their `label`, EPK bounds and `parent` (see the module docstring)."""
    known = _partition_facts(partitions)
    rows = keys.merge(known, on=ROW_KEY, how="left")
    rows = _inherit_bounds(rows, known)
    rows["path"] = [_lineage_path(pk, parents) for pk, parents in zip(rows["pkrange_id"], rows["ancestors"])]
    rows["bounded"] = rows["min_epk"].notna() & rows["max_epk"].notna()
    rows["_min"] = rows["min_epk"].fillna("")
    rows["_max"] = rows["max_epk"].fillna("")
    rows = rows.sort_values("path", key=lambda s: s.map(_path_key), kind="stable")
    rows = rows.sort_values("_max", ascending=False, kind="stable")
    rows = rows.sort_values(
        [*CONTAINER_KEY, "bounded", "_min"], ascending=[True, True, True, False, True], kind="stable"
    )
    rows["label"] = row_labels(rows)
    rows = rows.drop(columns=["path", "bounded", "_min", "_max", "ancestors"]).reset_index(drop=True)
    return rows.reindex(columns=[*ROW_COLUMNS, *[c for c in rows.columns if c not in ROW_COLUMNS]])


def row_labels(rows: pd.DataFrame, *, name: str = "pkrange_id") -> pd.Series:
    """`name` alone in one container; `container/name` across containers (with the database, and the account,
    when container names alone would repeat)."""
    containers = rows[CONTAINER_KEY].drop_duplicates()
    value = rows[name].astype(str)
    if len(containers) <= 1:
        return value
    parts = ["container"]
    if containers["container"].duplicated().any():
        parts = ["database", "container"]
        if containers[["database", "container"]].duplicated().any():
            parts = CONTAINER_KEY
    prefix = rows[parts].astype(str).agg("/".join, axis=1)
    offer = rows["container"].astype(str).eq(SHARED_OFFER_CONTAINER)
    prefix = prefix.where(~offer, rows["database"].astype(str) + SHARED_SUFFIX)
    return prefix + "/" + value


SHARED_SUFFIX = " (shared)"  # a shared-throughput database's partitions: `database (shared)/pkrange`


def with_shared_partitions(metrics: pd.DataFrame, offer: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """A view of one container's `metrics` and its database's shared-offer rows `offer`: when the container
    has no partition utilisation of its own and the offer has some, the container spends the offer and its
    partitions are the offer's, so those rows join the view (True); else `metrics` as they are (False)."""
    if normalized_mask(metrics).any() or not normalized_mask(offer).any():
        return metrics, False
    return pd.concat([metrics, offer[metrics.columns]], ignore_index=True), True


def split_marks(rows: pd.DataFrame) -> pd.DataFrame:
    """One mark per parent row whose children are rows too: at the children's first point, spanning the
    parent's row through its last child's (`SPLIT_COLUMNS`; `parent` and `children` are labels)."""
    frame = rows.reset_index(drop=True).assign(row=lambda f: np.arange(len(f)))
    children = frame.dropna(subset=["parent"])
    parents = frame[ROW_KEY + ["row", "label"]].rename(
        columns={"pkrange_id": "parent", "row": "first_row", "label": "parent_label"}
    )
    joined = children.merge(parents, on=[*CONTAINER_KEY, "parent"], how="inner")
    if joined.empty:
        return pd.DataFrame(columns=SPLIT_COLUMNS)
    marks = joined.groupby([*CONTAINER_KEY, "parent_label"], sort=False).agg(
        children=("label", ", ".join),
        time=("first_time", "min"),
        first_row=("first_row", "min"),
        last_row=("row", "max"),
    )
    marks = marks.reset_index().rename(columns={"parent_label": "parent"})
    return marks.sort_values("first_row", ignore_index=True)[SPLIT_COLUMNS]


def known_pkranges(frames: list[pd.DataFrame], partitions: pd.DataFrame) -> pd.DataFrame:
    """Every (container, pkrange) in the frames or the latest snapshots, with its label, in key-space order."""
    snapshot = partitions.dropna(subset=["time", "pkrange_id"])
    snapshot = snapshot[snapshot["time"].eq(snapshot.groupby(CONTAINER_KEY)["time"].transform("max"))]
    keys = pd.concat([frame[ROW_KEY] for frame in [*frames, snapshot]], ignore_index=True).dropna()
    keys = keys.astype(str).drop_duplicates(ignore_index=True)
    if keys.empty:
        return pd.DataFrame(columns=[*ROW_KEY, "label"])
    return order_pkranges(keys, partitions)[[*ROW_KEY, "label"]]


def hottest_label(rows: pd.DataFrame, column: str, pkranges: pd.DataFrame) -> str | None:
    """The label in `pkranges` (ROW_KEY, label) of the row of `rows` with the largest `column` (None when there
    is none): matched by key, since `rows` may carry labels of a view spanning fewer containers."""
    values = rows[column].astype(float) if column in rows else pd.Series(dtype=float)
    if values.dropna().empty:
        return None
    hottest = rows.loc[[values.idxmax()], ROW_KEY]
    found = pkranges.merge(hottest, on=ROW_KEY)["label"].astype(str).tolist()
    return found[0] if found else None


def _row_codes(frame: pd.DataFrame, mask: np.ndarray) -> tuple[np.ndarray, pd.DataFrame]:
    """The row code (0..n-1) of each masked row and the rows' keys (ROW_KEY and `code`): the key columns are
    numbered in place (`analysis.joins.group_codes`: no string is copied) and the masked rows renumbered."""
    everything = joins.group_codes(frame, ROW_KEY)
    codes, seen = pd.factorize(everything.codes[mask])
    rows = (
        everything.keys.iloc[np.asarray(seen, dtype=np.int64)]
        .reset_index(drop=True)
        .astype(object)
        .astype({"pkrange_id": str})
    )
    rows["code"] = np.arange(len(rows))
    return codes.astype(np.int64), rows


def _partition_facts(partitions: pd.DataFrame) -> pd.DataFrame:
    """Per container and pkrange: the EPK bounds and ancestors of its latest snapshot row that has them."""
    columns = [*ROW_KEY, "min_epk", "max_epk", "ancestors"]
    frame = partitions.dropna(subset=["time", "pkrange_id"])
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame = frame.sort_values("time", kind="stable").assign(
        ancestors=frame["parents"].fillna("").astype(str).str.replace(" ", "")
    )
    latest = (
        frame.groupby(ROW_KEY, sort=False)
        .agg(min_epk=("min_epk", "last"), max_epk=("max_epk", "last"), ancestors=("ancestors", "last"))
        .reset_index()
    )
    return latest.astype({"pkrange_id": str})[columns]


def _inherit_bounds(rows: pd.DataFrame, known: pd.DataFrame) -> pd.DataFrame:
    """A row without bounds (a parent gone since its split) takes the span of the ranges naming it an
    ancestor; it gets the lineage of those that do, minus itself."""
    rows = rows.astype({"min_epk": object, "max_epk": object, "ancestors": object})
    descendants = known.assign(ancestor=known["ancestors"].fillna("").str.split(",")).explode("ancestor")
    descendants = descendants[descendants["ancestor"].fillna("").ne("")].dropna(subset=["min_epk", "max_epk"])
    span = descendants.groupby([*CONTAINER_KEY, "ancestor"]).agg(
        lo=("min_epk", "min"), hi=("max_epk", "max"), lineage=("ancestors", "first")
    )
    span = span.reset_index().rename(columns={"ancestor": "pkrange_id"})
    rows = rows.merge(span, on=ROW_KEY, how="left")
    missing = rows["min_epk"].isna()
    rows.loc[missing, "min_epk"] = rows.loc[missing, "lo"]
    rows.loc[missing, "max_epk"] = rows.loc[missing, "hi"]
    before = [_before(str(lineage or ""), str(pk)) for lineage, pk in zip(rows["lineage"], rows["pkrange_id"])]
    rows["ancestors"] = rows["ancestors"].where(rows["ancestors"].notna(), pd.Series(before, index=rows.index))
    rows["ancestors"] = rows["ancestors"].fillna("")
    rows["parent"] = [a.split(",")[-1] if a else None for a in rows["ancestors"]]
    return rows.drop(columns=["lo", "hi", "lineage"])


def _before(ancestors: str, pkrange_id: str) -> str | None:
    """The ancestors listed before `pkrange_id` in a descendant's lineage (None when it is not in it)."""
    lineage = ancestors.split(",")
    return ",".join(lineage[: lineage.index(pkrange_id)]) if pkrange_id in lineage else None


def _lineage_path(pkrange_id: str, ancestors: str) -> tuple[str, ...]:
    return (*[a for a in str(ancestors or "").split(",") if a], str(pkrange_id))


def _path_key(path: tuple[str, ...]) -> tuple[tuple[int, int, str], ...]:
    return tuple(pkrange_sort_key(pk) for pk in path)


def pkrange_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The heatmap's rows as a table shows them (`PKRANGE_TABLE_COLUMNS`): one pkrange column (its label), the
    key space's ends named ("" is where it starts, "FF" where it ends: `KEY_SPACE`), no raw ids."""
    table = rows.reindex(columns=PKRANGE_TABLE_COLUMNS).copy()
    for name in ("min_epk", "max_epk"):
        table[name] = table[name].map(lambda epk: KEY_SPACE.get(epk, epk), na_action="ignore")
    return table


def current_pkrange_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The heatmap rows of the pkranges that exist at the end of the view (a split's parent is not one)."""
    return rows[rows["current"].fillna(False).astype(bool)]


def empty_heatmap() -> Heatmap:
    return Heatmap(
        z=np.empty((0, 0)),
        times=np.array([], dtype="datetime64[ns]"),
        rows=pd.DataFrame(columns=HEATMAP_ROW_COLUMNS),
        bin=NICE_BINS[0],
    )
