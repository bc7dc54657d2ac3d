"""What the load model reads of the store's frames: the columns, a metric's rows that name a container, times
in one resolution, a grain in seconds, a storage snapshot's latest rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.scope import in_containers
from store.records import METRICS, PARTITIONS, REQUESTS, SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
DEFAULT_GRAIN_SECONDS = 60.0
METRIC_COLUMNS = METRICS.pick(*KEY, "time", "metric", "aggregation", "pkrange_id", "value", "grain", "region")
REQUEST_COLUMNS = REQUESTS.pick(*KEY, "time", "pkrange_id", "request_charge")
PARTITION_COLUMNS = PARTITIONS.pick(*KEY, "time", "pkrange_id")


def grain_series_seconds(grains: pd.Series) -> pd.Series:
    """`grain_seconds` of every row, parsed once per distinct grain (a store holds a handful)."""
    codes, uniques = pd.factorize(grains.astype(object), use_na_sentinel=True)
    parsed = np.array([grain_seconds(g) for g in uniques] + [DEFAULT_GRAIN_SECONDS], dtype=float)
    return pd.Series(parsed[codes], index=grains.index)


def grain_seconds(grain: object) -> float:
    """An ISO 8601 duration ("PT1M", "PT5M") in seconds; a missing or unreadable grain is one minute."""
    try:
        seconds = pd.Timedelta(str(grain)).total_seconds() if isinstance(grain, str) and grain else 0.0
    except ValueError:
        seconds = 0.0
    return seconds if seconds > 0 else DEFAULT_GRAIN_SECONDS


def metric_rows(metrics: pd.DataFrame, name: str) -> pd.DataFrame:
    """One metric's rows that name a container and have a value."""
    rows = in_containers(metrics)
    return rows[rows["metric"].eq(name).fillna(False).astype(bool)].dropna(subset=["value"])


def utc(times: pd.Series) -> pd.Series:
    """Times as UTC timestamps of one resolution (a merge on time needs both sides alike)."""
    return pd.to_datetime(times, utc=True).astype("datetime64[ns, UTC]")


def latest_snapshot(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of each container's newest `time` (a storage snapshot)."""
    rows = in_containers(frame).dropna(subset=["time"])
    return rows[rows["time"].eq(rows.groupby(KEY)["time"].transform("max"))]
