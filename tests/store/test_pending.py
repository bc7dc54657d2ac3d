"""Captured rows survive a kill: segments on disk, sealed into Parquet exactly once."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pytest
from deltalake import DeltaTable

from store import PENDING, ExecutionRecord, RequestRecord, Segment, pending, read_table, recover, store_location

REPO = Path(__file__).resolve().parents[2]


def row(seq: int, **changes: Any) -> RequestRecord:
    fields = {
        "run_id": "r1" if seq < 5 else "r2",
        "time": datetime(2026, 11, 30, 9, 0, seq, 0 if seq else 250, tzinfo=UTC),
        "account": "a",
        "database": "d",
        "container": "c",
        "query_name": "q",
        "execution_id": "000-0-0",
        "seq": seq,
        "request_kind": "page",
        "method": "POST",
        "resource": "dbs/d/colls/c/docs",
        "pkrange_id": "0",
        "status": 200,
        "substatus": 0,
        "request_charge": 2.5 + seq,
        "item_count": 1,
        "duration_ms": 1.0,
        "activity_id": f"a{seq}",
        "correlated_activity_id": "",
        "retry_after_ms": None,
        "retrieved_document_count": None,
        "retrieved_document_size": None,
        "output_document_count": None,
        "output_document_size": None,
        "index_hit_ratio": None,
        "index_utilization": None,
    }
    return RequestRecord(**{**fields, **changes})


def execution(**changes: Any) -> ExecutionRecord:
    fields = dict.fromkeys(f.name for f in dataclasses.fields(ExecutionRecord))
    fields.update(run_id="r1", time=row(0).time, account="a", database="d", container="c", query_name="q")
    fields.update(execution_id="000-0-0", repeat=0, mode="as-is", feed_range="", sql="SELECT 1", partition_key="")
    fields.update(status="ok", error="", total_ru=1.5, pages=1, round_trips=1, items=1, pkranges="0")
    fields.update(pkrange_count=1, routing_predicted="single", routing_observed="single", routing_mismatch=False)
    fields.update(throttled=0, retry_after_ms_total=0.0, duration_ms=1.0)
    return ExecutionRecord(**{**fields, **changes})


def raw_line(path: Path, line: bytes) -> None:
    """A line written behind the Segment's back: what a bug, a disk error or a torn write leaves."""
    with open(path, "ab") as fh:
        fh.write(line + b"\n")


def test_seal_writes_parquet_and_removes_the_segment(tmp_path: Path) -> None:
    segment = Segment(store_location(tmp_path), "r1", "p000")
    for seq in range(3):  # times with and without a fraction of a second
        segment.append(row(seq))
    segment.append(execution())
    segment.seal()
    assert read_table(store_location(tmp_path), "executions")["routing_mismatch"].tolist() == [False]
    frame = read_table(store_location(tmp_path), "requests")
    assert list(frame["seq"]) == [0, 1, 2] and list(frame["request_charge"]) == [2.5, 3.5, 4.5]
    assert frame["retrieved_document_count"].isna().all() and str(frame["time"].dt.tz) == "UTC"
    assert frame["time"].iloc[0] == datetime(2026, 11, 30, 9, 0, 0, 250, tzinfo=UTC)
    assert not (tmp_path / PENDING / "r1-p000").exists()


def test_recover_seals_a_killed_runs_segment_once_and_skips_a_torn_line(tmp_path: Path) -> None:
    segment = Segment(store_location(tmp_path), "r1", "p003")
    for seq in range(4):
        segment.append(row(seq))
    with open(segment.dir / "requests.jsonl", "ab") as fh:
        fh.write(b'{"seq": 9, "status')  # the write a kill interrupted
    segment.close()  # what the kill did to its lock
    assert recover(store_location(tmp_path)) == 1
    assert recover(store_location(tmp_path)) == 0
    frame = read_table(store_location(tmp_path), "requests")
    assert list(frame["seq"]) == [0, 1, 2, 3] and set(frame["run_id"]) == {"r1"}
    assert DeltaTable(tmp_path / "requests").transaction_version("ruscope-r1-p003") == 1


