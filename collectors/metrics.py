"""The metrics collector: Azure Monitor platform metrics of each account into the tidy `metrics` table.

Per account with a `monitor_resource` (and a config with `[monitor]`; otherwise there is nothing to do),
per database and metric: `MetricsClient.query_resources` split by container and by the metric's dimensions
(`NormalizedRUConsumption` by `PartitionKeyRangeId`, the totals by `OperationType` and `StatusCode`), with
`max_results` set (the service returns 10 series by default when splitting) and long ranges cut into
chunks of at most a day. Every point becomes one `MetricRecord`.

Incremental: the watermark of (account, database, metric) is the latest point the store holds; a run asks
from it less `overlap_minutes` (late points), or `backfill_hours` back on a first run, up to the last
complete interval, and writes only points whose key the store does not hold yet: each point once.

Faults are one line each: a 401/403 names the Monitoring Reader role, an endpoint that is down says so
(both end the account's run: nothing else would work), a metric the service does not know (400) fails
that metric only. Layers: `fetch_points` talks to the service; `metric_filter`, `points_to_records` and
`window` are pure; `Metrics` walks databases and metrics.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError

from collectors.config import Account, Config, MonitorSettings
from collectors.credentials import monitor_credential
from collectors.registry import Options
from collectors.run import SEAL_SECONDS, Run
from collectors.store import read_table
from collectors.store.records import METRIC_DIMENSIONS, METRICS, MetricRecord

NAMESPACE = "Microsoft.DocumentDB/databaseAccounts"
MAX_RESULTS = 1000
CHUNK = dt.timedelta(days=1)
GRAINS = {"PT1M": dt.timedelta(minutes=1), "PT5M": dt.timedelta(minutes=5)}
# metric -> (aggregation, split dimensions); others: their aggregation, split by container only
SPECS: dict[str, tuple[str, tuple[str, ...]]] = {
    "NormalizedRUConsumption": ("Maximum", ("PartitionKeyRangeId",)),
    "TotalRequestUnits": ("Total", ("OperationType", "StatusCode")),
    "TotalRequests": ("Count", ("OperationType", "StatusCode")),
    "PhysicalPartitionSizeInfo": ("Maximum", ("PhysicalPartitionId",)),
    "PhysicalPartitionThroughputInfo": ("Maximum", ("PhysicalPartitionId",)),
    "ProvisionedThroughput": ("Maximum", ()),
    "AutoscaleMaxThroughput": ("Maximum", ()),
}
COLUMNS = {  # metadata_values names (lower-cased by the service) -> store columns
    "partitionkeyrangeid": "pkrange_id",
    "physicalpartitionid": "physical_partition_id",
    "operationtype": "operation_type",
    "statuscode": "status_code",
}
KEY_COLUMNS = ["database", "container", "metric", "aggregation", "time", *METRIC_DIMENSIONS]
Key = tuple[Any, ...]


class Fatal(Exception):
    """A fault no other query of the account would escape: its one line."""


def spec(metric: str) -> tuple[str, tuple[str, ...]]:
    return SPECS.get(metric, ("Total", ()))


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def metric_filter(database: str, metric: str) -> str:
    """The `filter` of one database's query: every container, split by the metric's dimensions (pure)."""
    terms = [f"DatabaseName eq {_quoted(database)}", "CollectionName eq '*'"]
    return " and ".join([*terms, *(f"{d} eq '*'" for d in spec(metric)[1])])


def window(
    now: dt.datetime, watermark: dt.datetime | None, settings: MonitorSettings
) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) to ask: from the watermark less the overlap (a first run: the backfill), never further
    back than the backfill, up to the last complete interval; both on the grain (pure)."""
    grain = GRAINS[settings.grain]
    earliest = now - dt.timedelta(hours=settings.backfill_hours)
    start = earliest if watermark is None else max(earliest, watermark - dt.timedelta(minutes=settings.overlap_minutes))
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return epoch + (start - epoch) // grain * grain, epoch + (now - epoch) // grain * grain


def chunks(start: dt.datetime, end: dt.datetime) -> Iterator[tuple[dt.datetime, dt.datetime]]:
    while start < end:
        yield start, min(end, start + CHUNK)
        start += CHUNK


def points_to_records(results: list[Any], ids: dict[str, Any], grain: str) -> list[MetricRecord]:
    """Every point of every time series (`MetricsQueryResult`s) as a record; empty intervals skipped (pure)."""
    records = []
    for result in results:
        for metric in result.metrics:
            aggregation = ids["aggregation"].lower()
            unit = str(getattr(metric.unit, "value", metric.unit))
            for series in metric.timeseries:
                dims = {k.lower(): v for k, v in (series.metadata_values or {}).items()}
                container = dims.get("collectionname", "")
                columns: dict[str, Any] = {column: dims.get(name) for name, column in COLUMNS.items()}
                for point in series.data:
                    value = getattr(point, aggregation, None)
                    if value is None:
                        continue
                    records.append(
                        MetricRecord(
                            **{**ids, "time": point.timestamp.astimezone(dt.UTC), "container": container},
                            metric=metric.name,
                            **columns,
                            value=float(value),
                            unit=unit,
                            grain=grain,
                        )
                    )
    return records


