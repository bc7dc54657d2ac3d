"""The store: one Parquet dataset per table, `STORE/<table>/date=YYYY-MM-DD/<run_id>-<part>.parquet`.

This package is the store's one interface; nothing outside it knows the file format (the next issue moves
the tables to Delta Lake behind these same names):
- `records`: each table declared once as a frozen, slotted record (`RequestRecord`, `ExecutionRecord`);
  the Arrow schema, the key and the time column of each `Table` are derived from it.
- `pending`: the rows a run has captured but not yet written, journaled to a locked segment under
  `STORE/_pending/` (see its docstring: locking, recovery exactly once, damaged lines set aside).
- `parquet`: atomic, idempotent part writes (`write_frame`, `write_arrow`) and a reader that survives
  bad files (`read_table`, `list_runs`, `StoreWarning`).

Readers: `read_table(store_dir, table, *, since=None, columns=None, run_ids=None) -> pandas.DataFrame`.
"""

from collectors.store.parquet import StoreWarning, list_runs, read_table, write_arrow, write_frame
from collectors.store.pending import PENDING, Segment, recover
from collectors.store.records import (
    EXECUTIONS,
    REQUESTS,
    TABLES,
    UTC_TIME,
    ExecutionRecord,
    Int32,
    Record,
    RequestRecord,
    Table,
)

__all__ = [
    "EXECUTIONS",
    "PENDING",
    "REQUESTS",
    "TABLES",
    "UTC_TIME",
    "ExecutionRecord",
    "Int32",
    "Record",
    "RequestRecord",
    "Segment",
    "StoreWarning",
    "Table",
    "list_runs",
    "read_table",
    "recover",
    "write_arrow",
    "write_frame",
]
