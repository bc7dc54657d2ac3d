"""Durability for `--data-dir`: an append-only journal of mutations plus a compacted snapshot.

A write is acknowledged only after its entry is handed to the OS (and fsynced when asked), so killing
the process loses nothing acknowledged. On start the snapshot and then the journal are replayed;
`compact()` folds both into a new snapshot (written to a temp name and renamed).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

SNAPSHOT = "snapshot.jsonl"
JOURNAL = "journal.jsonl"


class Journal:
    def __init__(self, data_dir: str | Path, *, fsync: bool = False) -> None:
        self.dir = Path(data_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._file = open(self.dir / JOURNAL, "ab", buffering=0)  # noqa: SIM115 (kept open for appends)

    def append(self, entry: dict[str, Any]) -> None:
        self._file.write(orjson.dumps(entry) + b"\n")
        if self.fsync:
            os.fsync(self._file.fileno())

    def replay(self, apply: Callable[[dict[str, Any]], None]) -> int:
        """Apply the snapshot then the journal; a torn last line (a crash mid-write) is skipped."""
        count = 0
        for name in (SNAPSHOT, JOURNAL):
            path = self.dir / name
            if not path.exists():
                continue
            with open(path, "rb") as fh:
                for line in fh:
                    try:
                        entry = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue  # only the unacknowledged tail can be torn
                    apply(entry)
                    count += 1
        return count

    def compact(self, entries: Iterable[dict[str, Any]]) -> None:
        """Write the whole state as a new snapshot and start an empty journal."""
        tmp = self.dir / (SNAPSHOT + ".tmp")
        with open(tmp, "wb") as fh:
            for entry in entries:
                fh.write(orjson.dumps(entry) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / SNAPSHOT)
        self._file.close()
        self._file = open(self.dir / JOURNAL, "wb", buffering=0)  # noqa: SIM115

    def close(self) -> None:
        self._file.close()
