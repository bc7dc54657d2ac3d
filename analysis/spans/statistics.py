"""Each range's span statistics from its span cells (`analysis.spans.cells`), of any width or several.

A range's span runs from its first point to its region's last minute (a retired range's: to its own last
point); its minutes are the region cells' from the bin of its first point to the bin of the end, less the
lead of its first bin and, for a retired range, the tail of its last, less its own points. The zeros are the
span's minutes that are not workload points. The p95 is the linear quantile (numpy's and pandas' default) of
the histogram's values and the zeros. Pure.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis import joins
from analysis.spans.cells import NAT, RANGE, REGION, SpanCells

SPAN_COLUMNS = [*RANGE, "max", "reported_max", "mean", "p95", "minutes", "start", "end", "retired", "current_latest"]


def span_statistics(cells: SpanCells, quantile: float) -> pd.DataFrame:
    """Per range of `cells`, sorted by RANGE: its span's statistics (`SPAN_COLUMNS`, `analysis.spans`)."""
    ranges = cells.ranges
    if ranges.empty:
        return _typed(pd.DataFrame(columns=SPAN_COLUMNS))
    ranges = ranges.sort_values(["time"], kind="stable").reset_index(drop=True)
    fine = joins.group_codes(ranges, RANGE)
    ranges_region = joins.group_codes(fine.keys, REGION)
    region = _Regions(cells.regions, ranges_region.keys)
    code, n = fine.codes, fine.size
    cell_bin = joins.times_ns(ranges["time"])
    first_cell = _first_row(code, n)  # cells are in time order: a range's first and last cells
    last_cell = _first_row(code[::-1], n, reverse=True)
    retired = np.zeros(n, dtype=bool)
    np.logical_or.at(retired, code, ranges["retired"].to_numpy(dtype=bool))
    range_region = ranges_region.codes
    start_at = region.at(range_region, cell_bin[first_cell])
    end_at = np.where(retired, region.at(range_region, cell_bin[last_cell]), region.last[range_region])
    lead = ranges["lead"].to_numpy(dtype=np.int64)
    tail = ranges["tail"].to_numpy(dtype=np.int64)
    own = np.bincount(code, weights=ranges["own_points"].to_numpy(dtype=float), minlength=n).astype(np.int64)
    work = np.bincount(code, weights=ranges["work_points"].to_numpy(dtype=float), minlength=n).astype(np.int64)
    nans = np.bincount(code, weights=ranges["nan_points"].to_numpy(dtype=float), minlength=n) > 0
    span = region.minutes_between(start_at, end_at) - lead[first_cell] - np.where(retired, tail[last_cell], 0) - own
    total = np.bincount(code, weights=ranges["work_sum"].to_numpy(dtype=float), minlength=n)
    p95 = _quantiles(cells.histogram, fine, np.maximum(span - work, 0), quantile)
    has = (span > 0) & ~nans
    last_time = joins.times_ns(ranges["last_time"])
    edges = _Edges(ranges, code, region, range_region, (first_cell, last_cell, start_at, end_at), retired)
    out = fine.keys.assign(
        max=joins.reduce_at(code, ranges["max"].to_numpy(dtype=float), n, np.fmax, np.nan),
        reported_max=joins.reduce_at(code, ranges["reported_max"].to_numpy(dtype=float), n, np.fmax, np.nan),
        mean=np.where(has, total / np.maximum(span, 1), np.nan),
        p95=np.where(has, p95, np.nan),
        minutes=np.maximum(span, 0),
        start=_utc(np.where(span > 0, edges.starts(span > 0), NAT)),
        end=_utc(np.where(span > 0, edges.ends(span > 0), NAT)),
        retired=retired,
        current_latest=last_time[last_cell] == region.last_minute[range_region],
    )
    return _typed(out.sort_values(RANGE, kind="stable").reset_index(drop=True))


