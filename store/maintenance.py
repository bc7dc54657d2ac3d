"""Keeping the store quick to read: compaction, a checkpoint and vacuum per table (`ruscope compact`).

Why: every sealed part is one commit and one small file per day it touches, so a month of hourly runs is
hundreds of files per table and a read opens them all. A Z-order on the time column rewrites each date
partition's small files into a few large ones sorted by time (a commit that concurrent appends do not
conflict with); a checkpoint lets readers load the log without replaying every commit; `vacuum` then
deletes the files no recent snapshot references. The retention (default 168 h, delta-rs' enforced minimum) is what keeps concurrent
readers safe: a reader that loaded a snapshot before the compaction still finds its files for that long.
A shorter retention is honoured only when asked for explicitly (`[store] vacuum_retention_hours`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, WriterProperties
from deltalake.exceptions import CommitFailedError, DeltaError

from store.check import check_table, one_line, repair_hint
from store.delta import DATE, open_table
from store.layout import refuse_old_layout
from store.location import StoreLocation, require_location
from store.records import TABLES

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

    def line(self) -> str:
        return (
            f"{self.table}: {self.files_before} -> {self.files_after} file(s), "
            f"{self.bytes_before:,} -> {self.bytes_after:,} bytes, {self.vacuumed} old file(s) vacuumed"
        )


def compact(
    store: StoreLocation, *, retention_hours: float = DEFAULT_RETENTION_HOURS
) -> list[CompactReport | CompactFailure]:
    """Compact, checkpoint and vacuum every table of the store that exists; a report per table (a failure for
    a damaged one, naming the damage)."""
    location = require_location(store, "compact")
    refuse_old_layout(location)
    reports: list[CompactReport | CompactFailure] = []
    for name in TABLES:
        report = _compact_or_name_damage(location, name, retention_hours)
        if report is not None:
            reports.append(report)
    return reports


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
        found = check_table(location, name)
        if found is None or found.clean:  # not damage (a full disk, storage access): the error itself
            return CompactFailure(name, one_line(exc))
        damage = "; ".join(line.removeprefix(f"{name}: ") for line in found.lines(location))
        return CompactFailure(name, f"{damage}; `{repair_hint(location)}` repairs it")


def compact_table(name: str, table: DeltaTable, retention_hours: float) -> CompactReport:
    files_before, bytes_before = _size(table)
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
    return CompactReport(name, files_before, files_after, bytes_before, bytes_after, len(vacuumed))


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
