"""`ruscope store migrate`: a store of the Parquet layout before Delta Lake becomes Delta tables, once, in
place and resumably.

The old layout is `STORE/<table>/date=YYYY-MM-DD/<run_id>-<part>.parquet` with no `_delta_log`. Each old file
is read and conformed to today's schema (a file written before a column existed gets nulls), committed to
its table with an app transaction keyed by its partition and file name, then removed. Why it is safe to
kill at any moment: a re-run commits only the files whose app transaction is not in the log yet (a kill
after a commit, before the file's removal, commits nothing the second time), and the `_migrating` marker
keeps every other read and write out until the migration has finished (see `layout`). A file that cannot be
read is reported, left where it is (readers then name it in a warning) and does not stop the others.

Only a local store has the old layout (ruscope never wrote it to object storage).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from store.conform import conform_file
from store.delta import DATE, commit, delta_schema, with_date
from store.layout import MIGRATING, is_delta, old_parts
from store.location import StoreLocation, require_location
from store.records import TABLES, Table

log = logging.getLogger("ruscope.store")
Warn = Callable[[str], None]
_UNREADABLE = (OSError, pa.ArrowException, ValueError, TypeError)


@dataclass
class MigrationReport:
    """What a migration did: old files committed (and removed), their rows, and the files it left."""

    files: int = 0
    rows: int = 0
    skipped: list[Path] = field(default_factory=list)

    def line(self, store: object) -> str:
        left = f"; {len(self.skipped)} unreadable file(s) left in place" if self.skipped else ""
        return f"migrated {self.files} Parquet part(s), {self.rows:,} row(s), into the Delta tables of {store}{left}"


def migrate(
    store: StoreLocation,
    *,
    warn: Warn = log.warning,
    committed: Callable[[Path], None] = lambda path: None,
) -> MigrationReport:
    """Convert every old-layout part of the store (see the module docstring); `committed(path)` is called
    after each file's commit, before its removal (where a kill is most interesting to test)."""
    location = require_location(store, "migrate")
    root = location.local
    if root is None:
        raise ValueError(f"store {location}: only a local store can hold the old layout; nothing to migrate")
    report = MigrationReport()
    marker = root / MIGRATING
    if not marker.exists() and not any(next(old_parts(root, name), None) for name in TABLES):
        return report
    marker.touch()
    for spec in TABLES.values():
        for path in list(old_parts(root, spec.name)):
            _migrate_file(location, spec, path, report, warn, committed)
        if (root / spec.name).is_dir() and not is_delta(root, spec.name):  # every file unreadable: still a table
            DeltaTable.create(location.table_uri(spec.name), delta_schema(spec), partition_by=[DATE], mode="ignore")
    marker.unlink()
    return report


def _migrate_file(
    location: StoreLocation,
    spec: Table,
    path: Path,
    report: MigrationReport,
    warn: Warn,
    committed: Callable[[Path], None],
) -> None:
    day = dt.date.fromisoformat(path.parent.name.removeprefix("date="))
    try:
        data = conform_file(spec, spec.schema, pq.read_table(path))
    except _UNREADABLE as exc:
        warn(f"store migrate: left {path} in place: it cannot be read ({type(exc).__name__}: {exc})")
        report.skipped.append(path)
        return
    if data.num_rows:
        rows = with_date(spec, data, undated=day)
        commit(location, spec, rows, app_id=f"ruscope-migrate-{path.parent.name}-{path.name}")
    committed(path)
    path.unlink()
    report.files += 1
    report.rows += data.num_rows
