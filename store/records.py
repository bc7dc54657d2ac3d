"""The store's tables, each declared once as a frozen, slotted record; the Arrow schema is derived from it.

Why records and not dicts: a misspelt or missing field is a TypeError when the record is built, at the
line that built it, and a value of the wrong type (a str where an int belongs, a naive time) fails there
too, not minutes later when a segment is sealed. The writer (`pending`, `parquet`), the reader and the
CSV column order all use the one `Table` derived here.

Field types map to Arrow: `str` string, `int` int64 (`Int32` int32), `float` float64, `bool` bool,
`datetime` timestamp[us, UTC]. `X | None` may be null; every Arrow field is nullable, so files written
before a column existed read back with nulls. Names are stable once shipped (DESIGN.md "Store"): add
fields freely, never rename one. Every table carries `run_id`, a UTC `time` and account/database/container.

To add a table: a `@table("<name>", key=...)` record class here (the `Record` base checks it), then
`write_frame(store, "<name>", ...)`, `read_table(store, "<name>")` and `Run.record(...)` work unchanged.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Annotated, Any, ClassVar, TypeVar

import pyarrow as pa

UTC_TIME = pa.timestamp("us", tz="UTC")
Int32 = Annotated[int, pa.int32()]  # a narrower Arrow integer for the same Python int

_ARROW: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
    datetime: UTC_TIME,
}
_ACCEPTS: dict[type, tuple[type, ...]] = {float: (float, int)}  # an int is a fine float; nothing else widens


@dataclass(frozen=True)
class Check:
    """What one field accepts, resolved once per class (construction checks are a loop of isinstance)."""

    name: str
    kinds: tuple[type, ...]
    optional: bool


class Record:
    """Base of store records: checks each value against its declared type when the record is built."""

    __slots__ = ()
    TABLE: ClassVar[str]
    KEY: ClassVar[tuple[str, ...]]
    TIME: ClassVar[str] = "time"
    CHECKS: ClassVar[tuple[Check, ...]] = ()

    def __post_init__(self) -> None:
        for check in self.CHECKS:
            value = getattr(self, check.name)
            if value is None:
                if check.optional:
                    continue
            elif isinstance(value, check.kinds) and (type(value) is not bool or bool in check.kinds):
                if not isinstance(value, datetime) or value.tzinfo is not None:
                    continue
                raise TypeError(f"{type(self).__name__}.{check.name}: a naive time; give it a timezone (UTC)")
            wanted = " or ".join(k.__name__ for k in check.kinds) + (" or None" if check.optional else "")
            raise TypeError(f"{type(self).__name__}.{check.name}: expected {wanted}, got {type(value).__name__}")


@dataclass(frozen=True)
class Table:
    """A store table: its name, its Arrow schema (from the record), its key and its time column."""

    name: str
    schema: pa.Schema
    key: tuple[
        str, ...
    ]  # what makes a row unique: without run_id, commits merge on it (`delta`); compact drops repeats
    record: type[Record]
    time: str = "time"
    last: bool = False  # its rows vouch for a segment's other rows: committed after them (see `pending`)

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    def pick(self, *names: str) -> list[str]:
        """`names`, each a column of this table, in that order: how a reader outside the store (analysis) names
        the columns it reads, so a column renamed or dropped here fails where it is named (at import), with the
        table and the column, instead of reading as missing values later."""
        unknown = [name for name in names if name not in self.schema.names]
        if unknown:
            raise ValueError(f"table {self.name!r} has no column(s) {', '.join(map(repr, unknown))}")
        return list(names)


TABLES: dict[str, Table] = {}
R = TypeVar("R", bound=type[Record])


def _field_type(hint: Any) -> tuple[pa.DataType, tuple[type, ...], bool]:
    """A field's Arrow type, the Python types it accepts and whether it may be None."""
    optional = False
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) < len(typing.get_args(hint))
        if len(args) != 1:
            raise TypeError(f"a store field is one type, optionally | None (got {hint})")
        hint = args[0]
    arrow = None
    if typing.get_origin(hint) is Annotated:
        hint, *extras = typing.get_args(hint)
        arrow = next((e for e in extras if isinstance(e, pa.DataType)), None)
    if hint not in _ARROW:
        raise TypeError(f"a store field is str, int, float, bool or datetime (got {hint})")
    return arrow or _ARROW[hint], _ACCEPTS.get(hint, (hint,)), optional


