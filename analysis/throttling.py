"""Throttling: where and when requests were answered 429 (request rate too large), how much retry-after
time that cost, and which replayed queries were throttled.

Pure functions over the store's frames, of which they read only the `*_COLUMNS` below; the time range and
scope are cut before these run (`analysis.scope`). Three sources, each kept apart because each sees
different traffic:
- `metrics` (Azure Monitor, `ruscope metrics`): `TotalRequests` (aggregation Count) split by
  `operation_type` and `status_code` (collectors/metrics.py): all of the account's traffic, per container
  and operation, but not per partition;
- `log_throttles` (Log Analytics, `ruscope logs`): requests and 429s per physical partition (`partition_id`,
  a GUID, not a pkrange id) and operation in each time bin (one log row per request, so a 429 and its retry
  are two, as the metric counts them; rows stored before requests were counted have none and give no rate);
- `requests` and `executions` (the replay): the replayed queries' own requests, per pkrange, with the
  retry-after the service asked for; the only source when no Monitor data exists.

**One definition of a 429 rate**: 429s over all requests (`request_counts`: the two terms per container,
source, operation and time; `_rate` divides them). Every rate here is that one summed over a different
grouping, so a container's rate is its operations' requests and 429s summed, never an average of rates.

**One rate per container** (`preferred_rate`, which the Fleet, the Overview, the report and the alert read):
Azure Monitor's where it counted the container's requests, since it sees all the traffic, else the logs', else
the replay's; the source is named, and the window (`start`, `end`: the first and last time counted), so a
page's rate over its whole time range and an alert's over its last minutes say which they are (`rate_window`).
The logs' tables hold no region (the collector sums them over the regions): beside one region's Monitor
figures their rate is named "all regions" (`source_name`).
**Per operation and time bin** (`operation_rates`): the same terms, from the container's preferred source
among those that know the operation (Azure Monitor, then the logs).

**The healthy band**: the service documents 1-5% of requests answered 429 as healthy (the SDK retries them;
docs/reference/ru-cost-model.md P12, learn.microsoft.com troubleshoot-request-rate-too-large), so a
rate above `HEALTHY_429_RATE[1]` is flagged and one inside the band is not.

**Bins**: series over time are summed into bins of `pick_bin` (a round size such that the time range holds
at most `MAX_BINS` bins), and a series figure keeps the `top` series by 429s (the rest summed as "other"),
so a figure draws at most a few thousand points whatever the time range.
"""

from __future__ import annotations

import pandas as pd

from analysis import regions
from analysis.scope import in_containers
from analysis.storage import KEY, container_labels, labels
from cosmoscore.monitor.metrics import TOTAL_REQUESTS
from store.records import EXECUTIONS, LOG_THROTTLES, METRICS, REQUESTS

HEALTHY_429_RATE = (0.01, 0.05)  # ru-cost-model.md P12: 1-5% of requests throttled is considered healthy
MAX_BINS = 500
NICE_BINS = tuple(
    pd.Timedelta(s) for s in ("1min", "5min", "15min", "30min", "1h", "3h", "6h", "12h", "1D", "7D", "30D")
)
OTHER = "other"
MONITOR, LOGS, REPLAY = "Azure Monitor", "Log Analytics", "replay"
PREFERENCE = {MONITOR: 0, LOGS: 1, REPLAY: 2}  # the source a container's one rate comes from, best first
ALL_REGIONS = "all regions"  # what a log-derived figure says beside one region's (`source_name`)

# The store columns these functions read: a view loads only these.
METRIC_COLUMNS = METRICS.pick(*KEY, "time", "metric", "aggregation", "operation_type", "status_code", "value", "region")
MONITOR_ROWS: dict[str, tuple[str, ...]] = {
    "metric": (TOTAL_REQUESTS,)
}  # the metrics rows these functions read: a store read needs no others
LOG_THROTTLE_COLUMNS = LOG_THROTTLES.pick(*KEY, "time", "partition_id", "operation_name", "throttled", "requests")
REQUEST_COLUMNS = REQUESTS.pick(*KEY, "time", "pkrange_id", "status", "retry_after_ms")
EXECUTION_COLUMNS = EXECUTIONS.pick(
    *KEY, "run_id", "time", "query_name", "status", "total_ru", "throttled", "retry_after_ms_total"
)

