"""Keeping the store quick to read: compaction, a checkpoint and vacuum per table (`ruscope compact`).

Why: every sealed part is one commit and one small file per day it touches, so a month of hourly runs is
hundreds of files per table and a read opens them all. A Z-order on the time column rewrites each date
partition's small files into a few large ones sorted by time (a commit that concurrent appends do not
conflict with); a checkpoint lets readers load the log without replaying every commit; `vacuum` then
deletes the files no recent snapshot references. The retention (default 168 h, delta-rs' enforced minimum) is what keeps concurrent
readers safe: a reader that loaded a snapshot before the compaction still finds its files for that long.
A shorter retention is honoured only when asked for explicitly (`[store] vacuum_retention_hours`).

Repeats first: rows that share a table's key (two collectors that committed the same metric points before
their commits were checked against each other) are removed, keeping the row of the earliest run, one date
partition at a time: the partition's rows are rewritten once, by an overwrite of that partition, which a
concurrent append to the same partition makes conflict (it is then done again on the newer snapshot), so no
row committed meanwhile is lost. The count, per table, is in the report.

Rollups first and last: the `metric_cells` are brought up to the metrics' latest version before the tables
are compacted (`store.rollups.increment`), the cells past their tier's retention deleted, and after the
compaction the rollup runs again, which only records the metrics' new version (an OPTIMIZE changes no data,
so the next rollup does not read the rewritten files again). The derived tables the caller names (the span
cells, `store.rollups.derived`) are refreshed the same way, before and after.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, QueryBuilder, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError

from store.check import check_table, failure_cause, one_line
from store.delta import DATE, delta_schema, open_table, sql_literal, sql_name
from store.layout import refuse_old_layout
from store.location import StoreLocation, require_location
from store.records import METRIC_CELLS, TABLES, Table
from store.rollups.derived import Derivation, DerivedReport, refresh
from store.rollups.increment import RollupReport, rollup
from store.rollups.retention import prune_cells

DEFAULT_RETENTION_HOURS = 168.0  # delta-rs refuses less unless told to: a week of safe reads
COMPACT_ATTEMPTS = 5
# Snappy, as pyarrow writes by default: a read of the compacted files costs what a bare pyarrow read costs
# (delta-rs' default, zstd, decodes at about half the speed for a few percent less disk)
COMPACTED = WriterProperties(compression="SNAPPY")


@dataclass(frozen=True)
class CompactReport:
    """One table's files and bytes before and after a compaction, and the files vacuum deleted."""

    table: str
    files_before: int
    files_after: int
    bytes_before: int
    bytes_after: int
    vacuumed: int
    repeats: int = 0  # rows removed because another row had the same key

    def line(self) -> str:
        return (
            f"{self.table}: {self.files_before} -> {self.files_after} file(s), "
            f"{self.bytes_before:,} -> {self.bytes_after:,} bytes, {self.vacuumed} old file(s) vacuumed, "
            f"{self.repeats} repeated row(s) removed"
        )


def compact(
    store: StoreLocation,
    *,
    retention_hours: float = DEFAULT_RETENTION_HOURS,
    now: dt.datetime | None = None,
    derived: Sequence[Derivation] = (),
) -> list[CompactReport | CompactFailure | RollupReport | DerivedReport]:
    """Roll the metrics up and refresh the `derived` tables (the caller's: `analysis.load.stored`), then
    compact, checkpoint and vacuum every table of the store that exists; the rollup's and refreshes' reports,
    then a report per table (a failure for a damaged one, naming the damage)."""
    location = require_location(store, "compact")
    refuse_old_layout(location)
    reports: list[CompactReport | CompactFailure | RollupReport | DerivedReport] = []
    rolled = _rollup_or_name_damage(location, now or dt.datetime.now(dt.UTC))
    if not (isinstance(rolled, RollupReport) and rolled.source_version is None and not rolled.pruned):
        reports.append(rolled)  # said unless the store has no metrics to roll up
    refreshed = [_refresh_or_name_damage(location, derivation) for derivation in derived]
    reports += [report for report in refreshed if report is not None]
    for name in TABLES:
        report = _compact_or_name_damage(location, name, retention_hours)
        if report is not None:
            reports.append(report)
    if isinstance(rolled, RollupReport):
        _rollup_or_name_damage(location, None)  # records the compacted version: no data changed
    for derivation, done in zip(derived, refreshed, strict=True):
        if isinstance(done, DerivedReport):
            _refresh_or_name_damage(location, derivation)  # records the compacted versions likewise
    return reports