def test_a_damaged_line_is_set_aside_once_and_the_valid_rows_are_stored(tmp_path: Path) -> None:
    bad = Segment(store_location(tmp_path), "r1", "p000")
    bad.append(row(0))
    damaged = orjson.dumps({**dataclasses.asdict(row(1)), "status": "not a number"})
    raw_line(bad.dir / "requests.jsonl", damaged)  # row 2 of the segment
    bad.append(row(2))
    bad.append(execution())
    bad.close()
    good = Segment(store_location(tmp_path), "r2", "p000")
    good.append(row(6))
    good.close()
    warned: list[str] = []
    assert recover(store_location(tmp_path), warn=warned.append) == 2
    aside = tmp_path / PENDING / "_damaged" / "r1-p000-requests.jsonl"
    assert warned == [f"store: set aside 1 damaged line(s) of pending segment r1-p000 in {aside}"]
    assert aside.read_bytes() == damaged + b"\n"  # kept for a human to look at
    assert seqs(tmp_path) == [0, 2, 6] and len(read_table(store_location(tmp_path), "executions")) == 1
    assert recover(store_location(tmp_path), warn=warned.append) == 0 and len(warned) == 1  # reported once, never again
    assert sorted(p.name for p in (tmp_path / PENDING).iterdir()) == ["_damaged"]


def test_rows_of_another_run_or_unknown_fields_are_set_aside(tmp_path: Path) -> None:
    stray = Segment(store_location(tmp_path), "r1", "p000")
    stray.append(row(7))  # row(7) belongs to run r2
    stray.close()
    extra = Segment(store_location(tmp_path), "r3", "p000")
    extra.append(row(1, run_id="r3"))
    extra.close()
    raw_line(extra.dir / "requests.jsonl", orjson.dumps({**dataclasses.asdict(row(2)), "run_id": "r3", "surprise": 1}))
    warned: list[str] = []
    assert recover(store_location(tmp_path), warn=warned.append) == 2
    assert list(read_table(store_location(tmp_path), "requests")["run_id"]) == ["r3"] and seqs(tmp_path) == [1]
    damaged = tmp_path / PENDING / "_damaged"
    assert sorted(p.name for p in damaged.iterdir()) == ["r1-p000-requests.jsonl", "r3-p000-requests.jsonl"]
    assert b"surprise" in (damaged / "r3-p000-requests.jsonl").read_bytes() and len(warned) == 2


def test_a_live_run_sets_aside_its_own_damaged_lines_when_it_seals(tmp_path: Path) -> None:
    segment = Segment(store_location(tmp_path), "r1", "p000")
    segment.append(row(0))
    raw_line(segment.dir / "requests.jsonl", b"{not json")
    warned: list[str] = []
    segment.seal(warn=warned.append)
    assert seqs(tmp_path) == [0] and len(warned) == 1 and "r1-p000-requests.jsonl" in warned[0]


