"""Finding the damage in a store table: data files its log names that are gone, and log entries that do not parse.

Two kinds of damage leave the rest of a table readable, and each is found where it is cheapest to look:
- **A missing data file** (deleted by hand, lost with a disk): delta-rs' own file system check
  (`DeltaTable.repair(dry_run=True)`, FSCK) lists the files the snapshot names that storage no longer has; the
  add action of each says how many rows it held (`numRecords` in its stats, `num_records` in `get_add_actions`).
- **A damaged log entry** (a commit file cut short, or overwritten): delta-rs only says "Truncated record" or
  "expected value" with no file name, so the entries it replays (those after the last checkpoint) are parsed
  here line by line, and the first line that is not JSON names the entry; a newest checkpoint whose Parquet
  footer does not read is named the same way (delta-rs says only "Corrupt footer"). Only a local store's log is
  listed so; on object storage the table is named, and the log entry is not. That is where the damage happens:
  a kill -9 or a full disk cuts a local file short, while a blob upload is stored whole or not at all (Blob
  Storage commits a blob's content atomically, and delta-rs writes each commit with one put-if-absent), so a cut
  entry in Blob Storage or ADLS means someone overwrote it; restore it from the container's soft delete or
  versioning.

`check(store)` reports every table (`TableCheck.lines()` is what `ruscope store check` prints); the reader
calls `missing_files` and `damaged_entry` when a read fails, and `repair` drops what these find.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError

from store.delta import open_table
from store.layout import DELTA_LOG
from store.location import StoreLocation, require_location
from store.records import TABLES

COMMIT = re.compile(r"(\d{20})\.json")
CHECKPOINT_FILE = re.compile(r"(\d{20})\.checkpoint(\.\d+\.\d+)?\.parquet")
LAST_CHECKPOINT = "_last_checkpoint"
ADD_PATH = re.compile(r'"add":\{"path":"((?:[^"\\]|\\.)*)"')  # an add action's path, even in a cut line


@dataclass(frozen=True)
class MissingFile:
    """A data file the table's log names and storage does not have, and the rows it held (None if unknown)."""

    path: str  # relative to the table, as the log names it
    rows: int | None


@dataclass(frozen=True)
class DamagedEntry:
    """A log entry delta-rs cannot replay: its version, its file, and the first line that does not parse."""

    version: int
    path: Path
    line: int  # 1-based
    lines: int
    reason: str

    @property
    def checkpoint(self) -> bool:
        return self.path.suffix == ".parquet"

    def describe(self) -> str:
        if self.checkpoint:
            return f"log checkpoint {self.path} (version {self.version}) is damaged: {self.reason}"
        return f"log entry {self.path} (version {self.version}) is damaged at line {self.line} of {self.lines}: {self.reason}"


@dataclass
class TableCheck:
    """One table's damage: missing files, a damaged log entry, or an error that names neither."""

    table: str
    missing: list[MissingFile] = field(default_factory=list)
    damaged: DamagedEntry | None = None
    error: str | None = None

    @property
    def clean(self) -> bool:
        return not self.missing and self.damaged is None and self.error is None

    def lines(self, location: StoreLocation) -> list[str]:
        """One line per damage, each naming the table and the file; one 'clean' line otherwise."""
        if self.clean:
            return [f"{self.table}: clean"]
        out = [f"{self.table}: {missing_text(location, self.table, m)}" for m in self.missing]
        if self.damaged is not None:
            out.append(f"{self.table}: {self.damaged.describe()}")
        if self.error is not None:
            out.append(f"{self.table}: cannot be read: {self.error}")
        return out


def missing_text(location: StoreLocation, table: str, missing: MissingFile) -> str:
    rows = "an unknown number of rows" if missing.rows is None else f"{missing.rows:,} row(s)"
    return f"data file {location.table_uri(table)}/{missing.path} is missing ({rows})"


def check(store: StoreLocation) -> list[TableCheck]:
    """The damage of every table the store has (a table never committed to is left out)."""
    location = require_location(store, "check")
    return [c for c in (check_table(location, name) for name in TABLES) if c is not None]


def check_table(location: StoreLocation, table: str) -> TableCheck | None:
    """`table`'s damage, or None when the table does not exist."""
    try:
        delta = open_table(location, table)
    except (DeltaError, OSError) as exc:
        damaged = damaged_entry(location, table)
        return TableCheck(table, damaged=damaged, error=None if damaged else one_line(exc))
    if delta is None:
        return None
    try:
        return TableCheck(table, missing=missing_files(delta))
    except (DeltaError, OSError) as exc:
        return TableCheck(table, error=one_line(exc))


