"""Rows a run has captured but not yet committed: an append-only, locked segment per store part.

Every captured record is appended, as one JSON line, to `PENDING/<run_id>-<part>/<table>.jsonl` as soon as
it exists, so a kill -9 loses nothing captured (a torn last line is the one write that never finished).
PENDING is `STORE/_pending` for a local store, a local state directory for a remote one (`location`: a lock
needs a local disk). `Segment.seal()` reads the segment with Arrow's JSON reader against the table's declared
schema (no Python objects, no pandas: the CLI stays quick), commits each table's rows to its Delta table with
the app transaction `ruscope-<run_id>-<part>`, then deletes the segment. A crash between the two steps
leaves a segment whose rows are already in: its recovery finds the app transaction committed and commits
nothing (see `delta.commit`), so every row is stored exactly once.

Locking: a segment holds an exclusive `fcntl.flock` on `STORE/_pending/<run_id>-<part>.lock` from its
first row until it is sealed or closed; the lock is taken before the segment's directory exists and the
lock file is removed only after the directory is. `recover()` (at the start of every run) seals only the
segments whose lock it can take without waiting: those of killed runs (the kernel drops a dead process's
locks), never one that a concurrent run, in this process or another, is still writing.

Damaged lines: a line that does not parse against the table's schema, or holds another run's rows, is set
aside (the valid rows of the segment are still written) under `STORE/_pending/_damaged/<segment>-<table>.jsonl`
and reported once, in one line naming that file; the segment is then gone, so no later run warns again. A
file of a table this version does not declare (written by a newer ruscope, or misnamed) is set aside whole
the same way, never dropped.

A failed append (a full disk, a file size limit) leaves no torn line behind: the file is cut back to the end
of the last whole line, so what follows the failure (and a recovery) reads every line that was appended.
Tables are committed in the order they are declared, a table declared `last` (one whose rows say that the
segment's other rows are complete, such as the logs' collected windows) after all the others: a reader never
sees its rows before the rows they vouch for.
"""

from __future__ import annotations

import fcntl
import io
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO

import orjson
import pyarrow as pa
import pyarrow.json as pa_json
from deltalake.exceptions import DeltaError

from store.conform import TOKEN, arrow_of_run
from store.delta import app_id_of, commit, with_date
from store.layout import refuse_old_layout
from store.location import StoreLocation, create_private_dirs, require_location
from store.records import TABLES, Record
from wholefile import write_whole

log = logging.getLogger("ruscope.store")
_SEAL_ERRORS = (OSError, ValueError, pa.ArrowException, DeltaError)  # what committing a table file raises

DAMAGED = "_damaged"  # inside PENDING: lines no table could take, kept for a human to look at
_BAD_LINE = (ValueError, pa.ArrowException)
LOCK_SUFFIX = ".lock"
Warn = Callable[[str], None]
Tally = dict[str, int]  # table -> rows a recovery added to it


def _lock(path: Path) -> int | None:
    """An exclusive flock on `path` (created if need be) without waiting: its descriptor, or None if it is
    held, or if the file was unlinked or replaced before the lock was taken (a lock on a file no longer at
    `path` guards nothing)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino == os.stat(path).st_ino:
            return fd
    except (BlockingIOError, FileNotFoundError):
        pass
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


class Segment:
    """The open segment of one run: each row reaches the OS as it is appended, under the segment's lock."""

    def __init__(self, store: StoreLocation, run_id: str, part: str) -> None:
        self.location, self.run_id, self.part = require_location(store, "Segment"), run_id, part
        self.dir = self.location.pending_dir / f"{run_id}-{part}"
        self.lock_path = self.dir.with_name(self.dir.name + LOCK_SUFFIX)
        self.rows = 0
        self._files: dict[str, IO[bytes]] = {}
        self._lock: int | None = None

    def append(self, record: Record) -> None:
        """One record, as one JSON line of its table's file (orjson writes slotted dataclasses natively); the
        whole line, or (OSError) nothing of it."""
        handle = self._files.get(record.TABLE) or self._open(record.TABLE)
        line = memoryview(orjson.dumps(record) + b"\n")
        start = handle.tell()
        try:
            while line:  # a raw write may take part of the line (a full disk, a size limit): the rest follows
                line = line[handle.write(line) or 0 :]
        except OSError:
            handle.truncate(start)  # frees space, so it succeeds on a full disk: no torn line stays
            raise
        self.rows += 1

    def _open(self, table: str) -> IO[bytes]:
        if self._lock is None:  # the lock first: recover() must never see the directory unlocked
            create_private_dirs(self.location)  # the store's rows are its owner's: 0700
            for _ in range(3):  # a recovery may drop the new lock file as an orphan before it is locked
                if (fd := _lock(self.lock_path)) is not None:
                    break
            else:
                raise RuntimeError(f"cannot lock pending segment {self.dir.name}")
            self._lock = fd
            self.dir.mkdir(exist_ok=True)
        handle = self._files[table] = open(self.dir / f"{table}.jsonl", "ab", buffering=0)  # noqa: SIM115
        return handle

    def close(self) -> None:
        """Stop writing; whatever the segment holds is left for a later `recover()`."""
        for handle in self._files.values():
            handle.close()
        self._files.clear()
        self._unlock()

    def seal(self, *, warn: Warn = log.warning) -> None:
        """Commit the segment's rows to the store's tables, then drop the segment (still under its lock);
        damaged lines are set aside and reported with `warn`."""
        for handle in self._files.values():
            handle.close()
        self._files.clear()
        if self._lock is not None and self.dir.exists():
            _seal(self.dir, self.location, self.run_id, self.part, warn)
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is None:
            return
        if not self.dir.exists():  # sealed (or never written): the lock file has no segment left to guard
            self.lock_path.unlink(missing_ok=True)
        os.close(self._lock)
        self._lock = None


