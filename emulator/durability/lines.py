"""The lines of the journal and the snapshot, checked one by one: sequence number and checksum.

A line is `{"seq":N,"crc":C,"entry":{...}}` where C is the CRC-32 of `N:` followed by the entry's exact
bytes, so a flipped byte, NUL bytes, a cut joining two lines or an edited number all show. Lines stay
JSON (`jq` reads them). In the journal the seq numbers run on by one; a gap is a cut that removed whole
lines. A snapshot is a header entry `{"snapshot": <last journal seq it folds in>}`, its entries (seq 1,
2, ...) and a trailer `{"end": <count>}`, so a snapshot cut at a line boundary shows too.

Files written before checksums still read (their lines cannot be verified, only parsed): a journal's
bare entries (seq = line number) or `{"seq", "entry"}` lines, but only before its first checksummed
line; a snapshot of bare entries, optionally after a `{"seq": n}` header. Such a data directory is
rewritten in the checksummed form by the compaction at start.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

_CHECKED = re.compile(rb'\{"seq":(\d+),"crc":(\d+),"entry":(.*)\}', re.DOTALL)


def checksum(seq: int, payload: bytes) -> int:
    return zlib.crc32(b"%d:" % seq + payload)


def encode(seq: int, entry: dict[str, Any]) -> bytes:
    """One checksummed line, newline included."""
    payload = orjson.dumps(entry)
    return b'{"seq":%d,"crc":%d,"entry":%s}\n' % (seq, checksum(seq, payload), payload)


class Line(NamedTuple):
    """One line as read: where it is, what it holds, or what is wrong with it (`problem`)."""

    number: int  # 1-based
    start: int  # byte offsets in the file
    end: int
    seq: int | None  # None: a legacy bare entry (its seq is its line number in a journal)
    entry: dict[str, Any] | None
    problem: str | None = None
    checked: bool = False  # carried a checksum
    terminated: bool = True  # ended by a newline


class Damaged(ValueError):
    """A data file that cannot be trusted; the message names the file, the line and what it affects."""

    def __init__(self, path: Path, number: int, what: str) -> None:
        self.path, self.number, self.what = path, number, what
        super().__init__(
            f"{path}, line {number}: {what}. The emulator did not start and changed nothing; "
            f"`ruscope emulator --data-dir {path.parent} --repair` (or `python -m emulator.repair "
            f"{path.parent}`) keeps a backup, salvages every intact line and reports what was lost."
        )


def _decode_checked(match: re.Match[bytes]) -> tuple[int, dict[str, Any] | None, str | None]:
    seq, crc, payload = int(match[1]), int(match[2]), match[3]
    entry = orjson.loads(payload)
    if not isinstance(entry, dict):
        return seq, None, "the entry is not an object"
    if checksum(seq, payload) != crc:  # the entry as read is kept: it says what was probably affected
        return seq, entry, "checksum mismatch (the line was changed or cut)"
    return seq, entry, None


def _decode_legacy(raw: bytes) -> tuple[int | None, dict[str, Any] | None, str | None]:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, None, "invalid JSON"
    if isinstance(obj, dict) and isinstance(obj.get("op"), str):
        return None, obj, None
    if (
        isinstance(obj, dict)
        and set(obj) == {"seq", "entry"}
        and isinstance(obj["seq"], int)
        and isinstance(obj["entry"], dict)
    ):
        return obj["seq"], obj["entry"], None
    if isinstance(obj, dict) and set(obj) == {"seq"} and isinstance(obj["seq"], int):
        return obj["seq"], {}, None  # a legacy snapshot header
    return None, None, f"not a journal entry: {raw[:80].decode(errors='replace')}"


def decode(number: int, start: int, raw: bytes) -> Line:
    """The line `raw` (newline included if it had one)."""
    terminated = raw.endswith(b"\n")
    body = raw[:-1] if terminated else raw
    end = start + len(raw)
    if b"\0" in body:
        return Line(number, start, end, None, None, "NUL bytes in the line", False, terminated)
    match = _CHECKED.fullmatch(body)
    if match is None:
        seq, entry, problem = _decode_legacy(body)
        return Line(number, start, end, seq, entry, problem, False, terminated)
    try:
        seq, entry, problem = _decode_checked(match)
    except orjson.JSONDecodeError:
        crc_ok = checksum(int(match[1]), match[3]) == int(match[2])
        seq, entry, problem = int(match[1]), None, "invalid JSON" if crc_ok else "checksum mismatch (invalid JSON)"
    return Line(number, start, end, seq, entry, problem, True, terminated)


def read(path: Path) -> Iterator[Line]:
    """Every line of `path` (nothing if it does not exist), decoded, problems included."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        start = 0
        for number, raw in enumerate(fh, 1):
            yield decode(number, start, raw)
            start += len(raw)


def describe(entry: dict[str, Any] | None) -> str:
    """What an entry changes, in words (for damage and repair reports)."""
    if not entry:
        return "an unreadable entry"
    op = entry.get("op", "?")
    where = "/".join(str(entry[k]) for k in ("db", "coll") if k in entry)
    if op in ("put", "delete"):
        item = entry["doc"].get("id") if op == "put" and isinstance(entry.get("doc"), dict) else entry.get("id")
        return f"{op} of item {item!r} (partition key {orjson.dumps(entry.get('key')).decode()}) in {where}"
    if op in ("create_db", "delete_db"):
        return f"{op} of database {entry.get('id')!r}"
    if op == "batch" and isinstance(entry.get("entries"), list):
        writes = [describe(w) if isinstance(w, dict) else "an unreadable write" for w in entry["entries"]]
        return f"a transactional batch of {len(writes)} write(s): {'; '.join(writes)}"
    if op == "replace_offer":
        return f"replace_offer of offer {entry.get('rid')!r}"
    if op == "writes":
        return f"the write counter (the change feed's last position, {entry.get('seq')})"
    return f"{op} of container {where + '/' if where else ''}{entry.get('id', '?')}"