def _refresh_or_name_damage(location: StoreLocation, derivation: Derivation) -> DerivedReport | CompactFailure | None:
    """A derived table's refresh (None: none of its sources exists yet); a failure named."""
    try:
        return refresh(location, derivation)
    except (DeltaError, OSError, pa.ArrowException) as exc:
        damaged = [source.table.name for source in derivation.sources if _damaged(location, source.table.name)]
        if damaged:  # a source's damage is already named on its own line, with the repair command
            return CompactFailure(derivation.table.name, f"not refreshed: {' and '.join(damaged)} damaged (above)")
        return CompactFailure(
            derivation.table.name, f"not refreshed: {failure_cause(location, derivation.table.name, exc)}"
        )


def _rollup_or_name_damage(location: StoreLocation, now: dt.datetime | None) -> RollupReport | CompactFailure:
    """The rollup, and with `now` the cells' retention; a failure (a damaged metrics or cells table) named."""
    try:
        report = rollup(location)
        return report if now is None else replace(report, pruned=prune_cells(location, now=now))
    except (DeltaError, OSError, pa.ArrowException) as exc:
        return CompactFailure(METRIC_CELLS.name, f"not rolled up: {failure_cause(location, 'metrics', exc)}")


def _damaged(location: StoreLocation, table: str) -> bool:
    found = check_table(location, table)
    return found is not None and not found.clean


@dataclass(frozen=True)
class CompactFailure:
    """A table that could not be compacted (a missing data file, a damaged log entry), the damage named."""

    table: str
    reason: str

    def line(self) -> str:
        return f"{self.table}: not compacted: {self.reason}"


def _compact_or_name_damage(
    location: StoreLocation, name: str, retention_hours: float
) -> CompactReport | CompactFailure | None:
    """One table compacted (None if it does not exist); a damaged one is a `CompactFailure` naming the damage
    and the repair command, so the other tables are still compacted and nothing is half-done to this one."""
    try:
        table = open_table(location, name)
        return None if table is None else compact_table(name, table, retention_hours)
    except (DeltaError, OSError, pa.ArrowException) as exc:
        return CompactFailure(name, failure_cause(location, name, exc))


def compact_table(name: str, table: DeltaTable, retention_hours: float) -> CompactReport:
    files_before, bytes_before = _size(table)
    repeats = remove_repeats(TABLES[name], table)
    for attempt in range(COMPACT_ATTEMPTS):
        try:
            _rewrite_crowded(table, TABLES[name].time)
            break
        except CommitFailedError:  # a rewrite that lost to another compaction: start again from its result
            if attempt + 1 == COMPACT_ATTEMPTS:
                raise
            table.update_incremental()
    table.create_checkpoint()
    hours = math.ceil(retention_hours)
    vacuumed = table.vacuum(
        retention_hours=hours, dry_run=False, enforce_retention_duration=hours >= DEFAULT_RETENTION_HOURS
    )
    files_after, bytes_after = _size(table)
    return CompactReport(name, files_before, files_after, bytes_before, bytes_after, len(vacuumed), repeats)


def _query(table: DeltaTable, sql: str) -> pa.Table:
    """delta-rs' SQL over the table; a file it cannot read (missing, damaged) is an OSError, as a read's is:
    its query engine raises a bare `Exception` for one."""
    try:
        return pa.table(QueryBuilder().register("t", table).execute(sql).read_all())
    except DeltaError:
        raise
    except Exception as exc:
        raise OSError(one_line(exc)) from exc