RATE_COLUMNS = [*KEY, "label", "source", "time", "requests", "throttled", "rate"]
SUMMARY_COLUMNS = [*KEY, "label", "source", "requests", "throttled", "rate", "verdict", "start", "end"]
PREFERRED_COLUMNS = [*KEY, "source", "requests", "throttled", "rate", "start", "end"]
OPERATION_COLUMNS = [*KEY, "label", "source", "operation", "time", "requests", "throttled", "rate"]
COUNT_COLUMNS = [*KEY, "source", "operation", "time", "requests", "throttled"]
SERIES_COLUMNS = ["time", "series", "throttled"]
RETRY_COLUMNS = [*KEY, "label", "pkrange_id", "requests", "throttled", "rate", "retry_after_s"]
QUERY_COLUMNS = [*KEY, "query_name", "run_id", "time", "executions", "throttled", "retry_after_s", "total_ru"]


def pick_bin(times: pd.Series, *, max_bins: int = MAX_BINS) -> pd.Timedelta:
    """The smallest round bin (`NICE_BINS`) that cuts the span of `times` into at most `max_bins` bins."""
    known = times.dropna()
    span = (known.max() - known.min()) if len(known) else pd.Timedelta(0)
    return next((b for b in NICE_BINS if span / b <= max_bins), NICE_BINS[-1])


