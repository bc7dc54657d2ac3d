"""Repairing a damaged store table (`ruscope store repair`): what `check` finds is dropped, with a backup, and
what was lost is listed, row counts and all; a second run finds nothing to do.

- **A damaged log entry** (local stores): delta-rs has no operation for a log it cannot load, so the entry is
  rewritten with the lines of it that still parse (each a whole action delta-rs wrote; nothing is composed
  here), in place and whole (`wholefile.write_whole`). Which lines are kept depends on what the commit was:
  a blind append (its `commitInfo` survived and says WRITE / Append, as every collector commit is) keeps
  its intact add actions, losing only the rows of the cut one; any other commit (a compaction, or one whose
  `commitInfo` is lost) keeps no add or remove action, so the table is as it was before that commit (a
  compaction's old files are still there within the vacuum retention) rather than half of a rewrite. The
  table then loads as the last checkpoint plus every intact commit, including the ones after the damage.
  A first entry (version 0) that lost the table's protocol or metadata gets the ones delta-rs writes for a new
  table of the schema this package declares (the columns later commits added come with their own metadata).
- **A damaged checkpoint**: taken out of the log (with the `_last_checkpoint` hint) when the commits it sums
  up are all still there, so that delta-rs replays them; then delta-rs writes a new checkpoint. Nothing is lost.
- **A missing data file**: delta-rs' own file system check (`DeltaTable.repair()`, FSCK) commits a remove
  action for each file the log names and storage lacks; the rows each held come from its add action.

Before changing a local table's log, the whole `_delta_log` is copied to
`STORE/_repair/<table>-<UTC time>/_delta_log` (copy it back to undo). FSCK only appends a commit, so on object
storage the versions before it stay readable (`DeltaTable(uri, version=...)`) and no copy is made.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError

from store.check import (
    ADD_PATH,
    LAST_CHECKPOINT,
    DamagedEntry,
    MissingFile,
    checkpoint_files,
    commit_files,
    damaged_entry,
    entry_lines,
    missing_files,
    missing_text,
    one_line,
)
from store.delta import DATE, delta_schema, open_table
from store.layout import DELTA_FILE, DELTA_LOG
from store.location import StoreLocation, require_location
from store.records import TABLES
from wholefile import write_whole

REPAIR_DIR = "_repair"  # at the store's root: the log backups, one per table repaired
MAX_DAMAGED_ENTRIES = 1000  # entries salvaged in one run before giving up (a log damaged throughout)


@dataclass
class RepairReport:
    """What one table's repair did: its backup, the entries salvaged, the files dropped and the rows lost."""

    table: str
    backup: Path | None = None
    salvaged: list[DamagedEntry] = field(default_factory=list)
    lost: list[MissingFile] = field(default_factory=list)  # add actions the salvaged entries could not keep
    undone: list[MissingFile] = field(default_factory=list)  # a damaged compaction's files, their rows kept
    dropped: list[MissingFile] = field(default_factory=list)  # missing files removed from the table
    error: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.salvaged or self.dropped)

    def lines(self, location: StoreLocation) -> list[str]:
        name = self.table
        out = [f"{name}: {entry.describe()}; {_done(entry)}" for entry in self.salvaged]
        out += [f"{name}: lost with the damaged entry: {_lost_text(location, name, m)}" for m in self.lost]
        out += [f"{name}: a damaged compaction undone: {_undone_text(location, name, m)}" for m in self.undone]
        out += [f"{name}: dropped from the table: {missing_text(location, name, m)}" for m in self.dropped]
        if self.backup is not None:
            out.append(f"{name}: the log before the repair is kept in {self.backup}")
        if self.error is not None:
            out.append(f"{name}: cannot be repaired: {self.error}")
        if not out:
            out.append(f"{name}: clean, nothing to repair")
        return out


def _done(entry: DamagedEntry) -> str:
    if entry.checkpoint:
        return "taken out of the log (its commits are replayed) and written again"
    return "rewritten with its intact lines"


def _lost_text(location: StoreLocation, table: str, lost: MissingFile) -> str:
    rows = "an unknown number of rows" if lost.rows is None else f"{lost.rows:,} row(s)"
    return f"data file {location.table_uri(table)}/{lost.path} ({rows}; left on disk, no longer in the table)"


