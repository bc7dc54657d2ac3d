"""The store: one Delta Lake table per store table at `STORE/<table>/`, partitioned by `date` (YYYY-MM-DD, UTC).

This package is the store's one interface; nothing outside it knows the format. It stands on `cosmoscore`
(and `wholefile`) alone: the collectors write it, analysis reads its schema's columns, the dashboard and the advisor read and
write through it. STORE is a local directory (default `ruscope-data`) or `az://container/path` /
`abfss://container@account.dfs.core.windows.net/path`; every function takes a `StoreLocation`, built once
where the store is named (`store_location(...)`, which resolves credentials from the environment), and
refuses anything else (`require_location`). Spark, Fabric, Databricks, DuckDB and Polars read the tables as
they are.

- `records`: each table declared once as a frozen, slotted record; the Arrow schema derives from it
  (`records_advice`: the advisor's tables, declared the same way).
- `pending`: rows a run captured but has not committed, journaled to a locked local segment (`Segment`,
  `recover`); sealing commits them with the app transaction `ruscope-<run_id>-<part>`, exactly once.
- `delta`: commits (`write_frame`, `write_arrow` for one run's part; concurrent writers retry conflicts; a
  table keyed by a point's identity, not a run, is merged into: only the keys it lacks are inserted).
- `reader`: `read_table(store, table, *, since=None, columns=None, run_ids=None) -> pandas.DataFrame` (a
  column the table does not declare is a ValueError naming both), `empty_frame`, `list_runs`, `StoreWarning`,
  `table_versions` (every table's latest version: a reader's cache key).
- `check`: the damage of each table (`check(store) -> list[TableCheck]`: data files the log names that are
  missing, with their rows; a log entry that does not parse), for `ruscope store check` and the reader's warnings.
- `repair`: `repair(store) -> list[RepairReport]` (`ruscope store repair`): drops what `check` finds, log
  backed up, rows lost listed; idempotent.
- `maintenance`: `compact(store, *, retention_hours=168)`: repeats of a key removed, optimize, checkpoint,
  vacuum (`ruscope compact`); a
  damaged table is a `CompactFailure` naming the damage, and the others are still compacted.
- `rollups`: `rollup(store) -> RollupReport`: the metrics' new points rolled up incrementally, exactly once, into
  `metric_cells` (10-minute, hourly and daily cells, `rollups.tiers`), run by `compact` and after `collect`;
  the cells past their tier's retention deleted by `compact`; `refresh(store, derivation) -> DerivedReport`:
  a derived table (the span cells) kept up to date the same way, which `compact(..., derived=)` runs too.
- `migrate`: converts a store of the Parquet layout before Delta Lake, once, resumably (`ruscope store
  migrate`); until then reads and writes raise `StoreLayoutError` naming that command (`layout`).
- `location`: `StoreLocation`, `store_location`; `conform`: frames and files to a table's schema.
"""

import os

# delta-rs appends a Rust backtrace to each error's text when RUST_BACKTRACE is set (many a developer's shell
# has it): library backtraces stay off unless asked for by their own variable, so an error is one line
os.environ.setdefault("RUST_LIB_BACKTRACE", "0")

from store import records_advice  # noqa: F401  (registers the advisor's tables)
from store.check import TableCheck, check, repair_hint
from store.delta import write_arrow, write_frame
from store.layout import StoreLayoutError
from store.location import PENDING, StoreLocation, require_location, store_location
from store.maintenance import CompactFailure, CompactReport, compact
from store.migrate import MigrationReport, migrate
from store.pending import Segment, recover
from store.reader import StoreWarning, empty_frame, list_runs, read_table, table_versions
from store.records import (
    EXECUTIONS,
    LOGICAL_KEYS,
    PARTITIONS,
    REQUESTS,
    TABLES,
    UTC_TIME,
    ExecutionRecord,
    Int32,
    LogicalKeyRecord,
    PartitionRecord,
    Record,
    RequestRecord,
    Table,
)
from store.repair import RepairReport, repair
from store.rollups import DerivedReport, RollupReport, refresh, rollup

__all__ = [
    "EXECUTIONS",
    "LOGICAL_KEYS",
    "PARTITIONS",
    "PENDING",
    "REQUESTS",
    "TABLES",
    "UTC_TIME",
    "CompactFailure",
    "CompactReport",
    "ExecutionRecord",
    "Int32",
    "LogicalKeyRecord",
    "MigrationReport",
    "PartitionRecord",
    "Record",
    "RepairReport",
    "RequestRecord",
    "DerivedReport",
    "RollupReport",
    "Segment",
    "StoreLayoutError",
    "StoreLocation",
    "StoreWarning",
    "Table",
    "TableCheck",
    "check",
    "compact",
    "empty_frame",
    "list_runs",
    "migrate",
    "read_table",
    "recover",
    "repair",
    "repair_hint",
    "refresh",
    "rollup",
    "require_location",
    "store_location",
    "table_versions",
    "write_arrow",
    "write_frame",
]
