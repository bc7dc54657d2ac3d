"""Durability for `--data-dir`: an append-only journal of mutations plus a compacted snapshot.

A write is acknowledged only after its entry is handed to the OS whole (and fsynced when asked), so
killing the process loses nothing acknowledged. An append that does not land whole (disk full, a
file-size limit) is truncated back to the last good offset and fails its request with 503
(`emulator.durability.datadir`), so a later append never continues a partial line.

Lines carry seq numbers and checksums (`emulator.durability.lines`). On start the snapshot and then the
journal are replayed, strictly: a torn LAST journal line (no newline, or unreadable at the very end) was
never acknowledged and is dropped (its bytes kept beside the journal as `journal.jsonl.torn-<time>`);
any other damage, in the journal or the snapshot, or an entry that cannot be applied (a delete of an
absent item, `{}`), raises `Damaged` naming the file, the line and the write affected, before anything
is written. `emulator.repair` salvages such a directory.

The snapshot's header records the last journal seq it folds in, so replay skips journal lines the
snapshot already holds. That makes every crash point of `compact()` safe: the snapshot is written to a
temp name, fsynced, renamed, the directory fsynced, and only then is the journal truncated; a crash
before the rename keeps the old snapshot and the whole journal, a crash after it skips what was folded
in. Seq numbers never go backwards: after a truncation they continue from the snapshot's.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from emulator.durability import datadir
from emulator.durability.lines import Damaged, Line, describe, encode, read
from wholefile import write_whole

SNAPSHOT = "snapshot.jsonl"
JOURNAL = "journal.jsonl"

log = logging.getLogger("ruscope.emulator")


class SnapshotReader:
    """The snapshot's entries, checked line by line; `folded` is known once the header is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folded = 0

    def entries(self) -> Iterator[Line]:
        lines = read(self.path)
        first = next(lines, None)
        if first is None:
            return
        if first.checked:
            yield from self._checked(first, lines)
        else:
            yield from self._legacy(first, lines)

    def _checked(self, header: Line, lines: Iterator[Line]) -> Iterator[Line]:
        if header.problem or header.seq != 0 or set(header.entry or {}) != {"snapshot"}:
            raise Damaged(self.path, 1, f"not a snapshot header ({header.problem or 'unexpected entry'})")
        self.folded = (header.entry or {})["snapshot"]
        count = 0
        for line in lines:
            if line.problem or not line.checked or line.seq != line.number - 1 or not line.terminated:
                what = line.problem or ("a line without a checksum" if not line.checked else "cut or out of order")
                raise Damaged(self.path, line.number, f"{what}; the snapshot's entries from here on are affected")
            entry = line.entry or {}
            if set(entry) == {"end"}:
                if entry["end"] != count or next(lines, None) is not None:
                    raise Damaged(self.path, line.number, "the trailer does not end the snapshot")
                return
            count += 1
            yield line
        raise Damaged(self.path, count + 2, f"the snapshot was cut after {count} entries (no trailer)")

    def _legacy(self, first: Line, lines: Iterator[Line]) -> Iterator[Line]:
        """A snapshot written before checksums: an optional `{"seq": n}` header, then bare entries."""
        if first.entry == {} and first.seq is not None:
            self.folded = first.seq
        else:
            lines = _chain(first, lines)
        for line in lines:
            if line.problem or line.checked or line.seq is not None:
                raise Damaged(self.path, line.number, f"{line.problem or 'a mixed line'} in the snapshot")
            yield line


def _chain(first: Line, rest: Iterator[Line]) -> Iterator[Line]:
    yield first
    yield from rest


