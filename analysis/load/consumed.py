"""Consumed RU per container and interval (TotalRequestUnits, the replay's RU subtracted) and its peak and p95
RU/s."""

from __future__ import annotations

import pandas as pd

from analysis.load.frames import DEFAULT_GRAIN_SECONDS, KEY, grain_series_seconds, metric_rows, utc
from analysis.load.minutes import own_per_interval
from cosmoscore.monitor.metrics import TOTAL_REQUEST_UNITS

CONSUMED_COLUMNS = [*KEY, "time", "grain_s", "ru_s", "own_ru", "workload_ru_s"]
CONSUMED_SUMMARY_COLUMNS = [*KEY, "peak_ru_s", "p95_ru_s", "own_ru_subtracted"]


def consumed_intervals(metrics: pd.DataFrame, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per container and TotalRequestUnits interval (Total, summed over its dimension rows): the RU/s Azure
    Monitor counted (`ru_s`, the interval's RU over its grain), the replay's RU in it (`own_ru`) and the
    workload's RU/s, (total - own) / grain, never below 0 (`CONSUMED_COLUMNS`)."""
    rows = metric_rows(metrics, TOTAL_REQUEST_UNITS).dropna(subset=["time"])
    rows = rows[rows["aggregation"].fillna("Total").eq("Total").fillna(False).astype(bool)]
    if rows.empty:
        return pd.DataFrame(columns=CONSUMED_COLUMNS)
    frame = pd.DataFrame(
        {
            **{name: rows[name].astype(str) for name in KEY},
            "time": utc(rows["time"]),
            "grain_s": grain_series_seconds(rows["grain"]) if "grain" in rows else DEFAULT_GRAIN_SECONDS,
            "ru": rows["value"].astype(float),
        }
    )
    intervals = frame.groupby([*KEY, "time"]).agg(grain_s=("grain_s", "max"), ru=("ru", "sum")).reset_index()
    own = own_per_interval(requests, intervals["grain_s"].drop_duplicates(), by_pkrange=False)
    intervals = intervals.merge(own.drop(columns="own_peak_second_ru"), on=[*KEY, "time", "grain_s"], how="left")
    intervals["own_ru"] = intervals["own_ru"].astype(float).fillna(0.0)
    intervals["ru_s"] = intervals["ru"] / intervals["grain_s"]
    intervals["workload_ru_s"] = ((intervals["ru"] - intervals["own_ru"]).clip(lower=0) / intervals["grain_s"]).round(4)
    return intervals[CONSUMED_COLUMNS]


def summarize_consumed(consumed: pd.DataFrame) -> pd.DataFrame:
    """Per container: the workload's busiest interval and 95th percentile in RU/s (per-interval averages, the
    replay's RU subtracted), and the replay's RU subtracted (`CONSUMED_SUMMARY_COLUMNS`)."""
    if consumed.empty:
        return pd.DataFrame(columns=CONSUMED_SUMMARY_COLUMNS).astype(dict.fromkeys(CONSUMED_SUMMARY_COLUMNS[3:], float))
    grouped = consumed.groupby(KEY)
    out = pd.DataFrame(
        {
            "peak_ru_s": grouped["workload_ru_s"].max().round(2),
            "p95_ru_s": grouped["workload_ru_s"].quantile(0.95).round(2),
            "own_ru_subtracted": grouped["own_ru"].sum().round(2),
        }
    )
    return out.reset_index()[CONSUMED_SUMMARY_COLUMNS]
