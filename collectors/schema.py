"""The store's tables, declared once: the writer, the reader, the CSV export and the dashboard use these.

Names are stable once shipped (DESIGN.md "Store"): add columns freely, never rename one. Every row
carries `run_id`, a UTC timestamp and account/database/container. To add a table, declare its columns
here and add it to TABLES.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

UTC_TIME = pa.timestamp("us", tz="UTC")


@dataclass(frozen=True)
class Table:
    name: str
    schema: pa.Schema
    key: tuple[str, ...]  # what makes a row unique: a reader drops repeats of it

    @property
    def columns(self) -> list[str]:
        return self.schema.names


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, kind in fields])


_RUN = (
    ("run_id", pa.string()),
    ("time", UTC_TIME),
    ("account", pa.string()),  # the endpoint's host, never a key
    ("database", pa.string()),
    ("container", pa.string()),
)

# One row per HTTP request the SDK sent while replaying (captured by a client-level raw_response_hook).
REQUESTS = Table(
    "requests",
    _schema(
        *_RUN,
        ("query_name", pa.string()),
        ("execution_id", pa.string()),
        ("seq", pa.int64()),  # order of the request within the run (unique per run)
        ("request_kind", pa.string()),  # see collectors.replay.REQUEST_KINDS
        ("method", pa.string()),
        ("resource", pa.string()),  # the path, e.g. dbs/shop/colls/orders/docs
        ("pkrange_id", pa.string()),  # "" when the response names none
        ("status", pa.int32()),
        ("substatus", pa.int32()),
        ("request_charge", pa.float64()),
        ("item_count", pa.int32()),
        ("duration_ms", pa.float64()),
        ("activity_id", pa.string()),
        ("correlated_activity_id", pa.string()),
        ("retry_after_ms", pa.float64()),
        ("retrieved_document_count", pa.int64()),  # from x-ms-documentdb-query-metrics, when asked for
        ("retrieved_document_size", pa.int64()),
        ("output_document_count", pa.int64()),
        ("output_document_size", pa.int64()),
        ("index_hit_ratio", pa.float64()),
        ("index_utilization", pa.string()),  # x-ms-cosmos-index-utilization, as JSON text
    ),
    key=("run_id", "seq"),
)

# One row per query execution (a query as-is, or one feed range of it in per-feed-range mode).
EXECUTIONS = Table(
    "executions",
    _schema(
        *_RUN,
        ("query_name", pa.string()),
        ("execution_id", pa.string()),
        ("repeat", pa.int32()),  # 0-based repetition of the query within the run
        ("mode", pa.string()),  # "as-is" | "per-feed-range"
        ("feed_range", pa.string()),  # "min..max" of the feed range in per-feed-range mode, else ""
        ("sql", pa.string()),
        ("partition_key", pa.string()),  # JSON of the configured key or prefix, "" for none
        ("status", pa.string()),  # "ok" | "error" | "budget"
        ("error", pa.string()),  # one line: what went wrong, "" when ok
        ("total_ru", pa.float64()),
        ("pages", pa.int32()),  # data pages (200 responses to a query POST)
        ("round_trips", pa.int32()),  # every HTTP request, plan and routing-map reads included
        ("items", pa.int64()),  # rows the query returned
        ("pkranges", pa.string()),  # comma-separated ids of the partitions that served data pages
        ("pkrange_count", pa.int32()),
        ("routing_predicted", pa.string()),  # "single" | "targeted" | "fan-out" | "unknown"
        ("routing_observed", pa.string()),
        ("routing_mismatch", pa.bool_()),
        ("retrieved_documents", pa.int64()),  # summed query metrics, null when not asked for
        ("output_documents", pa.int64()),
        ("throttled", pa.int32()),  # 429 responses
        ("retry_after_ms_total", pa.float64()),
        ("duration_ms", pa.float64()),
    ),
    key=("run_id", "execution_id"),
)

TABLES: dict[str, Table] = {t.name: t for t in (REQUESTS, EXECUTIONS)}
