"""Durability for `--data-dir`: an append-only journal of mutations plus a compacted snapshot.

A write is acknowledged only after its entry is handed to the OS (and fsynced when asked), so killing
the process loses nothing acknowledged. On start the snapshot and then the journal are replayed.

Every journal line carries a sequence number (`{"seq": n, "entry": {...}}`) and the snapshot's first
line records the last one it folds in (`{"seq": n}`), so replay skips journal lines the snapshot
already holds. That makes every crash point of `compact()` safe: the snapshot is written to a temp
name, fsynced, renamed, the directory fsynced, and only then is the journal truncated; a crash before
the rename keeps the old snapshot and the whole journal, a crash after it skips what was folded in
(re-applying a journaled delete would fail). Seq numbers never go backwards: after a truncation they
continue from the snapshot's.

Data directories written before seq numbers still replay: a snapshot without a header folds in
nothing, and a bare journal entry's seq is its line number (so a crash during the first compaction
after an upgrade skips them too).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from emulator import datadir

SNAPSHOT = "snapshot.jsonl"
JOURNAL = "journal.jsonl"


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _objects(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded line) of a JSONL file; undecodable lines (a torn tail) are skipped."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                yield number, orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # only the unacknowledged tail can be torn


def _journal_entry(number: int, obj: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(seq, entry) of a journal line; a bare entry (the format before seq numbers) counts its line number."""
    return (number, obj) if "op" in obj else (obj["seq"], obj["entry"])


def _snapshot(path: Path) -> tuple[int, Iterator[dict[str, Any]]]:
    """The last seq the snapshot folds in (0 without a header) and its entries."""
    lines = (obj for _, obj in _objects(path))
    first = next(lines, None)
    if first is None:
        return 0, iter(())
    return (0, chain([first], lines)) if "op" in first else (first["seq"], lines)


def _last_seq(data_dir: Path) -> int:
    """The highest seq the directory holds, so new entries continue after it."""
    last, _ = _snapshot(data_dir / SNAPSHOT)
    for number, obj in _objects(data_dir / JOURNAL):
        last = max(last, _journal_entry(number, obj)[0])
    return last


def _end_torn_tail(path: Path) -> None:
    """Terminate a torn last line, so the next append starts a line of its own (the torn one stays skipped)."""
    with open(path, "rb+") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) != b"\n":
            fh.write(b"\n")


class Journal:
    """Appends whole lines or none: a failed append is truncated away and fails its request (503)."""

    def __init__(self, data_dir: str | Path, *, fsync: bool = False) -> None:
        self.dir = Path(data_dir)
        datadir.make_dir(self.dir)
        self.fsync = fsync
        self.path = self.dir / JOURNAL
        self._fd = datadir.open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        _end_torn_tail(self.path)
        self._end = os.fstat(self._fd).st_size  # the last good offset: a failed append is cut back to it
        self._seq: int | None = None  # the last seq written; read from disk when first needed

    def _last(self) -> int:
        if self._seq is None:
            self._seq = _last_seq(self.dir)
        return self._seq

    def append(self, entry: dict[str, Any]) -> None:
        """Journal `entry` whole, or raise the service's 503 with the journal as it was before."""
        seq = self._last() + 1
        line = _line({"seq": seq, "entry": entry})
        try:
            if os.fstat(self._fd).st_size != self._end:
                os.ftruncate(self._fd, self._end)  # an earlier roll-back that failed
            datadir.write_all(self._fd, line)
            if self.fsync:
                os.fsync(self._fd)
        except OSError as exc:
            self._roll_back()
            raise datadir.storage_failed(self.path, exc) from exc
        self._seq, self._end = seq, self._end + len(line)

    def _roll_back(self) -> None:
        """Cut a partial line off (shrinking a file needs no space); retried before the next append if not."""
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._end)

    def replay(self, apply: Callable[[dict[str, Any]], None]) -> int:
        """Apply the snapshot, then the journal entries it does not already fold in."""
        folded, entries = _snapshot(self.dir / SNAPSHOT)
        count, last = 0, folded
        for entry in entries:
            apply(entry)
            count += 1
        for number, obj in _objects(self.dir / JOURNAL):
            seq, entry = _journal_entry(number, obj)
            if seq > folded:
                apply(entry)
                count += 1
            last = max(last, seq)
        self._seq = last
        return count

    def compact(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write the whole state as a new snapshot, then empty the journal (safe to crash at any point)."""
        folded = self._last()  # everything appended so far: the state passed in holds it
        tmp = self.dir / (SNAPSHOT + ".tmp")
        try:
            _write_snapshot(tmp, folded, entries)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise datadir.SaveFailed(self.dir / SNAPSHOT, exc, f"{self.path} still holds every write") from exc
        os.replace(tmp, self.dir / SNAPSHOT)
        datadir.fsync_dir(self.dir)  # the new snapshot is durable before the journal it replaces goes
        os.ftruncate(self._fd, 0)
        self._end = 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _write_snapshot(path: Path, folded: int, entries: Iterable[dict[str, Any]]) -> None:
    """The header and every entry, written whole and fsynced (or an OSError)."""
    fd = datadir.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        with open(fd, "wb", closefd=False) as fh:
            fh.write(_line({"seq": folded}))
            for entry in entries:
                fh.write(_line(entry))
        os.fsync(fd)
    finally:
        os.close(fd)