def test_a_record_of_the_wrong_shape_fails_when_it_is_built() -> None:
    with pytest.raises(TypeError, match="statsu"):
        row(0, statsu=200)  # misspelt
    fields = dataclasses.asdict(row(0))
    del fields["status"]
    with pytest.raises(TypeError, match="status"):
        RequestRecord(**fields)  # missing
    with pytest.raises(TypeError, match=r"RequestRecord.status: expected int, got str"):
        row(0, status="200")
    with pytest.raises(TypeError, match="request_charge: expected float or int, got NoneType"):
        row(0, request_charge=None)
    with pytest.raises(TypeError, match="expected int or None, got bool"):
        row(0, item_count=True)
    with pytest.raises(TypeError, match="naive time"):
        row(0, time=datetime(2026, 1, 1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        row(0).status = 500  # type: ignore[misc]
    assert row(0, request_charge=3).request_charge == 3 and row(0, item_count=None).item_count is None


def test_the_arrow_schema_is_derived_from_the_record() -> None:
    from store import EXECUTIONS, REQUESTS

    assert REQUESTS.columns == [f.name for f in dataclasses.fields(RequestRecord)]
    assert REQUESTS.schema.field("status").type == pa.int32() and REQUESTS.schema.field("seq").type == pa.int64()
    assert str(EXECUTIONS.schema.field("time").type) == "timestamp[us, tz=UTC]"
    assert EXECUTIONS.schema.field("routing_mismatch").type == pa.bool_()
    assert EXECUTIONS.key == ("run_id", "execution_id") and EXECUTIONS.record is ExecutionRecord
    assert not hasattr(row(0), "__dict__")  # slotted: millions of them stay small


# --- two runs, one store: a live run's segment is locked and never recovered under it ----------------------

WRITER = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.store.test_pending import row
from store import Segment, store_location
segment = Segment(store_location(sys.argv[1]), "ra", "p000")
for seq in range(3):
    segment.append(row(seq, run_id="ra"))
print("appended", flush=True)
if sys.stdin.readline().strip() == "go on":
    for seq in range(3, 6):
        segment.append(row(seq, run_id="ra"))
    segment.seal()
    print("sealed", flush=True)
"""


def writer(store: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store), str(REPO)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "appended\n"
    return process


def seqs(store: Path) -> list[int]:
    return sorted(read_table(store_location(store), "requests")["seq"].tolist())


def test_in_process_a_live_segment_is_not_recovered_under_its_run(tmp_path: Path) -> None:
    run_a = Segment(store_location(tmp_path), "ra", "p000")
    for seq in range(3):
        run_a.append(row(seq, run_id="ra"))
    assert recover(store_location(tmp_path)) == 0  # run B starts beside A
    for seq in range(3, 6):
        run_a.append(row(seq, run_id="ra"))
    run_a.seal()
    assert recover(store_location(tmp_path)) == 0 and seqs(tmp_path) == [0, 1, 2, 3, 4, 5]
    assert list((tmp_path / PENDING).iterdir()) == []  # no segment, no lock file left


def test_in_another_process_a_live_segment_is_not_recovered_under_its_run(tmp_path: Path) -> None:
    run_a = writer(tmp_path)
    assert recover(store_location(tmp_path)) == 0 and seqs(tmp_path) == []
    out, _ = run_a.communicate("go on\n", timeout=60)
    assert out == "sealed\n" and run_a.returncode == 0
    assert recover(store_location(tmp_path)) == 0 and seqs(tmp_path) == [0, 1, 2, 3, 4, 5]


def test_a_killed_runs_segment_is_recovered_exactly_once(tmp_path: Path) -> None:
    run_a = writer(tmp_path)
    run_a.kill()  # SIGKILL: the kernel releases its lock
    run_a.wait(timeout=60)
    assert recover(store_location(tmp_path)) == 1 and recover(store_location(tmp_path)) == 0
    assert seqs(tmp_path) == [0, 1, 2]
    assert list((tmp_path / PENDING).iterdir()) == []


def test_two_recoveries_at_once_seal_a_segment_once(tmp_path: Path) -> None:
    killed = Segment(store_location(tmp_path), "rk", "p000")
    killed.append(row(0, run_id="rk"))
    killed.close()
    holder = pending._lock(killed.lock_path)  # recovery 1 is sealing it right now
    assert holder is not None
    assert recover(store_location(tmp_path)) == 0  # recovery 2 leaves it alone
    os.close(holder)
    assert recover(store_location(tmp_path)) == 1 and seqs(tmp_path) == [0]


def test_an_orphan_lock_file_is_dropped_unless_held(tmp_path: Path) -> None:
    (tmp_path / PENDING).mkdir()
    orphan = tmp_path / PENDING / "rx-p000.lock"
    orphan.touch()  # its run died after removing the segment, before removing the lock
    held = Segment(store_location(tmp_path), "ry", "p000")
    held.append(row(0, run_id="ry"))
    assert recover(store_location(tmp_path)) == 0
    assert not orphan.exists() and held.lock_path.exists()
    held.seal()
    assert seqs(tmp_path) == [0]


def test_a_file_of_an_unknown_table_is_set_aside_whole_and_said_in_one_line(tmp_path: Path) -> None:
    segment = Segment(store_location(tmp_path), "r1", "p000")
    segment.append(row(0))
    segment.close()
    lines = b'{"run_id": "r1", "n": 1}\n{"run_id": "r1", "n": 2}\n'
    (segment.dir / "from_a_newer_version.jsonl").write_bytes(lines)
    warned: list[str] = []
    assert recover(store_location(tmp_path), warn=warned.append) == 1
    aside = tmp_path / PENDING / "_damaged" / "r1-p000-from_a_newer_version.jsonl"
    assert aside.read_bytes() == lines  # kept, not deleted
    assert len(warned) == 1 and "'from_a_newer_version'" in warned[0] and str(aside) in warned[0], warned
    assert seqs(tmp_path) == [0]  # the segment's known rows are stored
    assert recover(store_location(tmp_path), warn=warned.append) == 0 and len(warned) == 1


def test_an_append_the_disk_refuses_leaves_no_torn_line(tmp_path: Path) -> None:
    """A file size limit (RLIMIT_FSIZE, as a full disk) cuts a line short: the file is cut back to whole lines,
    so the line after it, once there is room, is not glued to a torn one."""
    script = f"""
import resource, sys
from store import Segment, store_location
from tests.store.test_pending import row
segment = Segment(store_location({str(tmp_path)!r}), "r1", "p000")
segment.append(row(0))
size = (segment.dir / "requests.jsonl").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, size + 100))  # room for a part of the next line
try:
    segment.append(row(1))
