"""Per container, over the workload's minutes: the peak minute and the sustained load (the largest p95 of a
range's minutes), the own minutes left out, and the words a page prints beside such a figure."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import joins, spans
from analysis.load.frames import KEY
from analysis.pkrange_ids import pkrange_sort_key

SUSTAINED_QUANTILE = 0.95  # = analysis.capacity.rules.SATURATION_QUANTILE (tests/analysis/test_load.py checks)
SUSTAINED_COLUMNS = [
    "sustained_normalized_ru",
    "sustained_pkrange",
    "sustained_minutes",
    "sustained_start",
    "sustained_end",
]
LOAD_COLUMNS = [*KEY, "max_normalized_ru", "peak_pkrange", "peak_time", *SUSTAINED_COLUMNS, "own_minutes_excluded"]


def workload_minutes(minutes: pd.DataFrame) -> pd.DataFrame:
    """The rows of `partition_minutes` that are the workload's (not ruscope's own)."""
    return minutes[~minutes["own"].astype(bool)]


def summarize_partition_load(minutes: pd.DataFrame, ranges: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per container with normalized RU points: the workload's peak minute and sustained load, and the own
    minutes left out (`LOAD_COLUMNS`, the package docstring); a container whose every minute was the replay's
    has no peak or sustained figure (NaN) and its count of own minutes. `ranges`: the caller's
    `analysis.spans.range_spans(minutes, SUSTAINED_QUANTILE)`."""
    cells = spans.span_cells(minutes, spans.BIN)
    return summarize_cells(cells, spans.span_statistics(cells, SUSTAINED_QUANTILE) if ranges is None else ranges)


def summarize_cells(cells: spans.SpanCells, ranges: pd.DataFrame) -> pd.DataFrame:
    """`summarize_partition_load` from span cells (of any width: the same figures) and their statistics."""
    frame = cells.ranges
    if frame.empty:
        return _typed_load(pd.DataFrame(columns=LOAD_COLUMNS))
    containers = joins.group_codes(frame, KEY)
    own = containers.keys.assign(
        own_minutes_excluded=np.bincount(
            containers.codes, weights=frame["own_points"].to_numpy(dtype=float), minlength=containers.size
        ).astype(np.int64)
    ).sort_values(KEY, kind="stable")
    peaks = _peak_minutes(frame)
    # a range a split retired (the latest snapshot no longer lists it) is history: the sustained load an
    # action reads is a current range's, so a finding never names a partition that is gone
    per = ranges[ranges["minutes"].gt(0) & ~ranges["retired"]]
    per = per.rename(
        columns={
            "p95": "sustained_normalized_ru",
            "minutes": "sustained_minutes",
            "start": "sustained_start",
            "end": "sustained_end",
        }
    )
    per = per.sort_values(["sustained_normalized_ru", "pkrange_id"], ascending=[False, True], kind="stable")
    sustained = per.drop_duplicates(subset=KEY).rename(columns={"pkrange_id": "sustained_pkrange"})
    sustained = sustained[[*KEY, *SUSTAINED_COLUMNS]]
    out = own.merge(peaks, on=KEY, how="left").merge(sustained, on=KEY, how="left")
    out["sustained_normalized_ru"] = out["sustained_normalized_ru"].astype(float).round(4)
    return _typed_load(out.reindex(columns=LOAD_COLUMNS).reset_index(drop=True))


def _peak_minutes(cells: pd.DataFrame) -> pd.DataFrame:
    """Per container: its busiest workload minute, its range and time (`max_normalized_ru`, `peak_pkrange`,
    `peak_time`); of equal ones the earliest, then the first range in id order (`pkrange_sort_key`), then
    region."""
    columns = [*KEY, "max_normalized_ru", "peak_pkrange", "peak_time"]
    found = cells.dropna(subset=["max"])
    if found.empty:
        return pd.DataFrame(columns=columns)
    order = found["pkrange_id"].astype(str).map(pkrange_sort_key)
    found = found.assign(_order=order).sort_values(
        ["max", "max_time", "_order", "region"], ascending=[False, True, True, True], kind="stable"
    )
    picked = found.drop_duplicates(subset=KEY)
    return pd.DataFrame(
        {
            **{name: picked[name].to_numpy() for name in KEY},
            "max_normalized_ru": picked["max"].to_numpy(dtype=float),
            "peak_pkrange": picked["pkrange_id"].to_numpy(),
            "peak_time": picked["max_time"].to_numpy(),
        }
    )


def own_traffic_note(own_minutes_excluded: object, own_ru_subtracted: object) -> str:
    """The words a page or the report prints beside a figure that left ruscope's own traffic out ("" when
    nothing was): how many pkrange-minutes of normalized RU were the replay's and how much RU was subtracted."""
    minutes, ru = int(_number(own_minutes_excluded)), _number(own_ru_subtracted)
    parts = [f"{minutes} pkrange-minute{'s' * (minutes != 1)} of normalized RU"] if minutes else []
    parts += [f"{ru:,.0f} RU of consumed RU"] if ru > 0 else []
    return f"ruscope's replay left out: {' and '.join(parts)}" if parts else ""


def _number(value: object) -> float:
    """A number, 0 for a missing one (None, NaN, pd.NA) or one that is not a number."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if np.isnan(number) else number


def _typed_load(frame: pd.DataFrame) -> pd.DataFrame:
    numbers = {"max_normalized_ru": "float64", "sustained_normalized_ru": "float64"}
    counts = {"sustained_minutes": "Int64", "own_minutes_excluded": "Int64"}
    times = dict.fromkeys(("peak_time", "sustained_start", "sustained_end"), "datetime64[us, UTC]")
    return frame.astype({**numbers, **counts, **times})
