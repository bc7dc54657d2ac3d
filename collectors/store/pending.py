"""Rows a collector has captured but not yet written as Parquet: an append-only segment per store part.

Every captured row is appended, as one JSON line, to `STORE/_pending/<run_id>-<part>/<table>.jsonl` as
soon as it exists, so a kill -9 loses nothing captured (a torn last line is the one write that never
finished). `Segment.seal()` reads the segment with Arrow's JSON reader against the table's declared
schema (no Python objects, no pandas: the CLI stays quick), writes the Parquet part `<run_id>-<part>`,
then deletes the segment; `recover()` seals what a killed run left behind. Parquet writes replace
files, so a crash between the two steps only repeats an identical write: nothing is ever duplicated.
"""

from __future__ import annotations

import io
import logging
import shutil
from pathlib import Path
from typing import IO

import orjson
import pyarrow as pa
import pyarrow.json as pa_json

from collectors.store.parquet import TOKEN, write_arrow
from collectors.store.records import TABLES, Record

log = logging.getLogger("ruscope.store")

PENDING = "_pending"


class Segment:
    """The open segment of one run: each row reaches the OS as it is appended."""

    def __init__(self, store: Path, run_id: str, part: str) -> None:
        self.store, self.run_id, self.part = Path(store), run_id, part
        self.dir = self.store / PENDING / f"{run_id}-{part}"
        self.rows = 0
        self._files: dict[str, IO[bytes]] = {}

    def append(self, record: Record) -> None:
        """One record, as one JSON line of its table's file (orjson writes slotted dataclasses natively)."""
        table = record.TABLE
        if table not in self._files:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._files[table] = open(self.dir / f"{table}.jsonl", "ab", buffering=0)  # noqa: SIM115
        self._files[table].write(orjson.dumps(record) + b"\n")
        self.rows += 1

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def seal(self) -> None:
        """Write the segment's rows as Parquet parts, then drop the segment."""
        self.close()
        if self.dir.exists():
            _seal(self.dir, self.store, self.run_id, self.part)


def _complete_lines(path: Path) -> bytes:
    """The file up to its last newline: a torn last line (a write a kill interrupted) is left out."""
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def read_segment_table(path: Path, table: str) -> pa.Table:
    """One table's rows of a segment, parsed by Arrow against the declared schema (unknown fields and
    values of the wrong type are errors)."""
    schema = TABLES[table].schema
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error")
    return pa_json.read_json(io.BytesIO(_complete_lines(path)), parse_options=options)


def _seal(segment_dir: Path, store: Path, run_id: str, part: str) -> None:
    for path in sorted(segment_dir.glob("*.jsonl")):
        if path.stem in TABLES and _complete_lines(path):
            write_arrow(store, path.stem, read_segment_table(path, path.stem), run_id=run_id, part=part)
    shutil.rmtree(segment_dir, ignore_errors=True)


def recover(store: Path) -> int:
    """Seal the segments runs left behind when they were killed; returns how many."""
    root = Path(store) / PENDING
    if not root.is_dir():
        return 0
    sealed = 0
    for segment_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        run_id, _, part = segment_dir.name.rpartition("-")
        if not (TOKEN.fullmatch(run_id or "") and TOKEN.fullmatch(part or "")):
            continue
        try:
            _seal(segment_dir, Path(store), run_id, part)
        except (OSError, ValueError, pa.ArrowException) as exc:  # a damaged segment must not stop today's run
            log.warning("could not recover %s: %s", segment_dir, exc)
            continue
        sealed += 1
    return sealed
