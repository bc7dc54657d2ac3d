"""Per-partition load: each container's NormalizedRUConsumption per pkrange and minute, its consumed RU per
minute, and ruscope's own traffic (the replay) in both, kept apart, so that risk and peaks are the workload's.

Pure functions over the store's `metrics`, `requests` and `partitions` frames (only the `*_COLUMNS` below are
read; the time range, scope and region are cut before these run: `analysis.scope`, `analysis.regions`).
`analysis.fleet` (the hot-partition risk, `max_normalized_ru`, `p95_ru_s`), `analysis.overview` (`peak_ru_s`,
`hot_normalized_ru`, `hot_range_share`) and `analysis.capacity.review` (the saturation finding) read it.

**The facts, per container, pkrange and interval** (`partition_minutes`, `MINUTE_COLUMNS`):
- `normalized_ru`: Azure Monitor's NormalizedRUConsumption (percent), the largest per-second share of the
  partition's budget used in the interval (docs/reference/azure-monitor.md R10; ru-cost-model.md P11); one
  row per region (`region`, "" for a row combining the regions);
- `own_ru`, `own_peak_second_ru`: the RU the replay's requests to that pkrange were charged in the interval
  and in its busiest second. ruscope knows these exactly: every request it sent is a `requests` row with its
  time, pkrange and charge (`analysis.own_traffic`); the replay is counted in the same metrics (R75);
- `budget_ru_s`: the partition's budget in force then, `provisioned_ru_s` / `partitions` (every physical
  partition gets an equal share of the RU/s: ru-cost-model.md P4). `provisioned_ru_s` is one region's RU/s
  (each region reserves the same: `analysis.regions`): the latest AutoscaleMaxThroughput at or before the
  interval, else ProvisionedThroughput (autoscale's NormalizedRUConsumption is against its max RU/s: R10's page,
  learn `monitor-normalized-request-units.md`, splits a 20,000 RU/s autoscale max over two ranges as up to
  10,000 each; `autoscale-faq.md`: the metric "measures the utilization of autoscale max RU/s");
  `partitions` is the layout: the pkranges of the latest storage snapshot at or before the interval (the
  first snapshot before any), else the ranges the metrics reported in their latest interval
  (`partition_layout`);
- `own_normalized_ru` = `own_peak_second_ru` / `budget_ru_s` x 100: the replay's own busiest second, in the
  metric's unit;
- `own`, **the rule**: a minute's normalized RU is ruscope's own when the replay's busiest second in that
  range used at least `OWN_SHARE` (half) of what the minute's NormalizedRUConsumption says
  (`own_normalized_ru >= OWN_SHARE x normalized_ru`). NormalizedRUConsumption is one second's share (R10):
  when the replay's second carries half of it or more, the minute's figure says at least as much about the
  replay as about the workload, and the workload's own busiest second there is not known. Such minutes are
  left out of the workload's risk and peaks and counted as `own_minutes_excluded`. Without a budget (no
  throughput metrics) no minute can be shown to be the replay's, and none is excluded.

**Consumed RU** (`consumed_intervals`, `CONSUMED_COLUMNS`): TotalRequestUnits is per container per interval
(R75: the replay counted with the application); the replay's RU in the same interval (every request to the
container, pkrange or not) is exact, so the workload's RU/s is (total - own) / grain, never below 0. The
peak and p95 RU/s are of that (`summarize_consumed`); `own_ru_subtracted` says how much was taken out.

**Sustained load** (`summarize_partition_load`, `LOAD_COLUMNS`): per container, over the workload's minutes,
`sustained_normalized_ru` is the largest p95 (`SUSTAINED_QUANTILE`, the saturation finding's
`rules.SATURATION_QUANTILE`) of a range's per-minute normalized RU, with that range, its minutes and window:
one busy minute (a bulk load) does not make a range at risk; `max_normalized_ru` is the busiest workload
minute of any range (the evidence: "peak minute"), with its range and time. A range's minutes are those its
container reported (any range, in its region) from the range's first point to the container's last, or to
its own last point for a range the latest storage snapshot no longer lists (a split's parent, `retired`); a
minute without a point counts 0% (the range reported no load while its container did: an idle range that
reported only its bulk-load minute is not sustained at 100%), and its own minutes are left out.

How: the minutes' key columns are factorized once and every join with the small tables (the replay's
seconds, the budgets' timelines, the layout) is an integer lookup (`analysis.joins`); the per-range span
statistics are `analysis.spans` (the span is counted, never built as a grid). A month of one-minute points
for 100 pkranges was 11 s here and 14 s for the summary; it is a few seconds now (bench_dashboard.py).

**What a page prints** where the replay was left out: `own_traffic_note` (the minutes and RU taken out).

A bulk load ruscope did not send (the application's import; the demo's backfill, written through the
engine's domain API, no request of ruscope's recorded) is the workload's: on Azure it is indistinguishable
from it, and the sustained statistic keeps its few minutes from deciding risk.

Known limits, stated: NormalizedRUConsumption keeps only a minute's busiest second, so a minute the rule
gives to the replay may also hold a workload second near the same figure (the rule gives it away only where
the replay's own second was at least half of it); `requests` do not say which region served the replay, so
its RU is counted against the pkrange of that id in every region of the frame; a shared-throughput
database's partitions (the offer's rows, container "") are not matched with its containers' requests, so
none of their minutes is marked own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import joins, own_traffic, regions, spans
from analysis.scope import in_containers
from cosmoscore.monitor.metrics import AUTOSCALE_MAX, NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS
from store.records import METRICS, PARTITIONS, REQUESTS, SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
OWN_SHARE = 0.5  # the rule (module docstring): the replay's busiest second carries half the minute's figure
SUSTAINED_QUANTILE = 0.95  # = analysis.capacity.rules.SATURATION_QUANTILE (tests/analysis/test_load.py checks)
PROVISIONED_METRICS = (AUTOSCALE_MAX, PROVISIONED)  # preferred first
DEFAULT_GRAIN_SECONDS = 60.0
STORAGE_LAYOUT = "storage snapshot"
METRICS_LAYOUT = "metrics' latest minute"

METRIC_COLUMNS = METRICS.pick(*KEY, "time", "metric", "aggregation", "pkrange_id", "value", "grain", "region")
REQUEST_COLUMNS = REQUESTS.pick(*KEY, "time", "pkrange_id", "request_charge")
PARTITION_COLUMNS = PARTITIONS.pick(*KEY, "time", "pkrange_id")

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
LAYOUT_COLUMNS = [*KEY, "partitions", "layout_source"]
CONSUMED_COLUMNS = [*KEY, "time", "grain_s", "ru_s", "own_ru", "workload_ru_s"]
CONSUMED_SUMMARY_COLUMNS = [*KEY, "peak_ru_s", "p95_ru_s", "own_ru_subtracted"]
SUSTAINED_COLUMNS = [
    "sustained_normalized_ru",
    "sustained_pkrange",
    "sustained_minutes",
    "sustained_start",
    "sustained_end",
]
LOAD_COLUMNS = [*KEY, "max_normalized_ru", "peak_pkrange", "peak_time", *SUSTAINED_COLUMNS, "own_minutes_excluded"]


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


def partition_minutes(
    metrics: pd.DataFrame, requests: pd.DataFrame | None = None, partitions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per NormalizedRUConsumption point split by pkrange (the collector asks for Maximum only), with
    the replay's RU in it, the budget and whether it is ruscope's own (`MINUTE_COLUMNS`, the module docstring)."""
    rows = _metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id", "time"])
    if rows.empty:
        return pd.DataFrame(columns=MINUTE_COLUMNS).astype({"own": bool})
    region = rows["region"].astype(object).fillna("") if "region" in rows.columns else ""
    minutes = pd.DataFrame(
        {
            **{name: rows[name].astype(str) for name in KEY},
            "region": region,
            "pkrange_id": rows["pkrange_id"].astype(str),
            "time": _utc(rows["time"]),
            "grain_s": grain_series_seconds(rows["grain"]) if "grain" in rows else DEFAULT_GRAIN_SECONDS,
            "normalized_ru": rows["value"].astype(float),
        }
    ).reset_index(drop=True)
    fine = joins.group_codes(minutes, [*KEY, "pkrange_id", "region"])  # the large frame factorized once
    ranges = joins.coarser(fine, [*KEY, "pkrange_id"])
    containers = joins.coarser(fine, KEY)
    times = joins.times_ns(minutes["time"])
    minutes = _with_own(
        minutes, ranges, own_per_interval(requests, minutes["grain_s"].drop_duplicates(), by_pkrange=True)
    )
    reported = _reported_of(joins.coarser(fine, [*KEY, "region"]), ranges, times, containers)
    minutes = _with_budgets(minutes, containers, times, metrics, partitions, reported)
    share = minutes["own_peak_second_ru"] / minutes["budget_ru_s"].where(minutes["budget_ru_s"] > 0) * 100
    minutes["own_normalized_ru"] = share.round(4)
    mine = share.ge(OWN_SHARE * minutes["normalized_ru"]) & minutes["own_peak_second_ru"].gt(0)
    minutes["own"] = mine.fillna(False).astype(bool)
    minutes["retired"] = _retired(ranges.keys, partitions).to_numpy(dtype=bool)[ranges.codes]
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