def missing_files(delta: DeltaTable) -> list[MissingFile]:
    """The files `delta`'s snapshot names that storage does not have (delta-rs' FSCK, not committed)."""
    gone = delta.repair(dry_run=True).get("files_removed", [])
    if not gone:
        return []
    actions = delta.get_add_actions(flatten=True)
    counts = dict(zip(actions.column("path").to_pylist(), actions.column("num_records").to_pylist(), strict=True))
    return [MissingFile(path, counts.get(path)) for path in sorted(gone)]


def damaged_entry(location: StoreLocation, table: str) -> DamagedEntry | None:
    """The first log entry after the last checkpoint that does not parse (local stores only), else None."""
    root = location.local
    if root is None:
        return None
    log_dir = root / table / DELTA_LOG
    after = last_checkpoint(log_dir)
    if after >= 0:
        checkpoint = checkpoint_files(log_dir)[after]
        reason = unreadable_parquet(checkpoint)
        if reason is not None:
            return DamagedEntry(after, checkpoint, 0, 0, reason)
    for version, path in commit_files(log_dir):
        if version > after:
            damage = _parse_failure(version, path)
            if damage is not None:
                return damage
    return None


def commit_files(log_dir: Path) -> list[tuple[int, Path]]:
    """The log's commit entries (`<version>.json`) in version order."""
    found = [(int(m.group(1)), p) for p in log_dir.glob("*.json") if (m := COMMIT.fullmatch(p.name))]
    return sorted(found)


def checkpoint_files(log_dir: Path) -> dict[int, Path]:
    """The log's checkpoints (`<version>.checkpoint.parquet`) by version."""
    return {int(m.group(1)): p for p in log_dir.glob("*.parquet") if (m := CHECKPOINT_FILE.fullmatch(p.name))}


def last_checkpoint(log_dir: Path) -> int:
    """The version of the newest checkpoint file in the log (-1 if none): where delta-rs starts replaying."""
    return max(checkpoint_files(log_dir), default=-1)


def unreadable_parquet(path: Path) -> str | None:
    """Why a checkpoint's Parquet footer cannot be read, or None if it can."""
    try:
        pq.read_metadata(path)
    except (OSError, pa.ArrowException) as exc:
        return f"not a readable Parquet checkpoint ({one_line(exc)})"
    return None


def entry_lines(path: Path) -> tuple[list[str], int | None, str]:
    """The entry's lines, the index of the first one that does not parse (None if all do), and why."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw[: exc.start].decode("utf-8")
        lines = text.split("\n")
        return lines, len(lines) - 1, "not UTF-8 text"
    lines = text.split("\n")
    ends_line = not lines[-1]  # delta-rs ends none but the last line with a newline; others may end it too
    if ends_line:
        lines.pop()
    for index, line in enumerate(lines):
        try:
            json.loads(line)
        except json.JSONDecodeError as exc:
            cut = index == len(lines) - 1 and not ends_line
            return lines, index, "cut short" if cut else f"not JSON ({exc.msg})"
    return lines, None, ""


def _parse_failure(version: int, path: Path) -> DamagedEntry | None:
    lines, bad, reason = entry_lines(path)
    if bad is None:
        return None
    return DamagedEntry(version, path, bad + 1, len(lines), reason)


def one_line(exc: BaseException) -> str:
    """An error's text on one line, without the Rust backtrace delta-rs appends when RUST_BACKTRACE is set."""
    text = str(exc)
    text = BACKTRACE.split(text, maxsplit=1)[0]
    text = " ".join(text.split())
    return f"{type(exc).__name__}: {text[:300]}"


# a Rust backtrace: the first numbered frame line ("   0: <unknown>", "  12: start_thread") or its header
BACKTRACE = re.compile(r"\n\s*(?:Stack backtrace:|\d+: )")


def failure_cause(location: StoreLocation, table: str, exc: BaseException) -> str:
    """Why writing `table` failed, in words: its damage with the repair command when `check_table` finds any,
    else the error itself (a full disk, storage access), on one line."""
    found = check_table(location, table)
    if found is None or found.clean:
        return one_line(exc)
    damage = "; ".join(line.removeprefix(f"{table}: ") for line in found.lines(location))
    return f"{damage}; `{repair_hint(location)}` repairs it"


def repair_hint(location: StoreLocation) -> str:
    """The command that repairs the store at `location`."""
    return f"ruscope store repair --store {location}"
