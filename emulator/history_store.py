"""The on-disk form of the metrics history: gzip-compressed JSON lines, written atomically.

One header line, then one line per minute. Lines keep the file streamable (a 93-day history is read
and written one minute at a time) and gzip keeps it compact: the rows repeat database, container and
operation names that compress well. The write goes to a temporary file that is fsynced, renamed over
the old one and the directory fsynced, so a crash leaves either the old history or the new, never half.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

FORMAT = "ruscope-history"
VERSION = 1


def write_lines(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Replace `path` with a header line and `lines`, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            gz.write(json.dumps({"format": FORMAT, "version": VERSION}).encode() + b"\n")
            for line in lines:
                gz.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The lines after the header; nothing when the file does not exist. A foreign file is an error."""
    if not path.exists():
        return
    with gzip.open(path, "rb") as gz:
        header = json.loads(gz.readline() or b"{}")
        if header.get("format") != FORMAT or header.get("version") != VERSION:
            raise ValueError(f"{path}: not a {FORMAT} v{VERSION} file")
        for raw in gz:
            if raw.strip():
                yield json.loads(raw)
