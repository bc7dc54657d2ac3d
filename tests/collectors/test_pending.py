"""Captured rows survive a kill: segments on disk, sealed into Parquet exactly once."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from collectors.pending import PENDING, Segment, recover
from collectors.store import read_table


def row(seq: int) -> dict:
    return {
        "run_id": "r1" if seq < 5 else "r2",
        "time": datetime(2026, 11, 30, 9, 0, seq, 0 if seq else 250, tzinfo=UTC),
        "account": "a",
        "database": "d",
        "container": "c",
        "query_name": "q",
        "execution_id": "000-0-0",
        "seq": seq,
        "request_kind": "page",
        "status": 200,
        "substatus": 0,
        "request_charge": 2.5 + seq,
        "retrieved_document_count": None,
    }


def test_seal_writes_parquet_and_removes_the_segment(tmp_path: Path) -> None:
    segment = Segment(tmp_path, "r1", "p000")
    for seq in range(3):  # times with and without a fraction of a second
        segment.append("requests", row(seq))
    segment.append(
        "executions",
        {
            "time": row(0)["time"],
            "query_name": "q",
            "execution_id": "000-0-0",
            "routing_mismatch": False,
            "total_ru": 1.5,
            "pages": 1,
        },
    )
    segment.seal()
    assert read_table(tmp_path, "executions")["routing_mismatch"].tolist() == [False]
    frame = read_table(tmp_path, "requests")
    assert list(frame["seq"]) == [0, 1, 2] and list(frame["request_charge"]) == [2.5, 3.5, 4.5]
    assert frame["retrieved_document_count"].isna().all() and str(frame["time"].dt.tz) == "UTC"
    assert frame["time"].iloc[0] == datetime(2026, 11, 30, 9, 0, 0, 250, tzinfo=UTC)
    assert not (tmp_path / PENDING / "r1-p000").exists()


def test_recover_seals_a_killed_runs_segment_once_and_skips_a_torn_line(tmp_path: Path) -> None:
    segment = Segment(tmp_path, "r1", "p003")
    for seq in range(4):
        segment.append("requests", row(seq))
    with open(segment.dir / "requests.jsonl", "ab") as fh:
        fh.write(b'{"seq": 9, "status')  # the write a kill interrupted
    assert recover(tmp_path) == 1
    assert recover(tmp_path) == 0
    frame = read_table(tmp_path, "requests")
    assert list(frame["seq"]) == [0, 1, 2, 3] and set(frame["run_id"]) == {"r1"}
    assert list((tmp_path / "requests").rglob("*.parquet"))[0].name == "r1-p003.parquet"


def test_a_damaged_segment_does_not_stop_recovery(tmp_path: Path) -> None:
    bad = Segment(tmp_path, "r1", "p000")
    bad.append("requests", {**row(0), "status": "not a number"})
    bad.close()
    good = Segment(tmp_path, "r2", "p000")
    good.append("requests", row(6))
    assert recover(tmp_path) == 1
    assert list(read_table(tmp_path, "requests")["run_id"]) == ["r2"]
    assert (tmp_path / PENDING / "r1-p000").exists()  # kept for a human to look at, not deleted


def test_rows_of_another_run_or_unknown_fields_are_refused(tmp_path: Path) -> None:
    stray = Segment(tmp_path, "r1", "p000")
    stray.append("requests", {**row(7)})  # row(7) belongs to run r2
    stray.close()
    extra = Segment(tmp_path, "r3", "p000")
    extra.append("requests", {**row(1), "run_id": "r3", "surprise": 1})
    extra.close()
    assert recover(tmp_path) == 0
    assert read_table(tmp_path, "requests").empty
    assert sorted(p.name for p in (tmp_path / PENDING).iterdir()) == ["r1-p000", "r3-p000"]
