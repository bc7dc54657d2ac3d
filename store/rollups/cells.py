"""A tier's cells from points, and a coarser tier's from finer cells: per series and bin, figures that merge
exactly (a 1-hour cell merged from six 10-minute cells is the 1-hour cell of their points).

The figures (`FIGURES`, the `metric_cells` record's): `sum`, `count`, `min`, `max` and the time of the
earliest point holding it (`max_time`: a peak minute keeps its minute in any tier), the first point's time,
and the latest point (`last` at `last_time`: storage or provisioned RU/s at the end of the period). Pure.

Why numpy over one sort and not a pandas groupby: the series key is a dozen string columns, most of them
null (the split dimensions a metric does not have), and a day of one container's points is 150,000 rows;
grouping them by strings was most of a rollup's time. Each key column is factorized once, the codes combined
into one group number, and the rows sorted once by (group, bin, time): every figure is then a reduction over
contiguous segments.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pandas as pd

BIN = "time"  # a cell's bin start, the record's time column
FIGURES = ["sum", "count", "max", "max_time", "min", "first_time", "last", "last_time"]


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
    if points.empty:
        return pd.DataFrame(columns=[*keys, BIN, *carried, *FIGURES])
    times = pd.to_datetime(points[time], utc=True)
    values = points[value].to_numpy(dtype=float, na_value=np.nan)
    ns = times.to_numpy(dtype="datetime64[ns]").astype(np.int64)
    segments = _Segments(points, keys, ns // _ns(width) * _ns(width), ns)
    return segments.frame(
        keys,
        carried,
        {
            "sum": segments.reduce(np.add, values),
            "count": np.diff(segments.bounds),
            "max": (peak := segments.reduce(np.fmax, values)),
            "max_time": segments.first_where(values, peak, ns),
            "min": segments.reduce(np.fmin, values),
            "first_time": segments.at_start(ns),
            "last": segments.at_end(values),
            "last_time": segments.at_end(ns),
        },
    )


def merge_up(
    cells: pd.DataFrame, width: dt.timedelta, keys: Sequence[str], *, carried: Sequence[str] = ()
) -> pd.DataFrame:
    """The cells of a coarser tier (`width`, a multiple of theirs) from finer ones, the same columns."""
    if cells.empty:
        return pd.DataFrame(columns=[*keys, BIN, *carried, *FIGURES])

    def nanos(column: str) -> np.ndarray:
        return pd.to_datetime(cells[column], utc=True).to_numpy(dtype="datetime64[ns]").astype(np.int64)

    start, last_time = nanos(BIN), nanos("last_time")
    segments = _Segments(cells, keys, start // _ns(width) * _ns(width), last_time)
    peaks = cells["max"].to_numpy(dtype=float, na_value=np.nan)
    peak = segments.reduce(np.fmax, peaks)
    return segments.frame(
        keys,
        carried,
        {
            "sum": segments.reduce(np.add, cells["sum"].to_numpy(dtype=float, na_value=np.nan)),
            "count": segments.reduce(np.add, cells["count"].to_numpy(dtype=np.int64)),
            "max": peak,
            "max_time": segments.first_where(peaks, peak, nanos("max_time")),  # the earliest cell's
            "min": segments.reduce(np.fmin, cells["min"].to_numpy(dtype=float, na_value=np.nan)),
            "first_time": segments.reduce(np.minimum, nanos("first_time")),
            "last": segments.at_end(cells["last"].to_numpy(dtype=float, na_value=np.nan)),
            "last_time": segments.at_end(last_time),
        },
    )


def _ns(width: dt.timedelta) -> int:
    return int(pd.Timedelta(width).value)


class _Segments:
    """The rows of one frame sorted by (series, bin, time) into contiguous segments, one per cell."""

    def __init__(self, rows: pd.DataFrame, keys: Sequence[str], bin_ns: np.ndarray, order_ns: np.ndarray) -> None:
        series = np.zeros(len(rows), dtype=np.int64)
        for key in keys:  # one group number over every key column; a null is a value of its own
            codes, uniques = pd.factorize(rows[key], use_na_sentinel=False)
            series = pd.factorize(series * (len(uniques) + 1) + codes)[0]  # compacted: never overflows
        self.order = np.lexsort((order_ns, bin_ns, series))
        cell = np.stack([series[self.order], bin_ns[self.order]])
        change = np.flatnonzero(np.any(cell[:, 1:] != cell[:, :-1], axis=0)) + 1
        self.bounds = np.concatenate([[0], change, [len(rows)]])
        self.starts = self.bounds[:-1]
        self.rows, self.bin_ns = rows, bin_ns

    def reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        reduced: np.ndarray = ufunc.reduceat(values[self.order], self.starts)
        return reduced

    def at_start(self, values: np.ndarray) -> np.ndarray:
        first: np.ndarray = values[self.order][self.starts]
        return first

    def at_end(self, values: np.ndarray) -> np.ndarray:
        last: np.ndarray = values[self.order][self.bounds[1:] - 1]
        return last

    def first_where(self, values: np.ndarray, per_cell: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Per cell, `times` of its first row (in time order) whose value equals the cell's (its maximum)."""
        hits = np.flatnonzero(values[self.order] == np.repeat(per_cell, np.diff(self.bounds)))
        found = np.searchsorted(hits, self.starts)
        hit = hits[np.minimum(found, len(hits) - 1)] if len(hits) else self.starts
        inside = (found < len(hits)) & (hit < self.bounds[1:])  # a cell of NaN values has no maximum row
        return times[self.order][np.where(inside, hit, self.starts)]

    def frame(self, keys: Sequence[str], carried: Sequence[str], figures: dict[str, np.ndarray]) -> pd.DataFrame:
        """The cells: each key and carried column of a cell's first row, its bin, then `figures`."""
        head = self.rows.iloc[self.order[self.starts]]
        out = {column: head[column].to_numpy() for column in keys}
        out[BIN] = pd.to_datetime(self.bin_ns[self.order][self.starts], utc=True)
        out.update({column: head[column].to_numpy() for column in carried})
        for name, values in figures.items():
            out[name] = pd.to_datetime(values, utc=True) if name.endswith("_time") else values
        return pd.DataFrame(out)
