"""The Parquet store: conforming, layout, atomic and idempotent writes, a reader that survives bad files and kill -9."""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from collectors.store import EXECUTIONS, REQUESTS, StoreWarning, list_runs, read_table, write_frame
from collectors.store import parquet as store

REPO = Path(__file__).resolve().parents[2]
T0 = pd.Timestamp("2024-05-01 10:00:00", tz="UTC")
DAY = dt.date(2024, 5, 1)


def executions(run_id: str = "r1", ids: tuple[str, ...] = ("e1", "e2", "e3"), start: pd.Timestamp = T0) -> pd.DataFrame:
    n = len(ids)
    return pd.DataFrame(
        {
            "run_id": [run_id] * n,
            "time": [start + pd.Timedelta(seconds=i) for i in range(n)],
            "account": ["acct.documents.azure.com"] * n,
            "container": ["orders"] * n,
            "query_name": [f"q-{i}" for i in range(n)],
            "execution_id": list(ids),
            "pages": [i if i % 2 == 0 else None for i in range(n)],  # int32 with nulls
            "retrieved_documents": [None] * (n - 1) + [2**40],  # int64 with nulls and a big value
            "total_ru": [2.5 + i for i in range(n)],
            "error": ["" if i else None for i in range(n)],
            "routing_mismatch": [True, None, False][:n] + [False] * max(0, n - 3),
        }
    )


def rows(frame: pd.DataFrame, column: str = "execution_id") -> list[str]:
    return sorted(frame[column].tolist())


def partition(root: Path, table: str = "executions", day: dt.date = DAY) -> Path:
    return root / table / f"date={day.isoformat()}"


def visible_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --- round trips -------------------------------------------------------------------------------------------


def test_executions_round_trip_keeps_types_nulls_and_schema_order(tmp_path: Path) -> None:
    frame = executions()
    write_frame(tmp_path, EXECUTIONS, frame, run_id="r1", part="q0001")
    back = read_table(tmp_path, "executions")

    assert list(back.columns) == EXECUTIONS.columns
    assert back["execution_id"].tolist() == ["e1", "e2", "e3"]
    assert str(back["pages"].dtype) == "Int32" and str(back["retrieved_documents"].dtype) == "Int64"
    assert back["pages"].tolist() == [0, pd.NA, 2]
    assert back["retrieved_documents"].tolist() == [pd.NA, pd.NA, 2**40]
    assert str(back["total_ru"].dtype) == "Float64" and back["total_ru"].tolist() == [2.5, 3.5, 4.5]
    assert str(back["routing_mismatch"].dtype) == "boolean"
    assert back["routing_mismatch"].tolist() == [True, pd.NA, False]
    assert isinstance(back["error"].dtype, pd.StringDtype)
    assert back["error"].tolist() == [pd.NA, "", ""]
    assert back["database"].isna().all()  # a column the frame did not have
    assert str(back["time"].dtype) == "datetime64[us, UTC]"
    assert back["time"].tolist() == frame["time"].tolist()


def test_requests_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "time": pd.to_datetime(["2024-05-01T12:00:00+02:00", "2024-05-01T12:00:01+02:00"]),
            "execution_id": ["e1", "e1"],
            "seq": [0, 1],
            "status": [200, 429],
            "substatus": [None, 3200],
            "request_charge": [3.1, None],
            "pkrange_id": ["0", ""],
            "retrieved_document_size": [None, 12_000_000_000],
            "index_utilization": ['{"UtilizedSingleIndexes":[]}', None],
        }
    )
    write_frame(tmp_path, "requests", frame, run_id="r1", part="q1")
    back = read_table(tmp_path, REQUESTS)

    assert list(back.columns) == REQUESTS.columns
    assert back["run_id"].tolist() == ["r1", "r1"]
    assert back["time"].tolist() == [pd.Timestamp("2024-05-01T10:00:00Z"), pd.Timestamp("2024-05-01T10:00:01Z")]
    assert str(back["time"].dt.tz) == "UTC"
    assert str(back["substatus"].dtype) == "Int32" and back["substatus"].tolist() == [pd.NA, 3200]
    assert back["retrieved_document_size"].tolist() == [pd.NA, 12_000_000_000]
    assert back["request_charge"].tolist() == [3.1, pd.NA]
    assert back["pkrange_id"].tolist() == ["0", ""]
    assert back["index_utilization"].tolist() == ['{"UtilizedSingleIndexes":[]}', pd.NA]


