"""The metrics collector: Azure Monitor platform metrics of each account into the tidy `metrics` table.

Per account with a `monitor_resource` (and a config with `[monitor]`; otherwise there is nothing to do),
per database and metric: `MetricsClient.query_resources` split by container and by the metric's dimensions
(`NormalizedRUConsumption` by `PartitionKeyRangeId` and `PhysicalPartitionId`, the totals by `OperationType`
and `StatusCode`; every metric with a `Region` dimension by Region too, stored in `region`: `regional`),
with `max_results` set (the service returns 10 series by default when splitting, and at most `MAX_RESULTS`
with no sign of the rest: an answer at the cap is asked again per container, then per value of the
metric's dimensions, `Metrics.fetch_whole`), long ranges cut into chunks of at most a day, and each metric
asked at the configured grain or its own finest one when that is coarser (the catalogue's,
`cosmoscore.monitor.metrics`: asking PT1M of a PT5M metric is refused). The aggregation asked is the
catalogue's default; the split (`SPLITS`) is the collector's choice.

Incremental: the watermark of (account, database, metric) is the latest point the store holds; a run asks
from it less `overlap_minutes` (late points), or `backfill_hours` back on a first run, up to the last
complete interval, and writes only points whose key the store does not hold yet. Only a point at or before
its watermark can be stored already, so only the overlap's keys are read back. That read is what keeps a
run's own line honest and its commits small; what makes each point stored once is the commit itself: the
metrics table is keyed by the point (no run id), so a commit inserts only the keys the table does not hold
when it lands (`store.delta`), and a collector running at the same moment, on this host or another, that
stored some of them first costs nothing but the line's count ("N already stored").

Scale (benchmarks/bench_monitor.py: 30 days x 1 minute x 100 pkranges, 4.3 million points): points are
flattened into Arrow columns per chunk, never one object per point, and committed in batches with
`write_arrow` (app transaction `ruscope-<run_id>-m<NNNN>`: each batch exactly once). They are not journaled
point by point: a run killed before a commit loses only points Azure still holds, and the next run asks
for them again, since its watermark never moved past them.

A shared-throughput database's own series (Azure labels them `CollectionName` `<empty>` on its partition
metrics and `__Empty` on its offer's throughput, azure-monitor.md §7b R2, R30-R32) are stored under its
shared offer, `container` = `store.records.SHARED_OFFER_CONTAINER` (""), never as a container of that name
(`stored_container`); its request and storage totals keep their container names. A container literally named
`<empty>` or `__Empty` cannot be told from the label in those metrics: it is attributed to its database too.

Faults are one line each: a 401/403 names the Monitoring Reader role, an endpoint that is down says so
(both end the account's run: nothing else would work), a metric the service does not know (400) or a
throttled request (429, after the retries azure-core makes with the service's Retry-After) fails that
metric only, keeping what it had collected; so does a 200 that reports the metric failed (its `errorCode`,
which the SDK's public model drops: read from the raw response, `collectors.getbatch`), never taken for a metric
with no points. Layers: `fetch` talks to the service; `metric_filter`,
`points_table`, `grain_of` and `window` are pure (and `collectors.getbatch`, which reads an answer beyond the
SDK's model and narrows a capped query's filter); `Metrics` walks databases and metrics.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from azure.core.exceptions import HttpResponseError, ServiceRequestError

from collectors.config import Account, Config, MonitorSettings
from collectors.credentials import monitor_credential
from collectors.errors import Fatal, auth_failure
from collectors.getbatch import (
    MetricFailed,
    answered_errors,
    dimension_values,
    failure_line,
    free_dimensions,
    only_split,
    pin,
    quoted,
    series_count,
)
from collectors.registry import Options
from collectors.run import Run
from cosmoscore.monitor.metrics import (
    COLLECTION_NAME,
    DATABASE_NAME,
    GRAIN_MINUTES,
    NAMESPACE,
    NORMALIZED_RU,
    OPERATION_TYPE,
    PARTITION_KEY_RANGE_ID,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PHYSICAL_PARTITION_ID,
    REGION,
    SHARED_DATABASE_COLLECTION,
    STATUS_CODE,
    TOTAL,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
    find_metric,
)
from store import UTC_TIME, read_table, write_arrow
from store.records import METRIC_DIMENSIONS, METRICS, SHARED_OFFER_CONTAINER

MAX_RESULTS = 1000  # `top`: series per answer (the service's default is 10 when a filter splits, §7b R3)
LISTING_GRAIN = "PT1H"  # listing a dimension's values needs no fine grain: few points per series
CHUNK = dt.timedelta(days=1)
RETRIES = 3  # azure-core's RetryPolicy retries 429/5xx, waiting what the service advises (Retry-After, retry-after-ms)
# getBatch is a POST, which azure-core retries on a 429 only when it carries Retry-After; it only reads, so
# it is as safe to repeat as a GET: a 429 without that header is retried too (with azure-core's backoff).
RETRY_METHODS = frozenset({"GET", "POST"})
BATCH_ROWS = 250_000  # points per commit: a few tens of MB of Arrow, few Delta commits, and a merge of bounded memory
GRAINS = {grain: dt.timedelta(minutes=minutes) for grain, minutes in GRAIN_MINUTES.items()}
# The collector's choice of split per metric: the hot-partition signal by range and physical partition, the
# totals by operation and status (429s), the partition metrics by physical partition; any other metric by
# container only. Each is one of the metric's dimensions in the catalogue (azure-monitor.md §5).
SPLITS: dict[str, tuple[str, ...]] = {
    NORMALIZED_RU: (PARTITION_KEY_RANGE_ID, PHYSICAL_PARTITION_ID),
    TOTAL_REQUEST_UNITS: (OPERATION_TYPE, STATUS_CODE),
    TOTAL_REQUESTS: (OPERATION_TYPE, STATUS_CODE),
    PARTITION_SIZE: (PHYSICAL_PARTITION_ID,),
    PARTITION_THROUGHPUT: (PHYSICAL_PARTITION_ID,),
}
COLUMNS = {  # metadata_values names (lower-cased by the service, azure-monitor.md §2.3) -> store columns
    PARTITION_KEY_RANGE_ID.lower(): "pkrange_id",
    PHYSICAL_PARTITION_ID.lower(): "physical_partition_id",
    OPERATION_TYPE.lower(): "operation_type",
    STATUS_CODE.lower(): "status_code",
    REGION.lower(): "region",
}
KEY_COLUMNS = ["database", "container", "metric", "aggregation", "time", *METRIC_DIMENSIONS]
Key = tuple[Any, ...]
_TIMESTAMP = attrgetter("timestamp")


def spec(metric: str) -> tuple[str, tuple[str, ...]]:
    """(aggregation, split dimensions) of `metric`: the catalogue's default aggregation (Total for a metric
    it does not know) and the collector's split (pure), by `regional` first."""
    known = find_metric(metric)
    return (known.default_aggregation if known else TOTAL), (*regional(metric), *SPLITS.get(metric, ()))


