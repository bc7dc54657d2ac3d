"""The journal: a crash at any step of compaction restarts with every acknowledged write, none applied twice."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from emulator.durability.journal import JOURNAL, SNAPSHOT, Journal
from emulator.engine.facade import Context, Engine, ThroughputSpec

# Where compaction can die: mid-way through the temp snapshot, or just before each system call it makes.
STEPS = ("write_snapshot", "fsync_snapshot", "rename", "fsync_dir", "truncate_journal", "after_truncate")
SYSCALLS = ("fsync", "replace", "fsync", "ftruncate")  # the order compact() makes them in


class Crash(BaseException):
    """The process dies here."""


def _compact_and_crash(journal: Journal, entries: Iterable[dict[str, Any]], step: str) -> None:
    """Run `journal.compact(entries)`, dying just before `step`; the journal is then abandoned like a dead process's."""
    k = STEPS.index(step)
    calls: list[str] = []

    def dying(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            calls.append(name)
            if len(calls) == k:
                raise Crash(step)
            return real(*args)

        return call

    def written() -> Iterator[dict[str, Any]]:
        for i, entry in enumerate(entries):
            if step == "write_snapshot" and i == 2:
                raise Crash(step)
            yield entry

    with pytest.MonkeyPatch.context() as mp:
        for name in ("fsync", "replace", "ftruncate"):
            mp.setattr(os, name, dying(name, getattr(os, name)))
        try:
            journal.compact(written())
        except Crash:
            assert step != "after_truncate"
        else:
            assert step == "after_truncate"
    journal.close()
    assert tuple(calls) == SYSCALLS[:k]


def _lines(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _write_lines(path: Path, objs: Iterable[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


# -- a strict model: applying any entry twice raises ----------------------------------------


def _apply_strict(state: dict[int, str]) -> Any:
    def apply(entry: dict[str, Any]) -> None:
        if entry["op"] == "put":
            assert entry["id"] not in state, f"put {entry['id']} applied twice"
            state[entry["id"]] = entry["v"]
        else:
            del state[entry["id"]]  # KeyError when applied twice

    return apply


@pytest.mark.parametrize("step", STEPS)
def test_crash_at_any_compaction_step_replays_each_write_once(tmp_path: Path, step: str) -> None:
    journal = Journal(tmp_path)
    state: dict[int, str] = {}
    for op in [{"op": "put", "id": i, "v": f"v{i}"} for i in range(5)] + [{"op": "delete", "id": 1}]:
        journal.append(op)
        _apply_strict(state)(op)
    journal.compact({"op": "put", "id": i, "v": v} for i, v in state.items())
    for op in [{"op": "put", "id": 9, "v": "v9"}, {"op": "delete", "id": 0}, {"op": "delete", "id": 9}]:
        journal.append(op)
        _apply_strict(state)(op)
    expected = dict(state)

    _compact_and_crash(journal, [{"op": "put", "id": i, "v": v} for i, v in state.items()], step)

    again, replayed = Journal(tmp_path), {}
    again.replay(_apply_strict(replayed))
    assert replayed == expected == {2: "v2", 3: "v3", 4: "v4"}
    again.append({"op": "delete", "id": 2})  # a write after the crash survives the next restart too
    again.close()
    third, replayed = Journal(tmp_path), {}
    third.replay(_apply_strict(replayed))
    assert replayed == {3: "v3", 4: "v4"}
    third.close()


# -- the real engine: a journaled delete applied twice would stop it from starting ----------


def _engine(data_dir: Path) -> tuple[Engine, Journal]:
    journal = Journal(data_dir)
    return Engine(journal=journal, throttling=False), journal


def _docs(engine: Engine) -> dict[str, Any]:
    coll = engine.container("d", "c")
    docs = {
        item.doc["id"]: item.doc["v"] for r in coll.ranges for lp in r.logical.values() for item in lp.items.values()
    }
    assert sum(r.docs for r in coll.ranges) == len(docs)
    return docs


def _create(engine: Engine) -> None:
    ctx = Context()
    engine.create_database(ctx, {"id": "d"}, None)
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(ctx, "d", body, ThroughputSpec(18_000))
    for i in range(10):
        engine.create_item(ctx, "d", "c", {"id": str(i), "k": f"k{i}", "v": i}, [f"k{i}"])


def _mutate(engine: Engine) -> None:
    """Writes after the first snapshot, deleting items it holds and items only the journal holds."""
    ctx = Context()
    for i in range(10, 15):
        engine.create_item(ctx, "d", "c", {"id": str(i), "k": f"k{i}", "v": i}, [f"k{i}"])
    engine.delete_item(ctx, "d", "c", "3", ["k3"])
    engine.delete_item(ctx, "d", "c", "12", ["k12"])
    engine.create_item(ctx, "d", "c", {"id": "5", "k": "k5", "v": "five"}, ["k5"], upsert=True)


EXPECTED = {str(i): i for i in range(15) if i not in (3, 12)} | {"5": "five"}


@pytest.mark.parametrize("step", STEPS)
def test_engine_restarts_after_a_crash_at_any_compaction_step(tmp_path: Path, step: str) -> None:
    engine, journal = _engine(tmp_path)
    _create(engine)
    journal.compact(engine.snapshot_entries())
    _mutate(engine)
    assert _docs(engine) == EXPECTED

    _compact_and_crash(journal, engine.snapshot_entries(), step)

    engine, journal = _engine(tmp_path)
    assert _docs(engine) == EXPECTED
    engine.delete_item(Context(), "d", "c", "0", ["k0"])
    journal.close()  # a kill: no compaction
    engine, _ = _engine(tmp_path)
    assert _docs(engine) == {k: v for k, v in EXPECTED.items() if k != "0"}
    engine.close()  # a clean stop compacts
    engine, _ = _engine(tmp_path)
    assert _docs(engine) == {k: v for k, v in EXPECTED.items() if k != "0"}
    engine.close()


# -- data directories written before seq numbers ---------------------------------------------


class _Recorder:
    """Stands in for a journal to capture the entries the engine writes."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def append(self, entry: dict[str, Any]) -> None:
        self.entries.append(orjson.loads(orjson.dumps(entry)))

    def replay(self, apply: Any) -> int:
        return 0


def _legacy_data_dir(data_dir: Path) -> None:
    """A snapshot and a journal of bare entries, as written before seq numbers."""
    recorder = _Recorder()
    engine = Engine(journal=recorder, throttling=False)  # type: ignore[arg-type]
    _create(engine)
    _write_lines(data_dir / SNAPSHOT, engine.snapshot_entries())
    recorder.entries.clear()
    _mutate(engine)
    _write_lines(data_dir / JOURNAL, recorder.entries)
    assert all("op" in line for line in _lines(data_dir / SNAPSHOT) + _lines(data_dir / JOURNAL))


def test_legacy_data_dir_still_replays(tmp_path: Path) -> None:
    _legacy_data_dir(tmp_path)
    assert len(_lines(tmp_path / JOURNAL)) == 8
    engine, journal = _engine(tmp_path)
    assert _docs(engine) == EXPECTED
    engine.delete_item(Context(), "d", "c", "0", ["k0"])  # journaled after the 8 legacy lines, as seq 9
    journal.close()
    engine, _ = _engine(tmp_path)
    assert _docs(engine) == {k: v for k, v in EXPECTED.items() if k != "0"}
    engine.close()
    assert _lines(tmp_path / SNAPSHOT)[0]["entry"] == {"snapshot": 9}  # the snapshot has a header now
    assert (tmp_path / JOURNAL).stat().st_size == 0


@pytest.mark.parametrize("step", STEPS)
def test_first_compaction_of_a_legacy_data_dir_survives_a_crash(tmp_path: Path, step: str) -> None:
    _legacy_data_dir(tmp_path)
    engine, journal = _engine(tmp_path)
    _compact_and_crash(journal, engine.snapshot_entries(), step)
    engine, _ = _engine(tmp_path)
    assert _docs(engine) == EXPECTED
    engine.close()


# -- torn tails and seq numbers ----------------------------------------------------------------


def test_torn_last_line_is_skipped_and_the_next_append_starts_a_line_of_its_own(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    for i in range(3):
        journal.append({"op": "put", "id": i})
    journal.close()
    with open(tmp_path / JOURNAL, "ab") as fh:
        fh.write(b'{"seq":4,"entry":{"op":"pu')  # a crash mid-append: never acknowledged

    journal, applied = Journal(tmp_path), []
    assert journal.replay(applied.append) == 3
    assert applied == [{"op": "put", "id": i} for i in range(3)]
    journal.append({"op": "put", "id": 3})
    journal.close()

    journal, applied = Journal(tmp_path), []
    assert journal.replay(applied.append) == 4
    assert applied == [{"op": "put", "id": i} for i in range(4)]
    journal.close()


def _seqs(data_dir: Path) -> list[int]:
    return [line["seq"] for line in _lines(data_dir / JOURNAL)]


def test_seq_numbers_keep_increasing_across_compaction_and_restart(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    for i in range(3):
        journal.append({"op": "put", "id": i})
    assert _seqs(tmp_path) == [1, 2, 3]
    journal.compact({"op": "put", "id": i} for i in range(3))
    assert _lines(tmp_path / SNAPSHOT)[0]["entry"] == {"snapshot": 3}
    assert _seqs(tmp_path) == []
    journal.append({"op": "put", "id": 3})
    assert _seqs(tmp_path) == [4]
    journal.close()

    journal = Journal(tmp_path)  # no replay: the next seq is still read from disk
    journal.append({"op": "put", "id": 4})
    assert _seqs(tmp_path) == [4, 5]
    journal.compact({"op": "put", "id": i} for i in range(5))
    journal.close()

    journal, applied = Journal(tmp_path), []  # an empty journal: the snapshot's header carries the seq
    assert journal.replay(applied.append) == 5
    journal.append({"op": "put", "id": 5})
    assert _seqs(tmp_path) == [6]
    journal.close()


def test_a_legacy_journal_continues_with_seq_numbers_after_its_lines(tmp_path: Path) -> None:
    _write_lines(tmp_path / JOURNAL, [{"op": "put", "id": i} for i in range(3)])
    journal, applied = Journal(tmp_path), []
    assert journal.replay(applied.append) == 3
    journal.append({"op": "put", "id": 3})
    journal.close()
    last = _lines(tmp_path / JOURNAL)[-1]
    assert (last["seq"], last["entry"]) == (4, {"op": "put", "id": 3})  # and a checksum
    journal, applied = Journal(tmp_path), []
    assert journal.replay(applied.append) == 4
    journal.close()