except OSError as exc:
    print("refused", exc.errno)
print((segment.dir / "requests.jsonl").stat().st_size == size)
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["refused", "27", "True"], done.stdout + done.stderr
    warned: list[str] = []
    assert recover(store_location(tmp_path), warn=warned.append) == 1 and warned == []
    assert seqs(tmp_path) == [0]


def test_a_table_that_cannot_be_committed_holds_back_no_other_but_the_rows_that_vouch_for_it(tmp_path: Path) -> None:
    """A damaged `executions` log: the segment's requests are committed all the same; its executions wait in
    the segment, and so does the `last` table whose rows vouch for them (a logs watermark must never pass rows
    not stored); once the log is whole again the next recovery commits the rest, each row once."""
    location = store_location(tmp_path)
    seed = Segment(location, "r0", "p000")
    seed.append(execution(run_id="r0", execution_id="seed"))
    seed.seal()
    first = tmp_path / "executions" / "_delta_log" / f"{0:020d}.json"
    whole = first.read_bytes()
    first.write_bytes(whole[:100])  # the table's first log entry cut short
    killed = Segment(location, "r1", "p000")  # a run killed before it sealed: its segment is recovered later
    for seq in range(3):
        killed.append(row(seq))
    killed.append(execution())
    killed.append(window := _window())
    killed._unlock()  # the kill: the lock goes with the process, the segment stays
    warned: list[str] = []
    assert recover(location, warn=warned.append) == 0  # not sealed whole: it stays for a later run
    assert [w for w in warned if "could not recover" in w and "executions" in w]
    assert sorted(read_table(location, "requests")["seq"]) == [0, 1, 2]  # the requests did not wait
    assert read_table(location, "log_windows").empty  # it vouches for the executions' run: it waits too
    left = sorted(p.name for p in (location.pending_dir / "r1-p000").glob("*.jsonl"))
    assert left == ["executions.jsonl", "log_windows.jsonl"]
    first.write_bytes(whole)  # repaired
    assert recover(location) == 1
    assert sorted(read_table(location, "requests")["seq"]) == [0, 1, 2]  # once
    assert sorted(read_table(location, "executions")["execution_id"]) == ["000-0-0", "seed"]
    assert read_table(location, "log_windows")["query"].tolist() == [window.query]


def _window() -> Any:
    from store.records import LogWindowRecord

    return LogWindowRecord(
        run_id="r1", time=row(0).time, account="a", database="d", container="", query="q", end=row(0).time, rows=3
    )