def test_naive_times_are_taken_as_utc(tmp_path: Path) -> None:
    frame = executions().assign(time=pd.to_datetime(["2024-05-01 23:30", "2024-05-01 23:31", "2024-05-01 23:32"]))
    path = write_frame(tmp_path, "executions", frame, run_id="r1", part="p")
    assert path.parent.name == "date=2024-05-01"
    assert read_table(tmp_path, "executions")["time"].iloc[0] == pd.Timestamp("2024-05-01 23:30", tz="UTC")


def test_read_sorts_by_time(tmp_path: Path) -> None:
    write_frame(
        tmp_path, "executions", executions(ids=("late",), start=T0 + pd.Timedelta(hours=1)), run_id="r1", part="a"
    )
    write_frame(tmp_path, "executions", executions(ids=("early",)), run_id="r1", part="b")
    assert read_table(tmp_path, "executions")["execution_id"].tolist() == ["early", "late"]


# --- layout and atomic writes ---------------------------------------------------------------------------------


def test_layout_and_file_name(tmp_path: Path) -> None:
    path = write_frame(tmp_path, "executions", executions(run_id="run-7"), run_id="run-7", part="q0003")
    assert path == tmp_path / "executions" / "date=2024-05-01" / "run-7-q0003.parquet"
    assert path.is_file() and pq.read_table(path).num_rows == 3
    assert pq.read_table(path).schema.names == EXECUTIONS.columns


def test_day_is_the_utc_date_of_the_first_time_unless_given(tmp_path: Path) -> None:
    evening_in_chicago = pd.Timestamp("2024-05-01 20:00", tz="America/Chicago")  # 2024-05-02 01:00 UTC
    path = write_frame(tmp_path, "executions", executions(start=evening_in_chicago), run_id="r1", part="a")
    assert path.parent.name == "date=2024-05-02"
    path = write_frame(tmp_path, "executions", executions(), run_id="r1", part="b", day=dt.date(2023, 1, 9))
    assert path.parent.name == "date=2023-01-09"


def test_empty_frame_writes_nothing_and_returns_the_would_be_path(tmp_path: Path) -> None:
    path = write_frame(tmp_path, "executions", executions().iloc[0:0], run_id="r1", part="a")
    today = dt.datetime.now(dt.UTC).date()
    assert path == partition(tmp_path, day=today) / "r1-a.parquet"
    assert not path.exists()
    assert write_frame(tmp_path, "executions", pd.DataFrame(), run_id="r1", part="b", day=DAY).name == "r1-b.parquet"
    assert not (tmp_path / "executions" / f"date={DAY}" / "r1-b.parquet").exists()


def test_atomic_write_leaves_no_temp_file(tmp_path: Path) -> None:
    for part in ("a", "b", "a"):
        write_frame(tmp_path, "executions", executions(), run_id="r1", part=part)
    assert visible_files(partition(tmp_path)) == ["r1-a.parquet", "r1-b.parquet"]


def test_a_failed_write_removes_its_temp_file_and_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    path = write_frame(tmp_path, "executions", executions(ids=("old",)), run_id="r1", part="a")

    def broken_write(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store.pq, "write_table", broken_write)
    with pytest.raises(OSError, match="disk full"):
        write_frame(tmp_path, "executions", executions(ids=("new",)), run_id="r1", part="a")
    assert visible_files(path.parent) == ["r1-a.parquet"]
    monkeypatch.undo()
    assert read_table(tmp_path, "executions")["execution_id"].tolist() == ["old"]


