"""What the metrics say a logs query should have found: the warning for an answer with no rows.

A logs query that finds nothing is not always wrong (no 429s, no queries), but where Azure Monitor's
`TotalRequests` (already in the store's `metrics` table: `ruscope collect` runs the metrics collector
first) counts requests of the kind the query's category logs, in the same window and database, an empty
answer means the logs did not arrive as the collector reads them: the diagnostic setting does not send that
category to this workspace, or it writes the other destination mode than `[monitor] logs_mode` names.
Azure answers such a query with 0 rows and no error (a legacy column named in another category's case is
only a column no row fills, azure-monitor.md §7b R6), so it is said in one line instead of passing silently.

Which requests each query expects rows for (`EXPECTS`):
- `throttles`: every data-plane request (each is a DataPlaneRequests row; the query counts all of them,
  429s among them);
- `query_stats` and `query_ru` (the same rows joined with their requests): `Query` requests (each is a
  QueryRuntimeStatistics row);
- `key_ru` (and `key_operations`, the same rows per operation): successful writes (Create, Upsert, Replace, Patch, Delete) and stored procedure executions,
  whose key Azure always reports (§7b R7); reads and queries are left out, as a read-only workload of
  cross-partition queries and feeds rightly has no key rows, and the metric cannot tell a document read
  from a container read;
- `key_size`: nothing (Azure logs only the largest keys of a partition, from a sample: none may qualify).

To expect rows for another query: its predicate over a `TotalRequests` frame in `EXPECTS`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pandas as pd

from collectors.logs.queries import KEY_OPERATIONS, KEY_RU, QUERY_RU, QUERY_STATS, THROTTLES
from cosmoscore.monitor.metrics import TOTAL_REQUESTS
from store import StoreLocation, read_table
from store.records import METRICS

KEYED_OPERATIONS = frozenset({"Create", "Upsert", "Replace", "Patch", "Delete", "Execute"})
Predicate = Callable[[pd.DataFrame], "pd.Series[bool]"]


def _status(frame: pd.DataFrame) -> pd.Series:
    return frame["status_code"].astype("string").fillna("")


def _operation(frame: pd.DataFrame) -> pd.Series:
    return frame["operation_type"].astype("string").fillna("")


KEYED: tuple[str, Predicate] = (
    "successful writes or stored procedure executions",
    lambda f: _operation(f).isin(KEYED_OPERATIONS) & _status(f).str.startswith("2"),
)
EXPECTS: dict[str, tuple[str, Predicate]] = {
    THROTTLES: ("of any status", lambda f: _status(f) != ""),
    QUERY_STATS: ("of operation Query", lambda f: _operation(f) == "Query"),
    QUERY_RU: ("of operation Query", lambda f: _operation(f) == "Query"),  # the same statistics rows, joined
    KEY_RU: KEYED,
    KEY_OPERATIONS: KEYED,  # the same rows, per operation
}
COLUMNS = ["account", "database", "time", "metric", "operation_type", "status_code", "value"]


def summarize_expected(name: str, metrics: pd.DataFrame, start: dt.datetime, end: dt.datetime) -> int:
    """The requests `TotalRequests` counts in [start, end) of the kind query `name` logs (0 when the query
    expects nothing, or the frame has no such points); `metrics` holds one account's and database's rows."""
    if name not in EXPECTS or metrics.empty:
        return 0
    frame = metrics[metrics["metric"] == TOTAL_REQUESTS]
    times = pd.to_datetime(frame["time"], utc=True)
    frame = frame[(times >= pd.Timestamp(start)) & (times < pd.Timestamp(end))]
    if frame.empty:
        return 0
    _, wanted = EXPECTS[name]
    return round(float(frame.loc[wanted(frame), "value"].astype(float).sum()))


def read_traffic(store: StoreLocation, account: str, database: str, since: dt.datetime) -> pd.DataFrame:
    """The store's `metrics` rows of one account's database from `since` on (the columns `summarize_expected`
    reads)."""
    frame = read_table(store, METRICS, since=since, columns=COLUMNS)
    return frame[(frame["account"] == account) & (frame["database"] == database)]


def warning_line(name: str, mode: str, database: str, span: str, requests: int, category: str) -> str:
    """The line for query `name`'s empty answer where the metrics count `requests` it should have logged."""
    what, _ = EXPECTS[name]
    return (
        f"warning: database {database!r} logs query {name!r} ({mode} mode) found no rows in {span}, while the "
        f"metrics count {requests} request(s) {what} there: check that the diagnostic setting sends the "
        f"{category} category to this workspace, in the mode [monitor] logs_mode names ({mode})"
    )