class JournalScan:
    """The journal's lines in seq order, checked; a torn last line is set aside in `torn`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last_seq: int | None = None
        self.good_end = 0
        self.torn: Line | None = None

    def lines(self) -> Iterator[Line]:
        it = read(self.path)
        line, checked_seen = next(it, None), False
        while line is not None:
            following = next(it, None)
            problem = self._problem(line, checked_seen)
            if problem is not None:
                if following is None and (line.problem or not line.terminated):
                    self.torn = line  # never acknowledged: an append writes its newline last
                    return
                gap = problem.startswith("seq ")  # the message already names the seq numbers lost
                raise Damaged(self.path, line.number, problem if gap else f"{problem}; {self._affected(line)}")
            checked_seen = checked_seen or line.checked
            seq = line.number if line.seq is None else line.seq
            self.last_seq, self.good_end = seq, line.end
            yield line if line.seq is not None else Line(line.number, line.start, line.end, seq, line.entry)
            line = following

    def _affected(self, line: Line) -> str:
        expected = "?" if self.last_seq is None else self.last_seq + 1
        as_read = f" (it reads as the {describe(line.entry)})" if line.entry else ""
        return f"the write journaled as seq {expected} is affected{as_read}"

    def _problem(self, line: Line, checked_seen: bool) -> str | None:
        if line.problem:
            return line.problem
        if not line.terminated:
            return "the line was cut (no newline)"
        if checked_seen and not line.checked:
            return "a line without a checksum after checksummed ones"
        if not isinstance((line.entry or {}).get("op"), str):
            return f"not a journal entry: {line.entry}"
        seq = line.number if line.seq is None else line.seq
        if self.last_seq is not None and seq != self.last_seq + 1:
            if seq > self.last_seq + 1:
                return f"seq {seq} follows seq {self.last_seq}: the writes with seq {self.last_seq + 1}..{seq - 1} are missing"
            return f"seq {seq} follows seq {self.last_seq} (out of order)"
        return None


def apply_line(path: Path, line: Line, apply: Callable[[dict[str, Any]], Any]) -> None:
    """Apply one entry, or raise `Damaged` saying which write could not be applied and why."""
    try:
        apply(line.entry or {})
    except Exception as exc:  # any entry the state rejects: KeyError, TypeError, a CosmosError
        why = "its target does not exist" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise Damaged(path, line.number, f"cannot apply the {describe(line.entry)} ({why})") from exc


def check_start(path: Path, line: Line, folded: int) -> None:
    """The journal's first line continues the snapshot (a crash may leave lines it already folds in)."""
    assert line.seq is not None
    if line.seq > folded + 1:
        what = f"seq {line.seq} follows the snapshot's seq {folded}: seq {folded + 1}..{line.seq - 1} are missing"
        raise Damaged(path, line.number, what)


def replay_dir(data_dir: Path, apply: Callable[[dict[str, Any]], Any]) -> tuple[int, int, int]:
    """Replay a data directory strictly, writing nothing: (entries applied, last seq, end of the
    journal's last intact line)."""
    snapshot, count = SnapshotReader(data_dir / SNAPSHOT), 0
    for line in snapshot.entries():
        apply_line(snapshot.path, line, apply)
        count += 1
    scan = JournalScan(data_dir / JOURNAL)
    for line in scan.lines():
        if line.number == 1:
            check_start(scan.path, line, snapshot.folded)
        if (line.seq or 0) > snapshot.folded:
            apply_line(scan.path, line, apply)
            count += 1
    return count, max(snapshot.folded, scan.last_seq or 0), scan.good_end


