"""Span cells: the per-minute facts of `analysis.load.partition_minutes` summarised per range and bin of time,
so that every statistic of a range's span (`analysis.spans.statistics`) is computed from cells of any width,
exactly, and a page over a month reads a few thousand cells instead of millions of minutes.

A bin of a range's span holds, in time order, the region's minutes before the range's first point in the bin
(`lead`: zeros of the span, unless the bin is where the span starts), the minutes from its first point to its
last (its points and the zeros between them), and the region's minutes after its last point (`tail`: zeros,
unless the range is retired and this is its last bin). The cells keep what that needs:

- **range cells** (`RANGE_CELL_COLUMNS`), per range and bin: `points` (one per minute: a minute's repeats are
  dropped, the first kept, as `analysis.spans` always did), `own_points`, `work_points`, `nan_points` (workload
  points without a value), `work_sum`; `max` (of every workload point, repeats included) at `max_time` (the
  earliest), `reported_max` (of every point, the replay's in); `first_time`, `last_time`; `lead`, `tail`, and
  the span's edge minutes the bin can name: `open_first`, `open_last` (the first and last minute from its
  first point to its last that is not one of its own), `lead_last` (the last lead minute), `tail_first`;
- **region cells** (`REGION_CELL_COLUMNS`), per container, region and bin: the region's reported `minutes`
  (any range's), `first_minute`, `last_minute`;
- **the histogram** (`HISTOGRAM_COLUMNS`), per range, bin and value: how many workload points had that value,
  at `P95_RESOLUTION`. The sustained p95 is of the span's minutes at that resolution (each minute's figure to
  the nearest whole point of normalized RU, then the linear quantile): a quantile of bounded data is not exact
  from any summary smaller than the data. A whole point keeps a range-day to at most 101 values (a month of
  100 ranges is at most 300,000 rows, not the 4.3 million minutes), and the findings compare the figure with
  whole-point thresholds (`analysis.capacity.rules.SATURATION_NORMALIZED_RU`, 90%). The mean and the peak are
  exact.

Pure; numpy over integer codes (`analysis.joins`), as `analysis.spans` was before: no string groupby on millions
of rows.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import joins
from store.records import METRICS, SCOPE_COLUMNS, SPAN_CELLS

KEY = list(SCOPE_COLUMNS)
REGION = [*KEY, *METRICS.pick("region")]
RANGE = [*KEY, *METRICS.pick("region", "pkrange_id")]  # a range of the minutes: the metric's own dimensions
P95_RESOLUTION = 1.0  # points of normalized RU: the sustained p95's resolution (module docstring)
NAT = np.iinfo(np.int64).min
# the cells' columns are the stored span cells' (`analysis.load.stored`): named through the schema
COUNTS = SPAN_CELLS.pick("points", "own_points", "work_points", "nan_points")
EDGES = SPAN_CELLS.pick("open_first", "open_last", "lead_last", "tail_first")
RANGE_CELL_COLUMNS = [
    *RANGE,
    *SPAN_CELLS.pick("time"),
    *COUNTS,
    *SPAN_CELLS.pick("work_sum", "max", "max_time", "reported_max", "first_time", "last_time", "lead", "tail"),
    *EDGES,
    "retired",  # decided at read time, never stored
]
REGION_CELL_COLUMNS = [*REGION, *SPAN_CELLS.pick("time", "minutes", "first_minute", "last_minute")]
HISTOGRAM_COLUMNS = [*RANGE, *SPAN_CELLS.pick("time", "value", "count")]
TIMES = [*SPAN_CELLS.pick("max_time", "first_time", "last_time"), *EDGES]


@dataclass(frozen=True)
class SpanCells:
    """The cells of one set of minutes (any width, or several: bins of different widths must not overlap)."""

    ranges: pd.DataFrame  # RANGE_CELL_COLUMNS
    regions: pd.DataFrame  # REGION_CELL_COLUMNS
    histogram: pd.DataFrame  # HISTOGRAM_COLUMNS

    @classmethod
    def concat(cls, parts: list[SpanCells]) -> SpanCells:
        """The cells of disjoint periods together."""
        parts = [part for part in parts if not part.ranges.empty]
        if not parts:
            return empty_cells()
        return cls(*(pd.concat([getattr(p, f) for p in parts], ignore_index=True) for f in cls.__dataclass_fields__))


def empty_cells() -> SpanCells:
    return SpanCells(
        _typed_ranges(pd.DataFrame(columns=RANGE_CELL_COLUMNS)),
        pd.DataFrame(columns=REGION_CELL_COLUMNS),
        pd.DataFrame(columns=HISTOGRAM_COLUMNS),
    )


def span_cells(minutes: pd.DataFrame, width: dt.timedelta, *, resolution: float = P95_RESOLUTION) -> SpanCells:
    """The cells of `minutes` (`analysis.load.MINUTE_COLUMNS`: RANGE, time, normalized_ru, own, retired) in bins
    of `width` from the epoch (UTC)."""
    if minutes.empty:
        return empty_cells()
    fine = joins.group_codes(minutes, RANGE)
    region_of_range = joins.group_codes(fine.keys, REGION)
    region = region_of_range.codes[fine.codes]
    times = joins.times_ns(minutes["time"])
    step = int(pd.Timedelta(width).value)
    values = minutes["normalized_ru"].to_numpy(dtype=float, na_value=np.nan)
    own = minutes["own"].to_numpy(dtype=bool)
    minute = _RegionMinutes(region, times, step)
    position = minute.position
    # one point per range and minute: the first row, as a merge of the deduplicated points keeps
    kept = ~pd.Series(fine.codes * len(minute.times) + position).duplicated(keep="first").to_numpy()
    bins = times // step * step
    bin_codes, bin_values = pd.factorize(bins)
    cell_codes, cell_keys = pd.factorize(fine.codes * (len(bin_values) + 1) + bin_codes)
    n = len(cell_keys)
    cell_range, cell_bin = cell_keys // (len(bin_values) + 1), bin_values[cell_keys % (len(bin_values) + 1)]

    if kept.all():  # no minute repeated (the collectors commit each once): no copies
        k_cell, k_pos, k_own, k_value = cell_codes, position, own, values
    else:
        k_cell, k_pos, k_own, k_value = cell_codes[kept], position[kept], own[kept], values[kept]
    k_work = ~k_own
    k_nan = k_work & np.isnan(k_value)
    first = joins.reduce_at(k_cell, k_pos, n, np.minimum, np.iinfo(np.int64).max)
    last = joins.reduce_at(k_cell, k_pos, n, np.maximum, -1)
    work_rows = ~own
    peak = joins.reduce_at(cell_codes[work_rows], values[work_rows], n, np.fmax, np.nan)
    lead, tail = minute.index[first], minute.run_length[first] - 1 - minute.index[last]
    own_positions = _positions_by_cell(k_cell[k_own], k_pos[k_own])
    open_first, open_last = _open_edges(first, last, own_positions)
    retired = np.zeros(fine.size, dtype=bool)
    np.logical_or.at(retired, fine.codes, minutes["retired"].to_numpy(dtype=bool))
    keys = fine.keys.iloc[cell_range].reset_index(drop=True)
    ranges = keys.assign(
        time=cell_bin,
        points=np.bincount(k_cell, minlength=n),
        own_points=np.bincount(k_cell[k_own], minlength=n),
        work_points=np.bincount(k_cell[k_work], minlength=n),
        nan_points=np.bincount(k_cell[k_nan], minlength=n),
        work_sum=np.bincount(k_cell[k_work & ~k_nan], weights=k_value[k_work & ~k_nan], minlength=n),
        max=peak,
        max_time=_time_of_peak(cell_codes[work_rows], values[work_rows], times[work_rows], peak),
        reported_max=joins.reduce_at(cell_codes, values, n, np.fmax, np.nan),
        first_time=minute.times[first],
        last_time=minute.times[last],
        lead=lead,
        tail=tail,
        open_first=np.where(open_first >= 0, minute.times[np.maximum(open_first, 0)], NAT),
        open_last=np.where(open_last >= 0, minute.times[np.maximum(open_last, 0)], NAT),
        lead_last=np.where(lead > 0, minute.times[np.maximum(first - 1, 0)], NAT),
        tail_first=np.where(tail > 0, minute.times[np.minimum(last + 1, len(minute.times) - 1)], NAT),
        retired=retired[cell_range],
    )
    histogram = _histogram(keys, cell_bin, k_cell[k_work & ~k_nan], k_value[k_work & ~k_nan], resolution)
    return SpanCells(_typed_ranges(ranges), minute.cells(region_of_range.keys), histogram)


def reclaimed(cells: SpanCells, points: pd.DataFrame, *, resolution: float = P95_RESOLUTION) -> SpanCells:
    """`cells` computed with some points counted as own (the stored cells count every minute the replay sent a
    request to as a candidate: `store.rollups`), with `points` (RANGE, `time`: the minute, `bin`: its cell's
    time, `normalized_ru`) given back to the workload, exactly as if they had never been own: the rule
    (`analysis.load`) is applied at read time to the candidates alone."""
    if points.empty or cells.ranges.empty:
        return cells
    ranges = cells.ranges.copy()
    at = joins.match(points.assign(time=points["bin"]), ranges, [*RANGE, "time"])
    points, at = points[at >= 0].reset_index(drop=True), at[at >= 0]
    every = points["normalized_ru"].to_numpy(dtype=float, na_value=np.nan)
    every_time = joins.times_ns(points["time"])
    n = len(ranges)
    peak = joins.reduce_at(
        at, every, n, np.fmax, np.nan
    )  # of every row, a minute's repeats in (as the peak always was)
    first = ~points.duplicated(subset=[*RANGE, "time"], keep="first").to_numpy()  # counted once per minute
    every_at = at
    points, at, values, times = points[first], at[first], every[first], every_time[first]
    known = ~np.isnan(values)
    ranges["own_points"] -= np.bincount(at, minlength=n)
    ranges["work_points"] += np.bincount(at, minlength=n)
    ranges["nan_points"] += np.bincount(at[~known], minlength=n)
    ranges["work_sum"] += np.bincount(at[known], weights=values[known], minlength=n)
    old_peak = ranges["max"].to_numpy(dtype=float)
    new_peak = np.fmax(old_peak, peak)
    new_time = _time_of_peak(every_at, every, every_time, new_peak)
    old_time = joins.times_ns(ranges["max_time"])
    kept_time = np.where(old_peak == new_peak, old_time, NAT)
    both = np.where((kept_time != NAT) & (new_time != NAT), np.minimum(kept_time, new_time), NAT)
    ranges["max"] = new_peak
    ranges["max_time"] = _utc(np.where(both != NAT, both, np.where(kept_time != NAT, kept_time, new_time)))
    opened, closed = joins.times_ns(ranges["open_first"]), joins.times_ns(ranges["open_last"])
    early = joins.reduce_at(at, times, n, np.minimum, np.iinfo(np.int64).max)
    late = joins.reduce_at(at, times, n, np.maximum, NAT)
    early = np.where(early == np.iinfo(np.int64).max, NAT, early)
    ranges["open_first"] = _utc(
        np.where(opened == NAT, early, np.where(early == NAT, opened, np.minimum(opened, early)))
    )
    ranges["open_last"] = _utc(np.maximum(closed, late))
    steps = np.round(values[known] / resolution).astype(np.int64)
    extra = (
        points[known][RANGE]
        .reset_index(drop=True)
        .assign(time=_utc(joins.times_ns(points["bin"])[known]), value=np.round(steps * resolution, 6), count=1)
    )
    histogram = pd.concat([cells.histogram, extra[HISTOGRAM_COLUMNS]], ignore_index=True)
    return SpanCells(_typed_ranges(ranges), cells.regions, histogram)


class _RegionMinutes:
    """The distinct reported minutes of each region (container and region), sorted by region then time, in
    runs of one bin each; each row's minute among them (`position`)."""

    def __init__(self, region: np.ndarray, times: np.ndarray, step: int) -> None:
        distinct = np.unique(times)
        width = len(distinct) + 1
        pairs = region * width + np.searchsorted(distinct, times)
        reported = np.unique(pairs)
        self.position = np.searchsorted(reported, pairs)
        self.region = reported // width
        self.times = distinct[reported % width]
        self.bins = self.times // step * step
        change = np.flatnonzero((np.diff(self.region) != 0) | (np.diff(self.bins) != 0)) + 1
        starts = np.concatenate([[0], change])
        lengths = np.diff(np.concatenate([starts, [len(reported)]]))
        self.run_start, self.run_lengths = starts, lengths
        run = np.repeat(np.arange(len(starts)), lengths)
        self.index = np.arange(len(reported)) - starts[run]  # a minute's place in its bin
        self.run_length = lengths[run]

    def cells(self, regions: pd.DataFrame) -> pd.DataFrame:
        """One region cell per run (`REGION_CELL_COLUMNS`)."""
        ends = self.run_start + self.run_lengths - 1
        out: pd.DataFrame = regions.iloc[self.region[self.run_start]].reset_index(drop=True)
        return out.assign(
            time=_utc(self.bins[self.run_start]),
            minutes=self.run_lengths.astype(np.int64),
            first_minute=_utc(self.times[self.run_start]),
            last_minute=_utc(self.times[ends]),
        )


