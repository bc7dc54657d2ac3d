"""The current layout: which pkranges exist at the end of a view, and since when they all have data.

A split retires its parent: pkrange 0 of a container that split into 4 and 5 no longer exists, and its
history is not a sixth partition. So a skew figure ("the hottest pkrange against an even 1/n") counts the
pkranges that exist **at the end of the view**, and measures their load **since the current layout is
complete**, so that every range counted had the whole period (a child born at the split would otherwise be
compared over half the time of its older siblings):

- **exist at the end**: per container, the pkranges of its latest storage snapshot (`partitions`, which lists
  the live pkranges); without a snapshot of that container, the pkranges with a point at the container's
  latest time in the source itself (its latest interval);
- **since**: per container, the latest first point among those pkranges (the time of the last split seen in
  the view, or the view's start when there was none). Ranges that reported nothing in the period (an idle
  child in the logs, which only hold keys that spent RU) get no row.

Pure functions over the store's frames; `analysis.hot.partitions` adds `current` and `current_mean` (the
mean normalized RU since the layout start) to its heatmap rows, `current_totals` sums the logs' RU.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from store.records import SCOPE_COLUMNS

CONTAINER_KEY = list(SCOPE_COLUMNS)
ROW_KEY = [*CONTAINER_KEY, "pkrange_id"]  # one pkrange: the row key of every module in `analysis.hot`


def current_rows(rows: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
    """`rows` (ROW_KEY, `first_time`, `last_time`: one per pkrange of a source) with `current` (it exists at
    the end of the view) and `since` (its container's current layout start, NaT for a retired pkrange)."""
    out = rows.astype({"pkrange_id": str}).copy()
    if out.empty:
        return out.assign(current=pd.Series(dtype=bool), since=pd.Series(dtype="datetime64[ns, UTC]"))
    live = _snapshot_pkranges(partitions)
    snapshotted = out[CONTAINER_KEY].merge(live[CONTAINER_KEY].drop_duplicates(), how="left", indicator=True)
    in_snapshot = out[ROW_KEY].merge(live.assign(_live=True), on=ROW_KEY, how="left")["_live"].eq(True)
    latest = out["last_time"].eq(out.groupby(CONTAINER_KEY)["last_time"].transform("max"))
    has_snapshot = snapshotted["_merge"].eq("both").to_numpy()
    out["current"] = np.where(has_snapshot, in_snapshot.to_numpy(), latest.to_numpy())
    first = pd.to_datetime(out["first_time"], utc=True).where(out["current"])
    out["since"] = first.groupby([out[name] for name in CONTAINER_KEY]).transform("max").where(out["current"])
    return out


def current_totals(points: pd.DataFrame, partitions: pd.DataFrame, *, value: str, how: str = "sum") -> pd.DataFrame:
    """Per pkrange that exists at the end of the view: `value` of `points` (ROW_KEY, `time`, `value`) since
    its container's current layout start, summed (`how` "sum") or averaged ("mean"): ROW_KEY and `value`."""
    rows = points.dropna(subset=["pkrange_id", "time", value])
    if rows.empty:
        return pd.DataFrame(columns=[*ROW_KEY, value])
    rows = rows.astype({"pkrange_id": str})
    times = pd.to_datetime(rows["time"], utc=True)
    spans = times.groupby([rows[name] for name in ROW_KEY]).agg(["min", "max"])
    spans = spans.rename(columns={"min": "first_time", "max": "last_time"}).reset_index()
    layout = current_rows(spans, partitions)
    layout = layout[layout["current"]][[*ROW_KEY, "since"]]
    mine = rows.assign(time=times).merge(layout, on=ROW_KEY)
    mine = mine[mine["time"].ge(mine["since"])]
    totals = mine.groupby(ROW_KEY)[value].agg(how).astype(float).round(4)
    return totals.reset_index()[[*ROW_KEY, value]]


def _snapshot_pkranges(partitions: pd.DataFrame) -> pd.DataFrame:
    """ROW_KEY of each container's latest storage snapshot."""
    snapshot = partitions.dropna(subset=["time", "pkrange_id"])
    if snapshot.empty:
        return pd.DataFrame(columns=ROW_KEY)
    snapshot = snapshot[snapshot["time"].eq(snapshot.groupby(CONTAINER_KEY)["time"].transform("max"))]
    return snapshot[ROW_KEY].astype({"pkrange_id": str}).drop_duplicates()