class Journal:
    """Appends whole lines or none: a failed append is truncated away and fails its request (503)."""

    def __init__(self, data_dir: str | Path, *, fsync: bool = False) -> None:
        self.dir = Path(data_dir)
        datadir.make_dir(self.dir)
        self.fsync = fsync
        self.path = self.dir / JOURNAL
        self._fd = datadir.open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        self._seq: int | None = None  # the last seq written; read from disk when first needed
        self._good_end = 0  # where the last intact line ends (a torn tail lies past it)
        self._end: int | None = None  # the offset appends continue from, once the torn tail is dropped
        self._cut_pending = False  # a failed append's partial line is still to be cut off

    def replay(self, apply: Callable[[dict[str, Any]], Any]) -> int:
        """Apply the snapshot, then the journal entries it does not already fold in (`Damaged` if any
        line is damaged or cannot be applied; nothing is written)."""
        count, self._seq, self._good_end = replay_dir(self.dir, apply)
        return count

    def _ready(self) -> int:
        """The last seq written, the journal's torn tail dropped first (read from disk if not replayed)."""
        if self._seq is None:
            scan = JournalScan(self.path)
            for _ in scan.lines():
                pass
            folded = SnapshotReader(self.dir / SNAPSHOT)
            next(folded.entries(), None)
            self._seq, self._good_end = max(folded.folded, scan.last_seq or 0), scan.good_end
        if self._end is None:
            self._drop_torn_tail()
            self._end = self._good_end
        return self._seq

    def _drop_torn_tail(self) -> None:
        """Cut what lies past the last intact line, keeping its bytes beside the journal."""
        size = os.fstat(self._fd).st_size
        if size <= self._good_end:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._good_end)
            tail = fh.read()
        aside = self.dir / f"{JOURNAL}.torn-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        try:
            fd = datadir.open_private(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            with open(fd, "wb") as fh:
                fh.write(tail)
        except OSError as exc:
            log.warning("could not keep the torn journal tail in %s: %s", aside, exc)
        log.warning("dropped a torn last journal line (%d bytes, never acknowledged), kept in %s", len(tail), aside)
        os.ftruncate(self._fd, self._good_end)

    def append(self, entry: dict[str, Any]) -> None:
        """Journal `entry` whole, or raise `JournalFull` with the journal as it was before."""
        seq = self._ready() + 1
        line = encode(seq, entry)
        try:
            if self._cut_pending:
                os.ftruncate(self._fd, self._end or 0)  # an earlier roll-back failed
                self._cut_pending = False
            datadir.write_all(self._fd, line)
            if self.fsync:
                os.fsync(self._fd)
        except OSError as exc:
            self._roll_back()
            raise datadir.JournalFull(self.path, exc) from exc
        self._seq, self._end = seq, (self._end or 0) + len(line)

    def _roll_back(self) -> None:
        """Cut a partial line off (shrinking a file needs no space); retried before the next append if not."""
        try:
            os.ftruncate(self._fd, self._end or 0)
        except OSError:
            self._cut_pending = True

    def compact(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write the whole state as a new snapshot, then empty the journal (safe to crash at any point)."""
        folded = self._ready()  # everything appended so far: the state passed in holds it
        try:  # the new snapshot is durable (renamed, the directory fsynced) before the journal it replaces goes
            write_snapshot(self.dir / SNAPSHOT, folded, entries)
        except OSError as exc:
            raise datadir.SaveFailed(self.dir / SNAPSHOT, exc, f"{self.path} still holds every write") from exc
        os.ftruncate(self._fd, 0)
        self._end = self._good_end = 0

    def size(self) -> int:
        """The journal's bytes on disk."""
        return os.fstat(self._fd).st_size if self._fd >= 0 else 0

    def snapshot_size(self) -> int:
        """The snapshot's bytes on disk (0 when there is none)."""
        try:
            return (self.dir / SNAPSHOT).stat().st_size
        except FileNotFoundError:
            return 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def write_snapshot(path: Path, folded: int, entries: Iterable[dict[str, Any]]) -> None:
    """Replace the snapshot at `path` with a header, every entry and the trailer, checksummed: whole, 0600,
    fsynced and its rename fsynced too (or an OSError, the snapshot before left as it was)."""

    def write(out: BinaryIO) -> None:
        out.write(encode(0, {"snapshot": folded}))
        count = 0
        for count, entry in enumerate(entries, 1):
            out.write(encode(count, entry))
        out.write(encode(count + 1, {"end": count}))

    write_whole(path, write, private=True, fsync=True, fsync_dir=True)
