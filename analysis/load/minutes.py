"""The facts per container, pkrange and interval (`partition_minutes`): NormalizedRUConsumption, the replay's RU
in it, the budget in force and whether the minute is ruscope's own (the package docstring states the rule)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import joins, own_traffic
from analysis.load.frames import DEFAULT_GRAIN_SECONDS, KEY, grain_series_seconds, metric_rows, utc
from analysis.load.layout import provisioned_timeline, reported_of, snapshot_counts
from analysis.scope import in_containers
from cosmoscore.monitor.metrics import NORMALIZED_RU
from store.records import METRICS, SPAN_CELLS

OWN_SHARE = 0.5  # the rule (module docstring): the replay's busiest second carries half the minute's figure
MINUTE_COLUMNS = [
    *KEY,
    "region",
    "pkrange_id",
    "time",
    "grain_s",
    "normalized_ru",
    "own_ru",
    "own_peak_second_ru",
    "provisioned_ru_s",
    "partitions",
    "budget_ru_s",
    "own_normalized_ru",
    "own",
    "retired",
]


def partition_minutes(
    metrics: pd.DataFrame, requests: pd.DataFrame | None = None, partitions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per NormalizedRUConsumption point split by pkrange (the collector asks for Maximum only), with
    the replay's RU in it, the budget and whether it is ruscope's own (`MINUTE_COLUMNS`, the module docstring)."""
    points = normalized_points(metrics)
    fine = joins.group_codes(points, RANGE_REGION)  # the large frame factorized once, for both steps
    return marked(with_own_traffic(points, requests, fine), metrics, partitions, fine=fine)


POINT_COLUMNS = [*KEY, "region", "pkrange_id", "time", "grain_s", "normalized_ru"]
RANGE_REGION = [*KEY, *METRICS.pick("pkrange_id", "region")]
OWN_COLUMNS = SPAN_CELLS.pick("own_ru", "own_peak_second_ru")  # a minute's, as the span cells store a candidate's


def normalized_points(metrics: pd.DataFrame) -> pd.DataFrame:
    """The NormalizedRUConsumption points split by pkrange (`POINT_COLUMNS`)."""
    rows = metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id", "time"])
    if rows.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    region = rows["region"].astype(object).fillna("") if "region" in rows.columns else ""
    return pd.DataFrame(
        {
            **{name: rows[name].astype(str) for name in KEY},
            "region": region,
            "pkrange_id": rows["pkrange_id"].astype(str),
            "time": utc(rows["time"]),
            "grain_s": grain_series_seconds(rows["grain"]) if "grain" in rows else DEFAULT_GRAIN_SECONDS,
            "normalized_ru": rows["value"].astype(float),
        }
    ).reset_index(drop=True)


def with_own_traffic(
    points: pd.DataFrame, requests: pd.DataFrame | None, fine: joins.Codes | None = None
) -> pd.DataFrame:
    """`points` (`normalized_points`) with the replay's RU in each and its busiest second (`OWN_COLUMNS`);
    `fine`: the points' `joins.group_codes` by RANGE_REGION, when the caller has them."""
    own = own_per_interval(requests, points["grain_s"].drop_duplicates(), by_pkrange=True)
    if points.empty or own.empty:
        return points.assign(own_ru=0.0, own_peak_second_ru=0.0)
    fine = joins.group_codes(points, RANGE_REGION) if fine is None else fine
    return _with_own(points, joins.coarser(fine, [*KEY, "pkrange_id"]), own)


def marked(
    points: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame | None,
    reported: pd.DataFrame | None = None,
    *,
    fine: joins.Codes | None = None,
) -> pd.DataFrame:
    """`points` with the replay's RU (`with_own_traffic`) given the budget in force (from `metrics`' throughput
    and `partitions`' snapshots), the replay's share and the rule's mark (`MINUTE_COLUMNS`). `reported`: the
    layout the metrics reported in their latest interval (`layout.reported_of`: the fallback without a
    snapshot), when the caller knows it from more minutes than `points` (cells: `analysis.load.stored`);
    `fine`: as `with_own_traffic` takes them."""
    if points.empty:
        return pd.DataFrame(columns=MINUTE_COLUMNS).astype({"own": bool})
    fine = joins.group_codes(points, RANGE_REGION) if fine is None else fine
    ranges = joins.coarser(fine, [*KEY, "pkrange_id"])
    containers = joins.coarser(fine, KEY)
    times = joins.times_ns(points["time"])
    if reported is None:
        reported = reported_of(joins.coarser(fine, [*KEY, "region"]), ranges, times, containers)
    minutes = _with_budgets(points, containers, times, metrics, partitions, reported)
    share = minutes["own_peak_second_ru"] / minutes["budget_ru_s"].where(minutes["budget_ru_s"] > 0) * 100
    minutes["own_normalized_ru"] = share.round(4)
    mine = share.ge(OWN_SHARE * minutes["normalized_ru"]) & minutes["own_peak_second_ru"].gt(0)
    minutes["own"] = mine.fillna(False).astype(bool)
    minutes["retired"] = retired_ranges(ranges.keys, partitions).to_numpy(dtype=bool)[ranges.codes]
    return minutes[MINUTE_COLUMNS]