def _positions_by_cell(cells: np.ndarray, positions: np.ndarray) -> dict[int, set[int]]:
    """Per cell with any, the positions of its own points."""
    out: dict[int, set[int]] = {}
    for cell, position in zip(cells.tolist(), positions.tolist(), strict=True):
        out.setdefault(cell, set()).add(position)
    return out


def _open_edges(first: np.ndarray, last: np.ndarray, own: dict[int, set[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per cell, the first and last position from its first point to its last that is not one of its own
    points (-1: none). Own points are few: a walk over the cells that have any."""
    start, stop = first.copy(), last.copy()
    for cell, taken in own.items():
        while start[cell] <= last[cell] and int(start[cell]) in taken:
            start[cell] += 1
        while stop[cell] >= first[cell] and int(stop[cell]) in taken:
            stop[cell] -= 1
        if start[cell] > last[cell]:
            start[cell] = stop[cell] = -1
    return start, stop


def _time_of_peak(cells: np.ndarray, values: np.ndarray, times: np.ndarray, peak: np.ndarray) -> np.ndarray:
    """Per cell, the earliest time of a row holding its peak (NaT for a cell without one)."""
    hit = values == peak[cells]
    found = joins.reduce_at(cells[hit], times[hit], len(peak), np.minimum, np.iinfo(np.int64).max)
    return np.where(found == np.iinfo(np.int64).max, NAT, found)


def _histogram(
    keys: pd.DataFrame, bins: np.ndarray, cells: np.ndarray, values: np.ndarray, resolution: float
) -> pd.DataFrame:
    """Per cell and value at `resolution`, how many of its workload points had it."""
    steps = np.round(values / resolution).astype(np.int64)
    low = int(steps.min()) if len(steps) else 0
    stride = int(steps.max()) - low + 1 if len(steps) else 1
    pairs = cells * stride + (steps - low)
    if len(keys) * stride <= 4 * len(pairs) + 1_000_000:  # few cells (a day's or a week's): counted densely
        dense = np.bincount(pairs, minlength=len(keys) * stride)
        pair = np.flatnonzero(dense)
        counted = pd.Series(dense[pair], index=pair)
    else:
        counted = pd.Series(pairs).value_counts(sort=False).sort_index()
        pair = counted.index.to_numpy(dtype=np.int64)
    cell = pair // stride
    out = keys.iloc[cell].reset_index(drop=True)
    return out.assign(
        time=_utc(bins[cell]),
        value=np.round((pair % stride + low) * resolution, 6),
        count=counted.to_numpy(dtype=np.int64),
    )[HISTOGRAM_COLUMNS]


def _utc(ns: np.ndarray) -> pd.Series:
    return pd.Series(pd.to_datetime(ns, utc=True)).astype("datetime64[us, UTC]")


def typed(cells: SpanCells) -> SpanCells:
    """`cells` in the dtypes `span_cells` gives them (cells read back from the store: `analysis.load.stored`)."""
    regions = cells.regions.astype(
        {"minutes": "int64", **dict.fromkeys(["time", "first_minute", "last_minute"], "datetime64[us, UTC]")}
    )
    histogram = cells.histogram.astype({"value": "float64", "count": "int64", "time": "datetime64[us, UTC]"})
    return SpanCells(_typed_ranges(cells.ranges), regions, histogram)


def _typed_ranges(frame: pd.DataFrame) -> pd.DataFrame:
    times = {name: "datetime64[us, UTC]" for name in ["time", *TIMES]}
    for name in ["time", *TIMES]:
        if name in frame and len(frame) and frame[name].dtype.kind in "iu":
            frame[name] = _utc(frame[name].to_numpy())
    counts = dict.fromkeys([*COUNTS, "lead", "tail"], "int64")
    numbers = dict.fromkeys(["work_sum", "max", "reported_max"], "float64")
    return frame.astype({**times, **counts, **numbers, "retired": bool})