# --- idempotence and keys --------------------------------------------------------------------------------------


def test_rewriting_a_part_replaces_it(tmp_path: Path) -> None:
    write_frame(tmp_path, "executions", executions(), run_id="r1", part="q1")
    write_frame(tmp_path, "executions", executions().assign(total_ru=[9.0, 9.0, 9.0]), run_id="r1", part="q1")
    back = read_table(tmp_path, "executions")
    assert len(back) == 3 and back["total_ru"].tolist() == [9.0, 9.0, 9.0]
    assert visible_files(partition(tmp_path)) == ["r1-q1.parquet"]


def test_the_same_key_in_two_parts_keeps_the_last_written(tmp_path: Path) -> None:
    # "z" sorts before "a" neither by name nor by time: the order is the write order.
    write_frame(tmp_path, "executions", executions(ids=("e1", "e2")).assign(total_ru=1.0), run_id="r1", part="z")
    write_frame(tmp_path, "executions", executions(ids=("e2", "e3")).assign(total_ru=2.0), run_id="r1", part="a")
    back = read_table(tmp_path, "executions").set_index("execution_id")["total_ru"]
    assert back.to_dict() == {"e1": 1.0, "e2": 2.0, "e3": 2.0}


def test_the_same_ids_in_two_runs_are_different_rows(tmp_path: Path) -> None:
    write_frame(tmp_path, "executions", executions(run_id="r1"), run_id="r1", part="a")
    write_frame(tmp_path, "executions", executions(run_id="r2"), run_id="r2", part="a")
    assert len(read_table(tmp_path, "executions")) == 6


# --- conforming errors -----------------------------------------------------------------------------------------


def test_unknown_column_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'totl_ru'"):
        write_frame(tmp_path, "executions", executions().assign(totl_ru=1.0), run_id="r1", part="a")
    assert not (tmp_path / "executions").exists()


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("pages", ["three", 1, 2]),  # text in an int column
        ("pages", [1.5, 1, 2]),  # a fraction would be truncated
        ("pages", [2**40, 1, 2]),  # overflows int32
        ("time", ["yesterday", "now", "tomorrow"]),
        ("total_ru", [{"ru": 1}, 2.0, 3.0]),
    ],
)
def test_uncastable_value_names_the_column(tmp_path: Path, column: str, values: list[object]) -> None:
    with pytest.raises(ValueError, match=f"column '{column}'"):
        write_frame(tmp_path, "executions", executions().assign(**{column: values}), run_id="r1", part="a")


def test_castable_values_are_cast(tmp_path: Path) -> None:
    frame = executions().assign(pages=["1", "2", None], total_ru=[1, 2, 3], time=T0.isoformat())
    write_frame(tmp_path, "executions", frame, run_id="r1", part="a")
    back = read_table(tmp_path, "executions")
    assert back["pages"].tolist() == [1, 2, pd.NA] and back["total_ru"].tolist() == [1.0, 2.0, 3.0]
    assert (back["time"] == T0).all()


def test_run_id_column_is_filled_and_must_match(tmp_path: Path) -> None:
    write_frame(tmp_path, "executions", executions().drop(columns="run_id"), run_id="r9", part="a")
    assert read_table(tmp_path, "executions")["run_id"].unique().tolist() == ["r9"]
    with pytest.raises(ValueError, match="'other'"):
        write_frame(tmp_path, "executions", executions(run_id="other"), run_id="r9", part="b")


def test_unknown_table_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'exections'"):
        write_frame(tmp_path, "exections", executions(), run_id="r1", part="a")


@pytest.mark.parametrize("bad", ["", ".hidden", "a/b", "../up", "a b", "r\u00e9", "x\n", "a*"])
@pytest.mark.parametrize("what", ["run_id", "part"])
def test_unsafe_run_id_or_part_is_rejected(tmp_path: Path, what: str, bad: str) -> None:
    names = {"run_id": "r1", "part": "a", what: bad}
    with pytest.raises(ValueError, match=what):
        write_frame(tmp_path, "executions", executions(run_id=names["run_id"]).drop(columns="run_id"), **names)
    assert not list(tmp_path.rglob("*"))


