"""Committing rows to a store table: one Delta Lake table per store table at `STORE/<table>/`, partitioned by
the UTC `date` (YYYY-MM-DD) of each row's time column, its schema the record's plus `date`.

Why Delta Lake and app transactions: a commit is atomic on a local disk and on object storage alike (the
log entry is written with put-if-absent), so many collectors on many hosts append to one table without
coordinating; a conflict (another writer committed first, or created the table at the same moment) is
retried. Every commit carries an app transaction `(app_id, version)`; before committing, the table's last
version of that app id says whether these rows are already in (a run killed after its commit, before it
removed its pending segment): then nothing is written, so a part is committed exactly once.

`write_frame` / `write_arrow` commit one run's part (app id `ruscope-<run_id>-<part>`); `commit` takes any
app id (the migration keys its commits by old file name).
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from store.conform import arrow_of_frame, arrow_of_run, check_token, table_spec
from store.layout import refuse_old_layout
from store.location import StoreLocation, create_private_dirs, require_location
from store.records import Table

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("ruscope.store")

DATE = "date"
COMMIT_ATTEMPTS = 40  # our own retries, around delta-rs' retries of a conflicting commit
COMMIT_RETRIES = 20  # delta-rs' own: it rebases a blind append onto the newer version and tries again


def delta_schema(spec: Table) -> pa.Schema:
    """The table's Arrow schema as stored: the record's columns, then the `date` partition column."""
    return spec.schema.append(pa.field(DATE, pa.string()))


def with_date(spec: Table, data: pa.Table, day: dt.date | None = None, *, undated: dt.date | None = None) -> pa.Table:
    """`data` plus its `date` column: `day` if given, else each row's UTC date (`undated`, default today, for
    a row without a time)."""
    if day is not None:
        dates = pa.array([day.isoformat()] * data.num_rows, pa.string())
    else:
        fallback = (undated or dt.datetime.now(dt.UTC).date()).isoformat()
        dates = pc.fill_null(pc.strftime(data.column(spec.time), format="%Y-%m-%d", locale="C"), fallback)
    return data.append_column(pa.field(DATE, pa.string()), dates)


def app_id_of(run_id: str, part: str) -> str:
    return f"ruscope-{run_id}-{part}"


def open_table(location: StoreLocation, table: str) -> DeltaTable | None:
    """The table's latest snapshot, or None if it was never committed to."""
    try:
        return DeltaTable(location.table_uri(table), storage_options=location.options())
    except TableNotFoundError:
        return None


def commit(location: StoreLocation, spec: Table, data: pa.Table, *, app_id: str) -> bool:
    """Append `data` (with its `date` column) under `app_id`, exactly once: False if that app id had already
    committed (nothing written), True once committed. Conflicts with concurrent writers are retried."""
    properties = CommitProperties(
        app_transactions=[Transaction(app_id=app_id, version=1)], max_commit_retries=COMMIT_RETRIES
    )
    create_private_dirs(location)  # a new local store is its owner's alone (0700)
    for attempt in range(COMMIT_ATTEMPTS):
        table = open_table(location, spec.name)
        if table is not None and (table.transaction_version(app_id) or 0) >= 1:
            return False
        try:
            write_deltalake(
                table if table is not None else location.table_uri(spec.name),
                data,
                mode="append",
                partition_by=[DATE],
                schema_mode="merge",  # a column added to the record joins the table; older files read as nulls
                storage_options=location.options(),
                commit_properties=properties,
            )
            return True
        except (CommitFailedError, DeltaError) as exc:
            if attempt + 1 == COMMIT_ATTEMPTS or not _retryable(exc):
                raise
            time.sleep(random.uniform(0.01, 0.05 * (attempt + 1)))  # let the winner's commit land
    raise AssertionError("unreachable")


def _retryable(exc: Exception) -> bool:
    """A lost race: another writer committed, or created the table, first."""
    text = str(exc).lower()
    return isinstance(exc, CommitFailedError) or "already exists" in text


def write_arrow(
    store: StoreLocation,
    table: Table | str,
    data: pa.Table,
    *,
    run_id: str,
    part: str,
    day: dt.date | None = None,
) -> int:
    """Commit one run's part (Arrow data with the schema's columns) exactly once; the rows committed (0 if
    this (run_id, part) was committed before, or `data` is empty). `day` dates every row (default: its time)."""
    spec = table_spec(table)
    check_token("run_id", run_id)
    check_token("part", part)
    return _commit_part(
        require_location(store, "write_arrow"), spec, arrow_of_run(spec, data, run_id), app_id_of(run_id, part), day
    )


def write_frame(
    store: StoreLocation,
    table: Table | str,
    frame: pd.DataFrame,
    *,
    run_id: str,
    part: str,
    day: dt.date | None = None,
) -> int:
    """`write_arrow` for a frame: conformed to the table's schema (missing columns become nulls, an unknown
    column or a value that does not cast is a ValueError naming the column; naive times are UTC)."""
    spec = table_spec(table)
    check_token("run_id", run_id)
    check_token("part", part)
    return _commit_part(
        require_location(store, "write_frame"), spec, arrow_of_frame(spec, frame, run_id), app_id_of(run_id, part), day
    )


def _commit_part(location: StoreLocation, spec: Table, data: pa.Table, app_id: str, day: dt.date | None) -> int:
    if not data.num_rows:
        return 0
    refuse_old_layout(location)
    return data.num_rows if commit(location, spec, with_date(spec, data, day), app_id=app_id) else 0