def table(name: str, *, key: tuple[str, ...], time: str = "time", last: bool = False) -> Callable[[R], R]:
    """Declare a record class as a store table: derive its schema and checks, register it in TABLES."""

    def declare(cls: R) -> R:
        hints = typing.get_type_hints(cls, include_extras=True)
        names = [f.name for f in fields(typing.cast(Any, cls))]
        missing = [n for n in (*key, time, "run_id") if n not in names]
        if missing:
            raise TypeError(f"{cls.__name__} lacks the field(s) {', '.join(missing)}")
        resolved = {n: _field_type(hints[n]) for n in names}
        cls.TABLE, cls.KEY, cls.TIME = name, key, time
        cls.CHECKS = tuple(Check(n, kinds, optional) for n, (_, kinds, optional) in resolved.items())
        schema = pa.schema([pa.field(n, arrow) for n, (arrow, _, _) in resolved.items()])
        TABLES[cls.TABLE] = Table(cls.TABLE, schema, key, cls, time, last)
        return cls

    return declare


@dataclass(frozen=True, slots=True, kw_only=True)
class Scoped(Record):
    """The columns every store row carries first (DESIGN.md): its run, its UTC time, and the account (its
    name in the config, or the endpoint's host; never a key), database and container it is about."""

    run_id: str
    time: datetime
    account: str
    database: str
    container: str


SCOPE_COLUMNS = ("account", "database", "container")  # what every row is about (`Scoped`), in this order
# The `container` of a row about a database's shared throughput offer rather than one container: its
# provisioned RU/s and its physical partitions (Azure Monitor labels them `__Empty` and `<empty>`, both legal
# container ids; a container id cannot be empty, so "" names no container: azure-monitor.md §7b R32). Such a
# row belongs to the database (account, database), whose containers spend that offer.
SHARED_OFFER_CONTAINER = ""


@table("requests", key=("run_id", "seq"))
@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRecord(Scoped):
    """One HTTP request the SDK sent while replaying (captured by a client-level raw_response_hook; its
    `container` is "" for requests outside any query, such as the account read when the client starts)."""

    query_name: str | None
    execution_id: str | None
    seq: int  # order of the request within the run (unique per run)
    request_kind: str  # see collectors.replay.capture.REQUEST_KINDS
    method: str
    resource: str  # the path, e.g. dbs/shop/colls/orders/docs
    pkrange_id: str  # "" when the response names none
    status: Int32
    substatus: Int32
    request_charge: float
    item_count: Int32 | None
    duration_ms: float
    activity_id: str
    correlated_activity_id: str
    retry_after_ms: float | None
    retrieved_document_count: int | None  # from x-ms-documentdb-query-metrics, when asked for
    retrieved_document_size: int | None
    output_document_count: int | None
    output_document_size: int | None
    index_hit_ratio: float | None
    index_utilization: str | None  # x-ms-cosmos-index-utilization, as JSON text


@table("executions", key=("run_id", "execution_id"))
@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionRecord(Scoped):
    """One query execution (a query as-is, or one feed range of it in per-feed-range mode)."""

    query_name: str
    execution_id: str
    repeat: Int32  # 0-based repetition of the query within the run
    mode: str  # "as-is" | "per-feed-range"
    feed_range: str  # "min..max" of the feed range in per-feed-range mode, else ""
    sql: str
    partition_key: str  # JSON of the configured key or prefix, "" for none
    status: str  # "ok" | "error" | "budget" | "stopped"
    error: str  # one line: what went wrong, "" when ok
    total_ru: float
    pages: Int32  # data pages (200 responses to a query POST)
    round_trips: Int32  # every HTTP request, plan and routing-map reads included
    items: int  # rows the query returned
    pkranges: str  # comma-separated ids of the partitions that served data pages
    pkrange_count: Int32
    routing_predicted: str  # "single" | "targeted" | "fan-out" | "unknown"
    routing_observed: str
    routing_mismatch: bool
    retrieved_documents: int | None  # summed query metrics, null when not asked for
    output_documents: int | None
    throttled: Int32  # 429 responses
    retry_after_ms_total: float
    duration_ms: float
    rate_per_s: float | None = None  # the config's executions per second of this query in production


REQUESTS = TABLES[RequestRecord.TABLE]
EXECUTIONS = TABLES[ExecutionRecord.TABLE]


