"""The time bins a heatmap draws: round widths (`NICE_BINS`) chosen for a range and a row count so that rows x
columns stays within `MAX_CELLS` (`heatmap_bin`), aligned to the epoch, and the max (or sum) of the points per
row and bin (`binned`); and which rollup tier's cells nest in such bins (`cell_tier`: a heatmap drawn from
`metric_cells` has the maxima of the points). Pure; integer codes and one grouped reduction, never a Python
loop over points."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from store.rollups.tiers import Tier

MAX_CELLS = 50_000  # a heatmap a browser draws at once (100 pkranges x MAX_COLUMNS is 30,000 cells)
MAX_COLUMNS = 300
NICE_BINS = [
    pd.Timedelta(s)
    for s in ("1min", "2min", "5min", "10min", "15min", "30min", "1h", "2h", "3h", "6h", "12h", "1D", "2D", "7D")
]


def heatmap_bin(
    span: pd.Timedelta,
    n_rows: int,
    *,
    max_cells: int = MAX_CELLS,
    max_columns: int = MAX_COLUMNS,
    smallest: pd.Timedelta = NICE_BINS[0],
) -> pd.Timedelta:
    """The smallest round bin (at least `smallest`) giving at most min(max_columns, max_cells / rows) columns
    over `span`; the largest round bin when none does."""
    columns = max(1, min(max_columns, max_cells // max(n_rows, 1)))
    for step in NICE_BINS:
        if step >= smallest and span / step <= columns:
            return step
    return NICE_BINS[-1]


def binned(
    row: np.ndarray,
    ns: np.ndarray,
    values: np.ndarray,
    n_rows: int,
    *,
    max_cells: int,
    max_columns: int,
    how: str,
    smallest: pd.Timedelta = NICE_BINS[0],
    span: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, pd.Timedelta]:
    """Aggregate points (`ns`: `naive_ns` times) into a rows x bins matrix (`how`: "max" or "sum"), bins aligned
    to the epoch; NaN where a bin has no point. `span`: the first and last time the points cover, when some are
    cells that start before their first point (`summarize_normalized_heatmap`)."""
    first, last = span if span is not None else (int(ns.min()), int(ns.max()))
    step = heatmap_bin(
        pd.Timedelta(last - first, "ns") + smallest,
        n_rows,
        max_cells=max_cells,
        max_columns=max_columns,
        smallest=smallest,
    )
    width = step.value
    origin = first // width * width
    column = (ns - origin) // width
    n_columns = int((last - origin) // width) + 1
    flat = row.astype(np.int64) * n_columns + column
    grouped = pd.Series(values).groupby(flat, sort=False)
    cells = grouped.max() if how == "max" else grouped.sum()
    z = np.full(n_rows * n_columns, np.nan)
    z[cells.index.to_numpy(dtype=np.int64)] = cells.to_numpy(dtype=float)
    starts = (origin + np.arange(n_columns, dtype=np.int64) * width).astype("datetime64[ns]")
    return z.reshape(n_rows, n_columns), starts, step


def naive_ns(times: pd.Series) -> np.ndarray:
    """Times as int64 nanoseconds since the epoch (UTC)."""
    values = pd.DatetimeIndex(times)
    if values.tz is not None:
        values = values.tz_convert("UTC").tz_localize(None)
    return values.as_unit("ns").asi8


def smallest_step(ns: np.ndarray) -> pd.Timedelta:
    """The smallest round bin at least as wide as the gap between the closest distinct times (one minute when
    there is one time): a 5-minute log bin is not drawn as four empty minutes and a full one."""
    distinct = np.unique(ns)
    gap = pd.Timedelta(int(np.diff(distinct).min()), "ns") if len(distinct) > 1 else NICE_BINS[0]
    return next((step for step in NICE_BINS if step >= gap), NICE_BINS[-1])


def cell_tier(step: pd.Timedelta, tiers: Sequence[Tier]) -> Tier | None:
    """The coarsest rollup tier whose cells nest in the heatmap's bins of `step` (None: none does)."""
    nesting = [tier for tier in tiers if pd.Timedelta(step) % pd.Timedelta(tier.width) == pd.Timedelta(0)]
    return max(nesting, key=lambda tier: tier.width) if nesting else None