def _complete_lines(path: Path) -> bytes:
    """The file up to its last newline: a torn last line (a write a kill interrupted) is left out."""
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def _parse(lines: bytes, table: str) -> pa.Table:
    schema = TABLES[table].schema
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    return pa_json.read_json(io.BytesIO(lines), parse_options=options)


def _of_run(data: pa.Table, run_id: str) -> pa.Table:
    """`data` if every run id in it is `run_id` (or null), else ValueError. (Arrow -> Python only: turning
    a Python value into Arrow makes pyarrow import pandas.)"""
    if set(data["run_id"].unique().to_pylist()) - {run_id, None}:
        raise ValueError(f"rows of another run than {run_id!r}")
    return data


def _salvage(lines: bytes, table: str, run_id: str) -> tuple[pa.Table | None, list[bytes]]:
    """The rows that parse, and the damaged lines. All at once first (the usual case); line by line only
    when that fails, so one bad line costs its own row, not the segment's."""
    try:
        return _of_run(_parse(lines, table), run_id), []
    except _BAD_LINE:
        pass
    good: list[bytes] = []
    bad: list[bytes] = []
    for line in lines.splitlines(keepends=True):
        if not line.strip():
            continue
        try:
            _of_run(_parse(line, table), run_id)
            good.append(line)
        except _BAD_LINE:
            bad.append(line)
    return (_parse(b"".join(good), table) if good else None), bad


def _set_aside(pending_dir: Path, segment: str, table: str, lines: list[bytes]) -> Path:
    """Damaged lines to `_pending/_damaged/<segment>-<table>.jsonl` (replaced whole: a repeat is identical)."""
    path = pending_dir / DAMAGED / f"{segment}-{table}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    whole = (line if line.endswith(b"\n") else line + b"\n" for line in lines)
    write_whole(path, lambda out: out.writelines(whole), fsync=True)
    return path


def _in_commit_order(segment_dir: Path) -> list[Path]:
    """The segment's table files: declared tables in their order (`last` ones after the rest), then others."""
    order = [name for name, spec in TABLES.items() if not spec.last] + [n for n, t in TABLES.items() if t.last]
    rank = {name: i for i, name in enumerate(order)}
    return sorted(segment_dir.glob("*.jsonl"), key=lambda path: (rank.get(path.stem, len(rank)), path.name))


def _seal(
    segment_dir: Path, location: StoreLocation, run_id: str, part: str, warn: Warn, tally: Tally | None = None
) -> None:
    """Commit each table file of the segment, then remove it; `tally` gets each table's rows added.

    A table that cannot be committed (its log damaged, the disk full) does not hold back the others: they are
    committed and their files removed, its file stays in the segment for a later run (commits are exactly
    once per table, by the run's app transaction), and its error is raised after the others. A `last` table
    vouches for the segment's other rows, so it waits while any of them failed."""
    refuse_old_layout(location)
    failed: Exception | None = None
    for path in _in_commit_order(segment_dir):
        spec = TABLES.get(path.stem)
        if failed is not None and spec is not None and spec.last:
            continue
        try:
            _seal_table(path, segment_dir, location, run_id, part, warn, tally)
        except _SEAL_ERRORS as exc:
            failed = failed or _not_committed(location, path.stem, segment_dir, exc)
            continue
        path.unlink(missing_ok=True)
    if failed is not None:
        raise failed
    shutil.rmtree(segment_dir, ignore_errors=True)