def _undone_text(location: StoreLocation, table: str, undone: MissingFile) -> str:
    rows = "an unknown number of rows" if undone.rows is None else f"{undone.rows:,} row(s)"
    return (
        f"its file {location.table_uri(table)}/{undone.path} ({rows}) is left out; those rows are read from "
        "the files it replaced, which are the table's again"
    )


def repair(store: StoreLocation, *, now: dt.datetime | None = None) -> list[RepairReport]:
    """Repair every table of the store that exists (see the module docstring); a report per table."""
    location = require_location(store, "repair")
    stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    reports = []
    for name in TABLES:
        log_dir = location.local / name / DELTA_LOG if location.local is not None else None
        if log_dir is not None and not log_dir.is_dir():
            continue
        report = repair_table(location, name, stamp)
        if report is not None:
            reports.append(report)
    return reports


def repair_table(location: StoreLocation, name: str, stamp: str) -> RepairReport | None:
    """One table's repair; None when the table does not exist."""
    report = RepairReport(name)
    windows: list[tuple[float, float, bool]] = []
    for _ in range(MAX_DAMAGED_ENTRIES):
        damaged = damaged_entry(location, name)
        if damaged is None:
            break
        _back_up(location, report, stamp)
        if damaged.checkpoint:
            report.error = _drop_checkpoint(damaged)
            if report.error is not None:
                return report
            report.salvaged.append(damaged)
            continue
        compaction = _operation(damaged) == "OPTIMIZE"  # its removes are dropped too: its rows are in the old files
        windows.append((*_written_between(damaged), compaction))
        (report.undone if compaction else report.lost).extend(_salvage(damaged))
        report.salvaged.append(damaged)
    try:
        delta = open_table(location, name)
        if delta is None:
            return None
        if windows:
            _add_orphans(report, delta, windows)
        if any(entry.checkpoint for entry in report.salvaged):
            delta.create_checkpoint()  # delta-rs' own, in place of the damaged one
        gone = missing_files(delta)
        if gone:
            _back_up(location, report, stamp)
            delta.repair(dry_run=False)
            report.dropped = gone
    except (DeltaError, OSError) as exc:
        report.error = one_line(exc)
    return report


def _drop_checkpoint(damaged: DamagedEntry) -> str | None:
    """Take a damaged checkpoint (and the `_last_checkpoint` hint) out of the log, so that delta-rs replays
    the commits instead, when they are all still there (None); why not otherwise."""
    log_dir = damaged.path.parent
    earlier = [v for v in checkpoint_files(log_dir) if v < damaged.version]
    needed = set(range(max(earlier, default=-1) + 1, damaged.version + 1))
    if not needed <= {version for version, _ in commit_files(log_dir)}:
        return f"{damaged.describe()}, and the commits it sums up were cleaned up: nothing to replay instead"
    damaged.path.unlink()
    (log_dir / LAST_CHECKPOINT).unlink(missing_ok=True)
    return None


def _back_up(location: StoreLocation, report: RepairReport, stamp: str) -> None:
    """A copy of the table's whole log, once per repair (local stores; see the module docstring)."""
    if report.backup is not None or location.local is None:
        return
    target = location.local / REPAIR_DIR / f"{report.table}-{stamp}" / DELTA_LOG
    shutil.copytree(location.local / report.table / DELTA_LOG, target, dirs_exist_ok=True)
    report.backup = target


def _salvage(damaged: DamagedEntry) -> list[MissingFile]:
    """Rewrite the entry with the actions it may keep; the add actions it could not keep."""
    lines, _, _ = entry_lines(damaged.path)
    intact = [(line, action) for line in lines if (action := _parse(line)) is not None]
    cut = [line for line in lines if _parse(line) is None]
    append = _blind_append([action for _, action in intact])
    kept = [line for line, action in intact if append or not ({"add", "remove"} & action.keys())]
    if damaged.version == 0:  # the table's protocol and metadata: delta-rs' own, for a table of this schema
        present = {key for _, action in intact for key in action}
        kept = [line for key, line in _header_lines(damaged.path.parent.parent.name) if key not in present] + kept
    left = [_from_add(damaged.path, action["add"]) for _, action in intact if "add" in action and not append]
    left += [_from_cut(damaged.path, match.group(1)) for line in cut if (match := ADD_PATH.search(line))]
    write_whole(damaged.path, "".join(f"{line}\n" for line in kept).encode("utf-8"))
    return left


