"""Repairing a damaged `--data-dir`: back up, salvage every intact line, report exactly what was lost.

`repair(data_dir)` first replays the directory strictly in memory; if that works there is nothing to
repair and nothing is touched. Otherwise the damaged files are copied into `damaged-<UTC time>/` inside
the data directory (0700; the copies keep their bytes for a later look), every intact snapshot and
journal line is applied (`emulator.durability.salvage`), and the state that results is written back as a fresh
checksummed snapshot with an empty journal, the same way compaction writes it (temp file, fsync,
rename, directory fsync). A metrics history that cannot be read is moved into the backup (it holds
per-minute metrics, not items). The repaired directory is then replayed strictly once more.

`python -m emulator.repair DIR` (and `ruscope emulator --data-dir DIR --repair`) prints the report;
exit 0 when nothing was lost, 1 when the repair lost something (listed, or noted where it cannot be
told exactly, e.g. a snapshot cut at a line boundary), 2 when DIR is not a data directory.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cosmoscore.limits import Limits
from emulator.durability import datadir
from emulator.durability.journal import JOURNAL, SNAPSHOT, replay_dir, write_snapshot
from emulator.durability.lines import Damaged
from emulator.durability.salvage import Lost, Salvage, salvage_journal, salvage_snapshot
from emulator.engine.state import State
from emulator.history import on_disk
from wholefile import fsync_directory

HISTORY = "history.jsonl.gz"  # emulator.rest.server.HISTORY_FILE (the server imports the engine; not here)


@dataclass
class RepairReport:
    """What `repair` found and did."""

    data_dir: Path
    damage: str | None = None  # the first damage the strict replay met (None: the directory was intact)
    backup: Path | None = None  # where the damaged files were copied
    kept: int = 0  # entries the repaired snapshot holds
    lost: list[Lost] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        return self.backup is not None

    def __str__(self) -> str:
        if not self.repaired:
            return f"{self.data_dir}: intact, nothing to repair (nothing was changed)"
        lines = [
            f"{self.data_dir}: repaired; {self.kept} entries kept, {len(self.lost)} lost",
            f"  found: {self.damage}",
            f"  the damaged files are backed up in {self.backup}",
        ]
        lines += [f"  lost: {lost}" for lost in self.lost]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _strict_replay(data_dir: Path, limits: Limits) -> None:
    """Replay everything in memory exactly as a start would (raises `Damaged`); writes nothing."""
    replay_dir(data_dir, State(limits, time.time, None).apply)
    list(on_disk.read_lines(data_dir / HISTORY))


def repair(
    data_dir: str | Path, *, limits: Limits | None = None, clock: Callable[[], float] = time.time
) -> RepairReport:
    """Repair `data_dir` (see the module docstring); a `RepairReport` either way."""
    data_dir = Path(data_dir)
    if not (data_dir / SNAPSHOT).exists() and not (data_dir / JOURNAL).exists():
        raise FileNotFoundError(f"{data_dir}: no {SNAPSHOT} or {JOURNAL}: not an emulator data directory")
    limits = limits or Limits()
    report = RepairReport(data_dir)
    try:
        _strict_replay(data_dir, limits)
        return report
    except Damaged as exc:
        report.damage = str(exc).split(". The emulator did not start")[0]
    report.backup = _back_up(data_dir, clock)
    state = State(limits, clock, None)
    salvage = Salvage()
    folded = salvage_snapshot(data_dir / SNAPSHOT, state.apply, salvage)
    salvage_journal(data_dir / JOURNAL, folded, state.apply, salvage)
    report.kept = _write_back(data_dir, state, max(salvage.last_seq, folded or 0))
    report.lost, report.notes = salvage.lost, salvage.notes
    if _history_damaged(data_dir):
        (data_dir / HISTORY).unlink()
        report.notes.append(f"{HISTORY} could not be read: the metrics history starts afresh (a copy is in the backup)")
    _strict_replay(data_dir, limits)  # the repaired directory starts
    return report


def _back_up(data_dir: Path, clock: Callable[[], float]) -> Path:
    """Copy the data files into a new private `damaged-<time>` folder in the data directory."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(clock()))
    backup = data_dir / f"damaged-{stamp}"
    n = 1
    while backup.exists():
        n += 1
        backup = data_dir / f"damaged-{stamp}-{n}"
    backup.mkdir(mode=datadir.DIR_MODE)
    os.chmod(backup, datadir.DIR_MODE)
    for name in (SNAPSHOT, JOURNAL, HISTORY):
        if (data_dir / name).exists():
            shutil.copyfile(data_dir / name, backup / name)
            os.chmod(backup / name, datadir.FILE_MODE)
    fsync_directory(backup)
    return backup


def _write_back(data_dir: Path, state: State, folded: int) -> int:
    """The salvaged state as the snapshot (compaction's way), then an empty journal; the entries written."""
    entries = list(state.snapshot_entries())
    write_snapshot(data_dir / SNAPSHOT, folded, entries)
    fd = datadir.open_private(data_dir / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)
    return len(entries)


def _history_damaged(data_dir: Path) -> bool:
    try:
        list(on_disk.read_lines(data_dir / HISTORY))
    except Damaged:
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    """`python -m emulator.repair DIR`: repair and print the report (exit 0 nothing lost, 1 losses, 2 usage)."""
    parser = argparse.ArgumentParser(prog="python -m emulator.repair", description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="the emulator's --data-dir")
    args = parser.parse_args(argv)
    try:
        report = repair(args.data_dir)
    except (FileNotFoundError, NotADirectoryError) as exc:
        print(f"ruscope: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 1 if report.lost or report.notes else 0


if __name__ == "__main__":
    sys.exit(main())
