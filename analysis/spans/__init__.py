"""Each pkrange's span of minutes, the one place the container model's per-range statistics are computed.

A range's span is the minutes its container reported (any range, in its region) from the range's first
point to the container's last, or to its own last point for a retired range (a split's parent); a minute
without a point counts 0% (the range reported no load while its container did), and the minutes that were
ruscope's own are left out (`analysis.load`'s module docstring states the rule). From the span:
`mean` (the hottest range's load, `analysis.hottest`), `p95` (the sustained load behind the saturation
finding, `analysis.load.summarize_partition_load`; of the span's minutes at `P95_RESOLUTION`, a whole point),
`minutes`, `start` and `end` (its first and last minute that is not its own); and from the workload's points
(every one, before a minute's repeats are dropped), `max`, and of every point, the replay's in,
`reported_max` (Azure Monitor's figure as it is: the report's per-partition peak); `current_latest` says
whether the range reported in its region's latest minute.

The statistics are computed from **span cells** (`cells`: per range and bin, the counts, sums, edges and a
histogram that merge exactly), never from a grid of the span: `range_spans` of minutes is `statistics` of
their cells, and a page over a long history computes the same figures from stored cells of any width
(issue 27). The package:
- `cells`: the span cells of minutes in bins of any width (`span_cells`, `SpanCells`);
- `statistics`: the span statistics from cells (`span_statistics`, `SPAN_COLUMNS`).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from analysis.spans.cells import KEY, P95_RESOLUTION, RANGE, SpanCells, reclaimed, span_cells
from analysis.spans.statistics import SPAN_COLUMNS, span_statistics

BIN = dt.timedelta(days=1)  # the cells `range_spans` computes through: any width gives the same statistics

__all__ = [
    "KEY",
    "P95_RESOLUTION",
    "RANGE",
    "SPAN_COLUMNS",
    "SpanCells",
    "range_spans",
    "reclaimed",
    "span_cells",
    "span_statistics",
]


def range_spans(minutes: pd.DataFrame, quantile: float) -> pd.DataFrame:
    """Per range of `minutes` (`analysis.load.MINUTE_COLUMNS`), sorted by RANGE: its span's statistics
    (`SPAN_COLUMNS`; `p95` is the `quantile` of the span's minutes). A range whose span holds no workload
    minute has NaN statistics and 0 minutes; `max` is NaN for a range with no workload point."""
    return span_statistics(span_cells(minutes, BIN), quantile)