def request_counts(
    metrics: pd.DataFrame, requests: pd.DataFrame, log_throttles: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Requests and 429s per container, source, operation and time (`COUNT_COLUMNS`): Azure Monitor's
    TotalRequests (each interval's rows per operation, summed over status codes), the logs' rows that
    counted their requests, and the replay's requests (one each, operation ""). Every 429 rate is these
    two terms summed and divided (the module docstring)."""
    rows = _monitor_rows(metrics)
    rows = rows[rows["metric"].eq(TOTAL_REQUESTS).fillna(False) & rows["status_code"].notna()].dropna(
        subset=["time", "value"]
    )
    if rows["aggregation"].eq("Count").any():
        rows = rows[rows["aggregation"].eq("Count").fillna(False)]
    values = rows["value"].astype(float)
    monitor = rows[[*KEY, "time"]].assign(
        source=MONITOR,
        operation=rows["operation_type"].astype("string").fillna("").astype(str) if "operation_type" in rows else "",
        requests=values,
        throttled=values.where(_is_429(rows["status_code"]), 0.0),
    )
    logs = _logged_counts(log_throttles)
    replay = in_containers(requests).dropna(subset=["time"])
    replay = replay[[*KEY, "time"]].assign(
        source=REPLAY, operation="", requests=1.0, throttled=_is_429(replay["status"]).astype(float)
    )
    frames = [f[COUNT_COLUMNS] for f in (monitor, logs, replay) if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COUNT_COLUMNS)


def _logged_counts(log_throttles: pd.DataFrame | None) -> pd.DataFrame:
    """The logs' requests and 429s per container, operation and bin, summed over physical partitions; rows
    stored before requests were counted (null `requests`: only bins with 429s) are left out."""
    if log_throttles is None or "requests" not in log_throttles:
        return pd.DataFrame(columns=COUNT_COLUMNS)
    rows = in_containers(log_throttles).dropna(subset=["time", "requests"])
    return rows[[*KEY, "time"]].assign(
        source=LOGS,
        operation=rows["operation_name"].astype("string").fillna("").astype(str),
        requests=rows["requests"].astype(float),
        throttled=rows["throttled"].astype(float).fillna(0.0),
    )


def throttle_rate(
    metrics: pd.DataFrame,
    requests: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    bin: pd.Timedelta | None = None,
) -> pd.DataFrame:
    """The 429 rate (429s / all requests) per container, source and time bin (`RATE_COLUMNS`); the bin is
    `pick_bin` of the times when not given."""
    counts = request_counts(metrics, requests, log_throttles)
    if counts.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    width = bin or pick_bin(counts["time"])
    binned = counts.assign(time=counts["time"].dt.floor(width))
    rate = binned.groupby([*KEY, "source", "time"], as_index=False)[["requests", "throttled"]].sum()
    rate = rate.assign(label=container_labels(rate), rate=_rate(rate))
    return rate.sort_values([*KEY, "source", "time"], ignore_index=True)[RATE_COLUMNS]


def throttle_summary(
    metrics: pd.DataFrame, requests: pd.DataFrame, log_throttles: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container and source over the whole frame: requests, 429s, the rate, a verdict against the
    healthy band and the first and last time counted (`SUMMARY_COLUMNS`), highest rate first."""
    counts = request_counts(metrics, requests, log_throttles)
    if counts.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    summary = _summed(counts, [*KEY, "source"])
    summary = summary.assign(label=container_labels(summary), rate=_rate(summary))
    summary["verdict"] = summary["rate"].map(verdict)
    summary = summary.sort_values([*KEY, "source"]).sort_values("rate", ascending=False, kind="stable")
    return summary.reset_index(drop=True)[SUMMARY_COLUMNS]


def preferred_counts(
    metrics: pd.DataFrame, requests: pd.DataFrame, log_throttles: pd.DataFrame | None = None
) -> pd.DataFrame:
    """`request_counts`' rows of each container's preferred source (`COUNT_COLUMNS`): Azure Monitor's where it
    counted requests for the container, else the logs', else the replay's. The rows behind its one rate
    (`preferred_rate`), per operation (`operation_rates`) and its window (`rate_window`)."""
    counts = request_counts(metrics, requests, log_throttles)
    counts = counts[counts["requests"].astype(float).gt(0)]
    rank = counts["source"].map(PREFERENCE)
    return counts[rank.eq(rank.groupby([counts[k] for k in KEY]).transform("min"))].reset_index(drop=True)


def preferred_rate(
    metrics: pd.DataFrame, requests: pd.DataFrame, log_throttles: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container, one 429 rate (`PREFERRED_COLUMNS`) from its preferred source (`preferred_counts`),
    `source` naming it, `start` and `end` the first and last time it counted (its window). The numbers are
    `throttle_summary`'s of that source, so every page, report row and alert shows the same one."""
    counts = preferred_counts(metrics, requests, log_throttles)
    if counts.empty:
        return pd.DataFrame(columns=PREFERRED_COLUMNS)
    rate = _summed(counts, [*KEY, "source"])
    return rate.assign(rate=_rate(rate)).sort_values(KEY, ignore_index=True)[PREFERRED_COLUMNS]


def _summed(counts: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """`request_counts`' terms summed per `by`, with the first and last time counted (`start`, `end`)."""
    return counts.groupby(by, as_index=False).agg(
        requests=("requests", "sum"), throttled=("throttled", "sum"), start=("time", "min"), end=("time", "max")
    )


def rate_window(starts: pd.Series, ends: pd.Series) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The window a page's 429 rates cover: the first of their `starts` and the last of their `ends`
    (`preferred_rate`'s `start` and `end`, the Fleet's `throttle_start` and `throttle_end`); None when
    no rate has one."""
    start, end = pd.to_datetime(starts).min(), pd.to_datetime(ends).max()
    return None if pd.isna(start) or pd.isna(end) else (start, end)


def source_name(source: str, region: str | None) -> str:
    """How a rate's source is named beside one `region`'s Azure Monitor figures: the store's diagnostic-log
    tables have no region (the logs collector sums their RegionName), so theirs say "all regions"; else the
    source as is (the account in total: every region's metrics beside every region's logs)."""
    return f"{source} ({ALL_REGIONS})" if region is not None and source == LOGS else source


def operation_rates(
    metrics: pd.DataFrame, log_throttles: pd.DataFrame | None = None, *, bin: pd.Timedelta | None = None
) -> pd.DataFrame:
    """The 429 rate per container, operation and time bin (`OPERATION_COLUMNS`), from each container's
    preferred source that knows operations (`preferred_counts` without the replay: Azure Monitor where it
    counted the container's requests, else the logs), summed per bin (`pick_bin` of the times when not
    given), so a container's operations summed give its one rate. Highest rate first."""
    counts = preferred_counts(metrics, pd.DataFrame(columns=REQUEST_COLUMNS), log_throttles)
    if counts.empty:
        return pd.DataFrame(columns=OPERATION_COLUMNS)
    width = bin or pick_bin(counts["time"])
    binned = counts.assign(time=counts["time"].dt.floor(width))
    rate = binned.groupby([*KEY, "source", "operation", "time"], as_index=False)[["requests", "throttled"]].sum()
    rate = rate.assign(label=container_labels(rate), rate=_rate(rate))
    rate = rate.sort_values([*KEY, "operation", "time"]).sort_values("rate", ascending=False, kind="stable")
    return rate.reset_index(drop=True)[OPERATION_COLUMNS]


def verdict(rate: float) -> str:
    """A 429 rate against the healthy band, in words ("" when unknown)."""
    low, high = HEALTHY_429_RATE
    if pd.isna(rate):
        return ""
    if rate > high:
        return f"above the healthy {low:.0%}-{high:.0%}"
    return "no 429s" if rate == 0 else f"within the healthy {low:.0%}-{high:.0%}"


def monitor_throttles(metrics: pd.DataFrame, *, bin: pd.Timedelta | None = None, top: int = 10) -> pd.DataFrame:
    """Azure Monitor's 429s per operation over time (`SERIES_COLUMNS`; series `container/operation` when
    several containers)."""
    rows = _monitor_rows(metrics)
    rows = rows[rows["metric"].eq(TOTAL_REQUESTS).fillna(False) & _is_429(rows["status_code"])]
    rows = rows.dropna(subset=["time", "value"])
    names = labels(rows, rows["operation_type"].fillna("(all operations)"))
    return _series(rows["time"], names, rows["value"].astype(float), bin=bin, top=top)


def log_throttles(log_throttles: pd.DataFrame, *, bin: pd.Timedelta | None = None, top: int = 10) -> pd.DataFrame:
    """Log Analytics' 429s per physical partition and operation over time (`SERIES_COLUMNS`; series
    `partition <PartitionId> · <operation>`, prefixed `container/` when several containers)."""
    rows = in_containers(log_throttles).dropna(subset=["time", "throttled"])
    rows = rows[rows["throttled"].astype(float).gt(0)]  # bins of requests without a 429 draw nothing
    names = "partition " + rows["partition_id"].astype(str) + " · " + rows["operation_name"].astype(str)
    return _series(rows["time"], labels(rows, names), rows["throttled"].astype(float), bin=bin, top=top)


def replay_throttles(requests: pd.DataFrame, *, bin: pd.Timedelta | None = None, top: int = 10) -> pd.DataFrame:
    """The replay's 429 responses per pkrange over time (`SERIES_COLUMNS`; series the pkrange id, or
    `container/pkrange` when the replay spans several containers, as `retry_after_totals` names them;
    "gateway" for a 429 that names no pkrange)."""
    rows = in_containers(requests).dropna(subset=["time"])
    names = labels(rows, rows["pkrange_id"].fillna("").astype(str).replace("", "gateway"))
    throttled = _is_429(rows["status"])
    rows, names = rows[throttled], names[throttled]
    return _series(rows["time"], names, pd.Series(1.0, index=rows.index), bin=bin, top=top)


def retry_after_totals(requests: pd.DataFrame) -> pd.DataFrame:
    """Per container and pkrange of the replay: requests, 429s, their rate and the retry-after the service
    asked for in seconds (`RETRY_COLUMNS`), most throttled first."""
    rows = in_containers(requests)
    if rows.empty:
        return pd.DataFrame(columns=RETRY_COLUMNS)
    rows = rows.assign(
        pkrange_id=rows["pkrange_id"].fillna("").astype(str).replace("", "gateway"),
        throttled=_is_429(rows["status"]).astype(int),
        retry_after_s=rows["retry_after_ms"].astype(float).fillna(0.0) / 1000,
    )
    totals = rows.groupby([*KEY, "pkrange_id"], as_index=False).agg(
        requests=("throttled", "size"), throttled=("throttled", "sum"), retry_after_s=("retry_after_s", "sum")
    )
    totals = totals.assign(label=labels(totals, totals["pkrange_id"]), rate=_rate(totals))
    totals = totals.sort_values([*KEY, "pkrange_id"]).sort_values("throttled", ascending=False, kind="stable")
    return totals.reset_index(drop=True).round({"retry_after_s": 3})[RETRY_COLUMNS]


def throttled_queries(executions: pd.DataFrame) -> pd.DataFrame:
    """The replayed queries that got 429s, per query and run (`QUERY_COLUMNS`): executions (a per-feed-range
    query's parts each count), 429 responses, retry-after seconds and RU; most throttled first."""
    rows = in_containers(executions)
    rows = rows[rows["throttled"].fillna(0).astype(int).gt(0)]
    if rows.empty:
        return pd.DataFrame(columns=QUERY_COLUMNS)
    per_run = rows.groupby([*KEY, "query_name", "run_id"], as_index=False).agg(
        time=("time", "min"),
        executions=("throttled", "size"),
        throttled=("throttled", "sum"),
        retry_after_s=("retry_after_ms_total", "sum"),
        total_ru=("total_ru", "sum"),
    )
    per_run = per_run.assign(retry_after_s=(per_run["retry_after_s"].astype(float) / 1000).round(3))
    per_run = per_run.sort_values([*KEY, "query_name", "time"]).sort_values("throttled", ascending=False, kind="stable")
    return per_run.reset_index(drop=True).astype({"throttled": "int64"})[QUERY_COLUMNS]


def _series(
    times: pd.Series, names: pd.Series, values: pd.Series, *, bin: pd.Timedelta | None, top: int
) -> pd.DataFrame:
    """Values summed per series and time bin, the `top` series by total kept and the rest summed as "other"."""
    if times.empty:
        return pd.DataFrame(columns=SERIES_COLUMNS)
    width = bin or pick_bin(times)
    frame = pd.DataFrame({"time": times.dt.floor(width), "series": names.astype(str), "throttled": values})
    ranked = frame.groupby("series")["throttled"].sum().sort_index().sort_values(ascending=False, kind="stable")
    kept = set(ranked.index[:top])
    frame["series"] = frame["series"].where(frame["series"].isin(kept), OTHER)
    series = frame.groupby(["series", "time"])["throttled"].sum().reset_index()
    return series.sort_values(["series", "time"], ignore_index=True)[SERIES_COLUMNS]


def _is_429(values: pd.Series) -> pd.Series:
    """Status codes (ints, or the metric's text "429") equal to 429, as plain bools."""
    text = values.astype("string").str.strip().str.removesuffix(".0")
    return text.eq("429").fillna(False).astype(bool)


def _rate(frame: pd.DataFrame) -> pd.Series:
    requests = frame["requests"].astype(float)
    return (frame["throttled"].astype(float) / requests.where(requests > 0)).round(6)


def _monitor_rows(metrics: pd.DataFrame) -> pd.DataFrame:
    """The metric rows of containers, every region's counted once: a row combining the regions (stored
    before the collector split by Region) is dropped where its minute has rows per region (`analysis.regions`);
    a page that shows one region selects it first (`regions.select_region`)."""
    return regions.select_region(in_containers(metrics), None)
