"""Each pkrange's span of minutes, the one place the container model's per-range statistics are computed.

A range's span is the minutes its container reported (any range, in its region) from the range's first
point to the container's last, or to its own last point for a retired range (a split's parent); a minute
without a point counts 0% (the range reported no load while its container did), and the minutes that were
ruscope's own are left out (`analysis.load`'s module docstring states the rule). From the span:
`mean` (the hottest range's load, `analysis.hottest`), `p95` (the sustained load behind the saturation
finding, `analysis.load.summarize_partition_load`), `minutes`, `start` and `end`; and from the workload's
points (every one, before a minute's repeats are dropped), `max`, and of every point, the replay's in,
`reported_max` (Azure Monitor's figure as it is: the report's per-partition peak); `current_latest` says whether the range reported in its region's latest minute.

Why numpy over codes and not a grid of merges: a month of one-minute points for 100 ranges is 4.3 million
rows, and the grid the span describes is as large; merging it on string keys cost the Hot partitions page
about eight seconds. Here each row's position in its region's minutes is found once (`analysis.joins`), and
the grid is never built: a range's zeros are counted, not materialised. Pure functions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import joins
from store.records import METRICS, SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
RANGE = [*KEY, *METRICS.pick("region", "pkrange_id")]  # a range of the minutes: the metric's own dimensions
SPAN_COLUMNS = [*RANGE, "max", "reported_max", "mean", "p95", "minutes", "start", "end", "retired", "current_latest"]


def range_spans(minutes: pd.DataFrame, quantile: float) -> pd.DataFrame:
    """Per range of `minutes` (`analysis.load.MINUTE_COLUMNS`), sorted by RANGE: its span's statistics
    (`SPAN_COLUMNS`; `p95` is the `quantile` of the span's minutes). A range whose span holds no workload
    minute has NaN statistics and 0 minutes; `max` is NaN for a range with no workload point."""
    if minutes.empty:
        return _typed(pd.DataFrame(columns=SPAN_COLUMNS))
    fine = joins.group_codes(minutes, RANGE)
    range_region = joins.group_codes(fine.keys, [*KEY, "region"])  # each range's region (of its container)
    regional = joins.Codes(range_region.codes[fine.codes], range_region.keys)
    n_ranges = fine.size
    times = joins.times_ns(minutes["time"])
    values = minutes["normalized_ru"].to_numpy(dtype=float, na_value=np.nan)
    own = minutes["own"].to_numpy(dtype=bool)
    retired = np.zeros(n_ranges, dtype=bool)
    np.logical_or.at(retired, fine.codes, minutes["retired"].to_numpy(dtype=bool))
    # each row's position among its region's reported minutes (sorted), and each region's first and last
    distinct = np.sort(pd.unique(times))
    rank = np.searchsorted(distinct, times)
    width = len(distinct) + 1
    pairs = regional.codes * width + rank
    reported = np.sort(pd.unique(pairs))
    position = np.searchsorted(reported, pairs)
    region_last = np.searchsorted(reported, (np.arange(regional.size) + 1) * width) - 1
    # one point per range and minute (the first, as a merge of the deduplicated points keeps)
    workload = ~own  # the peak is of every workload point, as the rows hold them
    peak = _reduce(fine.codes[workload], values[workload], n_ranges, np.fmax, np.nan)
    kept = ~pd.Series(fine.codes * len(reported) + position).duplicated(keep="first").to_numpy()
    code, position, value, own = fine.codes[kept], position[kept], values[kept], own[kept]
    first = _reduce(code, position, n_ranges, np.minimum, len(reported))
    last = _reduce(code, position, n_ranges, np.maximum, -1)
    end = np.where(retired, last, region_last[range_region.codes])
    own_count = np.bincount(code[own], minlength=n_ranges)
    work = ~own
    work_count = np.bincount(code[work], minlength=n_ranges)
    span = end - first + 1 - own_count  # the span's minutes, its own ones left out
    total = np.bincount(code[work], weights=value[work], minlength=n_ranges)
    p95 = _quantiles(code[work], value[work], span - work_count, quantile)
    start, stop = _edges(code[own], position[own], first, end)
    minute_times = distinct[reported % width]
    out = fine.keys.assign(
        max=peak,
        reported_max=_reduce(fine.codes, values, n_ranges, np.fmax, np.nan),
        mean=np.where(span > 0, total / np.maximum(span, 1), np.nan),
        p95=np.where(span > 0, p95, np.nan),
        minutes=np.maximum(span, 0),
        start=_times(np.where(span > 0, minute_times[np.clip(start, 0, len(reported) - 1)], np.iinfo(np.int64).min)),
        end=_times(np.where(span > 0, minute_times[np.clip(stop, 0, len(reported) - 1)], np.iinfo(np.int64).min)),
        retired=retired,
        current_latest=last == region_last[range_region.codes],
    )
    return _typed(out.sort_values(RANGE, kind="stable").reset_index(drop=True))


def _reduce(codes: np.ndarray, values: np.ndarray, size: int, how: np.ufunc, empty: float) -> np.ndarray:
    """`how` (minimum, maximum, fmax) of `values` per code 0..size-1; `empty` where a code has none."""
    out = np.full(size, empty, dtype=float if isinstance(empty, float) else np.int64)
    how.at(out, codes, values)
    return out


def _quantiles(codes: np.ndarray, values: np.ndarray, zeros: np.ndarray, quantile: float) -> np.ndarray:
    """Per code: the `quantile` (linear, as pandas and numpy compute it) of its values and `zeros[code]` zeros."""
    out = np.full(len(zeros), np.nan)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(zeros) + 1))
    for code in range(len(zeros)):
        mine = values[order[bounds[code] : bounds[code + 1]]]
        extra = int(max(zeros[code], 0))
        if len(mine) + extra:
            out[code] = np.quantile(np.concatenate([mine, np.zeros(extra)]) if extra else mine, quantile)
    return out


def _edges(
    own_codes: np.ndarray, own_positions: np.ndarray, first: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per range: the first and last position of its span that is not one of its own minutes (own minutes are
    few: a python walk over the ranges that have any)."""
    start, stop = first.copy(), end.copy()
    if not len(own_codes):
        return start, stop
    frame = pd.DataFrame({"code": own_codes, "position": own_positions})
    for code, positions in zip(*_runs(frame), strict=True):
        taken = set(positions)
        while start[code] <= end[code] and int(start[code]) in taken:
            start[code] += 1
        while stop[code] >= start[code] and int(stop[code]) in taken:
            stop[code] -= 1
    return start, stop


def _runs(frame: pd.DataFrame) -> tuple[list[int], list[list[int]]]:
    """The codes of `frame` (code, position) and each one's positions."""
    grouped = frame.groupby("code")["position"].agg(list)
    return [int(code) for code in grouped.index.to_numpy()], list(grouped.to_list())


def _times(ns: np.ndarray) -> pd.Series:
    return pd.Series(pd.to_datetime(ns, utc=True)).astype("datetime64[us, UTC]")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    times = dict.fromkeys(("start", "end"), "datetime64[us, UTC]")
    numbers = dict.fromkeys(("max", "reported_max", "mean", "p95"), "float64")
    return frame.astype({**numbers, **times, "minutes": "int64", "retired": bool, "current_latest": bool})