def describe_monitor_error(exc: BaseException, settings: MonitorSettings, resource: str) -> tuple[str, bool]:
    """One line for a failed query, and whether the fault ends the account's run (the credential, the role,
    the endpoint: no other query would escape it). Never a token."""
    status = getattr(exc, "status_code", None)
    if status in (401, 403) or isinstance(exc, ClientAuthenticationError):
        cause = f"{status} {'unauthorized' if status == 401 else 'forbidden'}" if status else "no credential"
        detail = "" if status else f" ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        return f"Azure Monitor: {cause}: the identity needs the Monitoring Reader role on {resource}{detail}", True
    if isinstance(exc, ServiceRequestError):
        return f"Azure Monitor: cannot reach {settings.endpoint}: {str(exc).splitlines()[0]}", True
    if isinstance(exc, HttpResponseError):
        message = getattr(exc, "message", None) or str(exc)
        return f"{status} {str(message).splitlines()[0]}", False
    return f"{type(exc).__name__}: {exc}", False


@dataclass
class Metrics:
    """One account's metrics collection, inside a `Run`."""

    account: Account
    resource: str
    settings: MonitorSettings
    run: Run
    client: Any  # a MetricsClient

    def stored(self, since: dt.datetime) -> tuple[set[Key], dict[tuple[str, str], dt.datetime]]:
        """The keys of the account's points stored since `since`, and each (database, metric)'s watermark."""
        frame = read_table(self.run.store, METRICS, since=since, columns=["account", *KEY_COLUMNS])
        frame = frame[frame["account"] == self.account.name]
        keys: set[Key] = set()
        marks: dict[tuple[str, str], dt.datetime] = {}
        for row in frame[KEY_COLUMNS].astype(object).itertuples(index=False, name=None):
            key: list[Any] = [None if pd.isna(v) else v for v in row]
            time: dt.datetime = key[4].to_pydatetime()
            keys.add((*key[:4], time, *key[5:]))
            mark = (str(key[0]), str(key[2]))
            marks[mark] = max(marks.get(mark, time), time)
        return keys, marks

    def fetch(self, metric: str, database: str, start: dt.datetime, end: dt.datetime) -> list[Any]:
        aggregation = spec(metric)[0]
        return list(
            self.client.query_resources(
                resource_ids=[self.resource],
                metric_namespace=NAMESPACE,
                metric_names=[metric],
                timespan=(start, end),
                granularity=GRAINS[self.settings.grain],
                aggregations=[aggregation],
                filter=metric_filter(database, metric),
                max_results=MAX_RESULTS,
            )
        )

    def collect_metric(self, database: str, metric: str, seen: set[Key], mark: dt.datetime | None) -> None:
        """One metric of one database, chunk by chunk; only points not stored yet are recorded."""
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        start, end = window(now, mark, self.settings)
        ids = {"run_id": self.run.run_id, "account": self.account.name, "database": database}
        ids["aggregation"] = spec(metric)[0]
        new = old = 0
        try:
            for first, last in chunks(start, end):
                for record in points_to_records(self.fetch(metric, database, first, last), ids, self.settings.grain):
                    key = tuple(getattr(record, c) for c in KEY_COLUMNS)
                    if key in seen:
                        old += 1
                        continue
                    seen.add(key)
                    self.run.record(record)
                    new += 1
                self.run.seal(every=SEAL_SECONDS)
        except Exception as exc:  # this metric fails; the others go on
            line, fatal = describe_monitor_error(exc, self.settings, self.resource)
            if fatal:
                raise Fatal(line) from None
            self.run.err(f"database {database!r} metric {metric!r}: {line}")
            self.run.count(failed=True)
            return
        span = f"{start:%Y-%m-%d %H:%M}..{end:%H:%M} UTC"
        self.run.out(f"{database} {metric}: {new} new point(s), {old} already stored ({span})")
        self.run.count(failed=False)

    def collect(self) -> None:
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        since = now - dt.timedelta(hours=self.settings.backfill_hours, minutes=self.settings.overlap_minutes)
        seen, marks = self.stored(since - GRAINS[self.settings.grain])
        for database in self.account.databases:
            for metric in self.settings.metrics:
                if self.run.stop.is_set():
                    return
                self.collect_metric(database, metric, seen, marks.get((database, metric)))


class MetricsCollector:
    """`ruscope metrics` and the metrics part of `ruscope collect`."""

    name = "metrics"
    item = "metric"

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
                retry_total=3,
            )
            Metrics(account, account.monitor_resource, settings, run, client).collect()
        except Fatal as exc:
            run.err(str(exc))
            run.count(failed=True)
        except Exception as exc:  # no client: one line, one failed item
            run.err(describe_monitor_error(exc, settings, account.monitor_resource)[0])
            run.count(failed=True)


COLLECTOR = MetricsCollector()
