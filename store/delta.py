"""Committing rows to a store table: one Delta Lake table per store table at `STORE/<table>/`, partitioned by
the UTC `date` (YYYY-MM-DD) of each row's time column, its schema the record's plus `date`.

Why Delta Lake and app transactions: a commit is atomic on a local disk and on object storage alike (the
log entry is written with put-if-absent), so many collectors on many hosts append to one table without
coordinating; a conflict (another writer committed first, or created the table at the same moment) is
retried. Every commit carries an app transaction `(app_id, version)`; before committing, the table's last
version of that app id says whether these rows are already in (a run killed after its commit, before it
removed its pending segment): then nothing is written, so a part is committed exactly once.

A table whose key has no `run_id` (a metric point, a log bin: the same point is collected by every run
whose window covers it, and by two collectors running at once) is keyed by the point's identity, and an app
transaction alone cannot keep it once: two runs that read the store before either committed would both add
it. Such a table is committed with a Delta merge that inserts only the rows whose key the table does not hold
(`insert_new`). The merge's predicate names the rows' date partitions, time range and accounts, so it reads
only the files that may hold those keys (a batch of half a million points costs well under a second), and
delta-rs' conflict check, run on that predicate against whatever committed meanwhile, refuses the commit if
another writer added files that may hold the same keys (files of other days, times or accounts do not
conflict): the merge is then run again on the newer snapshot, which drops the keys the other writer stored.
The check runs in the committing process against the log, whose entries are put-if-absent on object storage
too, so it holds across processes and hosts, on a local disk and on Azure Blob / ADLS alike.

`write_frame` / `write_arrow` commit one run's part (app id `ruscope-<run_id>-<part>`); `commit` takes any
app id (the migration keys its commits by old file name) and returns the rows it added.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, Transaction, WriterProperties, write_deltalake
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
# Snappy, as pyarrow and a blind append write: what the reader decodes quickest (see maintenance.COMPACTED)
MERGED = WriterProperties(compression="SNAPPY")
SOURCE, TARGET = "s", "t"  # the merge's aliases


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


def keyed_by_identity(spec: Table) -> bool:
    """Whether a row's key is its identity across runs (no `run_id` in it): such a table is merged into."""
    return "run_id" not in spec.key


def commit(location: StoreLocation, spec: Table, data: pa.Table, *, app_id: str) -> int:
    """Add `data` (with its `date` column) under `app_id`, exactly once: the rows added, 0 if that app id had
    already committed (nothing written). A table keyed by identity gets only the rows whose key it does not
    hold yet (`insert_new`). Conflicts with concurrent writers are retried."""
    properties = CommitProperties(
        app_transactions=[Transaction(app_id=app_id, version=1)], max_commit_retries=COMMIT_RETRIES
    )
    create_private_dirs(location)  # a new local store is its owner's alone (0700)
    merging = keyed_by_identity(spec)
    if merging:
        data = first_of_each_key(spec, data)
    for attempt in range(COMMIT_ATTEMPTS):
        table = open_table(location, spec.name)
        if table is not None and (table.transaction_version(app_id) or 0) >= 1:
            return 0
        try:
            if merging:
                return insert_new(location, spec, table, data, properties)
            write_deltalake(
                table if table is not None else location.table_uri(spec.name),
                data,
                mode="append",
                partition_by=[DATE],
                schema_mode="merge",  # a column added to the record joins the table; older files read as nulls
                storage_options=location.options(),
                commit_properties=properties,
            )
            return int(data.num_rows)
        except (CommitFailedError, DeltaError) as exc:
            if attempt + 1 == COMMIT_ATTEMPTS or not _retryable(exc):
                raise
            time.sleep(random.uniform(0.01, 0.05 * (attempt + 1)))  # let the winner's commit land
    raise AssertionError("unreachable")