def _retired(minutes: pd.DataFrame, partitions: pd.DataFrame | None) -> pd.Series:
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


def partition_layout(partitions: pd.DataFrame | None, metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container: its physical partitions now (`LAYOUT_COLUMNS`): the latest storage snapshot's pkranges,
    else the ranges that reported NormalizedRUConsumption in the latest interval (the most of any region);
    `layout_source` says which."""
    snapshot = _snapshot_counts(partitions)
    latest = snapshot[snapshot["time"].eq(snapshot.groupby(KEY)["time"].transform("max"))]
    stored = latest.groupby(KEY)["partitions"].max().reset_index().assign(layout_source=STORAGE_LAYOUT)
    reported = _reported_counts(metrics).assign(layout_source=METRICS_LAYOUT)
    both = pd.concat([stored, reported], ignore_index=True).drop_duplicates(subset=KEY, keep="first")
    return both.astype({"partitions": "float64"}).reset_index(drop=True)[LAYOUT_COLUMNS]


def latest_provisioned(metrics: pd.DataFrame) -> pd.DataFrame:
    """The throughput in force: the latest AutoscaleMaxThroughput per container, else its latest
    ProvisionedThroughput (`provisioned_ru_s`, `analysis.fleet`'s): each region's
    latest, summed over the regions (an account reserves the RU/s in each: `analysis.regions`); a container's
    rows that combine the regions (stored before the split) count only where it has no per-region row."""
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    found = []
    for metric in PROVISIONED_METRICS:
        rows = per_region_else_combined(metrics[metrics["metric"].eq(metric).fillna(False)])
        per_region = [*KEY, "_region"]
        latest = rows[rows["time"].eq(rows.groupby(per_region)["time"].transform("max"))]
        total = latest.groupby(per_region)["value"].max().astype(float).groupby(KEY).sum().reset_index()
        if metric in regions.UNREGIONED_METRICS:  # one setting that holds in every region of the account
            total["value"] = total["value"] * total["account"].map(counts).fillna(1).astype(float)
        found.append(total)
    values = pd.concat(found, ignore_index=True).drop_duplicates(subset=KEY, keep="first")
    return values.rename(columns={"value": "provisioned_ru_s"})[[*KEY, "provisioned_ru_s"]]


def per_region_else_combined(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` (one metric's, with a time and a value) with `_region` ("" for a combined row), less a
    container's combined rows when it has rows per region."""
    rows = rows.dropna(subset=["time", "value"])
    region = rows["region"].astype(object).fillna("") if "region" in rows.columns else ""
    rows = rows.assign(_region=region)
    split = rows["_region"].ne("").groupby([rows[name] for name in KEY]).transform("any")
    return rows[rows["_region"].ne("") | ~split.reindex(rows.index).fillna(False).astype(bool)]


def provisioned_timeline(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container and time: one region's provisioned RU/s (the largest of the regions' rows at that time),
    from AutoscaleMaxThroughput where the container reports it, else ProvisionedThroughput."""
    columns = [*KEY, "time", "provisioned_ru_s"]
    found = []
    for metric in PROVISIONED_METRICS:
        rows = _metric_rows(metrics, metric).dropna(subset=["time"])
        per_time = rows.groupby([*KEY, "time"])["value"].max().astype(float).reset_index()
        found.append(per_time.rename(columns={"value": "provisioned_ru_s"}))
    if not any(len(part) for part in found):
        return pd.DataFrame(columns=columns)
    autoscale, manual = found
    manual = manual.merge(autoscale[KEY].drop_duplicates(), on=KEY, how="left", indicator=True)
    manual = manual[manual.pop("_merge").eq("left_only")]
    out = pd.concat([autoscale, manual], ignore_index=True)
    return out.assign(**{name: out[name].astype(str) for name in KEY}, time=_utc(out["time"]))[columns]


def _with_budgets(
    minutes: pd.DataFrame,
    containers: joins.Codes,
    times: np.ndarray,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame | None,
    reported: pd.DataFrame,
) -> pd.DataFrame:
    """`minutes` (numbered by container: `containers`; `times` theirs, `times_ns`) with the `provisioned_ru_s`,
    `partitions` and `budget_ru_s` in force at each (module docstring; `reported`: `_reported_counts`)."""
    provisioned = _as_of(containers, times, provisioned_timeline(metrics), "provisioned_ru_s")
    counts = _as_of(containers, times, _snapshot_counts(partitions), "partitions")
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


def _snapshot_counts(partitions: pd.DataFrame | None) -> pd.DataFrame:
    """Per container and storage snapshot time: how many pkranges it listed."""
    columns = [*KEY, "time", "partitions"]
    if partitions is None or partitions.empty or "pkrange_id" not in partitions:
        return pd.DataFrame(columns=columns)
    rows = in_containers(partitions).dropna(subset=["time", "pkrange_id"])
    counts = rows.groupby(KEY + ["time"])["pkrange_id"].nunique().astype(float).rename("partitions").reset_index()
    return counts.assign(**{name: counts[name].astype(str) for name in KEY}, time=_utc(counts["time"]))[columns]


def _reported_counts(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container: how many pkranges reported NormalizedRUConsumption in its latest interval (the most of
    any region: a range is one region's)."""
    rows = _metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id", "time"])
    if rows.empty:
        return pd.DataFrame(columns=[*KEY, "partitions"])
    rows = rows.assign(region=rows["region"].astype(object).fillna("") if "region" in rows.columns else "")
    fine = joins.group_codes(rows, [*KEY, "pkrange_id", "region"])
    return _reported_of(
        joins.coarser(fine, [*KEY, "region"]),
        joins.coarser(fine, [*KEY, "pkrange_id"]),
        joins.times_ns(rows["time"]),
        joins.coarser(fine, KEY),
    )


def _reported_of(
    regional: joins.Codes, ranges: joins.Codes, times: np.ndarray, containers: joins.Codes
) -> pd.DataFrame:
    """`_reported_counts` of NormalizedRUConsumption rows already numbered by region, range and container."""
    latest = pd.Series(times).groupby(regional.codes).max().to_numpy()
    at_latest = times == latest[regional.codes]
    pairs = pd.DataFrame({"regional": regional.codes[at_latest], "range": ranges.codes[at_latest]}).drop_duplicates()
    per_region = np.bincount(pairs["regional"].to_numpy(), minlength=regional.size)
    region_container = pd.Series(containers.codes).groupby(regional.codes).first().to_numpy()
    most = pd.Series(per_region).groupby(region_container).max()
    keys = containers.keys.iloc[most.index.to_numpy()]
    counts = pd.DataFrame({name: keys[name].astype(str).to_numpy() for name in KEY})
    return counts.assign(partitions=most.to_numpy(dtype=float))


def workload_minutes(minutes: pd.DataFrame) -> pd.DataFrame:
    """The rows of `partition_minutes` that are the workload's (not ruscope's own)."""
    return minutes[~minutes["own"].astype(bool)]


def summarize_partition_load(minutes: pd.DataFrame) -> pd.DataFrame:
    """Per container with normalized RU points: the workload's peak minute and sustained load, and the own
    minutes left out (`LOAD_COLUMNS`, the module docstring); a container whose every minute was the replay's
    has no peak or sustained figure (NaN) and its count of own minutes."""
    if minutes.empty:
        return _typed_load(pd.DataFrame(columns=LOAD_COLUMNS))
    containers = joins.group_codes(minutes, KEY)
    own_flags = minutes["own"].to_numpy(dtype=bool)
    own = containers.keys.assign(
        own_minutes_excluded=np.bincount(containers.codes[own_flags], minlength=containers.size)
    ).sort_values(KEY, kind="stable")
    peaks = _peak_minutes(minutes, containers, ~own_flags)
    # a range a split retired (the latest snapshot no longer lists it) is history: the sustained load an
    # action reads is a current range's, so a finding never names a partition that is gone
    per = spans.range_spans(minutes, SUSTAINED_QUANTILE)
    per = per[per["minutes"].gt(0) & ~per["retired"]]
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


def _peak_minutes(minutes: pd.DataFrame, containers: joins.Codes, work: np.ndarray) -> pd.DataFrame:
    """Per container: its busiest workload minute (the earliest of equal ones, then the first row), its range
    and time (`max_normalized_ru`, `peak_pkrange`, `peak_time`)."""
    columns = [*KEY, "max_normalized_ru", "peak_pkrange", "peak_time"]
    values = minutes["normalized_ru"].to_numpy(dtype=float, na_value=np.nan)
    rows = np.flatnonzero(work & ~np.isnan(values))
    if not len(rows):
        return pd.DataFrame(columns=columns)
    codes, found = containers.codes[rows], values[rows]
    top = np.full(containers.size, -np.inf)
    np.maximum.at(top, codes, found)
    rows = rows[found == top[codes]]
    times = joins.times_ns(minutes["time"].iloc[rows])
    order = np.lexsort((rows, times, containers.codes[rows]))  # by container, then time, then row
    rows = rows[order]
    firsts = rows[np.unique(containers.codes[rows], return_index=True)[1]]
    picked = minutes.iloc[firsts]
    return pd.DataFrame(
        {
            **{name: picked[name].to_numpy() for name in KEY},
            "max_normalized_ru": picked["normalized_ru"].to_numpy(dtype=float),
            "peak_pkrange": picked["pkrange_id"].to_numpy(),
            "peak_time": picked["time"].to_numpy(),
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


def consumed_intervals(metrics: pd.DataFrame, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per container and TotalRequestUnits interval (Total, summed over its dimension rows): the RU/s Azure
    Monitor counted (`ru_s`, the interval's RU over its grain), the replay's RU in it (`own_ru`) and the
    workload's RU/s, (total - own) / grain, never below 0 (`CONSUMED_COLUMNS`)."""
    rows = _metric_rows(metrics, TOTAL_REQUEST_UNITS).dropna(subset=["time"])
    rows = rows[rows["aggregation"].fillna("Total").eq("Total").fillna(False).astype(bool)]
    if rows.empty:
        return pd.DataFrame(columns=CONSUMED_COLUMNS)
    frame = pd.DataFrame(
        {
            **{name: rows[name].astype(str) for name in KEY},
            "time": _utc(rows["time"]),
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


def _metric_rows(metrics: pd.DataFrame, name: str) -> pd.DataFrame:
    """One metric's rows that name a container and have a value."""
    rows = in_containers(metrics)
    return rows[rows["metric"].eq(name).fillna(False).astype(bool)].dropna(subset=["value"])


def _utc(times: pd.Series) -> pd.Series:
    """Times as UTC timestamps of one resolution (a merge on time needs both sides alike)."""
    return pd.to_datetime(times, utc=True).astype("datetime64[ns, UTC]")


def latest_snapshot(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of each container's newest `time` (a storage snapshot)."""
    rows = in_containers(frame).dropna(subset=["time"])
    return rows[rows["time"].eq(rows.groupby(KEY)["time"].transform("max"))]
