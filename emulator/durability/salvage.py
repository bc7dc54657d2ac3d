"""Reading a damaged data directory leniently: every intact line applied, every lost write listed.

The strict readers in `emulator.durability.journal` refuse to start on damage; `emulator.repair` uses these
instead, which keep going and record what they could not use as `Lost` (the file, the line, what was
wrong, and the write it held: its description when the line still reads, else the seq numbers missing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emulator.durability.lines import Line, describe, read

Apply = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Lost:
    """One thing a repair could not keep."""

    file: str
    line: int
    problem: str
    write: str  # what it was, as far as it can be told

    def __str__(self) -> str:
        return f"{self.file} line {self.line}: {self.problem}; {self.write}"


@dataclass
class Salvage:
    """What a lenient replay kept and lost."""

    kept: int = 0
    last_seq: int = 0
    lost: list[Lost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def apply(self, path: Path, line: Line, apply: Apply) -> None:
        try:
            apply(line.entry or {})
        except Exception as exc:  # the state rejects it: a delete of an absent item, an unknown op
            why = "its target does not exist" if isinstance(exc, KeyError) else f"{type(exc).__name__}"
            self.lost.append(Lost(path.name, line.number, f"cannot be applied ({why})", describe(line.entry)))
        else:
            self.kept += 1

    def damaged(self, path: Path, line: Line, problem: str, seqs: str) -> None:
        as_read = f"it reads as the {describe(line.entry)}" if line.entry else "unreadable"
        self.lost.append(Lost(path.name, line.number, problem, f"{as_read} ({seqs})"))


def salvage_snapshot(path: Path, apply: Apply, out: Salvage) -> int | None:
    """Apply every intact snapshot entry; the seq its header folds in (None: the header is lost)."""
    folded: int | None = None
    count, ended = 0, False
    for line in read(path):
        entry = line.entry or {}
        if line.number == 1 and not line.problem and (set(entry) == {"snapshot"} or entry == {}):
            folded = entry.get("snapshot", line.seq or 0)
            continue
        if line.number == 1 and not line.problem and line.seq is None:
            folded = 0  # a legacy snapshot without a header: its first line is an entry
        if line.problem or (line.checked and not line.terminated):
            out.damaged(path, line, line.problem or "the line was cut", "a snapshot entry")
        elif set(entry) == {"end"}:
            ended = True
        elif isinstance(entry.get("op"), str):
            out.apply(path, line, apply)
            count += 1
        else:
            out.damaged(path, line, f"not a snapshot entry: {entry}", "a snapshot entry")
    if line_checked(path) and not ended:
        out.notes.append(f"{path.name} has no trailer: it was cut after {count} entries; any after those are lost")
    return folded


def line_checked(path: Path) -> bool:
    """Whether the file is in the checksummed form (its first line carries a checksum)."""
    first = next(read(path), None)
    return bool(first and first.checked)


def salvage_journal(path: Path, folded: int | None, apply: Apply, out: Salvage) -> None:
    """Apply every intact journal line the snapshot does not fold in; damaged lines and seq gaps are lost."""
    lines = list(_numbered(read(path)))
    if folded is None:  # the header is lost: the journal starts just after what the snapshot held
        first = next((line.seq for line in lines if not line.problem), None)
        folded = (first - 1) if first is not None else 0
        out.notes.append(f"the snapshot's header is lost: journal lines after seq {folded} are applied")
    last, pending = folded, []
    for line in lines:
        if line.problem or not line.terminated or not isinstance((line.entry or {}).get("op"), str):
            pending.append(line)
            continue
        seq = line.seq or 0
        if pending or seq > last + 1:
            _close_gap(path, out, pending, last, seq, line)
        pending = []
        if seq > folded:
            out.apply(path, line, apply)
        last = max(last, seq)
    if pending:
        _close_gap(path, out, pending, last, None, None)
    out.last_seq = max(out.last_seq, last)


def _close_gap(path: Path, out: Salvage, pending: list[Line], last: int, seq: int | None, line: Line | None) -> None:
    """Record the damaged lines before an intact one (or the end), with the seq numbers they covered."""
    if seq is None:
        span = f"seq {last + 1} or later"
    elif seq > last + 1:
        span = f"seq {last + 1}" if seq == last + 2 else f"seq {last + 1}..{seq - 1}"
    else:
        span = "no seq missing"
    for bad in pending:
        problem = bad.problem or ("the line was cut (no newline)" if not bad.terminated else "not a journal entry")
        if bad is pending[-1] and seq is None:
            problem += " (the torn last line: never acknowledged)"
        out.damaged(path, bad, problem, span)
    if not pending and line is not None and seq is not None and seq > last + 1:
        out.lost.append(Lost(path.name, line.number, "whole lines were removed before this line", span))


def _numbered(lines: Iterator[Line]) -> Iterator[Line]:
    """Legacy bare entries get their line number as seq (as the strict reader gives them)."""
    for line in lines:
        if line.seq is None and not line.problem:
            yield Line(line.number, line.start, line.end, line.number, line.entry, None, False, line.terminated)
        else:
            yield line
