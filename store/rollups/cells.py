"""A tier's cells from points, and a coarser tier's from finer cells: per series and bin, figures that merge
exactly (a 1-hour cell merged from six 10-minute cells is the 1-hour cell of their points).

The figures (`FIGURES`, the `metric_cells` record's): `sum`, `count`, `min`, `max` and the time of the
earliest point holding it (`max_time`: a peak minute keeps its minute in any tier), the first point's time,
and the latest point (`last` at `last_time`: storage or provisioned RU/s at the end of the period). Pure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

import pandas as pd

BIN = "time"  # a cell's bin start, the record's time column
FIGURES = ["sum", "count", "max", "max_time", "min", "first_time", "last", "last_time"]


def bins(times: pd.Series, width: dt.timedelta) -> pd.Series:
    """Each time's bin start (UTC): the time floored to a multiple of `width` since the epoch."""
    floored: pd.Series = times.dt.floor(pd.Timedelta(width))
    return floored


def touched_bins(times: pd.Series, width: dt.timedelta) -> set[pd.Timestamp]:
    """The bins an increment of new points falls in: the ones to compute again, whole."""
    return set(bins(times, width).dropna().unique())


def roll_up(
    points: pd.DataFrame,
    width: dt.timedelta,
    keys: Sequence[str],
    *,
    time: str = "time",
    value: str = "value",
    carried: Sequence[str] = (),
) -> pd.DataFrame:
    """One cell per series (`keys`) and bin of `points` (`keys`, `time`, `value` and `carried` columns: a
    series' constants, such as its unit, kept from its first point): `keys`, BIN, `carried`, FIGURES."""
    columns = [*keys, BIN, *carried, *FIGURES]
    if points.empty:
        return pd.DataFrame(columns=columns)
    frame = points[[*keys, time, value, *carried]].rename(columns={time: "_t", value: "_v"})
    frame = frame.assign(**{BIN: bins(frame["_t"], width)}).sort_values("_t", kind="stable").reset_index(drop=True)
    grouped = frame.groupby([*keys, BIN], dropna=False, sort=True)
    cells = grouped.agg(
        **{c: (c, "first") for c in carried},
        sum=("_v", "sum"),
        count=("_v", "count"),
        max=("_v", "max"),
        min=("_v", "min"),
        first_time=("_t", "min"),
        last=("_v", "last"),
        last_time=("_t", "last"),
    )
    cells["max_time"] = frame["_t"].to_numpy()[grouped["_v"].idxmax().to_numpy()]  # first of the maximum
    return cells.reset_index()[columns]


def merge_up(
    cells: pd.DataFrame, width: dt.timedelta, keys: Sequence[str], *, carried: Sequence[str] = ()
) -> pd.DataFrame:
    """The cells of a coarser tier (`width`, a multiple of theirs) from finer ones, the same columns."""
    columns = [*keys, BIN, *carried, *FIGURES]
    if cells.empty:
        return pd.DataFrame(columns=columns)
    frame = cells.sort_values([BIN, "last_time"], kind="stable").reset_index(drop=True)
    frame = frame.assign(**{BIN: bins(frame[BIN], width)})
    grouped = frame.groupby([*keys, BIN], dropna=False, sort=True)
    merged = grouped.agg(
        **{c: (c, "first") for c in carried},
        sum=("sum", "sum"),
        count=("count", "sum"),
        max=("max", "max"),
        min=("min", "min"),
        first_time=("first_time", "min"),
        last=("last", "last"),
        last_time=("last_time", "last"),
    )
    merged["max_time"] = frame["max_time"].to_numpy()[grouped["max"].idxmax().to_numpy()]  # earliest bin's
    return merged.reset_index()[columns]


def replace_bins(existing: pd.DataFrame, fresh: pd.DataFrame, touched: Iterable[pd.Timestamp]) -> pd.DataFrame:
    """The cells after an increment: `existing` without the touched bins, then `fresh` (their recomputation)."""
    dropped = existing[~existing[BIN].isin(list(touched))] if not existing.empty else existing
    parts = [part for part in (dropped, fresh) if not part.empty]  # an empty part would loosen the dtypes
    if not parts:
        return fresh.reset_index(drop=True)
    return pd.concat(parts, ignore_index=True)