def regional(metric: str) -> tuple[str, ...]:
    """(Region,) for a metric the catalogue gives a Region dimension (every one but AutoscaleMaxThroughput,
    §7b R1): unsplit, the service combines the account's regions (a sum, for Total), so a point of a
    two-region account would hold both copies of its data or both regions' reserved RU/s (pure)."""
    known = find_metric(metric)
    return (REGION,) if known and REGION in known.dimensions else ()


def grain_of(metric: str, configured: str) -> str:
    """The grain to ask `metric` at: the configured one, or the metric's finest when that is coarser
    (azure-monitor.md §5: asking PT1M of a PT5M metric is refused) (pure)."""
    known = find_metric(metric)
    finest = known.finest_grain if known else "PT1M"
    return finest if GRAIN_MINUTES[finest] > GRAIN_MINUTES[configured] else configured


_SHARED_LABELS = {metric.lower(): label for metric, label in SHARED_DATABASE_COLLECTION.items()}


def stored_container(metric: str, collection: str) -> str:
    """The store's `container` of a series of `metric` whose `CollectionName` is `collection`: the database's
    shared offer (`SHARED_OFFER_CONTAINER`) for the label Azure gives a shared-throughput database's own
    series of that metric, else the container's name (pure)."""
    return SHARED_OFFER_CONTAINER if _SHARED_LABELS.get(metric.lower()) == collection else collection


def metric_filter(database: str, metric: str) -> str:
    """The `filter` of one database's query: every container, split by the metric's dimensions (pure)."""
    terms = [f"{DATABASE_NAME} eq {quoted(database)}", f"{COLLECTION_NAME} eq '*'"]
    return " and ".join([*terms, *(f"{d} eq '*'" for d in spec(metric)[1])])