def test_safe_tokens_are_accepted(tmp_path: Path) -> None:
    path = write_frame(
        tmp_path, "executions", executions().drop(columns="run_id"), run_id="2024-05-01T10.00_Z", part="q-1.a_b"
    )
    assert path.name == "2024-05-01T10.00_Z-q-1.a_b.parquet"


# --- a reader that survives bad files ---------------------------------------------------------------------------


def _good_store(root: Path) -> Path:
    """Two good files; returns the path of one of them."""
    write_frame(root, "executions", executions(ids=("g1", "g2")), run_id="r1", part="a")
    return write_frame(root, "executions", executions(ids=("g3",)), run_id="r1", part="b")


def _zero_bytes(directory: Path, good: Path) -> Path:
    path = directory / "r1-empty.parquet"
    path.touch()
    return path


def _truncated(directory: Path, good: Path) -> Path:
    path = directory / "r1-truncated.parquet"
    data = good.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


def _text(directory: Path, good: Path) -> Path:
    path = directory / "r1-notes.parquet"
    path.write_text("execution_id,total_ru\ne9,1.0\n")
    return path


def _stale_temp(directory: Path, good: Path) -> Path:
    path = directory / ".r1-c.parquet.0123abcd.tmp"
    path.write_bytes(good.read_bytes()[:100])
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))
    return path


def _missing_key(directory: Path, good: Path) -> Path:
    path = directory / "r1-nokey.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), path)
    return path


def _wrong_types(directory: Path, good: Path) -> Path:
    path = directory / "r1-types.parquet"
    table = pq.read_table(good).set_column(EXECUTIONS.columns.index("pages"), "pages", pa.array(["many"]))
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("make_bad", [_zero_bytes, _truncated, _text, _stale_temp, _missing_key, _wrong_types])
def test_a_bad_file_is_skipped_with_a_warning_naming_it(tmp_path: Path, make_bad, caplog) -> None:
    good = _good_store(tmp_path)
    bad = make_bad(good.parent, good)
    caplog.set_level(logging.WARNING, logger="ruscope.store")

    with pytest.warns(StoreWarning, match=re.escape(str(bad))) as record:
        back = read_table(tmp_path, "executions")

    assert rows(back) == ["g1", "g2", "g3"]
    assert len([w for w in record if issubclass(w.category, StoreWarning)]) == 1
    assert [r.name for r in caplog.records] == ["ruscope.store"] and bad.name in caplog.text


def test_all_bad_files_at_once(tmp_path: Path) -> None:
    good = _good_store(tmp_path)
    bad = [
        make(good.parent, good) for make in (_zero_bytes, _truncated, _text, _stale_temp, _missing_key, _wrong_types)
    ]
    with pytest.warns(StoreWarning) as record:
        back = read_table(tmp_path, "executions")
    assert rows(back) == ["g1", "g2", "g3"]
    named = [re.match(r"store: skipped (.+?): ", str(w.message)).group(1) for w in record]
    assert sorted(named) == sorted(str(p) for p in bad)


def test_a_fresh_temp_file_is_a_write_in_progress_and_ignored_silently(tmp_path: Path) -> None:
    good = _good_store(tmp_path)
    (good.parent / ".r1-c.parquet.0123abcd.tmp").write_bytes(b"PAR1 half written")
    (good.parent / "README.txt").write_text("not data")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rows(read_table(tmp_path, "executions")) == ["g1", "g2", "g3"]


