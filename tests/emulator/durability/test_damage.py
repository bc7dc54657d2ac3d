"""A damaged data directory: a torn last line is dropped, any other damage refuses to start, naming the
file, the line and the write affected, and changes nothing on disk."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from emulator.durability.journal import JOURNAL, SNAPSHOT
from emulator.durability.lines import Damaged, encode
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.rest.server import open_engine

ROOT = Path(__file__).resolve().parents[3]
IN_SNAPSHOT = [str(i) for i in range(10)]
IN_JOURNAL = [str(i) for i in range(10, 20)]  # journal lines 1..10, then line 11 deletes item "3"
EXPECTED = sorted(i for i in IN_SNAPSHOT + IN_JOURNAL if i != "3")


def _put(engine: Engine, ids: list[str]) -> None:
    for i in ids:
        engine.create_item(Context(), "d", "c", {"id": i, "k": f"k{i}", "pad": "p" * 50}, [f"k{i}"])


def make_data_dir(data_dir: Path) -> None:
    """A snapshot holding items 0..9 and a journal (left as after a kill) holding 10..19 and a delete."""
    engine = open_engine(data_dir, throttling=False)
    engine.create_database(Context(), {"id": "d"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(Context(), "d", body, ThroughputSpec(400))
    _put(engine, IN_SNAPSHOT)
    engine.close()
    engine = open_engine(data_dir, throttling=False)
    _put(engine, IN_JOURNAL)
    engine.delete_item(Context(), "d", "c", "3", ["k3"])
    assert engine.state.journal is not None
    engine.state.journal.close()  # a kill: no compaction


def ids(engine: Engine) -> list[str]:
    coll = engine.container("d", "c")
    return sorted(item.doc["id"] for r in coll.ranges for lp in r.logical.values() for item in lp.items.values())


def _files(data_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(data_dir.iterdir()) if p.is_file()}


def _edit_line(path: Path, number: int, edit: Callable[[bytes], bytes]) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[number - 1] = edit(lines[number - 1])
    path.write_bytes(b"".join(lines))


def _flip(line: bytes) -> bytes:
    at = line.index(b'"pad"') + 9
    return line[:at] + bytes([line[at] ^ 0x01]) + line[at + 1 :]


def _cut(path: Path) -> None:
    """Bytes removed from the middle of line 5 to the middle of line 6 (the two lines run together)."""
    lines = path.read_bytes().splitlines(keepends=True)
    head = sum(len(x) for x in lines[:4])
    data = path.read_bytes()
    path.write_bytes(data[: head + 40] + data[head + len(lines[4]) + 60 :])


def _insert(path: Path, number: int, raw: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(number - 1, raw)
    path.write_bytes(b"".join(lines))


def _last_seq(path: Path) -> int:
    return int(orjson.loads(path.read_bytes().splitlines()[-1])["seq"])


def _delete_absent(path: Path) -> None:
    entry = {"op": "delete", "db": "d", "coll": "c", "key": ["knope"], "id": "nope"}
    path.write_bytes(path.read_bytes() + encode(_last_seq(path) + 1, entry))


def _drop_line(path: Path, number: int) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    del lines[number - 1]
    path.write_bytes(b"".join(lines))


# (damage, file, line, words in the message)
JOURNAL_DAMAGE: dict[str, tuple[Callable[[Path], None], int, str]] = {
    "cut": (_cut, 5, "checksum mismatch"),
    "flipped byte": (lambda p: _edit_line(p, 5, _flip), 5, "checksum mismatch (the line was changed or cut)"),
    "NUL bytes": (lambda p: _edit_line(p, 5, lambda x: x[:30] + b"\0" * 20 + x[50:]), 5, "NUL bytes in the line"),
    "invalid JSON": (lambda p: _insert(p, 5, b'{"seq": oops\n'), 5, "invalid JSON"),
    "empty object": (lambda p: _insert(p, 5, b"{}\n"), 5, "not a journal entry: {}"),
    "whole line removed": (lambda p: _drop_line(p, 5), 5, "are missing"),
    "delete of an absent item": (_delete_absent, 12, "cannot apply the delete of item 'nope'"),
}


@pytest.mark.parametrize("kind", list(JOURNAL_DAMAGE))
def test_journal_damage_refuses_to_start_naming_file_line_and_write(tmp_path: Path, kind: str) -> None:
    make_data_dir(tmp_path)
    damage, number, words = JOURNAL_DAMAGE[kind]
    damage(tmp_path / JOURNAL)
    before = _files(tmp_path)
    with pytest.raises(Damaged) as caught:
        open_engine(tmp_path, throttling=False)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / JOURNAL}, line {number}: ")
    assert words in message
    assert any(what in message for what in ("is affected", "cannot apply the", "the writes with seq"))
    assert f"python -m emulator.repair {tmp_path}" in message
    assert _files(tmp_path) == before  # nothing rewritten: the loss is not made permanent


def test_a_changed_line_says_which_write_it_was(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    _edit_line(tmp_path / JOURNAL, 5, _flip)
    with pytest.raises(Damaged, match=r"it reads as the put of item '14' \(partition key \[\"k14\"\]\) in d/c"):
        open_engine(tmp_path, throttling=False)


SNAPSHOT_DAMAGE: dict[str, tuple[Callable[[Path], None], int, str]] = {
    "flipped byte": (lambda p: _edit_line(p, 5, _flip), 5, "checksum mismatch"),
    "cut at a line boundary": (lambda p: _drop_line(p, len(p.read_bytes().splitlines())), 15, "no trailer"),
    "invalid JSON": (lambda p: _edit_line(p, 4, lambda x: x[:20]), 4, "invalid JSON"),
    "damaged header": (lambda p: _edit_line(p, 1, lambda x: x.replace(b"snapshot", b"snapshoT")), 1, "header"),
}


@pytest.mark.parametrize("kind", list(SNAPSHOT_DAMAGE))
def test_snapshot_damage_refuses_to_start(tmp_path: Path, kind: str) -> None:
    make_data_dir(tmp_path)
    damage, number, words = SNAPSHOT_DAMAGE[kind]
    damage(tmp_path / SNAPSHOT)
    before = _files(tmp_path)
    with pytest.raises(Damaged) as caught:
        open_engine(tmp_path, throttling=False)
    assert str(caught.value).startswith(f"{tmp_path / SNAPSHOT}, line {number}: ")
    assert words in str(caught.value)
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    "tail",
    [b'{"seq":99,"crc":1,"entry":{"op":"pu', b"\0" * 300, b'{"seq":12,"crc":12345,"entry":{"op":"delete"}}\n'],
    ids=["cut mid-append", "NUL padding after a power loss", "bad checksum at the very end"],
)
def test_a_torn_last_line_is_dropped_and_kept_aside(tmp_path: Path, tail: bytes) -> None:
    make_data_dir(tmp_path)
    with open(tmp_path / JOURNAL, "ab") as fh:
        fh.write(tail)
    engine = open_engine(tmp_path, throttling=False)  # replays, then compacts: the tail is gone
    assert ids(engine) == EXPECTED
    _put(engine, ["new"])
    assert engine.state.journal is not None
    engine.state.journal.close()
    (aside,) = tmp_path.glob(f"{JOURNAL}.torn-*")
    assert aside.read_bytes() == tail
    engine = open_engine(tmp_path, throttling=False)
    assert ids(engine) == sorted([*EXPECTED, "new"])
    engine.close()


def test_the_command_line_refuses_a_damaged_journal_in_words(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    _edit_line(tmp_path / JOURNAL, 5, _flip)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sys.executable, "-m", "emulator", "--port", str(port), "--monitor-port", "0", "--data-dir", str(tmp_path)]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, timeout=60, env={"COLUMNS": "1000", "PATH": ""})
    output = (done.stdout + done.stderr).decode()
    assert done.returncode == 2
    assert f"{tmp_path / JOURNAL}, line 5: checksum mismatch" in output
    assert "Traceback" not in output and "KeyError" not in output


def test_a_damaged_metrics_history_refuses_to_start_naming_it(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    history = tmp_path / "history.jsonl.gz"
    history.write_bytes(history.read_bytes()[:-12])  # cut short: gzip's own length and CRC catch it
    before = _files(tmp_path)
    with pytest.raises(Damaged, match=r"history\.jsonl\.gz, line \d+: the metrics history cannot be read"):
        open_engine(tmp_path, throttling=False)
    assert _files(tmp_path) == before