@table("partitions", key=("run_id", "account", "database", "container", "pkrange_id"))
@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionRecord(Scoped):
    """One physical partition (pkrange) of a container in one storage snapshot (`ruscope storage`)."""

    pkrange_id: str
    parents: str  # comma-separated ancestor pkrange ids, oldest first ("" for an original range)
    size_kb: int  # the statistics' sizeInKB of the range
    document_count: int
    sampled_distinct_keys: int | None  # sampledDistinctPartitionKeyCount, when the service sends it
    quota_collection_kb: int | None  # x-ms-resource-quota collectionSize (the container's, on every row)
    usage_collection_kb: int | None  # x-ms-resource-usage collectionSize
    throughput_ru: float | None  # the container's provisioned RU/s (autoscale: its max); null when shared
    throughput_share: float | None  # throughput_ru / the container's partition count
    usage_documents_kb: int | None = None  # x-ms-resource-usage documentsSize (data without the index)
    min_epk: str | None = None  # the range's effective partition keys [min_epk, max_epk), from /pkranges
    max_epk: str | None = None
    # the database's shared RU/s (autoscale: its max) when the container spends its database's offer
    # (throughput_ru is then null): the throughput unit the container belongs to, not the container's own
    database_throughput_ru: float | None = None


@table("logical_keys", key=("run_id", "account", "database", "container", "pkrange_id", "partition_key"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogicalKeyRecord(Scoped):
    """One of the largest logical keys of a pkrange, as the container statistics list them (sampled)."""

    pkrange_id: str
    partition_key: str  # JSON text of the key's components, e.g. ["t1"]
    size_kb: int


PARTITIONS = TABLES[PartitionRecord.TABLE]
LOGICAL_KEYS = TABLES[LogicalKeyRecord.TABLE]

# `region` last: a key without it (a row stored before the collector split by Region) is the key less its last
METRIC_DIMENSIONS = ("pkrange_id", "physical_partition_id", "operation_type", "status_code", "region")


@table(
    "metrics",
    key=("account", "database", "container", "metric", "aggregation", "time", *METRIC_DIMENSIONS),
)
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricRecord(Scoped):
    """One Azure Monitor metric point (`ruscope metrics`): `time` is the interval's start (UTC). The key has
    no run_id: a point collected again by a later run is the same row, and is stored once."""

    metric: str  # e.g. NormalizedRUConsumption
    aggregation: str  # Maximum, Total, Count...
    pkrange_id: str | None  # the split dimensions the query asked for; null when not split by it
    physical_partition_id: str | None
    operation_type: str | None
    status_code: str | None
    value: float
    unit: str
    grain: str  # PT1M or PT5M
    # The Azure region of the point (the `Region` split: every metric but AutoscaleMaxThroughput has one); null
    # for a metric without it, and in rows stored before the split, which combined the account's regions.
    region: str | None = None


METRICS = TABLES[MetricRecord.TABLE]


@table(
    "metric_cells",
    key=("account", "database", "container", "metric", "aggregation", "tier", "time", *METRIC_DIMENSIONS),
)
@dataclass(frozen=True, slots=True, kw_only=True)
class MetricCellRecord(Scoped):
    """One cell of a rollup tier (`store.rollups`): one metric series' points (the `metrics` key without its
    time) in the bin [time, time + the tier's width). `run_id` is the rollup's. The figures merge exactly into
    a coarser tier's: sum, count, max (at `max_time`, the earliest point holding it), min, and the latest point
    (`last` at `last_time`: storage or provisioned RU/s at the end of the period)."""

    tier: str  # store.rollups.tiers: "10min", "1h", "1d"
    metric: str
    aggregation: str
    pkrange_id: str | None
    physical_partition_id: str | None
    operation_type: str | None
    status_code: str | None
    region: str | None
    unit: str
    grain: str  # the points' grain (PT1M, PT5M)
    sum: float
    count: int
    max: float
    max_time: datetime
    min: float
    first_time: datetime
    last: float
    last_time: datetime


METRIC_CELLS = TABLES[MetricCellRecord.TABLE]


@table(
    "span_cells",
    key=("account", "database", "container", "region", "pkrange_id", "kind", "tier", "time", "value", "minute"),
)
@dataclass(frozen=True, slots=True, kw_only=True)
class SpanCellRecord(Scoped):
    """One row of the span cells of a UTC day (`analysis.spans.stored`, a derived table: `store.rollups.derived`):
    what the container model's per-range statistics (sustained p95, mean, peak, the span's minutes) merge
    from, so a page over months reads days of cells, not millions of NormalizedRUConsumption points. `time` is
    the cell's bin; `kind` says which of its columns a row fills:
    - "range": one pkrange's figures in the bin (`points` to `tail_first`; the minutes the replay sent a
      request to counted as own, `candidate`'s rows give them back at read time);
    - "region": the minutes the container reported in the region in the bin (`minutes`, `first_minute`,
      `last_minute`);
    - "value": how many of a pkrange's workload minutes had the normalized RU `value` (`count`);
    - "candidate": one minute of a pkrange the replay sent a request to (`minute`, its figure in `value`, the
      replay's RU in it and in its busiest second: the rule that decides whether it was own needs the budget
      in force, which the page's frames give).
    `region` is "" for a point that combined the regions. `run_id` is the refresh's."""

    tier: str  # the bin's width: "1d"
    kind: str
    region: str
    pkrange_id: str | None
    points: int | None = None
    own_points: int | None = None
    work_points: int | None = None
    nan_points: int | None = None
    work_sum: float | None = None
    max: float | None = None
    max_time: datetime | None = None
    reported_max: float | None = None
    first_time: datetime | None = None
    last_time: datetime | None = None
    lead: int | None = None
    tail: int | None = None
    open_first: datetime | None = None
    open_last: datetime | None = None
    lead_last: datetime | None = None
    tail_first: datetime | None = None
    minutes: int | None = None
    first_minute: datetime | None = None
    last_minute: datetime | None = None
    value: float | None = None
    count: int | None = None
    minute: datetime | None = None
    grain_s: float | None = None  # a candidate's metric grain in seconds
    own_ru: float | None = None  # a candidate's: the replay's RU to the pkrange in the minute
    own_peak_second_ru: float | None = None  # ...and in its busiest second


SPAN_CELLS = TABLES[SpanCellRecord.TABLE]


# -- Log Analytics (`ruscope logs`): diagnostic-log rows, each flagged when its result was partial ----------
LOG_BIN_KEY = ("account", "database", "container", "time")


@table("log_key_ru", key=(*LOG_BIN_KEY, "pkrange_id", "partition_key"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogKeyRURecord(Scoped):
    """RU of one logical key on one pkrange in one time bin (`CDBPartitionKeyRUConsumption`); `time` is the
    bin's start. No run_id in the key: a bin collected again is the same row, stored once. No request count:
    the log's rows are a key's aggregated consumption per second, not requests (a `requests` column that
    older stores hold counted those rows; it is no longer read)."""

    pkrange_id: str
    partition_key: str  # as the log writes it: JSON text of the key's components, e.g. ["t1"]
    request_charge: float
    # the most RU the key consumed in one second of the bin (null in rows stored before it was collected):
    # what meets the partition's per-second budget, where the bin's sum hides a burst
    peak_request_charge: float | None
    bin_minutes: Int32
    partial: bool  # from a partial result (LogsQueryPartialResult): kept, but maybe incomplete


@table("log_key_operation_ru", key=(*LOG_BIN_KEY, "pkrange_id", "partition_key", "operation_name"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogKeyOperationRURecord(Scoped):
    """RU of one logical key on one pkrange by one operation in one time bin (`CDBPartitionKeyRUConsumption`
    grouped by its operation): which operation heats a key. A table of its own, not a column of `log_key_ru`:
    that table's key (and so what a row collected again is matched against) stays as stored, and its rows
    keep one total per key. No run_id in the key: a bin collected again is the same row, stored once."""

    pkrange_id: str
    partition_key: str  # as the log writes it: JSON text of the key's components, e.g. ["t1"]
    operation_name: str  # as the log writes it (Create, Read, Query, ...)
    request_charge: float
    peak_request_charge: float | None  # the operation's most RU on the key in one second of the bin
    bin_minutes: Int32
    partial: bool


@table("log_key_sizes", key=("run_id", "account", "database", "container", "partition_key"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogKeySizeRecord(Scoped):
    """The latest reported size of one logical key (`CDBPartitionKeyStatistics`), in one snapshot: `time`
    is when the run collected it, `generated` when the service last reported the key."""

    partition_key: str
    generated: datetime
    size_kb: int
    partial: bool


@table("log_throttles", key=(*LOG_BIN_KEY, "partition_id", "operation_name"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogThrottleRecord(Scoped):
    """Requests of one physical partition and operation in one time bin, and those answered 429
    (`CDBDataPlaneRequests`, a row per request: a throttled attempt and its retry are two). Rows stored
    before requests were counted hold only bins with 429s, and a null `requests`."""

    partition_id: str  # the physical partition's GUID (PartitionId), not a pkrange id (azure-monitor.md §6.4)
    operation_name: str
    throttled: int
    requests: int | None  # every request of the bin, 429s included (null in rows stored before)
    bin_minutes: Int32
    partial: bool


@table("log_query_stats", key=(*LOG_BIN_KEY, "pkrange_id", "query_text"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogQueryStatsRecord(Scoped):
    """Query executions per pkrange and query text in one time bin (`CDBQueryRuntimeStatistics`; the text
    is obfuscated unless full-text query logging is on)."""

    pkrange_id: str
    query_text: str
    queries: int
    bin_minutes: Int32
    partial: bool


@table("log_query_ru", key=(*LOG_BIN_KEY, "pkrange_id", "query_text", "own_traffic"))
@dataclass(frozen=True, slots=True, kw_only=True)
class LogQueryRURecord(Scoped):
    """RU of one query text on one pkrange in one time bin: `CDBQueryRuntimeStatistics` (the text) joined with
    `CDBDataPlaneRequests` (each request's charge and status) on ActivityId, as Microsoft's "top queries by
    RU" query does (azure-monitor.md §7b R48). A row per request: a throttled attempt and its retry share one
    ActivityId (R46) and are two requests, the 429's charge counted too. `own_traffic`: requests ruscope sent
    itself (its client's user agent), kept apart from the workload's."""

    pkrange_id: str
    query_text: str  # obfuscated by the service unless full-text query logging is on (§6.3)
    own_traffic: bool
    request_charge: float
    requests: int
    throttled: int
    bin_minutes: Int32
    partial: bool


@table("log_windows", key=("run_id", "account", "database", "query", "time"), last=True)
@dataclass(frozen=True, slots=True, kw_only=True)
class LogWindowRecord(Scoped):
    """One window [time, end) of one logs query of one database whose whole answer is recorded: its rows are
    in the segment before this row, and it is committed after them. The logs watermark is the latest `end`
    of these, never the latest row's time: an answer is not in time order (it is grouped by container), so
    the rows of an answer a kill or a full disk cut short say nothing of the rows that never arrived.
    `container` is "" (an answer covers the database's containers)."""

    query: str  # the logs query's name (collectors.logs.queries.QUERIES)
    end: datetime
    rows: int  # the rows the answer held


LOG_KEY_RU = TABLES[LogKeyRURecord.TABLE]
LOG_KEY_OPERATION_RU = TABLES[LogKeyOperationRURecord.TABLE]
LOG_KEY_SIZES = TABLES[LogKeySizeRecord.TABLE]
LOG_THROTTLES = TABLES[LogThrottleRecord.TABLE]
LOG_QUERY_STATS = TABLES[LogQueryStatsRecord.TABLE]
LOG_QUERY_RU = TABLES[LogQueryRURecord.TABLE]
LOG_WINDOWS = TABLES[LogWindowRecord.TABLE]


@table("alerts", key=("run_id", "account", "database", "container", "rule", "subject"))
@dataclass(frozen=True, slots=True, kw_only=True)
class AlertRecord(Scoped):
    """One alert that fired when `ruscope collect` evaluated the config's `[alerts]` thresholds after a run:
    `time` is the evaluation's time; one row per rule and subject (a pkrange, a logical key, a query)."""

    rule: str  # see analysis.alerts.RULES: hot_partition, throttle_rate, logical_key_storage, ...
    subject: str  # what it is about: a pkrange id, a partition key (JSON text), a query name; "" for the container
    value: float  # the observed number, in `unit`
    threshold: float  # the configured threshold, in `unit`
    unit: str  # "%" (a share of a limit or a rate) or "%-change"
    message: str  # one plain sentence: what crossed what, since when


ALERTS = TABLES[AlertRecord.TABLE]