def window(
    now: dt.datetime, watermark: dt.datetime | None, settings: MonitorSettings, grain: str | None = None
) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) to ask, on the grain, up to the last complete interval (pure; see `aligned_window`)."""
    return aligned_window(now, watermark, settings, GRAINS[grain or settings.grain])


def aligned_window(
    now: dt.datetime,
    watermark: dt.datetime | None,
    settings: MonitorSettings,
    step: dt.timedelta,
    end: dt.datetime | None = None,
) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) to ask: from the watermark less the overlap (a first run: the backfill), never further
    back than the backfill, up to `end` (default: now); both floored to `step` (pure). Metrics and logs
    share it; logs end earlier, by their ingestion lag."""
    earliest = now - dt.timedelta(hours=settings.backfill_hours)
    start = earliest if watermark is None else max(earliest, watermark - dt.timedelta(minutes=settings.overlap_minutes))
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return epoch + (start - epoch) // step * step, epoch + ((end or now) - epoch) // step * step


def chunks(start: dt.datetime, end: dt.datetime) -> Iterator[tuple[dt.datetime, dt.datetime]]:
    while start < end:
        yield start, min(end, start + CHUNK)
        start += CHUNK


def points_table(
    results: list[Any], ids: dict[str, str], grain: str, first: dt.datetime, last: dt.datetime
) -> pa.Table:
    """Every point of every time series (`MetricsQueryResult`s) in [first, last) as Arrow columns of the
    metrics table; empty intervals skipped (pure). Columnar: a list per column, no object per point."""
    value_of = attrgetter(ids["aggregation"].lower())
    times: list[dt.datetime] = []
    values: list[float | None] = []
    repeated: dict[str, list[Any]] = {c: [] for c in ("container", "metric", "unit", *COLUMNS.values())}
    for result in results:
        for metric in result.metrics:
            unit = str(getattr(metric.unit, "value", metric.unit))
            for series in metric.timeseries:
                n = len(series.data)
                dims = {k.lower(): v for k, v in (series.metadata_values or {}).items()}
                times += map(_TIMESTAMP, series.data)
                values += map(value_of, series.data)
                repeated["container"] += [stored_container(metric.name, dims.get(COLLECTION_NAME.lower(), ""))] * n
                repeated["metric"] += [metric.name] * n
                repeated["unit"] += [unit] * n
                for name, column in COLUMNS.items():
                    repeated[column] += [dims.get(name)] * n
    columns: dict[str, pa.Array] = {
        "time": pa.array(times, UTC_TIME),
        "value": pa.array(values, pa.float64()),
        **{c: pa.array(v, pa.string()) for c, v in repeated.items()},
    }
    data = pa.table(columns)
    keep = pc.and_(
        pc.is_valid(data["value"]),
        pc.and_(
            pc.greater_equal(data["time"], pa.scalar(first, UTC_TIME)),
            pc.less(data["time"], pa.scalar(last, UTC_TIME)),
        ),
    )
    data = data.filter(keep)
    constant = {"run_id": None, "account": ids["account"], "database": ids["database"]}
    constant |= {"aggregation": ids["aggregation"], "grain": grain}
    for name, value in constant.items():
        data = data.append_column(name, pa.array([value] * data.num_rows, pa.string()))
    return data.select(METRICS.schema.names)


def describe_monitor_error(exc: BaseException, settings: MonitorSettings, resource: str) -> tuple[str, bool]:
    """One line for a failed query, and whether the fault ends the account's run (the credential, the role,
    the endpoint: no other query would escape it). Never a token."""
    if isinstance(exc, MetricFailed):
        return str(exc), False
    status = getattr(exc, "status_code", None)
    failure = auth_failure(exc)
    if failure:
        cause, detail = failure
        return f"Azure Monitor: {cause}: the identity needs the Monitoring Reader role on {resource}{detail}", True
    if isinstance(exc, ServiceRequestError):
        return f"Azure Monitor: cannot reach {settings.endpoint}: {str(exc).splitlines()[0]}", True
    if status == 429:
        return (
            f"Azure Monitor throttled the request (429) after {RETRIES} retries at its advised delay; "
            "what was collected is kept: retry later"
        ), False
    if isinstance(exc, HttpResponseError):
        message = getattr(exc, "message", None) or str(exc)
        return f"{status} {str(message).splitlines()[0]}", False
    return f"{type(exc).__name__}: {exc}", False


def _key(row: tuple[Any, ...]) -> Key:
    """A stored or fetched key with times as UTC epoch microseconds and missing dimensions as None."""
    out: list[Any] = []
    for v in row:
        if v is None or (not isinstance(v, str) and pd.isna(v)):
            out.append(None)
        elif isinstance(v, dt.datetime):
            out.append(round(v.timestamp() * 1_000_000))
        else:
            out.append(v)
    return tuple(out)