def _operation(damaged: DamagedEntry) -> str | None:
    """The operation the damaged entry's commitInfo names, if that line is intact."""
    lines, _, _ = entry_lines(damaged.path)
    info = next((a["commitInfo"] for line in lines if (a := _parse(line)) and "commitInfo" in a), None)
    return str(info.get("operation")) if isinstance(info, dict) else None


def _written_between(damaged: DamagedEntry) -> tuple[float, float]:
    """When the damaged commit's data files were written: after the entry before it, before the one after it."""
    before = damaged.path.with_name(f"{damaged.version - 1:020d}.json")
    after = damaged.path.with_name(f"{damaged.version + 1:020d}.json")
    start = before.stat().st_mtime if before.exists() else 0.0
    return start, after.stat().st_mtime if after.exists() else float("inf")


def _add_orphans(report: RepairReport, delta: DeltaTable, windows: list[tuple[float, float, bool]]) -> None:
    """The data files no version of the repaired table names (delta-rs' full vacuum, dry run) that were written
    while a damaged commit was: the files of add actions cut off with no path left to read (`undone` for a
    compaction's, `lost` otherwise)."""
    root = Path(delta.table_uri.removeprefix("file://"))
    known = {m.path for m in [*report.lost, *report.undone]}
    unreferenced = delta.vacuum(retention_hours=0, dry_run=True, enforce_retention_duration=False, full=True)
    for path in sorted(set(unreferenced) - known):
        file = root / path
        if not (DELTA_FILE.fullmatch(file.name) and file.exists()):
            continue
        written = file.stat().st_mtime
        for start, end, compaction in windows:
            if start <= written <= end:
                (report.undone if compaction else report.lost).append(MissingFile(path, _footer_rows(root, path)))
                break


def _header_lines(table: str) -> list[tuple[str, str]]:
    """The `protocol` and `metaData` lines delta-rs writes for a new table of `table`'s schema (made in a
    temporary directory), for a first entry that lost its own: the table's schema is declared here, once."""
    with tempfile.TemporaryDirectory(prefix="ruscope-repair-") as scratch:
        DeltaTable.create(scratch, delta_schema(TABLES[table]), partition_by=[DATE])
        lines, _, _ = entry_lines(Path(scratch) / DELTA_LOG / f"{0:020d}.json")
    actions = [(line, _parse(line) or {}) for line in lines]
    return [(key, line) for line, action in actions for key in action if key in {"protocol", "metaData"}]


def _parse(line: str) -> dict[str, Any] | None:
    try:
        action = json.loads(line)
    except json.JSONDecodeError:
        return None
    return action if isinstance(action, dict) else None


def _blind_append(actions: list[dict[str, Any]]) -> bool:
    """True for a commit that only added files (what every collector's commit is), known from its commitInfo."""
    info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
    if not isinstance(info, dict) or any("remove" in a for a in actions):
        return False
    mode = str((info.get("operationParameters") or {}).get("mode", ""))
    return info.get("operation") == "WRITE" and mode.lower() == "append"


def _from_add(entry: Path, add: dict[str, Any]) -> MissingFile:
    try:
        rows = json.loads(add.get("stats") or "{}").get("numRecords")
    except (json.JSONDecodeError, AttributeError):
        rows = None
    return MissingFile(
        str(add.get("path")), rows if isinstance(rows, int) else _footer_rows(entry.parent.parent, str(add.get("path")))
    )


def _from_cut(entry: Path, path: str) -> MissingFile:
    path = json.loads(f'"{path}"')  # the JSON string's escapes
    return MissingFile(path, _footer_rows(entry.parent.parent, path))


def _footer_rows(table: Path, path: str) -> int | None:
    """The rows of the table's data file `path` from its Parquet footer, None if it cannot be read."""
    try:
        return int(pq.ParquetFile(table / path).metadata.num_rows)
    except (OSError, ValueError):
        return None
