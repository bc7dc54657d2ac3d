"""The logs collector: Cosmos DB diagnostic logs from a Log Analytics workspace into six store tables (and `log_windows`).

Per account (with `[monitor] workspace_id`; without it there is nothing to do, said in one line), per
database, each query of logs_queries.py through `LogsQueryClient.query_workspace`, the window in
`timespan`: RU per logical key per pkrange per bin, with its busiest second (`log_key_ru`), the same per
operation (`log_key_operation_ru`: which operation heats a key), requests and 429s per partition and
operation (`log_throttles`), query counts (`log_query_stats`), RU and 429s per query text (`log_query_ru`:
the query statistics joined with the requests on ActivityId, ruscope's own requests apart), and a snapshot of
the latest size of each of the largest keys (`log_key_sizes`, stored with the run's time). With `[monitor]
logs_tables` naming an aggregated table (`CDBDataPlaneRequests5M` / `15M`), `log_throttles` is read from it
and the other queries are not sent: one line says which analyses this mode leaves out, and why
(`queries.not_served_line`).

Incremental like metrics: the time-binned queries ask from the watermark of (account, database, query),
less `overlap_minutes`, or `backfill_hours` back on a first run, up to the last bin complete
`logs_lag_minutes` ago (its late rows ingested by then: a stored row is never updated), and record only
rows whose key the store does not hold yet; the tables are keyed by the bin, so a row that a collector
running at the same moment stored first is not stored again (`store.delta`).

The watermark is the end of the latest window whose whole answer was recorded, never the latest row's time:
an answer is grouped by container, not ordered by time, so a run killed (or out of disk) while recording one
leaves rows of late bins of some containers and none of the others. After the last row of an answer, the
run records a `log_windows` row for it ([start, end), its rows), committed after the rows it vouches for;
the next run asks again from the latest such end, and the rows a cut-short answer lacked are added then. A
store without any window (written before they were kept) is asked from the backfill once. Rows of a partial
result (`LogsQueryPartialResult`) are stored and flagged `partial`, with one line naming the query; their
window is not recorded, nor any later window of that query in that run, so the next run asks that window
again and adds the rows it lacked.

Faults are one line each: 401/403 names the Log Analytics Reader role, an unknown workspace (404) and an
endpoint that is down end the account's run; a query the service refuses (400) or throttles past the
retries fails that query only. A query that finds no rows where the stored metrics count requests it logs
is one warning line (`expected`: a category the diagnostic setting does not send, or the other mode).
Layers: `fetch_tables` talks to the service; `table_frame`, `frame_records` and `window` are pure; `Logs`
walks databases and queries.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from azure.core.exceptions import HttpResponseError, ServiceRequestError

from collectors.config import Account, Config, MonitorSettings
from collectors.config.monitor import LOGS_ENDPOINT
from collectors.credentials import monitor_credential
from collectors.errors import Fatal, auth_failure
from collectors.logs import expected
from collectors.logs.queries import (
    KEY_OPERATIONS,
    KEY_RU,
    KEY_SIZE,
    OWN_TRAFFIC,
    PEAK_REQUEST_CHARGE,
    QUERY_RU,
    QUERY_STATS,
    REQUESTS,
    THROTTLED,
    THROTTLES,
    Params,
    build,
    not_served_line,
    queries_for,
    table_of,
)
from collectors.logs.queries import result_columns as legacy_renames
from collectors.metrics import CHUNK, aligned_window, chunks  # windows and day-long chunks, as for metrics
from collectors.registry import Options
from collectors.run import SEAL_SECONDS, Run
from cosmoscore.keys import key_text
from cosmoscore.monitor.logs import (
    COLLECTION_NAME,
    DATABASE_NAME,
    OPERATION_NAME,
    PARTITION_ID,
    PARTITION_KEY,
    PARTITION_KEY_RANGE_ID,
    QUERY_TEXT,
    REQUEST_CHARGE,
    SIZE_KB,
    TIME_GENERATED,
)
from store import Record, Table, read_table
from store.records import (
    LOG_KEY_OPERATION_RU,
    LOG_KEY_RU,
    LOG_KEY_SIZES,
    LOG_QUERY_RU,
    LOG_QUERY_STATS,
    LOG_THROTTLES,
    LOG_WINDOWS,
    LogKeyOperationRURecord,
    LogKeyRURecord,
    LogKeySizeRecord,
    LogQueryRURecord,
    LogQueryStatsRecord,
    LogThrottleRecord,
    LogWindowRecord,
)

RETRIES = 3  # azure-core RetryPolicy: 429/5xx retried, honouring Retry-After (azure-monitor.md §1.5)
TABLE_OF = {
    KEY_RU: LOG_KEY_RU,
    KEY_OPERATIONS: LOG_KEY_OPERATION_RU,
    KEY_SIZE: LOG_KEY_SIZES,
    THROTTLES: LOG_THROTTLES,
    QUERY_STATS: LOG_QUERY_STATS,
    QUERY_RU: LOG_QUERY_RU,
}
Key = tuple[Any, ...]


def table_frame(columns: list[str], types: list[str], rows: list[Any], renames: dict[str, str]) -> pd.DataFrame:
    """A `LogsTable`'s rows as a frame with pandas dtypes from the Kusto column types (azure-monitor.md §1.4):
    datetime -> datetime64 UTC, long/int -> Int64, real/decimal -> float64, bool -> boolean, others ->
    string; legacy column names renamed to the resource-specific ones (pure)."""
    frame = pd.DataFrame([list(row) for row in rows], columns=columns)
    for name, kind in zip(columns, types, strict=True):
        if kind == "datetime":
            frame[name] = pd.to_datetime(frame[name], utc=True)
        elif kind in ("long", "int"):
            frame[name] = frame[name].astype("Int64")
        elif kind in ("real", "decimal"):
            frame[name] = pd.to_numeric(frame[name]).astype("float64")
        elif kind == "bool":
            frame[name] = frame[name].astype("boolean")
        else:
            frame[name] = frame[name].astype("string")
    return frame.rename(columns=renames)


def _text(value: Any) -> str:
    return "" if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else str(value)


def _key(value: Any) -> str:
    """A log's PartitionKey in the store's one spelling (`cosmoscore.keys.key_text`), whatever the log wrote."""
    return key_text(_text(value))


def _number(value: Any) -> float:
    return 0.0 if value is None or value is pd.NA or pd.isna(value) else float(value)


def _optional_number(value: Any) -> float | None:
    return None if value is None or value is pd.NA or pd.isna(value) else float(value)


def _time(value: Any) -> dt.datetime:
    moment: dt.datetime = pd.Timestamp(value).to_pydatetime()
    return moment.astimezone(dt.UTC)


def _count(value: Any) -> int:
    return round(_number(value))


def _flag(value: Any) -> bool:
    """A Kusto bool (True, False or null: a row with no user agent is not ruscope's)."""
    return bool(value) if value is not None and value is not pd.NA else False


Convert = Callable[[Any], Any]
# query -> its record and, per record field, the result column (resource-specific name) it comes from
FIELDS: dict[str, tuple[type[Record], dict[str, tuple[str, Convert]]]] = {
    KEY_RU: (
        LogKeyRURecord,
        {
            "pkrange_id": (PARTITION_KEY_RANGE_ID, _text),
            "partition_key": (PARTITION_KEY, _key),
            "request_charge": (REQUEST_CHARGE, _number),
            "peak_request_charge": (PEAK_REQUEST_CHARGE, _optional_number),
        },
    ),
    KEY_OPERATIONS: (
        LogKeyOperationRURecord,
        {
            "pkrange_id": (PARTITION_KEY_RANGE_ID, _text),
            "partition_key": (PARTITION_KEY, _key),
            "operation_name": (OPERATION_NAME, _text),
            "request_charge": (REQUEST_CHARGE, _number),
            "peak_request_charge": (PEAK_REQUEST_CHARGE, _optional_number),
        },
    ),
    KEY_SIZE: (
        LogKeySizeRecord,
        {"partition_key": (PARTITION_KEY, _key), "generated": (TIME_GENERATED, _time), "size_kb": (SIZE_KB, _count)},
    ),
    THROTTLES: (
        LogThrottleRecord,
        {
            "partition_id": (PARTITION_ID, _text),
            "operation_name": (OPERATION_NAME, _text),
            "throttled": (THROTTLED, _count),
            "requests": (REQUESTS, _count),
        },
    ),
    QUERY_STATS: (
        LogQueryStatsRecord,
        {
            "pkrange_id": (PARTITION_KEY_RANGE_ID, _text),
            "query_text": (QUERY_TEXT, _text),
            "queries": ("Queries", _count),
        },
    ),
    QUERY_RU: (
        LogQueryRURecord,
        {
            "pkrange_id": (PARTITION_KEY_RANGE_ID, _text),
            "query_text": (QUERY_TEXT, _text),
            "own_traffic": (OWN_TRAFFIC, _flag),
            "request_charge": (REQUEST_CHARGE, _number),
            "requests": (REQUESTS, _count),
            "throttled": (THROTTLED, _count),
        },
    ),
}


def frame_records(name: str, frame: pd.DataFrame, ids: dict[str, Any], bin_minutes: int) -> list[Record]:
    """Each row of query `name`'s result as its store record (`ids`: run_id, account, database, partial and
    the run's time). A binned row's `time` is its bin; a snapshot's is the run's (pure)."""
    record, fields = FIELDS[name]
    binned = name != KEY_SIZE
    extra = {"bin_minutes": bin_minutes} if binned else {}
    records = []
    for raw in frame.to_dict("records"):
        row = {str(k): v for k, v in raw.items()}
        values = {field: convert(row.get(column)) for field, (column, convert) in fields.items()}
        records.append(record(**_scope(row, ids, binned), **values, **extra))
    return records


def _scope(row: dict[str, Any], ids: dict[str, Any], binned: bool) -> dict[str, Any]:
    return {
        "run_id": ids["run_id"],
        "time": _time(row[TIME_GENERATED]) if binned else ids["time"],
        "account": ids["account"],
        "database": _text(row.get(DATABASE_NAME)) or ids["database"],
        "container": _text(row.get(COLLECTION_NAME)),
        "partial": ids["partial"],
    }


def window(now: dt.datetime, mark: dt.datetime | None, settings: MonitorSettings) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) to ask, on the bin, up to the last bin complete `logs_lag_minutes` ago (pure)."""
    step = dt.timedelta(minutes=settings.logs_bin_minutes)
    return aligned_window(now, mark, settings, step, end=now - dt.timedelta(minutes=settings.logs_lag_minutes))


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def describe_logs_error(exc: BaseException, settings: MonitorSettings) -> tuple[str, bool]:
    """One line for a failed query, and whether the fault ends the account's run. The SDK re-raises every
    HTTP error as a plain HttpResponseError (azure-monitor.md §1.5): switch on its status. Never a token."""
    status, workspace = _status(exc), settings.workspace_id
    failure = auth_failure(exc)
    if failure:
        cause, detail = failure
        role = f"the identity needs the Log Analytics Reader role on workspace {workspace}"
        return f"Log Analytics: {cause}: {role}{detail}", True
    if status == 404:
        return (
            f"Log Analytics: no workspace {workspace} at {settings.logs_endpoint} (404): check [monitor] workspace_id",
            True,
        )
    if isinstance(exc, ServiceRequestError):
        return f"Log Analytics: cannot reach {settings.logs_endpoint}: {str(exc).splitlines()[0]}", True
    if status == 429:
        return (
            f"429 throttled by Log Analytics after {RETRIES} retries (each after its Retry-After); try again later",
            False,
        )
    if isinstance(exc, HttpResponseError):
        model = getattr(exc, "model", None)
        inner = getattr(model, "message", None) if model is not None and not isinstance(model, type) else None
        code = getattr(model, "code", None) if model is not None and not isinstance(model, type) else None
        message = str(inner or getattr(exc, "message", None) or exc).splitlines()[0]
        prefix = f"{status} " if status is not None else ""
        return f"{prefix}{code + ': ' if isinstance(code, str) else ''}{message}", False
    return f"{type(exc).__name__}: {exc}", False


@dataclass
class Logs:
    """One account's logs collection, inside a `Run`."""

    account: Account
    settings: MonitorSettings
    run: Run
    client: Any  # a LogsQueryClient

    def params(self, database: str) -> Params:
        resource = self.account.monitor_resource
        return Params(
            database,
            account=resource.rstrip("/").rsplit("/", 1)[-1] if resource else None,
            bin_minutes=self.settings.logs_bin_minutes,
            top=self.settings.logs_top_keys,
            mode=self.settings.logs_mode,
            tables=self.settings.logs_tables,
        )

    def stored(self, table: Table, since: dt.datetime) -> set[Key]:
        """The keys of the account's rows of `table` stored since `since`."""
        key = [c for c in table.key if c != "account"]
        frame = read_table(self.run.store, table, since=since, columns=["account", *key])
        frame = frame[frame["account"] == self.account.name]
        keys: set[Key] = set()
        for row in frame[key].astype(object).itertuples(index=False, name=None):
            keys.add(tuple(v.to_pydatetime() if isinstance(v, pd.Timestamp) else v for v in row))
        return keys

    def watermarks(self, since: dt.datetime) -> dict[tuple[str, str], dt.datetime]:
        """Each (database, query)'s latest end of a window recorded whole (windows starting since `since`)."""
        frame = read_table(self.run.store, LOG_WINDOWS, since=since, columns=["account", "database", "query", "end"])
        frame = frame[frame["account"] == self.account.name]
        latest = frame.groupby(["database", "query"])["end"].max()
        return {(str(k[0]), str(k[1])): t.to_pydatetime() for k, t in latest.items() if isinstance(k, tuple)}

    def fetch_tables(
        self, name: str, kql: str, start: dt.datetime, end: dt.datetime
    ) -> tuple[pd.DataFrame, str | None]:
        """Query `name`'s rows over [start, end) as one frame, and the partial error's line (None: complete)."""
        result = self.client.query_workspace(self.settings.workspace_id, kql, timespan=(start, end))
        partial = getattr(result, "partial_error", None)
        tables = (result.partial_data if partial is not None else result.tables) or []
        renames = legacy_renames(name, self.settings.logs_mode, self.settings.logs_tables)
        frames = [table_frame(t.columns, t.columns_types, t.rows, renames) for t in tables[:1]]
        line = None if partial is None else f"{partial.code}: {str(partial.message).splitlines()[0]}"
        return (frames[0] if frames else pd.DataFrame()), line

    def collect_query(self, database: str, name: str, seen: set[Key], mark: dt.datetime | None) -> None:
        """One query of one database, chunk by chunk; rows not stored yet are recorded."""
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        table = TABLE_OF[name]
        if name == KEY_SIZE:  # a snapshot: the latest report of each key within the backfill window
            spans = [(now - dt.timedelta(hours=self.settings.backfill_hours), now)]
        else:
            spans = list(chunks(*window(now, mark, self.settings)))
        kql = build(name, self.params(database))
        ids = {"run_id": self.run.run_id, "account": self.account.name, "database": database, "time": now}
        new = old = rows = 0
        partial_lines: list[str] = []
        try:
            for first, last in spans:
                frame, partial = self.fetch_tables(name, kql, first, last)
                rows += len(frame)
                if partial is not None:
                    partial_lines.append(partial)
                for record in frame_records(
                    name, frame, {**ids, "partial": partial is not None}, self.settings.logs_bin_minutes
                ):
                    key = tuple(getattr(record, c) for c in table.key if c != "account")
                    if key in seen:
                        old += 1
                        continue
                    seen.add(key)
                    self.run.record(record)
                    new += 1
                if name != KEY_SIZE and not partial_lines:  # the whole answer is recorded: the watermark may pass it
                    self.run.record(self.window_record(database, name, first, last, len(frame)))
                self.run.seal(every=SEAL_SECONDS)
        except Exception as exc:  # this query fails; the others go on
            line, fatal = describe_logs_error(exc, self.settings)
            if fatal:
                raise Fatal(line) from None
            self.run.err(f"database {database!r} logs query {name!r}: {line}")
            self.run.count(failed=True)
            return
        if partial_lines:
            self.run.err(
                f"database {database!r} logs query {name!r}: partial result ({partial_lines[0]}); "
                f"its rows are stored, flagged partial"
            )
        span = f"{spans[0][0]:%Y-%m-%d %H:%M}..{spans[-1][1]:%Y-%m-%d %H:%M} UTC" if spans else "nothing to ask yet"
        self.run.out(f"{database} logs {name}: {new} new row(s), {old} already stored ({span})")
        if spans and rows == 0 and not partial_lines:
            self.warn_if_expected(database, name, spans[0][0], spans[-1][1], span)
        self.run.count(failed=bool(partial_lines))

    def warn_if_expected(self, database: str, name: str, start: dt.datetime, end: dt.datetime, span: str) -> None:
        """One warning line when query `name` found nothing in [start, end) where the stored metrics count
        requests it logs (`expected`): a category not sent, or the other destination mode."""
        traffic = expected.read_traffic(self.run.store, self.account.name, database, start)
        requests = expected.summarize_expected(name, traffic, start, end)
        if requests > 0:
            mode, category = self.settings.logs_mode, table_of(name, self.settings.logs_tables).category
            self.run.err(expected.warning_line(name, mode, database, span, requests, category))

    def window_record(self, database: str, name: str, first: dt.datetime, last: dt.datetime, rows: int) -> Record:
        """The row that says query `name`'s answer for [first, last) is recorded whole."""
        scope = {"run_id": self.run.run_id, "account": self.account.name, "database": database, "container": ""}
        return LogWindowRecord(**scope, time=first, query=name, end=last, rows=rows)

    def collect(self) -> None:
        now = dt.datetime.fromtimestamp(self.run.clock(), dt.UTC)
        since = now - dt.timedelta(hours=self.settings.backfill_hours, minutes=self.settings.overlap_minutes)
        since -= dt.timedelta(minutes=self.settings.logs_bin_minutes)
        queries = queries_for(self.settings.logs_tables)
        left_out = not_served_line(self.settings.logs_tables)
        if left_out is not None:
            self.run.out(f"{self.account.name}: {left_out}")
        stored = {name: self.stored(TABLE_OF[name], since) for name in queries if name != KEY_SIZE}
        marks = self.watermarks(since - CHUNK)  # a window is at most a chunk long
        for database in self.account.databases:
            for name in queries:
                if self.run.stop.is_set():
                    return
                self.collect_query(database, name, stored.get(name, set()), marks.get((database, name)))


class LogsCollector:
    """`ruscope logs` and the logs part of `ruscope collect`."""

    name = "logs"
    item = "logs query"

    def budget(self, config: Config) -> float | None:
        return None

    def collect(self, config: Config, run: Run, options: Options) -> None:
        """Every logs query of the account's databases; one line and nothing else without a workspace."""
        account = config.account(options.account)
        settings = config.monitor
        if settings is None or settings.workspace_id is None:
            run.out(f"{account.name}: no Log Analytics workspace (monitor.workspace_id): no logs to collect")
            return
        from azure.monitor.query import LogsQueryClient

        try:
            client = LogsQueryClient(
                monitor_credential(),
                endpoint=settings.logs_endpoint,
                audience=LOGS_ENDPOINT,  # the production token scope, whatever the endpoint (azure-monitor.md §1.2)
                connection_verify=settings.ca_bundle or True,
                retry_total=RETRIES,
            )
            Logs(account, settings, run, client).collect()
        except Fatal as exc:
            run.err(str(exc))
            run.count(failed=True)
        except Exception as exc:  # no client: one line, one failed item
            run.err(describe_logs_error(exc, settings)[0])
            run.count(failed=True)


COLLECTOR = LogsCollector()