def insert_new(
    location: StoreLocation, spec: Table, table: DeltaTable | None, data: pa.Table, properties: CommitProperties
) -> int:
    """Merge `data` into the table, inserting the rows whose key it does not hold; the rows inserted. A table
    not created yet is created empty first (a create that loses to another is fine), so that every writer
    merges and none appends blindly. CommitFailedError when a concurrent commit may hold some of the keys."""
    if table is None:
        table = created(location, spec)
    merger = table.merge(
        data,
        merge_predicate(spec, data),
        source_alias=SOURCE,
        target_alias=TARGET,
        merge_schema=True,  # a column added to the record joins the table, as an append's schema_mode="merge"
        writer_properties=MERGED,
        commit_properties=properties,
    )
    metrics = merger.when_not_matched_insert_all().execute()
    return int(metrics["num_target_rows_inserted"])


def created(location: StoreLocation, spec: Table) -> DeltaTable:
    """The table, created empty if it does not exist yet (a create that loses to another writer's is fine)."""
    try:
        DeltaTable.create(
            location.table_uri(spec.name),
            schema=delta_schema(spec),
            partition_by=[DATE],
            mode="ignore",
            storage_options=location.options(),
        )
    except DeltaError as exc:
        if "already exists" not in str(exc).lower():
            raise
    return DeltaTable(location.table_uri(spec.name), storage_options=location.options())


def sql_literal(value: object) -> str:
    if isinstance(value, dt.datetime):
        moment = value.astimezone(dt.UTC).replace(tzinfo=None).isoformat()
        return f"""arrow_cast('{moment}', 'Timestamp(Microsecond, Some("UTC"))')"""
    return "'" + str(value).replace("'", "''") + "'"


def sql_name(column: str) -> str:
    """A column as a quoted SQL identifier (`date`, `time` are words of the SQL delta-rs parses)."""
    return '"' + column.replace('"', '""') + '"'


def merge_predicate(spec: Table, data: pa.Table) -> str:
    """Target rows with one of `data`'s keys: the key columns equal (null equal to null in a column that may be
    null), within `data`'s date partitions, time range and accounts. Those bounds are what lets the merge
    skip other files, and what delta-rs' conflict check tests a concurrent commit's files against (pure)."""

    def target(column: str) -> str:
        return f"{TARGET}.{sql_name(column)}"

    def one_of(column: str) -> str:
        return f"{target(column)} IN ({', '.join(map(sql_literal, sorted(pc.unique(data[column]).to_pylist())))})"

    bounds = [one_of(DATE)]
    low, high = pc.min_max(data[spec.time]).values()
    if low.is_valid:
        bounds += [
            f"{target(spec.time)} >= {sql_literal(low.as_py())}",
            f"{target(spec.time)} <= {sql_literal(high.as_py())}",
        ]
    if "account" in spec.key and not data["account"].null_count:
        bounds.append(one_of("account"))
    nullable = {check.name for check in spec.record.CHECKS if check.optional}
    same = [f"{target(c)} {'IS NOT DISTINCT FROM' if c in nullable else '='} {SOURCE}.{sql_name(c)}" for c in spec.key]
    # each term in parentheses: the parser reads `a IS NOT DISTINCT FROM b AND c ...` as `a ... FROM (b AND c)`
    return " AND ".join(f"({term})" for term in [*bounds, *same])


def first_of_each_key(spec: Table, data: pa.Table) -> pa.Table:
    """`data` with one row per key (the first; a null equals a null here), in its order (pure)."""
    if data.num_rows < 2:
        return data
    index = "__row"
    numbered = data.select(list(spec.key)).append_column(index, pa.array(range(data.num_rows), pa.int64()))
    firsts = numbered.group_by(list(spec.key)).aggregate([(index, "min")])[f"{index}_min"]  # any order: sorted below
    if len(firsts) == data.num_rows:
        return data
    return data.take(firsts.take(pc.sort_indices(firsts)))


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
    this (run_id, part) was committed before, or `data` is empty; in a table keyed by identity, only the rows
    whose key it did not hold). `day` dates every row (default: its time)."""
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
    return commit(location, spec, with_date(spec, data, day), app_id=app_id)
