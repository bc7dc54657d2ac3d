"""Overview: each container's numbers for a time range, and their change against the period before.

Pure functions over the store's frames; `analysis.fleet` computes the per-container numbers it already
knows (provisioned and p95 RU/s, the largest normalized RU, the largest physical partition, the one 429
rate, the replay's RU and skew) and this module adds what an overview needs on top, preferring Azure
Monitor's view (the production traffic) over the replay's (only the configured queries) wherever both exist:

**ruscope's own traffic** (the replay) is left out of the load figures (`analysis.load`: its RU per pkrange and
second is exact, from `requests`): a minute of normalized RU is the replay's when its own busiest second used
at least half the minute's figure, and its RU is subtracted from the consumed RU per interval. `own_note`
says what was left out (`analysis.load.own_traffic_note`), for a page to print beside the figures.

**Columns** (`CONTAINER_COLUMNS`), NaN (or "") where no data is behind a number:
- `ru_consumed` (RU): the sum of Azure Monitor's TotalRequestUnits (all of it: the replay's RU is billed
  too); without metrics, the replay's RU; `ru_source` says which ("monitor" or "replay");
- `provisioned_ru_s`, `p95_ru_s` (from `analysis.fleet`: the workload's), `peak_ru_s` (the workload's largest
  interval's RU/s, a per-interval average: each interval's TotalRequestUnits less the replay's RU in it, over
  its grain, as fleet computes p95), `p95_utilization` = p95 / provisioned; `autoscale` (True when the
  container reports AutoscaleMaxThroughput);
- `hot_pkrange`, `hot_range_share` (`analysis.hottest.hottest_range`): of the current pkranges (the layout,
  after any split), the one with the largest share of the summed mean workload normalized RU (each range has
  an equal share of the RU/s, so this is its share of the RU), against an even share of 1 / `pkranges`;
  without metrics, the replay's hottest pkrange and share; for a container that spends its database's shared
  offer, the offer's hottest range (its partitions are the offer's); `skew_source` says which;
- `hot_normalized_ru` (%), `hot_peak_pkrange`: the largest workload NormalizedRUConsumption of any current
  range (the peak minute, the replay's minutes out) and that range, which need not be `hot_pkrange` (a range
  with less of the RU can have the busier second). 100%: that range spent its budget in at least one second,
  not by itself 429s (P11);
- `throttle_rate`, `throttle_source`, `throttle_start`, `throttle_end`: `analysis.fleet`'s, the one 429 rate
  (`analysis.throttling.preferred_rate`: Azure Monitor's TotalRequests by StatusCode, else the diagnostic
  logs', else the replay's), its source and window; `throttle_flag`: above `THROTTLE_HEALTHY_MAX`;
- `largest_partition_gb`, `storage_headroom` (of 50 GB, from fleet), `largest_key_gb`, `key_headroom` (the
  largest logical key of the latest `logical_keys` snapshot, of 20 GB: `cosmoscore.limits`);
- after those (added later, so at the end): fleet's sustained load (`sustained_normalized_ru`, its range,
  minutes and window: what the hot-partition risk and the saturation finding read), `own_minutes_excluded`,
  `own_ru_subtracted`, and `own_note`.

**Periods** (`periods`). A bounded time range ([start, now) of a preset, [start, end) of a custom window) is
compared with the same length just before it (a custom 10:00-13:00 with 07:00-10:00).
"All time" has no length to repeat: its numbers cover all the data, and its change compares the
`ALL_TIME_SPAN` (7 days) up to the newest row with the 7 days before, which `Periods.note` says on the page.
`compare_periods` adds `<measure>_change` = recent - before (in the measure's unit: percentage points for a
rate), NaN when either side has no number.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pandas as pd

from analysis import fleet, load, regions, scope, throttling
from analysis.hottest import container_hottest_ranges
from analysis.load import stored
from analysis.queries import costs as qc
from analysis.scope import Window, minute_text, span_text
from cosmoscore.limits import GB, Limits
from cosmoscore.monitor.metrics import AUTOSCALE_MAX, TOTAL_REQUEST_UNITS
from store.records import EXECUTIONS, LOGICAL_KEYS, METRICS

KEY = fleet.FLEET_KEY
latest_snapshot = load.latest_snapshot  # each container's newest storage snapshot
# ru-cost-model.md P12 (learn "troubleshoot-request-rate-too-large"): 1-5% of requests answered 429 is
# considered healthy; above 5% the throttling costs latency and needs action.
THROTTLE_HEALTHY_MAX = throttling.HEALTHY_429_RATE[1]
ALL_TIME_SPAN = dt.timedelta(days=7)  # what "All time" compares (see the module docstring)
TOP_QUERIES = 10

METRIC_COLUMNS = METRICS.pick(*fleet.METRIC_COLUMNS, "status_code")
LOGICAL_KEY_COLUMNS = LOGICAL_KEYS.pick(*KEY, "time", "pkrange_id", "partition_key", "size_kb")
EXECUTION_COLUMNS = EXECUTIONS.pick(*fleet.EXECUTION_COLUMNS, "sql")

CONTAINER_COLUMNS = [
    *KEY,
    "ru_consumed",
    "ru_source",
    "provisioned_ru_s",
    "autoscale",
    "peak_ru_s",
    "p95_ru_s",
    "p95_utilization",
    "hot_pkrange",
    "hot_range_share",
    "hot_normalized_ru",
    "hot_peak_pkrange",
    "pkranges",
    "skew_source",
    "throttle_rate",
    "throttle_source",
    *fleet.THROTTLE_WINDOW,
    "throttle_flag",
    "executions",
    "largest_partition_gb",
    "storage_headroom",
    "largest_key_gb",
    "key_headroom",
    *fleet.LOAD_STATS[1:],  # the workload's sustained load and ruscope's own traffic left out (`analysis.load`)
    "own_note",
    "layout_source",  # where `pkranges` comes from (`analysis.load.partition_layout`), "" for the replay's
]
# Fleet's ranking with the model's skew figures in place of the replay's view (`summarize_fleet_table`)
FLEET_TABLE_COLUMNS = [
    *(name for name in fleet.FLEET_COLUMNS if name not in ("pkranges_seen", "hot_pkrange", "hot_pkrange_share")),
    "pkranges",
    "layout_source",
    "hot_pkrange",
    "hot_range_share",
    "skew_source",
]
CHANGE_MEASURES = [
    "ru_consumed",
    "peak_ru_s",
    "p95_ru_s",
    "hot_normalized_ru",
    "throttle_rate",
    "largest_partition_gb",
    "largest_key_gb",
    "sustained_normalized_ru",  # the Overview's "Hottest range" card (`analysis.load`)
]
QUERY_COLUMNS = [
    *KEY,
    "query_name",
    "executions",
    "total_ru",
    "mean_ru",
    "max_ru",
    "routing",
    "pkrange_count",
    "sql",
]


@dataclass(frozen=True, slots=True)
class Periods:
    """The rows an overview shows ([shown_start, the window's end)) and the two it compares ([before_start,
    recent_start) against [recent_start, the window's end)); a None start: from the first row. The window's
    end is the loaders' cut (`dashboard.loaders.tables`), so it is not repeated here."""

    shown_start: pd.Timestamp | None
    recent_start: pd.Timestamp | None
    before_start: pd.Timestamp | None
    note: str


def periods(window: Window, now: dt.datetime, latest: pd.Timestamp | None) -> Periods:
    """The periods for a time range (`analysis.scope.Window`): a preset from its start to `now`, a custom
    window from its start to its end, each compared with the same length just before it; all time (no
    start) ends at the `latest` row."""
    if window.start is not None:
        # the window's bounds are whole minutes (`scope.since_for`): so is `now`, or the span would be 24.0087 hours
        start = pd.Timestamp(window.start)
        # a preset's length is its own (24 hours), not the time between when its start and `now` were read: a
        # page that crosses a minute boundary between the two must not compare 1,441 minutes
        preset = scope.TIME_RANGES.get(window.label)
        end = (
            pd.Timestamp(window.end)
            if window.end is not None
            else pd.Timestamp(window.start) + preset
            if preset is not None
            else pd.Timestamp(now).floor("min")
        )
        note = f"Changes compare this range with the {span_text(end - start)} before it."
        return Periods(start, start, start - (end - start), note)
    if latest is None or pd.isna(latest):
        return Periods(None, None, None, "")
    recent = pd.Timestamp(latest) - ALL_TIME_SPAN
    note = (
        f"All time has no period before it: changes compare the {span_text(ALL_TIME_SPAN)} up to the newest "
        f"data ({minute_text(latest)}) with the {span_text(ALL_TIME_SPAN)} before."
    )
    return Periods(None, recent, recent - ALL_TIME_SPAN, note)


def between(frame: pd.DataFrame, start: pd.Timestamp | None, end: pd.Timestamp | None = None) -> pd.DataFrame:
    """The rows timed at or after `start` and before `end` (a None bound: open)."""
    keep = pd.Series(True, index=frame.index)
    if start is not None:
        keep &= frame["time"].ge(start).fillna(False)
    if end is not None:
        keep &= frame["time"].lt(end).fillna(False)
    return frame[keep.astype(bool)]


def latest_time(*frames: pd.DataFrame) -> pd.Timestamp | None:
    """The newest `time` of any frame (None when all are empty)."""
    times = [frame["time"].max() for frame in frames if not frame.empty]
    times = [time for time in times if not pd.isna(time)]
    return max(times) if times else None


def summarize_containers(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    logical_keys: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    limits: Limits | None = None,
    region: str | None = None,
    model: load.LoadModel | None = None,
    span_cells: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per container with data, in `analysis.fleet`'s risk order (`CONTAINER_COLUMNS`): Azure
    Monitor's numbers of one `region` (`analysis.regions.select_region`), or of every region in `metrics`
    (None: the account in total); `log_throttles` for the 429 rate of a container without metrics; `model`:
    the caller's `analysis.load.build` of these frames (the region's metrics), else built here once, of
    `span_cells` when given (`analysis.load.build`: the stored days' cells, `metrics` the other days' points)."""
    if model is None:
        model = region_model(metrics, requests, partitions, span_cells, region)
    ranked_and_model = _ranked(executions, requests, metrics, partitions, log_throttles, limits, region, model)
    return _with_model(*ranked_and_model, requests, partitions, logical_keys, limits=limits)


def _ranked(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    log_throttles: pd.DataFrame | None,
    limits: Limits | None,
    region: str | None,
    model: load.LoadModel | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, load.LoadModel]:
    """`analysis.fleet`'s ranking of `region`, its metrics and the one model both it and the overview's
    figures read (the caller's, else built here)."""
    metrics = regions.select_region(metrics, region)
    model = model if model is not None else load.build(metrics, requests, partitions)
    ranked = fleet.summarize_fleet(
        executions,
        requests,
        metrics,
        partitions,
        limits=limits,
        region=region,
        log_throttles=log_throttles,
        model=model,
    )
    return ranked, metrics, model


def _with_model(
    ranked: pd.DataFrame,
    metrics: pd.DataFrame,
    model: load.LoadModel,
    requests: pd.DataFrame,
    partitions: pd.DataFrame,
    logical_keys: pd.DataFrame,
    *,
    limits: Limits | None,
) -> pd.DataFrame:
    """`analysis.fleet`'s ranking (`ranked`, of `metrics`' region) with what an overview adds on top
    (`CONTAINER_COLUMNS`), the load figures from `model` (of the same frames)."""
    base = ranked.drop(columns=["largest_partition_gb", "storage_headroom"])  # fleet's are rounded: ours below
    hottest = container_hottest_ranges(base, metrics, partitions, requests, model=model)
    layout = model.layout.rename(columns={"partitions": "layout_pkranges"})
    peak = model.consumed_summary[[*KEY, "peak_ru_s"]]
    extra = [peak, hottest, monitor_ru(metrics), layout]
    extra += [largest_partitions(partitions, limits), largest_keys(logical_keys, limits), autoscaled(metrics)]
    if base.empty and all(part.empty for part in extra):
        return pd.DataFrame(columns=CONTAINER_COLUMNS)
    rows = base
    for part in extra:
        rows = rows.merge(part, on=KEY, how="outer" if base.empty else "left")
    return _choose_sources(rows).reindex(columns=CONTAINER_COLUMNS)


def summarize_fleet_table(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    limits: Limits | None = None,
    region: str | None = None,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """The Fleet page's table (`FLEET_TABLE_COLUMNS`): `analysis.fleet`'s ranking, with the partition count,
    hottest range and its share of this module's model (the layout, Azure Monitor's workload share, else the
    replay's), so Fleet, Overview and the report show one number each; `model`: as `summarize_containers`
    takes it (`region_model`: of stored span cells)."""
    ranked, metrics, model = _ranked(executions, requests, metrics, partitions, log_throttles, limits, region, model)
    no_keys = pd.DataFrame(columns=LOGICAL_KEY_COLUMNS)  # the table shows no key sizes
    containers = _with_model(ranked, metrics, model, requests, partitions, no_keys, limits=limits)
    figures = containers[[*KEY, "pkranges", "layout_source", "hot_pkrange", "hot_range_share", "skew_source"]]
    ranked = ranked.drop(columns=["hot_pkrange"]).merge(figures, on=KEY, how="left")
    return ranked.reindex(columns=FLEET_TABLE_COLUMNS)


def region_model(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
    span_cells: pd.DataFrame | None,
    region: str | None,
) -> load.LoadModel | None:
    """The model of `region`'s frames with stored span cells (`analysis.load.build`), None without cells (the
    figures then build it of the points)."""
    if span_cells is None or not len(span_cells):
        return None
    cells = stored.in_region(span_cells, region)
    return load.build(regions.select_region(metrics, region), requests, partitions, span_cells=cells)


def _choose_sources(rows: pd.DataFrame) -> pd.DataFrame:
    """Azure Monitor's number where it has one, else the replay's, with the source named."""
    out = rows.copy()
    monitor_ru = out["monitor_ru"].astype(float)
    out["ru_source"] = _source(monitor_ru, out["total_ru"])
    out["ru_consumed"] = monitor_ru.combine_first(out["total_ru"].astype(float))
    provisioned = out["provisioned_ru_s"].astype(float)
    out["p95_utilization"] = (out["p95_ru_s"].astype(float) / provisioned.where(provisioned > 0)).round(4)
    has_share = out["monitor_share"].notna()
    out["skew_source"] = _source(out["monitor_share"], out["hot_pkrange_share"])
    out["hot_pkrange"] = out["monitor_hot"].where(has_share, out["hot_pkrange"]).fillna("")
    out["hot_range_share"] = out["monitor_share"].astype(float).combine_first(out["hot_pkrange_share"].astype(float))
    out["hot_peak_pkrange"] = out["monitor_peak_pkrange"].fillna("")
    # the layout (the latest storage snapshot, else the ranges metrics reported last), else the replay's
    layout = out["layout_pkranges"].astype(float)
    seen = out["monitor_pkranges"].where(has_share, out["pkranges_seen"]).astype(float)
    out["pkranges"] = layout.combine_first(seen).round().astype("Int64")
    out["layout_source"] = out["layout_source"].where(layout.notna(), "").fillna("")
    out["throttle_flag"] = out["throttle_rate"].gt(THROTTLE_HEALTHY_MAX)
    out["autoscale"] = out["autoscale"].fillna(False).astype(bool)
    out["own_note"] = [
        load.own_traffic_note(m, ru) for m, ru in zip(out["own_minutes_excluded"], out["own_ru_subtracted"])
    ]
    return out


def _source(monitor: pd.Series, replay: pd.Series) -> pd.Series:
    names = ["monitor" if m else "replay" if r else "" for m, r in zip(monitor.notna(), replay.notna())]
    return pd.Series(names, index=monitor.index, dtype=object)


def consumed_per_second(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container and interval: TotalRequestUnits (Total) summed over its dimension rows, over the grain
    (`analysis.load.consumed_intervals`'s `ru_s`: everything Azure Monitor counted, the replay's RU in)."""
    return load.consumed_intervals(metrics)[[*KEY, "time", "ru_s"]]


def monitor_ru(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container: the RU Azure Monitor counted (TotalRequestUnits, Total) in the frame's time range."""
    rows = metric_rows(metrics, TOTAL_REQUEST_UNITS)
    total = rows[rows["aggregation"].fillna("Total").eq("Total")].groupby(KEY)["value"].sum().astype(float)
    return total.round(2).rename("monitor_ru").reset_index()


def autoscaled(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container that reports AutoscaleMaxThroughput: True (its provisioned RU/s is the autoscale max)."""
    rows = metric_rows(metrics, AUTOSCALE_MAX)
    return rows[KEY].drop_duplicates().assign(autoscale=True)


def largest_keys(logical_keys: pd.DataFrame, limits: Limits | None = None) -> pd.DataFrame:
    """Per container: its largest logical key of the latest snapshot, in GB and as headroom of 20 GB."""
    limit = (limits or Limits()).logical_partition_max_bytes
    return _largest(logical_keys, limit).rename(columns={"gb": "largest_key_gb", "headroom": "key_headroom"})


def largest_partitions(partitions: pd.DataFrame, limits: Limits | None = None) -> pd.DataFrame:
    """Per container: its largest physical partition of the latest snapshot, in GB and as headroom of 50 GB.
    As `analysis.fleet.storage_stats`, without its rounding to 0.001 GB: a 36 KB partition is not 0 here."""
    limit = (limits or Limits()).physical_partition_max_bytes
    return _largest(partitions, limit).rename(columns={"gb": "largest_partition_gb", "headroom": "storage_headroom"})


def _largest(snapshots: pd.DataFrame, limit_bytes: float) -> pd.DataFrame:
    """Per container: the largest `size_kb` of its latest snapshot in GB (1 KB precision) and the headroom
    below `limit_bytes` (8 decimals, so that a tiny fill is not 0)."""
    size = latest_snapshot(snapshots.dropna(subset=["size_kb"])).groupby(KEY)["size_kb"].max().astype(float) * 1024
    out = pd.DataFrame({"gb": (size / GB).round(6), "headroom": (1 - size / limit_bytes).round(8)})
    return out.reset_index()


def metric_rows(metrics: pd.DataFrame, name: str) -> pd.DataFrame:
    rows = scope.in_containers(metrics)
    return rows[rows["metric"].eq(name).fillna(False).astype(bool)].dropna(subset=["value"])


def compare_periods(shown: pd.DataFrame, recent: pd.DataFrame, before: pd.DataFrame) -> pd.DataFrame:
    """`shown` with `<measure>_change` after each measure of `CHANGE_MEASURES`: recent - before."""
    then = before[[*KEY, *CHANGE_MEASURES]]
    mine = recent[[*KEY, *CHANGE_MEASURES]].merge(then, on=KEY, how="left", suffixes=("", "_before"))
    for name in CHANGE_MEASURES:
        mine[f"{name}_change"] = (mine[name].astype(float) - mine[f"{name}_before"].astype(float)).round(4)
    change_columns = [f"{name}_change" for name in CHANGE_MEASURES]
    out = shown.merge(mine[[*KEY, *change_columns]], on=KEY, how="left")
    order = [c for name in shown.columns for c in ([name, f"{name}_change"] if name in CHANGE_MEASURES else [name])]
    return out[order]


def query_stats(executions: pd.DataFrame) -> pd.DataFrame:
    """Per query and container: logical executions, total RU (failed ones too: billed), mean and max RU of
    the successful ones, the latest routing and the most pkranges reached; costliest (total RU) first."""
    frame = scope.in_containers(executions)
    if frame.empty:
        return pd.DataFrame(columns=QUERY_COLUMNS)
    logical = qc.account_logical_executions(frame)
    logical = logical.assign(ok_ru=logical["total_ru"].where(logical["ok"]))
    names = [*KEY, "query_name"]
    stats = logical.groupby(names).agg(
        executions=("run_id", "size"),
        total_ru=("total_ru", "sum"),
        mean_ru=("ok_ru", "mean"),
        max_ru=("ok_ru", "max"),
        routing=("routing", "last"),
        pkrange_count=("pkrange_count", "max"),
    )
    sql = frame.sort_values("time").groupby(names)["sql"].last() if "sql" in frame else None
    stats["sql"] = sql if sql is not None else ""
    stats = stats.round({"total_ru": 2, "mean_ru": 2, "max_ru": 2}).reset_index()
    stats = stats.sort_values(["total_ru", *names], ascending=[False, True, True, True, True], kind="stable")
    return stats.reset_index(drop=True)[QUERY_COLUMNS]


def costliest_queries(
    shown: pd.DataFrame, recent: pd.DataFrame, before: pd.DataFrame, *, top: int = TOP_QUERIES
) -> pd.DataFrame:
    """The `top` queries of `shown` by total RU, with `mean_ru_change_pct` from `before` to `recent` (NaN
    when the query did not succeed in both)."""
    names = [*KEY, "query_name"]
    means = [
        query_stats(f)[[*names, "mean_ru"]].rename(columns={"mean_ru": n}) for f, n in ((recent, "a"), (before, "b"))
    ]
    out = query_stats(shown).head(top).merge(means[0], on=names, how="left").merge(means[1], on=names, how="left")
    then = out.pop("b").astype(float)
    out["mean_ru_change_pct"] = ((out.pop("a").astype(float) / then.where(then > 0) - 1) * 100).round(1)
    return out


def overview_table(
    frames: dict[str, pd.DataFrame], span: Periods, *, limits: Limits | None = None, region: str | None = None
) -> pd.DataFrame:
    """`summarize_containers` of the shown period with the changes between the two compared ones;
    `frames` holds `summarize_containers`' frames, read from `span.before_start` on (with "span_cells", the
    stored days' cells: every day a period starts or ends in must be read as points,
    `analysis.load.stored.cell_days`)."""

    def summary(start: pd.Timestamp | None, end: pd.Timestamp | None = None) -> pd.DataFrame:
        cut = {name: between(f, start, end) for name, f in frames.items()}
        return summarize_containers(
            cut["executions"],
            cut["requests"],
            cut["metrics"],
            cut["partitions"],
            cut["logical_keys"],
            cut.get("log_throttles"),
            limits=limits,
            region=region,
            span_cells=cut.get("span_cells"),
        )

    shown = summary(span.shown_start)
    if span.recent_start is None:
        return compare_periods(shown, shown, shown.iloc[0:0])
    recent = shown if span.recent_start == span.shown_start else summary(span.recent_start)
    return compare_periods(shown, recent, summary(span.before_start, span.recent_start))


FILLS = {  # how close each container is to a limit, in % (100 = at it): column -> label
    "p95_utilization": "p95 RU/s of provisioned",
    # the sustained load (p95 of a range's per-minute figure), as the "Hottest range" card and the risk read:
    # the peak minute is 100% for any container that had one busy second (an import), not at its limit
    "sustained_normalized_ru": "busiest range's sustained normalized RU (p95)",
    "throttle_rate": f"429 rate of the healthy {THROTTLE_HEALTHY_MAX:.0%}",
    "storage_headroom": "largest partition of 50 GB",
    "key_headroom": "largest key of 20 GB",
}


def limit_fills(containers: pd.DataFrame) -> pd.DataFrame:
    """Per container and limit of `FILLS`: how full, in % (NaN without data), for the Overview's figure."""
    out = containers[KEY].copy()
    out["p95_utilization"] = containers["p95_utilization"].astype(float) * 100
    out["sustained_normalized_ru"] = containers["sustained_normalized_ru"].astype(float)
    out["throttle_rate"] = containers["throttle_rate"].astype(float) / THROTTLE_HEALTHY_MAX * 100
    out["storage_headroom"] = (1 - containers["storage_headroom"].astype(float)) * 100
    out["key_headroom"] = (1 - containers["key_headroom"].astype(float)) * 100
    return out.round({name: 4 for name in FILLS}).rename(columns=FILLS)  # 0.001% is not 0: its bar says so