def _with_own(minutes: pd.DataFrame, ranges: joins.Codes, own: pd.DataFrame) -> pd.DataFrame:
    """`minutes` with the replay's `own_ru` and `own_peak_second_ru` in each (0 where it sent nothing)."""
    if own.empty:
        return minutes.assign(own_ru=0.0, own_peak_second_ru=0.0)
    known = joins.match(own, ranges.keys, [*KEY, "pkrange_id"])
    own = own.assign(range=known)[known >= 0]  # a range with no metric point has no minute to add the replay to
    at = joins.match(minutes[["time", "grain_s"]].assign(range=ranges.codes), own, ["range", "time", "grain_s"])
    found = {name: own[name].to_numpy(dtype=float, na_value=0.0) for name in ("own_ru", "own_peak_second_ru")}
    return minutes.assign(**{name: np.where(at >= 0, values[np.maximum(at, 0)], 0.0) for name, values in found.items()})


def retired_ranges(minutes: pd.DataFrame, partitions: pd.DataFrame | None) -> pd.Series:
    """Per row (KEY and pkrange_id): whether its pkrange is gone (a split's parent): not in its container's
    latest storage snapshot; without snapshots, no range is known to be gone."""
    snapshot = in_containers(partitions).dropna(subset=["time", "pkrange_id"]) if partitions is not None else None
    if snapshot is None or snapshot.empty:
        return pd.Series(False, index=minutes.index)
    latest = snapshot[snapshot["time"].eq(snapshot.groupby(KEY)["time"].transform("max"))]
    listed = latest[KEY].astype(str).assign(pkrange_id=latest["pkrange_id"].astype(str), _listed=True).drop_duplicates()
    known = minutes[KEY].merge(latest[KEY].astype(str).drop_duplicates(), on=KEY, how="left", indicator=True)
    found = minutes[[*KEY, "pkrange_id"]].merge(listed, on=[*KEY, "pkrange_id"], how="left")["_listed"]
    retired = known["_merge"].eq("both").to_numpy() & ~found.eq(True).to_numpy()
    return pd.Series(retired, index=minutes.index)


def own_per_interval(
    requests: pd.DataFrame | None, grains: pd.Series | list[float], *, by_pkrange: bool
) -> pd.DataFrame:
    """The replay's RU per container (and pkrange) and interval of each grain in `grains` (seconds): `own_ru`,
    and `own_peak_second_ru`, its busiest clock second (`analysis.own_traffic.replay_ru_per_second`); requests
    outside any container are left out, and per pkrange those the response named none for."""
    keys = [*KEY, "pkrange_id"] if by_pkrange else KEY
    columns = [*keys, "time", "grain_s", "own_ru", "own_peak_second_ru"]
    seconds = own_traffic.replay_ru_per_second(requests, by_pkrange=by_pkrange) if requests is not None else None
    if seconds is None or seconds.empty:
        return pd.DataFrame(columns=columns)
    if by_pkrange:
        seconds = seconds[seconds["pkrange_id"].ne("")]
    found = []
    for grain in sorted({float(g) for g in grains}):
        interval = seconds.assign(time=seconds["second"].dt.floor(pd.Timedelta(seconds=grain)), grain_s=grain)
        found.append(
            interval.groupby([*keys, "time", "grain_s"])
            .agg(own_ru=("ru", "sum"), own_peak_second_ru=("ru", "max"))
            .reset_index()
        )
    return pd.concat(found, ignore_index=True)[columns] if found else pd.DataFrame(columns=columns)


def _with_budgets(
    minutes: pd.DataFrame,
    containers: joins.Codes,
    times: np.ndarray,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame | None,
    reported: pd.DataFrame,
) -> pd.DataFrame:
    """`minutes` (numbered by container: `containers`; `times` theirs, `times_ns`) with the `provisioned_ru_s`,
    `partitions` and `budget_ru_s` in force at each (the package docstring; `reported`: `layout.reported_of`)."""
    provisioned = _as_of(containers, times, provisioned_timeline(metrics), "provisioned_ru_s")
    counts = _as_of(containers, times, snapshot_counts(partitions), "partitions")
    at = joins.match(containers.keys, reported, KEY)
    fallback = np.where(at >= 0, reported["partitions"].to_numpy(dtype=float)[np.maximum(at, 0)], np.nan)
    counts = np.where(np.isnan(counts), fallback[containers.codes], counts)
    budget = provisioned / np.where(counts > 0, counts, np.nan)
    return minutes.assign(provisioned_ru_s=provisioned, partitions=counts, budget_ru_s=np.round(budget, 4))


def _as_of(containers: joins.Codes, times: np.ndarray, timeline: pd.DataFrame, column: str) -> np.ndarray:
    """Per minute (its container's code and its time): `column` from `timeline` (KEY, time, column), the value
    at or before the minute, else the first one after it (NaN for a container the timeline does not have)."""
    if timeline.empty:
        return np.full(len(times), np.nan)
    groups = joins.match(timeline, containers.keys, KEY)
    before, after = joins.as_of(containers.codes, times, groups, joins.times_ns(timeline["time"]))
    values = timeline[column].to_numpy(dtype=float, na_value=np.nan)
    earlier = np.where(before >= 0, values[np.maximum(before, 0)], np.nan)
    later = np.where(after >= 0, values[np.maximum(after, 0)], np.nan)
    return np.where(np.isnan(earlier), later, earlier)