def _is_stored(key: Key, seen: set[Key]) -> bool:
    """Whether the point is stored: its key, or the key with no region (`region` is the key's last column), a
    point stored before the collector split by Region, which covered every region: a run after the upgrade
    stores per region only from the watermark on, never the same minute both ways (pure)."""
    return key in seen or (key[-1] is not None and (*key[:-1], None) in seen)


@dataclass
class Metrics:
    """One account's metrics collection, inside a `Run`."""

    account: Account
    resource: str
    settings: MonitorSettings
    run: Run
    client: Any  # a MetricsClient
    batch: list[pa.Table] = field(default_factory=list)
    parts: int = 0

    def watermarks(self, since: dt.datetime) -> dict[tuple[str, str], dt.datetime]:
        """Each (database, metric)'s latest stored point since `since` (a vectorised read of four columns)."""
        frame = read_table(self.run.store, METRICS, since=since, columns=["account", "database", "metric", "time"])
        frame = frame[frame["account"] == self.account.name]
        latest = frame.groupby(["database", "metric"], observed=True)["time"].max()
        return {(str(k[0]), str(k[1])): t.to_pydatetime() for k, t in latest.items() if isinstance(k, tuple)}

    def stored(self, since: dt.datetime) -> set[Key]:
        """The keys of the account's points stored since `since`: only the overlap's (see the module doc)."""
        frame = read_table(self.run.store, METRICS, since=since, columns=["account", *KEY_COLUMNS])
        frame = frame[frame["account"] == self.account.name]
        return {_key(row) for row in frame[KEY_COLUMNS].astype(object).itertuples(index=False, name=None)}

    def fetch_whole(self, metric: str, database: str, grain: str, start: dt.datetime, end: dt.datetime) -> list[Any]:
        """Every series of one database's metric in [start, end): one call, or, where an answer holds
        `MAX_RESULTS` series (the service returns at most `top` and says nothing of the rest, §7b R3, R12),
        one call per value of its first split dimension (the container, then the metric's own), and so on."""
        return self.fetch_split(metric, database, grain, start, end, metric_filter(database, metric))

    def fetch_split(
        self, metric: str, database: str, grain: str, start: dt.datetime, end: dt.datetime, filter_text: str
    ) -> list[Any]:
        results = self.fetch(metric, database, grain, start, end, filter_text)
        free = free_dimensions(filter_text)
        if series_count(results) < MAX_RESULTS or not free:
            return results
        listing = self.fetch(metric, database, LISTING_GRAIN, start, end, only_split(filter_text, free[0]))
        values = dimension_values(listing, free[0])
        if len(values) >= MAX_RESULTS:
            raise MetricFailed(
                f"more than {MAX_RESULTS} values of {free[0]} (filter {filter_text}): the service returns at "
                f"most {MAX_RESULTS} series per query, so the rest cannot be collected"
            )
        out: list[Any] = []
        for value in values:
            out += self.fetch_split(metric, database, grain, start, end, pin(filter_text, free[0], value))
        return out

    def fetch(
        self,
        metric: str,
        database: str,
        grain: str,
        start: dt.datetime,
        end: dt.datetime,
        filter_text: str | None = None,
    ) -> list[Any]:
        """One getBatch call (`filter_text`: default, the database's `metric_filter`); a metric the answer
        reports failed (a 200 all the same) raises `MetricFailed`."""
        responses: list[Any] = []
        results = list(
            self.client.query_resources(
                resource_ids=[self.resource],
                metric_namespace=NAMESPACE,
                metric_names=[metric],
                timespan=(start, end),
                granularity=GRAINS[grain],
                aggregations=[spec(metric)[0]],
                filter=filter_text or metric_filter(database, metric),
                max_results=MAX_RESULTS,
                retry_on_methods=RETRY_METHODS,
                raw_response_hook=responses.append,
            )
        )
        errors = answered_errors(responses)
        if errors:
            raise MetricFailed(failure_line(errors))
        return results

    def new_points(self, data: pa.Table, seen: set[Key], mark: dt.datetime | None) -> pa.Table:
        """`data` less the points already stored: only those at or before the watermark can be."""
        if mark is None or data.num_rows == 0:
            return data
        maybe = pc.less_equal(data["time"], pa.scalar(mark, UTC_TIME))
        if not pc.any(maybe).as_py():
            return data
        rows = data.select(KEY_COLUMNS).to_pylist()
        flags = maybe.to_pylist()
        fresh = [not (old and _is_stored(_key(tuple(r.values())), seen)) for r, old in zip(rows, flags, strict=True)]
        return data.filter(pa.array(fresh, pa.bool_()))

    def write(self, data: pa.Table | None = None, *, flush: bool = False) -> int:
        """Batch points; commit once a batch is large (or on `flush`), each batch exactly once. The points of a
        commit that another collector had stored meanwhile are not added: returns how many of the batched
        points were not (0 when nothing was committed)."""
        if data is not None and data.num_rows:
            self.batch.append(data)
        rows = sum(t.num_rows for t in self.batch)
        if not rows or not (flush or rows >= BATCH_ROWS):
            return 0
        part = f"m{self.parts:04d}"
        added = write_arrow(self.run.store, METRICS, pa.concat_tables(self.batch), run_id=self.run.run_id, part=part)
        self.parts += 1
        self.batch.clear()
        return int(rows) - added

    def collect_metric(self, database: str, metric: str, seen: set[Key], mark: dt.datetime | None) -> None:
        """One metric of one database, chunk by chunk; only points not stored yet are written. A failure
        keeps what the earlier chunks brought."""
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        grain = grain_of(metric, self.settings.grain)
        start, end = window(now, mark, self.settings, grain)
        ids = {"account": self.account.name, "database": database, "aggregation": spec(metric)[0]}
        new = old = 0
        try:
            for first, last in chunks(start, end):
                if self.run.stop.is_set():
                    break
                data = points_table(self.fetch_whole(metric, database, grain, first, last), ids, grain, first, last)
                fresh = self.new_points(data, seen, mark)
                new, old = new + fresh.num_rows, old + data.num_rows - fresh.num_rows
                meanwhile = self.write(fresh)  # a batch's points stored by another collector meanwhile
                new, old = new - meanwhile, old + meanwhile
        except Exception as exc:  # this metric fails; the others go on
            meanwhile = self.write(flush=True)
            new -= meanwhile
            line, fatal = describe_monitor_error(exc, self.settings, self.resource)
            if fatal:
                raise Fatal(line) from None
            self.run.err(f"database {database!r} metric {metric!r}: {line} ({new} new point(s) kept)")
            self.run.count(failed=True)
            return
        meanwhile = self.write(flush=True)
        new, old = new - meanwhile, old + meanwhile
        span = f"{start:%Y-%m-%d %H:%M}..{end:%Y-%m-%d %H:%M} UTC"
        self.run.out(f"{database} {metric}: {new} new point(s), {old} already stored ({span}, {grain})")
        self.run.count(failed=False)

    def collect(self) -> None:
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        # the coarsest grain a point is asked at: PT5M (the coarsest a config names), or a metric's finest
        coarsest = max([GRAINS["PT5M"], *(GRAINS[grain_of(m, self.settings.grain)] for m in self.settings.metrics)])
        overlap = dt.timedelta(minutes=self.settings.overlap_minutes) + coarsest
        marks = self.watermarks(now - dt.timedelta(hours=self.settings.backfill_hours) - overlap)
        seen = self.stored(min(marks.values()) - overlap) if marks else set()
        for database in self.account.databases:
            for metric in dict.fromkeys(self.settings.metrics):
                if self.run.stop.is_set():
                    return
                self.collect_metric(database, metric, seen, marks.get((database, metric)))


