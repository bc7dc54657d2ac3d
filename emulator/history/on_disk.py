"""The on-disk form of the metrics history: gzip-compressed JSON lines, written atomically.

One header line, then one line per minute (`minute_line`), then the storage series (`{"part": ...}`,
`{"offer": ...}`, `emulator.history.changepoints`) and the key sizes older than the kept minutes
(`{"keybase": ...}`). Files written before those existed (minutes with no query or size fields, key
entries without a count) still load. Lines keep the file streamable (a 93-day history is read
and written one minute at a time) and gzip keeps it compact: the rows repeat database, container and
operation names that compress well. The write goes to a temporary file that is fsynced, renamed over
the old one and the directory fsynced, so a crash leaves either the old history or the new, never half.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from emulator.durability import datadir
from emulator.durability.lines import Damaged
from wholefile import write_whole

FORMAT = "ruscope-history"
VERSION = 1


def minute_line(
    minute: int,
    ops: dict[Any, list[float]],
    peaks: dict[Any, list[float]],
    keys: dict[Any, dict[str, list[float]]],
    queries: dict[Any, dict[str, list[float]]],
    sizes: dict[Any, dict[str, float]],
) -> dict[str, Any]:
    """One minute's aggregates (already cut to their top N) as a JSON-able line."""
    return {
        "m": minute,
        "ops": [[*k, int(v[0]), v[1]] for k, v in ops.items()],
        "peaks": [[*k, *v] for k, v in peaks.items()],
        "keys": [[*k, [[name, v[0], int(v[1])] for name, v in entries.items()]] for k, entries in keys.items()],
        "queries": [[*k, [[text, v[0], int(v[1])] for text, v in entries.items()]] for k, entries in queries.items()],
        "sizes": [[*k, list(entries.items())] for k, entries in sizes.items()],
    }


def parse_minute(line: dict[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """(ops, peaks, keys, queries, sizes) of a minute line; a key saved without a count has count 0."""
    ops = {(d, c, p, o, int(s)): [n, ru] for d, c, p, o, s, n, ru in line["ops"]}
    peaks = {(d, c, p): [r, ru, b] for d, c, p, r, ru, b in line["peaks"]}
    keys = {(d, c, p): {e[0]: [e[1], e[2] if len(e) > 2 else 0] for e in entries} for d, c, p, entries in line["keys"]}
    queries = {(d, c, p): {t: [ru, n] for t, ru, n in entries} for d, c, p, entries in line.get("queries", [])}
    sizes = {(d, c, p): dict(entries) for d, c, p, entries in line.get("sizes", [])}
    return ops, peaks, keys, queries, sizes


def key_ops_field(key_ops: dict[Any, dict[str, dict[tuple[str, int], float]]]) -> list[Any]:
    """A minute's per-key RU by operation and second, as the line's `key_ops` field."""
    return [
        [*k, [[key, op, second, ru] for key, slots in per_key.items() for (op, second), ru in slots.items()]]
        for k, per_key in key_ops.items()
    ]


def parse_key_ops(line: dict[str, Any]) -> dict[Any, dict[str, dict[tuple[str, int], float]]]:
    """The `key_ops` field of a minute line (none in a line saved before it was kept)."""
    found: dict[Any, dict[str, dict[tuple[str, int], float]]] = {}
    for d, c, p, entries in line.get("key_ops", []):
        per_key = found.setdefault((d, c, p), {})
        for key, op, second, ru in entries:
            per_key.setdefault(key, {})[(op, int(second))] = ru
    return found


def write_lines(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Replace `path` with a header line and `lines`, atomically (0600); a failure is `SaveFailed`."""
    datadir.make_dir(path.parent)
    try:
        write_whole(path, lambda out: _write_gzip(out, lines), private=True, fsync=True, fsync_dir=True)
    except OSError as exc:
        kept = "the history saved before is kept" if path.exists() else ""
        raise datadir.SaveFailed(path, exc, kept) from exc


def _write_gzip(out: BinaryIO, lines: Iterable[dict[str, Any]]) -> None:
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(json.dumps({"format": FORMAT, "version": VERSION}).encode() + b"\n")
        for i, line in enumerate(lines):
            if i % 64 == 0:
                time.sleep(0)  # written beside the server (a checkpoint): its requests take the GIL first
            gz.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The lines after the header; nothing when the file does not exist. A foreign or damaged file is
    `Damaged`, naming the file and the line (a gzip cut short or changed fails its CRC check)."""
    if not path.exists():
        return
    number = 1
    try:
        with gzip.open(path, "rb") as gz:
            header = json.loads(gz.readline() or b"{}")
            if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
                raise Damaged(path, 1, f"not a {FORMAT} v{VERSION} file")
            for raw in gz:
                number += 1
                if raw.strip():
                    yield json.loads(raw)
    except (gzip.BadGzipFile, EOFError, zlib.error, ValueError) as exc:
        if isinstance(exc, Damaged):
            raise
        raise Damaged(path, number, f"the metrics history cannot be read ({exc})") from exc