def test_a_file_written_before_a_column_existed_reads_it_as_null(tmp_path: Path) -> None:
    directory = partition(tmp_path)
    directory.mkdir(parents=True)
    old = pa.table(
        {
            "run_id": ["old"],
            "time": pa.array([T0.to_pydatetime()], pa.timestamp("ms", tz="UTC")),
            "execution_id": ["e1"],
            "pages": pa.array([4], pa.int8()),  # narrower types cast up
        }
    )
    pq.write_table(old, directory / "old-1.parquet")
    back = read_table(tmp_path, "executions")
    assert list(back.columns) == EXECUTIONS.columns
    assert back["pages"].tolist() == [4] and str(back["pages"].dtype) == "Int32"
    assert back[["total_ru", "throttled", "sql"]].isna().all().all()


# --- kill -9 ------------------------------------------------------------------------------------------------

WRITER = r"""
import os, sys, time
from pathlib import Path
import pandas as pd
from collectors.store import parquet as store

root, rows, pause_in = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
base = pd.Timestamp("2024-05-01 10:00", tz="UTC")


def pause(*args, **kwargs):
    print("paused", flush=True)
    time.sleep(120)


for i in range(100_000):
    if i == 3 and pause_in != "none":
        setattr(os, pause_in, pause)  # the next write stops inside os.<pause_in>
    frame = pd.DataFrame({
        "time": base + pd.to_timedelta(range(rows), unit="ms"),
        "execution_id": [f"p{i}-{j}" for j in range(rows)],
        "sql": ["SELECT * FROM c WHERE c.tenantId = @t"] * rows,
        "total_ru": [2.5] * rows,
        "pages": [j % 7 or None for j in range(rows)],
    })
    store.write_frame(root, "executions", frame, run_id="k", part=f"p{i:05d}")
    print(f"done {i}", flush=True)
"""