class MetricsCollector:
    """`ruscope metrics` and the metrics part of `ruscope collect`; `client_options` go to the `MetricsClient`
    (azure-core keywords, e.g. a `transport`: the benchmark replays recorded bodies through one)."""

    name = "metrics"
    item = "metric"

    def __init__(self, client_options: dict[str, Any] | None = None) -> None:
        self.client_options = client_options or {}

    def budget(self, config: Config) -> float | None:
        return None

    def collect(self, config: Config, run: Run, options: Options) -> None:
        """Every configured metric of the account's databases; nothing for an account without a
        `monitor_resource` or a config without `[monitor]`."""
        account = config.account(options.account)
        if config.monitor is None or account.monitor_resource is None:
            return
        from azure.monitor.querymetrics import MetricsClient

        settings = config.monitor
        try:
            client = MetricsClient(
                settings.endpoint,
                monitor_credential(),
                connection_verify=settings.ca_bundle or True,
                retry_total=RETRIES,
                **self.client_options,
            )
            Metrics(account, account.monitor_resource, settings, run, client).collect()
        except Fatal as exc:
            run.err(str(exc))
            run.count(failed=True)
        except Exception as exc:  # no client: one line, one failed item
            run.err(describe_monitor_error(exc, settings, account.monitor_resource)[0])
            run.count(failed=True)


COLLECTOR = MetricsCollector()
