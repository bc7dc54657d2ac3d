"""A tier's cells from points: per key and bin, sum, max, count and last value, mergeable exactly.

`last` is the value of the latest point in the bin (storage at the end of the period); with `last_time` it
merges as "the later of the two". `sum`, `max` and `count` merge by sum, max and sum, so cells of a finer
tier roll up into the coarser one with the same figures as the points would give (`merge_up`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

import pandas as pd

CELL_COLUMNS = ["bin", "sum", "max", "count", "last", "last_time"]


def bins(times: pd.Series, width: dt.timedelta) -> pd.Series:
    """Each time's bin start (UTC): the time floored to a multiple of `width` since the epoch."""
    floored: pd.Series = times.dt.floor(pd.Timedelta(width))
    return floored


def touched_bins(times: pd.Series, width: dt.timedelta) -> set[pd.Timestamp]:
    """The bins an increment of new points falls in: the ones to compute again, whole."""
    return set(bins(times, width).dropna().unique())


def roll_up(
    points: pd.DataFrame, width: dt.timedelta, keys: Sequence[str], *, time: str = "time", value: str = "value"
) -> pd.DataFrame:
    """One cell per key and bin of `points` (`keys`, `time`, `value` columns)."""
    if points.empty:
        return pd.DataFrame(columns=[*keys, *CELL_COLUMNS])
    frame = points[[*keys, time, value]].assign(bin=bins(points[time], width)).sort_values(time, kind="stable")
    grouped = frame.groupby([*keys, "bin"], dropna=False, sort=True)
    cells = grouped.agg(
        sum=(value, "sum"), max=(value, "max"), count=(value, "count"), last=(value, "last"), last_time=(time, "last")
    )
    return cells.reset_index()[[*keys, *CELL_COLUMNS]]


def merge_up(cells: pd.DataFrame, width: dt.timedelta, keys: Sequence[str]) -> pd.DataFrame:
    """The cells of a coarser tier (`width`, a multiple of theirs) from finer ones."""
    if cells.empty:
        return pd.DataFrame(columns=[*keys, *CELL_COLUMNS])
    frame = cells.assign(bin=bins(cells["bin"], width)).sort_values("last_time", kind="stable")
    grouped = frame.groupby([*keys, "bin"], dropna=False, sort=True)
    merged = grouped.agg(
        sum=("sum", "sum"),
        max=("max", "max"),
        count=("count", "sum"),
        last=("last", "last"),
        last_time=("last_time", "last"),
    )
    return merged.reset_index()[[*keys, *CELL_COLUMNS]]


def replace_bins(existing: pd.DataFrame, fresh: pd.DataFrame, touched: Iterable[pd.Timestamp]) -> pd.DataFrame:
    """The cells after an increment: `existing` without the touched bins, then `fresh` (their recomputation)."""
    dropped = existing[~existing["bin"].isin(list(touched))] if not existing.empty else existing
    parts = [part for part in (dropped, fresh) if not part.empty]  # an empty part would loosen the dtypes
    if not parts:
        return fresh.reset_index(drop=True)
    return pd.concat(parts, ignore_index=True)
