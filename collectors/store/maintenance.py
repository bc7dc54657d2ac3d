"""Keeping the store quick to read: compaction, a checkpoint and vacuum per table (`ruscope compact`).

Why: every sealed part is one commit and one small file per day it touches, so a month of hourly runs is
hundreds of files per table and a read opens them all. `optimize.compact()` rewrites each date partition's
small files into a few large ones (a commit that concurrent appends do not conflict with); a checkpoint
lets readers load the log without replaying every commit; `vacuum` then deletes the files no recent
snapshot references. The retention (default 168 h, delta-rs' enforced minimum) is what keeps concurrent
readers safe: a reader that loaded a snapshot before the compaction still finds its files for that long.
A shorter retention is honoured only when asked for explicitly (`[store] vacuum_retention_hours`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from deltalake import DeltaTable, WriterProperties
from deltalake.exceptions import CommitFailedError

from collectors.store.delta import open_table
from collectors.store.layout import refuse_old_layout
from collectors.store.location import StoreLocation, store_location
from collectors.store.records import TABLES

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
    store: Path | str | StoreLocation, *, retention_hours: float = DEFAULT_RETENTION_HOURS
) -> list[CompactReport]:
    """Compact, checkpoint and vacuum every table of the store that exists; a report per table."""
    location = store_location(store)
    refuse_old_layout(location)
    reports = []
    for name in TABLES:
        table = open_table(location, name)
        if table is not None:
            reports.append(compact_table(name, table, retention_hours))
    return reports


def compact_table(name: str, table: DeltaTable, retention_hours: float) -> CompactReport:
    files_before, bytes_before = _size(table)
    for attempt in range(COMPACT_ATTEMPTS):
        try:
            table.optimize.compact(writer_properties=COMPACTED)
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


def _size(table: DeltaTable) -> tuple[int, int]:
    """The current snapshot's data files and their bytes."""
    table.update_incremental()
    actions = table.get_add_actions(flatten=True)
    sizes = [int(size) for size in actions.column("size_bytes").to_pylist()] if actions.num_rows else []
    return len(sizes), int(sum(sizes))