def _run_and_kill(root: Path, rows: int, pause_in: str, kill_after: str, delay: float) -> list[int]:
    """Start the writer, SIGKILL it once it prints `kill_after` (plus `delay`); return the parts it finished."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), str(rows), pause_in],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        while (line := proc.stdout.readline().strip()) != kill_after:
            assert line, f"writer ended early: {proc.stderr.read()}"
            lines.append(line)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        lines += proc.stdout.read().split()  # anything printed before the kill landed
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    lines.append(kill_after)
    return sorted({int(n) for n in " ".join(lines).split() if n.isdigit()})


def _check_store_after_kill(root: Path, rows: int, finished: list[int]) -> list[int]:
    """Every visible file is whole; the reader returns exactly their rows, without a warning."""
    directory = partition(root)
    files = [p for p in directory.iterdir() if not p.name.startswith(".")]
    present = sorted(int(p.name.removeprefix("k-p").removesuffix(".parquet")) for p in files)
    assert set(finished) <= set(present) <= set(finished) | {max(finished, default=-1) + 1}
    for path in files:
        assert pq.read_table(path).num_rows == rows  # complete, never partial
    assert all(p.name.endswith(".tmp") for p in directory.iterdir() if p.name.startswith("."))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = read_table(root, "executions")
    expected = sorted(f"p{i}-{j}" for i in present for j in range(rows))
    assert rows_of(back) == expected
    return present


def rows_of(frame: pd.DataFrame) -> list[str]:
    return sorted(frame["execution_id"].tolist())


@pytest.mark.parametrize("pause_in", ["fsync", "replace"])
def test_kill_9_inside_a_write_loses_nothing_already_written(tmp_path: Path, pause_in: str) -> None:
    """Deterministic: the writer is killed while part 3 sits in its temp file (before fsync / before rename)."""
    finished = _run_and_kill(tmp_path, 500, pause_in, kill_after="paused", delay=0.0)
    assert finished == [0, 1, 2]
    temps = [p for p in partition(tmp_path).iterdir() if p.name.startswith(".")]
    assert len(temps) == 1 and temps[0].name.startswith(".k-p00003.parquet.")
    assert _check_store_after_kill(tmp_path, 500, finished) == [0, 1, 2]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_a_random_moment_keeps_exactly_the_complete_parts(tmp_path: Path, seed: int) -> None:
    delay = random.Random(seed).uniform(0.0, 0.05)
    finished = _run_and_kill(tmp_path, 20_000, "none", kill_after="done 2", delay=delay)
    present = _check_store_after_kill(tmp_path, 20_000, finished)
    assert present[:3] == [0, 1, 2]


# --- filters, empty stores, runs -----------------------------------------------------------------------------


def test_since_selects_partitions(tmp_path: Path) -> None:
    for day in (dt.date(2024, 4, 30), dt.date(2024, 5, 1), dt.date(2024, 5, 2)):
        write_frame(tmp_path, "executions", executions(ids=(f"e{day.day}",)), run_id="r1", part="a", day=day)
    assert rows(read_table(tmp_path, "executions", since=dt.date(2024, 5, 1))) == ["e1", "e2"]
    assert rows(read_table(tmp_path, "executions", since=dt.date(2024, 5, 3))) == []
    assert len(read_table(tmp_path, "executions")) == 3


def test_run_ids_filter(tmp_path: Path) -> None:
    # "r1" is a prefix of "r1-b": file names alone cannot tell them apart, the rows can.
    for run_id in ("r1", "r1-b", "r2"):
        write_frame(tmp_path, "executions", executions(run_id=run_id, ids=(f"x-{run_id}",)), run_id=run_id, part="a")
    assert rows(read_table(tmp_path, "executions", run_ids=["r1"])) == ["x-r1"]
    assert rows(read_table(tmp_path, "executions", run_ids={"r1-b", "r2"})) == ["x-r1-b", "x-r2"]
    assert read_table(tmp_path, "executions", run_ids=[]).empty


def test_filters_combine(tmp_path: Path) -> None:
    write_frame(
        tmp_path, "executions", executions(run_id="r1", ids=("a",)), run_id="r1", part="p", day=dt.date(2024, 1, 1)
    )
    write_frame(
        tmp_path, "executions", executions(run_id="r1", ids=("b",)), run_id="r1", part="p", day=dt.date(2024, 2, 1)
    )
    write_frame(
        tmp_path, "executions", executions(run_id="r2", ids=("c",)), run_id="r2", part="p", day=dt.date(2024, 2, 1)
    )
    assert rows(read_table(tmp_path, "executions", since=dt.date(2024, 2, 1), run_ids=["r1"])) == ["b"]


@pytest.mark.parametrize("table", [EXECUTIONS, REQUESTS])
def test_an_empty_store_gives_the_same_columns_and_dtypes(tmp_path: Path, table) -> None:
    missing = read_table(tmp_path / "nowhere", table)
    (tmp_path / "here" / table.name / "date=2024-05-01").mkdir(parents=True)
    no_files = read_table(tmp_path / "here", table)
    frame = executions() if table is EXECUTIONS else pd.DataFrame({"time": [T0], "execution_id": ["e"], "seq": [0]})
    write_frame(tmp_path / "full", table, frame, run_id="r1", part="a")
    full = read_table(tmp_path / "full", table)

    for empty in (missing, no_files):
        assert empty.empty and list(empty.columns) == table.columns
        assert empty.dtypes.to_dict() == full.dtypes.to_dict()
    assert str(missing["time"].dtype) == "datetime64[us, UTC]"
    assert not (tmp_path / "nowhere").exists()


def test_list_runs_newest_first(tmp_path: Path) -> None:
    starts = {"monday": T0, "wednesday": T0 + pd.Timedelta(days=2), "tuesday": T0 + pd.Timedelta(days=1)}
    for run_id, start in starts.items():
        write_frame(tmp_path, "executions", executions(run_id=run_id, start=start), run_id=run_id, part="a")
    # a later part of Monday's run does not make it newer than Wednesday's: runs are ordered by their start
    write_frame(
        tmp_path,
        "executions",
        executions(run_id="monday", ids=("m9",), start=T0 + pd.Timedelta(days=5)),
        run_id="monday",
        part="b",
    )
    assert list_runs(tmp_path) == ["wednesday", "tuesday", "monday"]
    assert list_runs(tmp_path, "requests") == []
    assert list_runs(tmp_path / "nowhere") == []


def test_since_a_datetime_keeps_rows_at_or_after_it(tmp_path: Path) -> None:
    # one part dated 2024-04-30 whose rows run past midnight, as a part is dated by its first row
    late = executions(ids=("a", "b", "c"), start=pd.Timestamp("2024-04-30 23:59:59", tz="UTC"))
    write_frame(tmp_path, "executions", late, run_id="r1", part="a")
    write_frame(tmp_path, "executions", executions(ids=("d",)), run_id="r1", part="b", day=dt.date(2024, 4, 1))
    since = dt.datetime(2024, 5, 1, 0, 0, 0, tzinfo=dt.UTC)
    assert rows(read_table(tmp_path, "executions", since=since)) == ["b", "c"]
    assert rows(read_table(tmp_path, "executions", since=since.replace(tzinfo=None))) == ["b", "c"]  # naive: UTC
    berlin = dt.timezone(dt.timedelta(hours=2))
    assert rows(read_table(tmp_path, "executions", since=dt.datetime(2024, 5, 1, 2, 0, 1, tzinfo=berlin))) == ["c"]


def test_since_never_opens_older_partitions(tmp_path: Path) -> None:
    write_frame(tmp_path, "executions", executions(ids=("new",)), run_id="r1", part="a")
    old = partition(tmp_path, day=dt.date(2024, 4, 1))
    old.mkdir(parents=True)
    (old / "r0-a.parquet").write_bytes(b"not parquet")  # would warn if it were opened
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert rows(read_table(tmp_path, "executions", since=DAY)) == ["new"]
        assert rows(read_table(tmp_path, "executions", since=dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC))) == ["new"]
    with pytest.warns(StoreWarning, match="r0-a.parquet"):
        read_table(tmp_path, "executions")


def test_columns_reads_only_those_and_still_drops_repeats(tmp_path: Path) -> None:
    write_frame(tmp_path, "executions", executions(), run_id="r1", part="a")
    again = executions(ids=("e3",), start=T0 + pd.Timedelta(seconds=2)).assign(total_ru=[9.5])
    write_frame(tmp_path, "executions", again, run_id="r1", part="b")  # the same key, written later
    full = read_table(tmp_path, "executions")
    some = read_table(tmp_path, "executions", columns=["total_ru", "query_name"])
    assert list(some.columns) == ["total_ru", "query_name"]  # key and time read to dedupe and sort, then dropped
    assert some["total_ru"].tolist() == [2.5, 3.5, 9.5] and some["query_name"].tolist() == ["q-0", "q-1", "q-0"]
    assert some.dtypes.to_dict() == full[["total_ru", "query_name"]].dtypes.to_dict()
    assert list(read_table(tmp_path, "executions", columns=["run_id", "time"]).columns) == ["run_id", "time"]
    empty = read_table(tmp_path / "nowhere", "executions", columns=["pages"])
    assert empty.empty and str(empty["pages"].dtype) == "Int32"


def test_columns_only_opens_those_columns(tmp_path: Path, monkeypatch) -> None:
    path = write_frame(tmp_path, "executions", executions(), run_id="r1", part="a")
    asked: list[list[str] | None] = []
    original = pq.ParquetFile.read

    def spy(self, columns=None, **kwargs):
        asked.append(columns)
        return original(self, columns=columns, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", spy)
    read_table(tmp_path, "executions", columns=["total_ru"])
    assert path.exists() and sorted(asked[0]) == ["execution_id", "run_id", "time", "total_ru"]


def test_unknown_columns_and_bad_since_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'nope'"):
        read_table(tmp_path, "executions", columns=["total_ru", "nope"])
    with pytest.raises(ValueError, match="list of column names"):
        read_table(tmp_path, "executions", columns="total_ru")
    with pytest.raises(TypeError, match="date or a datetime"):
        read_table(tmp_path, "executions", since="2024-05-01")