def repeated_rows(spec: Table, table: DeltaTable) -> dict[str, int]:
    """Each date partition's rows beyond the first of their key (partitions without repeats left out; a null
    equals a null here, as GROUP BY groups them), computed by delta-rs over the key columns alone."""
    key = ", ".join(sql_name(c) for c in (DATE, *_present_key(spec, table)))
    found = _query(
        table,
        f"SELECT {sql_name(DATE)} AS day, sum(n - 1) AS extra FROM "
        f"(SELECT {key}, count(*) AS n FROM t GROUP BY {key}) WHERE n > 1 GROUP BY {sql_name(DATE)}",
    )
    return {str(d): int(n) for d, n in zip(found["day"].to_pylist(), found["extra"].to_pylist(), strict=True)}


def _present_key(spec: Table, table: DeltaTable) -> list[str]:
    """The key columns the table has: a table written before a key column existed (`region` of `metrics`)
    holds null there in every row, so its key is the others (delta-rs' SQL refuses a column it lacks)."""
    present = {f.name for f in table.schema().fields}
    return [name for name in spec.key if name in present]


def remove_repeats(spec: Table, table: DeltaTable) -> int:
    """Rewrite each date partition holding repeats with the first row of each key (the earliest run's); the
    rows removed. A rewrite that conflicts with a concurrent commit is done again on the newer snapshot."""
    removed = 0
    for attempt in range(COMPACT_ATTEMPTS):
        try:
            for day in sorted(repeated_rows(spec, table)):
                removed += _rewrite_once(spec, table, day)
            return removed
        except CommitFailedError:
            if attempt + 1 == COMPACT_ATTEMPTS:
                raise
            table.update_incremental()
    return removed


def _rewrite_once(spec: Table, table: DeltaTable, day: str) -> int:
    present = {f.name for f in table.schema().fields}
    columns = [f.name for f in delta_schema(spec) if f.name in present]
    listed = ", ".join(sql_name(c) for c in columns)
    inside = f"{sql_name(DATE)} = {sql_literal(day)}"
    order = ", ".join(sql_name(c) for c in ("run_id", spec.time))
    kept = _query(
        table,
        f"SELECT {listed} FROM (SELECT {listed}, row_number() OVER "
        f"(PARTITION BY {', '.join(map(sql_name, _present_key(spec, table)))} "
        f"ORDER BY {order}) AS rn FROM t WHERE {inside}) WHERE rn = 1",
    )
    before = _query(table, f"SELECT count(*) AS n FROM t WHERE {inside}")["n"][0].as_py()
    write_deltalake(table, kept, mode="overwrite", predicate=inside, partition_by=[DATE], writer_properties=COMPACTED)
    table.update_incremental()
    return int(before) - int(kept.num_rows)


def _rewrite_crowded(table: DeltaTable, time_column: str) -> None:
    """Rewrite each date partition that has more than one file into few files sorted by time (a Z-order on the
    time column alone is a sort): a reader then gets rows already in time order and skips sorting them, and a
    partition already compacted is left alone, so a compaction costs what arrived since the last one."""
    crowded = _crowded_partitions(table)
    if crowded:
        table.optimize.z_order([time_column], partition_filters=[(DATE, "in", crowded)], writer_properties=COMPACTED)


def _crowded_partitions(table: DeltaTable) -> list[str]:
    actions = pa.table(table.get_add_actions(flatten=True))
    if not actions.num_rows:
        return []
    counts = pc.value_counts(actions.column(f"partition.{DATE}")).to_pylist()
    return sorted(str(c["values"]) for c in counts if c["counts"] > 1)


def _size(table: DeltaTable) -> tuple[int, int]:
    """The current snapshot's data files and their bytes."""
    table.update_incremental()
    actions = table.get_add_actions(flatten=True)
    sizes = [int(size) for size in actions.column("size_bytes").to_pylist()] if actions.num_rows else []
    return len(sizes), int(sum(sizes))
