"""Rows a collector has captured but not yet written as Parquet: an append-only segment per store part.

Every captured row is appended to `STORE/_pending/<run_id>-<part>/journal.jsonl` (the emulator's
`Journal`: one JSON line per entry, a torn last line skipped) as soon as it exists, so a kill -9 loses
nothing captured. `Segment.seal()` writes the segment's rows as the Parquet part `<run_id>-<part>` and
then deletes the segment; `recover()` seals what a killed run left behind. Parquet writes replace
files, so a crash between the two steps only repeats an identical write: nothing is ever duplicated.
"""

from __future__ import annotations

import logging
import shutil
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from collectors.schema import TABLES
from collectors.store import TOKEN, write_rows
from emulator.journal import Journal

log = logging.getLogger("ruscope.store")

PENDING = "_pending"


class Segment:
    """The open segment of one run: rows go to disk as they are appended."""

    def __init__(self, store: Path, run_id: str, part: str) -> None:
        self.store, self.run_id, self.part = Path(store), run_id, part
        self.dir = self.store / PENDING / f"{run_id}-{part}"
        self._journal = Journal(self.dir)
        self.rows = 0

    def append(self, table: str, row: dict[str, Any]) -> None:
        self._journal.append({"table": table, "row": row})
        self.rows += 1

    def discard(self) -> None:
        """Drop a segment with nothing in it."""
        self._journal.close()
        if self.rows == 0:
            shutil.rmtree(self.dir, ignore_errors=True)

    def seal(self) -> None:
        """Write the segment's rows as Parquet parts, then drop the segment."""
        self._journal.close()
        _seal(self.dir, self.store, self.run_id, self.part)


def _rows_by_table(segment_dir: Path) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def take(entry: dict[str, Any]) -> None:
        row = dict(entry["row"])
        if isinstance(row.get("time"), str):
            row["time"] = datetime.fromisoformat(row["time"])
        tables[entry["table"]].append(row)

    journal = Journal(segment_dir)
    try:
        journal.replay(take)
    finally:
        journal.close()
    return tables


def _seal(segment_dir: Path, store: Path, run_id: str, part: str) -> None:
    for table, rows in _rows_by_table(segment_dir).items():
        if table in TABLES and rows:
            write_rows(store, table, rows, run_id=run_id, part=part)
    shutil.rmtree(segment_dir, ignore_errors=True)


def recover(store: Path, *, exclude: str = "") -> int:
    """Seal the segments runs left behind when they were killed; returns how many."""
    root = Path(store) / PENDING
    if not root.is_dir():
        return 0
    sealed = 0
    for segment_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        run_id, _, part = segment_dir.name.rpartition("-")
        if run_id == exclude or not (TOKEN.fullmatch(run_id or "") and TOKEN.fullmatch(part or "")):
            continue
        try:
            _seal(segment_dir, Path(store), run_id, part)
        except (OSError, ValueError) as exc:  # a damaged segment must not stop today's run
            log.warning("could not recover %s: %s", segment_dir, exc)
            continue
        sealed += 1
    return sealed
