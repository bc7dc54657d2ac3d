"""What the throughput planner (`analysis.capacity.planner`) reads from the store's frames, per container:
the 429 terms of Microsoft's redistribution formula (`throttle_terms`), the per-minute evidence of burst
capacity (`burst_minutes`) and the storage of a merge's second condition (`partition_storage`); and what
every container finding reads beside the container model: the partition layout and the most saturated
range (`with_layout`, `saturation_stats`). Pure functions; each says where its figures come from and what
the store cannot show.

What the store has (azure-monitor.md §5, §6.4): NormalizedRUConsumption per pkrange and minute (Maximum);
TotalRequests and TotalRequestUnits per container split by StatusCode, with no partition dimension; the
logs' requests and 429s per physical partition, named by the partition's GUID (PartitionId), which no store
column maps to a pkrange id (the stand-in writes pkrange ids, so there the logs count 429s per partition);
the replay's own requests per pkrange; the storage snapshot's size per pkrange.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis import load, overview, regions
from analysis.capacity.autoscale import denied_intervals
from analysis.scope import in_containers, window_text
from cosmoscore.limits import GB
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS

KEY = overview.KEY


@dataclass(frozen=True, slots=True)
class ThrottleTerms:
    """The 429 terms of Microsoft's redistribution formula for one container (R95): 429 responses per second
    in the busiest interval, per pkrange where the store counts them per partition (`per_pkrange`, the logs),
    else the container's (`container_per_s`, Azure Monitor TotalRequests, or the replay's), and the average
    RU charge of a request that was served (`ru_per_request`); `source` says where each came from."""

    per_pkrange: dict[str, float]
    container_per_s: float
    ru_per_request: float
    source: str


def throttle_terms(
    metrics: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    requests: pd.DataFrame | None = None,
    *,
    consumed: pd.DataFrame | None = None,
) -> dict[tuple[str, ...], ThrottleTerms]:
    """Per container (account, database, container), its `ThrottleTerms`. 429/s: the busiest interval's 429s
    over its length, one region's (per region and time, then the most); the logs' when their `partition_id`
    is one of the container's pkrange ids in the metrics (the stand-in writes pkrange ids; Azure writes the
    physical partition's GUID, which no store column maps to a pkrange, so there the container's count is
    used). Average charge: TotalRequestUnits over the requests not answered 429 (a 429's charge is not the
    request's), else the replay's served requests. `consumed`: `analysis.load.consumed_intervals` of
    `metrics`, when the caller has them."""
    counted = _monitor_429s(metrics, load.consumed_intervals(metrics) if consumed is None else consumed)
    ranges = overview.metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id"])
    pairs = ranges[[*KEY, "pkrange_id"]].drop_duplicates()  # a few hundred pairs, not every point
    known = {_key(k): set(g["pkrange_id"].astype(str)) for k, g in pairs.groupby(KEY)} if not pairs.empty else {}
    logged = _logged_429s(log_throttles, known)
    replay = in_containers(requests) if requests is not None and not requests.empty else None
    charges = _monitor_charges(metrics)
    out: dict[tuple[str, ...], ThrottleTerms] = {}
    for key in set(counted) | set(logged) | set(charges) | set(_replay_keys(replay)):
        per_s, source = counted.get(key, (math.nan, ""))
        if not per_s >= 0 and replay is not None:
            per_s, source = _replay_429s(replay, key)
        charge, charge_source = charges.get(key, (math.nan, ""))
        if not charge >= 0 and replay is not None:
            charge, charge_source = _replay_charge(replay, key)
        per_pkrange = logged.get(key, {})
        where = "Log Analytics CDBDataPlaneRequests per partition" if per_pkrange else source
        out[key] = ThrottleTerms(
            per_pkrange, per_s, charge, f"429s: {where or 'none'}; charge: {charge_source or 'none'}"
        )
    return out


def _monitor_429s(metrics: pd.DataFrame, consumed: pd.DataFrame) -> dict[tuple[str, ...], tuple[float, str]]:
    """Per container: the most 429s per second in one interval (Azure Monitor TotalRequests, through
    `autoscale.denied_intervals`: the one reading of Monitor's 429s that the need of every offer counts too)."""
    denied = denied_intervals(metrics, consumed)
    if denied.empty:
        return {}
    busiest = denied.groupby(KEY)["throttled_per_s"].max()
    return {_key(key): (float(v), "Azure Monitor TotalRequests (container)") for key, v in busiest.items()}


def _monitor_charges(metrics: pd.DataFrame) -> dict[tuple[str, ...], tuple[float, str]]:
    """Per container: RU per request served, TotalRequestUnits over TotalRequests not answered 429 (RU rows
    split by status: their 429 rows left out)."""
    found: dict[tuple[str, ...], tuple[float, str]] = {}
    totals = {}
    for name in (TOTAL_REQUEST_UNITS, TOTAL_REQUESTS):
        rows = regions.select_region(overview.metric_rows(metrics, name), None)
        if name == TOTAL_REQUESTS and rows["aggregation"].eq("Count").any():
            rows = rows[rows["aggregation"].eq("Count").fillna(False)]
        code = (
            rows["status_code"].astype("string").str.strip().str.removesuffix(".0") if "status_code" in rows else None
        )
        if code is not None:
            rows = rows[~code.eq("429").fillna(False).to_numpy(dtype=bool)]
        if name == TOTAL_REQUESTS and code is not None:
            rows = rows[rows["status_code"].notna()]
        totals[name] = rows.groupby(KEY)["value"].sum() if not rows.empty else pd.Series(dtype=float)
    for key, ru in totals[TOTAL_REQUEST_UNITS].items():
        served = totals[TOTAL_REQUESTS].get(key, math.nan)
        if served > 0:
            found[_key(key)] = (
                float(ru) / float(served),
                "Azure Monitor TotalRequestUnits / TotalRequests (container)",
            )
    return found


def _logged_429s(
    log_throttles: pd.DataFrame | None, known: dict[tuple[str, ...], set[str]]
) -> dict[tuple[str, ...], dict[str, float]]:
    """Per container: pkrange -> the most 429s per second in one log bin, where every logged partition id is
    one of the container's pkrange ids (`known`)."""
    if log_throttles is None or log_throttles.empty or "bin_minutes" not in log_throttles:
        return {}
    rows = in_containers(log_throttles).dropna(subset=["partition_id", "throttled"])
    out: dict[tuple[str, ...], dict[str, float]] = {}
    for name, group in rows.groupby(KEY):
        key = _key(name)
        ids = group["partition_id"].astype(str)
        if not set(ids) <= known.get(key, set()):
            continue
        seconds = group["bin_minutes"].astype(float).fillna(1.0).clip(lower=1.0) * 60
        per_s = (group["throttled"].astype(float) / seconds).groupby([ids, group["time"]]).sum()
        out[key] = {str(pk): float(v) for pk, v in per_s.groupby(level=0).max().items()}
    return out


def _replay_keys(replay: pd.DataFrame | None) -> list[tuple[str, ...]]:
    return (
        []
        if replay is None
        else [tuple(str(k) for k in key) for key in replay[KEY].drop_duplicates().itertuples(index=False)]
    )


def _replay_429s(replay: pd.DataFrame, key: tuple[str, ...]) -> tuple[float, str]:
    """The replay's most 429s in one second (its own requests: what ruscope sent)."""
    mine = replay[(replay[KEY].astype(str) == list(key)).all(axis=1)].dropna(subset=["time"])
    throttled = mine[
        mine["status"].astype("string").str.removesuffix(".0").eq("429").fillna(False).to_numpy(dtype=bool)
    ]
    if mine.empty:
        return math.nan, ""
    per_s = throttled.groupby(pd.to_datetime(throttled["time"], utc=True).dt.floor("s")).size()
    return (float(per_s.max()) if len(per_s) else 0.0), "replay (ruscope's own requests)"


def _replay_charge(replay: pd.DataFrame, key: tuple[str, ...]) -> tuple[float, str]:
    mine = replay[(replay[KEY].astype(str) == list(key)).all(axis=1)]
    served = mine[~mine["status"].astype("string").str.removesuffix(".0").eq("429").fillna(False).to_numpy(dtype=bool)]
    charge = served["request_charge"].astype(float).mean() if len(served) else math.nan
    return (float(charge), "replay (ruscope's own requests)") if charge >= 0 else (math.nan, "")


def burst_minutes(minutes: pd.DataFrame, metrics: pd.DataFrame) -> dict[tuple[str, ...], pd.DataFrame]:
    """Per container: the workload's minutes per pkrange and region (`analysis.load.partition_minutes`:
    normalized RU, the budget in force) in time order, with the container's 429s in that minute and region
    (Azure Monitor TotalRequests) given to each range at 100% then (`throttled`; to the minute's busiest range
    when none is): what `rules.burst_absorbs` reads."""
    work = load.workload_minutes(minutes) if not minutes.empty else minutes
    rows = regions.select_region(overview.metric_rows(metrics, TOTAL_REQUESTS), None)
    if work.empty or rows.empty or "status_code" not in rows:
        return {}
    if rows["aggregation"].eq("Count").any():
        rows = rows[rows["aggregation"].eq("Count").fillna(False)]
    code = rows["status_code"].astype("string").str.strip().str.removesuffix(".0")
    rows = rows[code.eq("429").fillna(False).to_numpy(dtype=bool)]
    rows = rows.assign(
        region=rows["region"].astype(object).fillna("") if "region" in rows else "",
        time=pd.to_datetime(rows["time"], utc=True),
        **{k: rows[k].astype(str) for k in KEY},
    )
    counts = rows.groupby([*KEY, "region", "time"])["value"].sum().rename("_429").reset_index()
    frame = work.merge(counts, on=[*KEY, "region", "time"], how="left")
    frame["_429"] = frame["_429"].astype(float).fillna(0.0)
    busiest = frame.groupby([*KEY, "region", "time"])["normalized_ru"].transform("max")
    at_full = frame["normalized_ru"].ge(100)
    any_full = at_full.groupby([frame[c] for c in [*KEY, "region", "time"]]).transform("any")
    given = at_full | (~any_full & frame["normalized_ru"].eq(busiest))
    frame["throttled"] = frame["_429"].where(given, 0.0)
    frame = frame.sort_values([*KEY, "region", "pkrange_id", "time"], kind="stable")
    cols = ["region", "pkrange_id", "time", "grain_s", "normalized_ru", "budget_ru_s", "throttled"]
    return {tuple(str(k) for k in key): g[cols].reset_index(drop=True) for key, g in frame.groupby(KEY)}


def partition_storage(partitions: pd.DataFrame) -> dict[tuple[str, ...], float]:
    """Per container: the GB its partitions hold in the latest storage snapshot (data + index, the
    statistics' sizeInKB summed): merge.md's "overall storage" of its second condition."""
    latest = overview.latest_snapshot(partitions)
    if latest.empty:
        return {}
    total = latest.groupby(KEY)["size_kb"].sum().astype(float) * 1024 / GB
    return {_key(key): float(gb) for key, gb in total.items()}


def _key(value: Any) -> tuple[str, ...]:
    """A container's (account, database, container) as text: how the planner's inputs are keyed."""
    return tuple(str(k) for k in value)


def with_layout(
    containers: pd.DataFrame, partitions: pd.DataFrame, metrics: pd.DataFrame, *, layout: pd.DataFrame | None = None
) -> pd.DataFrame:
    """`containers` with `layout_pkranges` (`analysis.load.partition_layout`: the latest storage snapshot's
    pkrange count, not the ranges that reported in the last minute; else metrics', `layout_source` says
    which) and the most saturated range's sustained normalized RU (`sat_*`): the model's `sustained_*`
    columns, which `summarize_containers` read with ruscope's own minutes left out (`analysis.load`). `layout`:
    the caller's `partition_layout` of these frames."""
    layout = load.partition_layout(partitions, metrics) if layout is None else layout
    stored = layout[layout["layout_source"].eq(load.STORAGE_LAYOUT)].rename(columns={"partitions": "_layout"})
    out = containers.merge(stored[[*KEY, "_layout"]], on=KEY, how="left")
    found = out.pop("_layout").astype(float)
    out["layout_source"] = [load.STORAGE_LAYOUT if pd.notna(n) else load.METRICS_LAYOUT for n in found]
    out["pkranges"] = found.combine_first(out["pkranges"].astype(float))
    return out.merge(_saturation_of(containers), on=KEY, how="left")


def saturation_stats(
    metrics: pd.DataFrame, requests: pd.DataFrame | None = None, partitions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container: the range with the largest p95 (`rules.SATURATION_QUANTILE`) of its per-minute
    NormalizedRUConsumption over the window (`sat_pkrange`, `sat_normalized_ru`), the minutes behind it and
    the window (`sat_window`): `analysis.load.summarize_partition_load`'s sustained load, ruscope's own
    minutes (from `requests`) left out."""
    return _saturation_of(load.summarize_partition_load(load.partition_minutes(metrics, requests, partitions)))


def _saturation_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The `sat_*` columns of a frame with the model's `sustained_*` ones (the containers that have a figure)."""
    rows = frame.dropna(subset=["sustained_normalized_ru"]).reset_index(drop=True)
    window = [window_text(a, b) for a, b in zip(rows["sustained_start"], rows["sustained_end"])]
    named = {"sustained_pkrange": "sat_pkrange", "sustained_normalized_ru": "sat_normalized_ru"}
    out = rows[[*KEY, *named, "sustained_minutes"]].rename(columns={**named, "sustained_minutes": "sat_minutes"})
    return out.assign(sat_normalized_ru=out["sat_normalized_ru"].astype(float), sat_window=window)