class TableNotCommitted(OSError):
    """A table of a pending segment that could not be committed; its rows wait in the segment. The message
    names the table, the damage (or the error) and the repair command."""


def _not_committed(location: StoreLocation, table: str, segment_dir: Path, exc: Exception) -> TableNotCommitted:
    from store.check import failure_cause, one_line  # lazy: check reads tables as pending writes them

    cause = failure_cause(location, table, exc) if table in TABLES else one_line(exc)
    return TableNotCommitted(f"table {table!r} not committed: {cause}; its rows wait in {segment_dir}")


def _seal_table(
    path: Path, segment_dir: Path, location: StoreLocation, run_id: str, part: str, warn: Warn, tally: Tally | None
) -> None:
    """Commit one table file of a segment (damaged lines and an unknown table set aside, said in one line)."""
    lines = _complete_lines(path)
    if not lines:
        return
    if path.stem not in TABLES:
        aside = _set_aside(segment_dir.parent, segment_dir.name, path.stem, lines.splitlines(keepends=True))
        warn(
            f"store: pending segment {segment_dir.name} holds rows of table {path.stem!r}, which this "
            f"version does not know; set aside in {aside}"
        )
        return
    data, damaged = _salvage(lines, path.stem, run_id)
    if damaged:
        aside = _set_aside(segment_dir.parent, segment_dir.name, path.stem, damaged)
        warn(f"store: set aside {len(damaged)} damaged line(s) of pending segment {segment_dir.name} in {aside}")
    if data is not None and data.num_rows:
        spec = TABLES[path.stem]
        rows = with_date(spec, arrow_of_run(spec, data, run_id))
        added = commit(location, spec, rows, app_id=app_id_of(run_id, part))
        if tally is not None:
            tally[spec.name] = tally.get(spec.name, 0) + added


def recover(store: StoreLocation, *, warn: Warn = log.warning, tally: Tally | None = None) -> int:
    """Seal the segments that killed runs left behind (never a locked one: its run is alive); returns how
    many, and adds each table's rows added to `tally`. Damaged lines are set aside and reported once with
    `warn`; a segment that cannot be read at all (an I/O error) is reported and left in place for the next
    run. A store in the old layout raises StoreLayoutError before anything is done (every run starts here)."""
    location = require_location(store, "recover")
    refuse_old_layout(location)
    root = location.pending_dir
    if not root.is_dir():
        return 0
    sealed = 0
    for segment_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("_")):
        run_id, _, part = segment_dir.name.rpartition("-")
        if TOKEN.fullmatch(run_id or "") and TOKEN.fullmatch(part or ""):
            sealed += _recover_one(segment_dir, location, run_id, part, warn, tally)
    _drop_orphan_locks(root)
    return sealed


def _recover_one(
    segment_dir: Path, location: StoreLocation, run_id: str, part: str, warn: Warn, tally: Tally | None
) -> int:
    """1 if this segment was sealed; 0 if a live run holds it, another recovery sealed it first, or it failed."""
    lock_path = segment_dir.with_name(segment_dir.name + LOCK_SUFFIX)
    fd = _lock(lock_path)
    if fd is None:
        return 0
    try:
        if not segment_dir.is_dir():  # sealed meanwhile by its run or by another recovery
            lock_path.unlink(missing_ok=True)
            return 0
        try:
            _seal(segment_dir, location, run_id, part, warn, tally)
        except _SEAL_ERRORS as exc:  # an unreadable segment must not stop today's run
            warn(f"could not recover {segment_dir}: {exc}")
            return 0
        lock_path.unlink(missing_ok=True)
        return 1
    finally:
        os.close(fd)


def _drop_orphan_locks(root: Path) -> None:
    """Lock files whose segment is gone (a run killed between its last two steps), unless one is held."""
    for lock_path in root.glob(f"*{LOCK_SUFFIX}"):
        if not lock_path.with_suffix("").is_dir() and (fd := _lock(lock_path)) is not None:
            try:
                if not lock_path.with_suffix("").is_dir():
                    lock_path.unlink(missing_ok=True)
            finally:
                os.close(fd)