class _Regions:
    """The region cells in (region, time) order, numbered by the ranges' regions, with running minutes."""

    def __init__(self, regions: pd.DataFrame, keys: pd.DataFrame) -> None:
        group = joins.match(regions, keys, REGION)
        keep = group >= 0
        regions = regions[keep]
        self.group = group[keep]
        bins = joins.times_ns(regions["time"])
        order = np.lexsort((bins, self.group))
        self.group, self.bins = self.group[order], bins[order]
        self.minutes = regions["minutes"].to_numpy(dtype=np.int64)[order]
        self.first_minute = joins.times_ns(regions["first_minute"])[order]
        self.last_minutes = joins.times_ns(regions["last_minute"])[order]
        self.distinct = np.unique(self.bins)
        self.stride = len(self.distinct) + 1
        self.key = self.group * self.stride + np.searchsorted(self.distinct, self.bins)  # sorted
        self.running = np.concatenate([[0], np.cumsum(self.minutes)])
        sizes = np.bincount(self.group, minlength=len(keys))
        self.first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.last = self.first + sizes - 1
        self.last_minute = self.last_minutes[np.maximum(self.last, 0)]

    def at(self, group: np.ndarray, bins: np.ndarray) -> np.ndarray:
        """The position of each (group, bin) among the region cells (every range cell has its region's)."""
        return np.searchsorted(self.key, group * self.stride + np.searchsorted(self.distinct, bins))

    def minutes_between(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The region minutes of the cells from `start` to `end` (positions, inclusive)."""
        between: np.ndarray = self.running[end + 1] - self.running[start]
        return between


class _Edges:
    """Each range's span's first and last minute that is not one of its own, from its cells' edge minutes: at
    the span's first (last) bin when that bin names one, which it almost always does; else by a walk over the
    bins (a range whose edge minutes were all its own: few)."""

    def __init__(
        self,
        ranges: pd.DataFrame,
        code: np.ndarray,
        region: _Regions,
        range_region: np.ndarray,
        bounds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        retired: np.ndarray,
    ) -> None:
        self.region, self.code, self.retired, self.range_region = region, code, retired, range_region
        self.first_cell, self.last_cell, self.start_at, self.end_at = bounds
        self.ranges = ranges
        self.lead = ranges["lead"].to_numpy(dtype=np.int64)
        self.tail = ranges["tail"].to_numpy(dtype=np.int64)
        self.edge = {
            name: joins.times_ns(ranges[name]) for name in ("open_first", "open_last", "lead_last", "tail_first")
        }
        self._cells: dict[int, dict[int, int]] | None = None

    def starts(self, wanted: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.edge["open_first"][self.first_cell].copy()  # the first bin names it: the common case
        for r in np.flatnonzero(wanted & (out == NAT)):
            out[r] = self._walk(int(r), range(int(self.start_at[r]), int(self.end_at[r]) + 1), self._first_in)
        return out

    def ends(self, wanted: np.ndarray) -> np.ndarray:
        last = self.last_cell
        at_end = self.region.at(self.range_region, joins.times_ns(self.ranges["time"])[last]) == self.end_at
        tail_open = (self.tail[last] > 0) & ~self.retired
        out: np.ndarray = np.where(
            ~at_end | tail_open, self.region.last_minutes[self.end_at], self.edge["open_last"][last]
        )  # after its last cell (or in its tail) the span ends at its region's last minute
        for r in np.flatnonzero(wanted & (out == NAT)):
            out[r] = self._walk(int(r), range(int(self.end_at[r]), int(self.start_at[r]) - 1, -1), self._last_in)
        return out

    def _walk(self, r: int, positions: range, look: Callable[[int, int], int]) -> int:
        for position in positions:
            found = look(r, position)
            if found != NAT:
                return found
        return NAT

    def _cell(self, r: int, position: int) -> int | None:
        if self._cells is None:
            at = self.region.at(self.range_region[self.code], joins.times_ns(self.ranges["time"]))
            self._cells = {}
            for row, (code, found) in enumerate(zip(self.code.tolist(), at.tolist(), strict=True)):
                self._cells.setdefault(code, {})[found] = row
        return self._cells.get(r, {}).get(position)

    def _first_in(self, r: int, position: int) -> int:
        row = self._cell(r, position)
        if row is None or (position != self.start_at[r] and self.lead[row] > 0):
            return int(self.region.first_minute[position])
        if self.edge["open_first"][row] != NAT:
            return int(self.edge["open_first"][row])
        if self.tail[row] > 0 and not (self.retired[r] and position == self.end_at[r]):
            return int(self.edge["tail_first"][row])
        return NAT

    def _last_in(self, r: int, position: int) -> int:
        row = self._cell(r, position)
        if row is None or (self.tail[row] > 0 and not (self.retired[r] and position == self.end_at[r])):
            return int(self.region.last_minutes[position])
        if self.edge["open_last"][row] != NAT:
            return int(self.edge["open_last"][row])
        if position != self.start_at[r] and self.lead[row] > 0:
            return int(self.edge["lead_last"][row])
        return NAT


def _quantiles(histogram: pd.DataFrame, fine: joins.Codes, zeros: np.ndarray, quantile: float) -> np.ndarray:
    """Per range: the `quantile` of its histogram's values and `zeros` more zeros (numpy's linear method)."""
    n = fine.size
    at = joins.match(histogram, fine.keys, RANGE) if len(histogram) else np.zeros(0, dtype=np.int64)
    keep = at >= 0
    codes = np.concatenate([at[keep], np.arange(n)])
    values = np.concatenate([histogram["value"].to_numpy(dtype=float)[keep], np.zeros(n)])
    counts = np.concatenate([histogram["count"].to_numpy(dtype=np.int64)[keep], zeros.astype(np.int64)])
    order = np.lexsort((values, codes))
    codes, values, counts = codes[order], values[order], counts[order]
    total = np.bincount(codes, weights=counts, minlength=n).astype(np.int64)
    running = np.cumsum(counts)  # the rank (exclusive end) of each value over all ranges
    offset = np.concatenate([[0], np.cumsum(total)[:-1]])
    h = quantile * (np.maximum(total, 1) - 1)
    low = np.floor(h).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(total - 1, 0))
    below = values[np.minimum(np.searchsorted(running, offset + low, side="right"), len(values) - 1)]
    above = values[np.minimum(np.searchsorted(running, offset + high, side="right"), len(values) - 1)]
    t = h - low
    lerp = np.where(t >= 0.5, above - (above - below) * (1 - t), below + (above - below) * t)  # numpy's _lerp
    return np.where(total > 0, lerp, np.nan)


def _first_row(codes: np.ndarray, n: int, *, reverse: bool = False) -> np.ndarray:
    """Per code, the first row holding it (of the reversed rows, as positions of the original, if `reverse`)."""
    out = np.full(n, -1, dtype=np.int64)
    found, rows = np.unique(codes, return_index=True)
    out[found] = rows if not reverse else len(codes) - 1 - rows
    return out


def _utc(ns: np.ndarray) -> pd.Series:
    return pd.Series(pd.to_datetime(ns, utc=True)).astype("datetime64[us, UTC]")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    times = dict.fromkeys(("start", "end"), "datetime64[us, UTC]")
    numbers = dict.fromkeys(("max", "reported_max", "mean", "p95"), "float64")
    return frame.astype({**numbers, **times, "minutes": "int64", "retired": bool, "current_latest": bool})
