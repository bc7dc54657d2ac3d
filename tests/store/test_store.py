"""The Delta store: conforming, layout, exactly-once part commits, filters, and a reader that survives bad files."""

from __future__ import annotations

import datetime as dt
import logging
import re
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from store import EXECUTIONS, REQUESTS, StoreWarning, compact, list_runs, read_table, store_location, write_frame

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


# --- round trips -------------------------------------------------------------------------------------------


def test_executions_round_trip_keeps_types_nulls_and_schema_order(tmp_path: Path) -> None:
    frame = executions()
    write_frame(store_location(tmp_path), EXECUTIONS, frame, run_id="r1", part="q0001")
    back = read_table(store_location(tmp_path), "executions")

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
    write_frame(store_location(tmp_path), "requests", frame, run_id="r1", part="q1")
    back = read_table(store_location(tmp_path), REQUESTS)

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
    write_frame(store_location(tmp_path), "executions", frame, run_id="r1", part="p")
    assert partitions(tmp_path) == ["date=2024-05-01"]
    assert read_table(store_location(tmp_path), "executions")["time"].iloc[0] == pd.Timestamp(
        "2024-05-01 23:30", tz="UTC"
    )


def test_read_sorts_by_time(tmp_path: Path) -> None:
    write_frame(
        store_location(tmp_path),
        "executions",
        executions(ids=("late",), start=T0 + pd.Timedelta(hours=1)),
        run_id="r1",
        part="a",
    )
    write_frame(store_location(tmp_path), "executions", executions(ids=("early",)), run_id="r1", part="b")
    assert read_table(store_location(tmp_path), "executions")["execution_id"].tolist() == ["early", "late"]


# --- layout and exactly-once parts -------------------------------------------------------------------------


def partitions(root: Path, table: str = "executions") -> list[str]:
    return sorted(p.name for p in (root / table).iterdir() if p.name.startswith("date="))


def test_each_table_is_a_delta_table_partitioned_by_date(tmp_path: Path) -> None:
    assert (
        write_frame(store_location(tmp_path), "executions", executions(run_id="run-7"), run_id="run-7", part="q0003")
        == 3
    )
    table = DeltaTable(tmp_path / "executions")
    assert table.metadata().partition_columns == ["date"]
    assert [f.name for f in table.schema().fields] == [*EXECUTIONS.columns, "date"]
    assert table.transaction_version("ruscope-run-7-q0003") == 1
    assert partitions(tmp_path) == ["date=2024-05-01"] and (tmp_path / "executions" / "_delta_log").is_dir()


def test_rows_are_dated_by_their_own_utc_time_unless_a_day_is_given(tmp_path: Path) -> None:
    evening_in_chicago = pd.Timestamp("2024-05-01 18:59:59", tz="America/Chicago")  # 23:59:59 UTC, then 00:00
    write_frame(
        store_location(tmp_path),
        "executions",
        executions(ids=("a", "b"), start=evening_in_chicago),
        run_id="r1",
        part="a",
    )
    assert partitions(tmp_path) == ["date=2024-05-01", "date=2024-05-02"]
    write_frame(
        store_location(tmp_path), "executions", executions(ids=("c",)), run_id="r1", part="b", day=dt.date(2023, 1, 9)
    )
    assert partitions(tmp_path) == ["date=2023-01-09", "date=2024-05-01", "date=2024-05-02"]
    assert rows(read_table(store_location(tmp_path), "executions", since=dt.date(2024, 5, 2))) == ["b"]


def test_an_empty_frame_commits_nothing(tmp_path: Path) -> None:
    assert write_frame(store_location(tmp_path), "executions", executions().iloc[0:0], run_id="r1", part="a") == 0
    assert write_frame(store_location(tmp_path), "executions", pd.DataFrame(), run_id="r1", part="b", day=DAY) == 0
    assert not (tmp_path / "executions").exists()


def test_a_part_is_committed_exactly_once(tmp_path: Path) -> None:
    assert write_frame(store_location(tmp_path), "executions", executions(), run_id="r1", part="q1") == 3
    again = executions().assign(total_ru=[9.0, 9.0, 9.0])
    assert write_frame(store_location(tmp_path), "executions", again, run_id="r1", part="q1") == 0  # a retried seal
    back = read_table(store_location(tmp_path), "executions")
    assert len(back) == 3 and back["total_ru"].tolist() == [2.5, 3.5, 4.5]
    assert DeltaTable(tmp_path / "executions").version() == 0


def test_the_same_ids_in_two_runs_are_different_rows(tmp_path: Path) -> None:
    write_frame(store_location(tmp_path), "executions", executions(run_id="r1"), run_id="r1", part="a")
    write_frame(store_location(tmp_path), "executions", executions(run_id="r2"), run_id="r2", part="a")
    assert len(read_table(store_location(tmp_path), "executions")) == 6


# --- conforming errors -----------------------------------------------------------------------------------------


def test_unknown_column_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'totl_ru'"):
        write_frame(store_location(tmp_path), "executions", executions().assign(totl_ru=1.0), run_id="r1", part="a")
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
        write_frame(
            store_location(tmp_path), "executions", executions().assign(**{column: values}), run_id="r1", part="a"
        )


def test_castable_values_are_cast(tmp_path: Path) -> None:
    frame = executions().assign(pages=["1", "2", None], total_ru=[1, 2, 3], time=T0.isoformat())
    write_frame(store_location(tmp_path), "executions", frame, run_id="r1", part="a")
    back = read_table(store_location(tmp_path), "executions")
    assert back["pages"].tolist() == [1, 2, pd.NA] and back["total_ru"].tolist() == [1.0, 2.0, 3.0]
    assert (back["time"] == T0).all()


def test_run_id_column_is_filled_and_must_match(tmp_path: Path) -> None:
    write_frame(store_location(tmp_path), "executions", executions().drop(columns="run_id"), run_id="r9", part="a")
    assert read_table(store_location(tmp_path), "executions")["run_id"].unique().tolist() == ["r9"]
    with pytest.raises(ValueError, match="'other'"):
        write_frame(store_location(tmp_path), "executions", executions(run_id="other"), run_id="r9", part="b")


def test_unknown_table_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'exections'"):
        write_frame(store_location(tmp_path), "exections", executions(), run_id="r1", part="a")


@pytest.mark.parametrize("bad", ["", ".hidden", "a/b", "../up", "a b", "r\u00e9", "x\n", "a*"])
@pytest.mark.parametrize("what", ["run_id", "part"])
def test_unsafe_run_id_or_part_is_rejected(tmp_path: Path, what: str, bad: str) -> None:
    names = {"run_id": "r1", "part": "a", what: bad}
    with pytest.raises(ValueError, match=what):
        write_frame(
            store_location(tmp_path), "executions", executions(run_id=names["run_id"]).drop(columns="run_id"), **names
        )
    assert not list(tmp_path.rglob("*"))


def test_safe_tokens_are_accepted(tmp_path: Path) -> None:
    frame = executions().drop(columns="run_id")
    assert write_frame(store_location(tmp_path), "executions", frame, run_id="2024-05-01T10.00_Z", part="q-1.a_b") == 3
    assert DeltaTable(tmp_path / "executions").transaction_version("ruscope-2024-05-01T10.00_Z-q-1.a_b") == 1


# --- a reader that survives bad files ---------------------------------------------------------------------------


def _good_store(root: Path) -> Path:
    """Two commits; returns the path of one data file of the table."""
    write_frame(store_location(root), "executions", executions(ids=("g1", "g2")), run_id="r1", part="a")
    write_frame(store_location(root), "executions", executions(ids=("g3",)), run_id="r1", part="b")
    return Path(DeltaTable(root / "executions").file_uris()[0])


def _zero_bytes(directory: Path, good: Path) -> Path:
    path = directory / "r1-empty.parquet"
    path.touch()
    return path


def _text(directory: Path, good: Path) -> Path:
    path = directory / "r1-notes.parquet"
    path.write_text("execution_id,total_ru\ne9,1.0\n")
    return path


def _old_part(directory: Path, good: Path) -> Path:
    path = directory / "r0-q0001.parquet"
    pq.write_table(pq.read_table(good), path)  # readable, but not in the table: not read
    return path


@pytest.mark.parametrize("make_stray", [_zero_bytes, _text, _old_part])
def test_a_file_not_in_the_table_is_named_in_a_warning_and_not_read(tmp_path: Path, make_stray, caplog) -> None:
    good = _good_store(tmp_path)
    stray = make_stray(good.parent, good)
    caplog.set_level(logging.WARNING, logger="ruscope.store")
    with pytest.warns(StoreWarning, match=re.escape(str(stray))) as record:
        back = read_table(store_location(tmp_path), "executions")
    assert rows(back) == ["g1", "g2", "g3"]
    assert len(record) == 1 and "ruscope store migrate" in str(record[0].message)
    assert [r.name for r in caplog.records] == ["ruscope.store"] and stray.name in caplog.text


@pytest.mark.parametrize("damage", ["truncate", "empty"])
def test_a_damaged_file_of_the_table_is_skipped_with_a_warning_naming_it(tmp_path: Path, damage: str) -> None:
    _good_store(tmp_path)
    victim = next(Path(u) for u in DeltaTable(tmp_path / "executions").file_uris() if pq.read_table(u).num_rows == 1)
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"")
    with pytest.warns(StoreWarning, match=re.escape(f"skipped {victim}")):
        assert rows(read_table(store_location(tmp_path), "executions")) == ["g1", "g2"]


def test_a_table_whose_log_is_unreadable_is_one_warning_naming_it(tmp_path: Path) -> None:
    _good_store(tmp_path)
    for entry in (tmp_path / "executions" / "_delta_log").glob("*.json"):
        entry.write_text("{not json")
    first = re.escape(str(tmp_path / "executions" / "_delta_log" / "00000000000000000000.json"))
    with pytest.warns(
        StoreWarning, match=rf"^store: table 'executions' in .+: log entry {first} .+ nothing is read"
    ) as record:
        back = read_table(store_location(tmp_path), "executions")
    assert back.empty and list(back.columns) == EXECUTIONS.columns and len(record) == 1
    assert "\n" not in str(record[0].message)


def test_a_writers_uncommitted_file_is_ignored_silently(tmp_path: Path) -> None:
    good = _good_store(tmp_path)
    (good.parent / "part-00000-0123abcd-0000-0000-0000-000000000000-c000.snappy.parquet").write_bytes(b"PAR1 half")
    (good.parent / "README.txt").write_text("not data")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rows(read_table(store_location(tmp_path), "executions")) == ["g1", "g2", "g3"]


def test_commits_made_before_a_column_existed_read_it_as_null(tmp_path: Path) -> None:
    old = pa.table(
        {
            "run_id": ["old"],
            "time": pa.array([T0.to_pydatetime()], pa.timestamp("us", tz="UTC")),
            "execution_id": ["e1"],
            "pages": pa.array([4], pa.int32()),
            "date": ["2024-05-01"],
        }
    )
    write_deltalake(tmp_path / "executions", old, partition_by=["date"])  # a table from an older record
    write_frame(
        store_location(tmp_path), "executions", executions(ids=("new",)), run_id="r1", part="a"
    )  # merges the schema
    back = read_table(store_location(tmp_path), "executions")
    assert list(back.columns) == EXECUTIONS.columns and rows(back) == ["e1", "new"]
    first = back[back["execution_id"].eq("e1")]
    assert first["pages"].tolist() == [4] and str(back["pages"].dtype) == "Int32"
    assert first[["total_ru", "throttled", "sql"]].isna().all().all()
    assert len(read_table(store_location(tmp_path), "executions", columns=["sql"])) == 2


# --- filters, empty stores, runs -----------------------------------------------------------------------------


def on(day: dt.date) -> pd.Timestamp:
    return pd.Timestamp(day, tz="UTC") + pd.Timedelta(hours=10)


def test_since_selects_partitions(tmp_path: Path) -> None:
    for day in (dt.date(2024, 4, 30), dt.date(2024, 5, 1), dt.date(2024, 5, 2)):
        write_frame(
            store_location(tmp_path),
            "executions",
            executions(ids=(f"e{day.day}",), start=on(day)),
            run_id="r1",
            part=f"{day}",
        )
    assert rows(read_table(store_location(tmp_path), "executions", since=dt.date(2024, 5, 1))) == ["e1", "e2"]
    assert rows(read_table(store_location(tmp_path), "executions", since=dt.date(2024, 5, 3))) == []
    assert len(read_table(store_location(tmp_path), "executions")) == 3


def test_run_ids_filter(tmp_path: Path) -> None:
    # "r1" is a prefix of "r1-b": file names alone cannot tell them apart, the rows can.
    for run_id in ("r1", "r1-b", "r2"):
        write_frame(
            store_location(tmp_path),
            "executions",
            executions(run_id=run_id, ids=(f"x-{run_id}",)),
            run_id=run_id,
            part="a",
        )
    assert rows(read_table(store_location(tmp_path), "executions", run_ids=["r1"])) == ["x-r1"]
    assert rows(read_table(store_location(tmp_path), "executions", run_ids={"r1-b", "r2"})) == ["x-r1-b", "x-r2"]
    assert read_table(store_location(tmp_path), "executions", run_ids=[]).empty


def test_filters_combine(tmp_path: Path) -> None:
    for run_id, ids, day in (
        ("r1", "a", dt.date(2024, 1, 1)),
        ("r1", "b", dt.date(2024, 2, 1)),
        ("r2", "c", dt.date(2024, 2, 1)),
    ):
        frame = executions(run_id=run_id, ids=(ids,), start=on(day))
        write_frame(store_location(tmp_path), "executions", frame, run_id=run_id, part=ids)
    assert rows(read_table(store_location(tmp_path), "executions", since=dt.date(2024, 2, 1), run_ids=["r1"])) == ["b"]


@pytest.mark.parametrize("table", [EXECUTIONS, REQUESTS])
def test_an_empty_store_gives_the_same_columns_and_dtypes(tmp_path: Path, table) -> None:
    missing = read_table(store_location(tmp_path / "nowhere"), table)
    (tmp_path / "here" / table.name / "date=2024-05-01").mkdir(parents=True)  # a directory, no table
    no_files = read_table(store_location(tmp_path / "here"), table)
    frame = executions() if table is EXECUTIONS else pd.DataFrame({"time": [T0], "execution_id": ["e"], "seq": [0]})
    write_frame(store_location(tmp_path / "full"), table, frame, run_id="r1", part="a")
    full = read_table(store_location(tmp_path / "full"), table)

    for empty in (missing, no_files):
        assert empty.empty and list(empty.columns) == table.columns
        assert empty.dtypes.to_dict() == full.dtypes.to_dict()
    assert str(missing["time"].dtype) == "datetime64[us, UTC]"
    assert not (tmp_path / "nowhere").exists()


def test_list_runs_newest_first(tmp_path: Path) -> None:
    starts = {"monday": T0, "wednesday": T0 + pd.Timedelta(days=2), "tuesday": T0 + pd.Timedelta(days=1)}
    for run_id, start in starts.items():
        write_frame(
            store_location(tmp_path), "executions", executions(run_id=run_id, start=start), run_id=run_id, part="a"
        )
    # a later part of Monday's run does not make it newer than Wednesday's: runs are ordered by their start
    write_frame(
        store_location(tmp_path),
        "executions",
        executions(run_id="monday", ids=("m9",), start=T0 + pd.Timedelta(days=5)),
        run_id="monday",
        part="b",
    )
    assert list_runs(store_location(tmp_path)) == ["wednesday", "tuesday", "monday"]
    assert list_runs(store_location(tmp_path), "requests") == []
    assert list_runs(store_location(tmp_path / "nowhere")) == []


def test_since_a_datetime_keeps_rows_at_or_after_it(tmp_path: Path) -> None:
    # one part whose rows run past midnight: each row is in its own day's partition
    late = executions(ids=("a", "b", "c"), start=pd.Timestamp("2024-04-30 23:59:59", tz="UTC"))
    write_frame(store_location(tmp_path), "executions", late, run_id="r1", part="a")
    write_frame(
        store_location(tmp_path), "executions", executions(ids=("d",)), run_id="r1", part="b", day=dt.date(2024, 4, 1)
    )
    since = dt.datetime(2024, 5, 1, 0, 0, 0, tzinfo=dt.UTC)
    assert rows(read_table(store_location(tmp_path), "executions", since=since)) == ["b", "c"]
    assert rows(read_table(store_location(tmp_path), "executions", since=since.replace(tzinfo=None))) == [
        "b",
        "c",
    ]  # naive: UTC
    berlin = dt.timezone(dt.timedelta(hours=2))
    assert rows(
        read_table(store_location(tmp_path), "executions", since=dt.datetime(2024, 5, 1, 2, 0, 1, tzinfo=berlin))
    ) == ["c"]


def test_since_never_opens_older_partitions(tmp_path: Path) -> None:
    write_frame(store_location(tmp_path), "executions", executions(ids=("new",)), run_id="r1", part="a")
    write_frame(
        store_location(tmp_path),
        "executions",
        executions(run_id="r0", ids=("old",), start=on(dt.date(2024, 4, 1))),
        run_id="r0",
        part="a",
    )
    old = next(Path(u) for u in DeltaTable(tmp_path / "executions").file_uris() if "2024-04-01" in u)
    old.write_bytes(b"not parquet")  # would warn if it were opened
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert rows(read_table(store_location(tmp_path), "executions", since=DAY)) == ["new"]
        assert rows(
            read_table(store_location(tmp_path), "executions", since=dt.datetime(2024, 5, 1, 9, tzinfo=dt.UTC))
        ) == ["new"]
    with pytest.warns(StoreWarning, match=re.escape(str(old))):
        read_table(store_location(tmp_path), "executions")


def test_columns_reads_only_those(tmp_path: Path) -> None:
    write_frame(store_location(tmp_path), "executions", executions(), run_id="r1", part="a")
    full = read_table(store_location(tmp_path), "executions")
    some = read_table(store_location(tmp_path), "executions", columns=["total_ru", "query_name"])
    assert list(some.columns) == ["total_ru", "query_name"]  # time read to sort, then dropped
    assert some["total_ru"].tolist() == [2.5, 3.5, 4.5] and some["query_name"].tolist() == ["q-0", "q-1", "q-2"]
    assert some.dtypes.to_dict() == full[["total_ru", "query_name"]].dtypes.to_dict()
    assert list(read_table(store_location(tmp_path), "executions", columns=["run_id", "time"]).columns) == [
        "run_id",
        "time",
    ]
    empty = read_table(store_location(tmp_path / "nowhere"), "executions", columns=["pages"])
    assert empty.empty and str(empty["pages"].dtype) == "Int32"


def test_exclude_drops_the_rows_holding_those_values(tmp_path: Path) -> None:
    frame = executions().assign(query_name=["q-0", "q-1", None])
    write_frame(store_location(tmp_path), "executions", frame, run_id="r1", part="a")
    kept = read_table(store_location(tmp_path), "executions", columns=["total_ru"], exclude={"query_name": ["q-0"]})
    assert kept["total_ru"].tolist() == [3.5, 4.5] and list(kept.columns) == ["total_ru"]  # a null is kept
    both = {"query_name": ["q-0", "q-1"], "execution_id": ["e1"]}  # a row is dropped when every column matches
    assert read_table(store_location(tmp_path), "executions", columns=["total_ru"], exclude=both)[
        "total_ru"
    ].tolist() == [3.5, 4.5]
    distinct = read_table(store_location(tmp_path), "executions", columns=["run_id", "query_name"], distinct=True)
    found = sorted(((run, None if pd.isna(name) else name) for run, name in distinct.itertuples(index=False)), key=str)
    assert found == sorted([("r1", "q-0"), ("r1", "q-1"), ("r1", None)], key=str)  # a null is a value too
    only = read_table(store_location(tmp_path), "executions", columns=["total_ru"], only={"query_name": ["q-1"]})
    assert only["total_ru"].tolist() == [3.5]  # the mirror: only the rows holding the values
    with pytest.raises(ValueError, match="'nope'"):
        read_table(store_location(tmp_path), "executions", exclude={"nope": ["x"]})


def test_unknown_columns_and_bad_since_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'nope'"):
        read_table(store_location(tmp_path), "executions", columns=["total_ru", "nope"])
    with pytest.raises(ValueError, match="list of column names"):
        read_table(store_location(tmp_path), "executions", columns="total_ru")
    with pytest.raises(TypeError, match="date or a datetime"):
        read_table(store_location(tmp_path), "executions", since="2024-05-01")


def test_a_table_written_before_a_key_column_existed_is_compacted_with_its_repeats_removed(tmp_path: Path) -> None:
    """`metrics` gained `region` (a key column) later: a store from before it compacts, its repeats removed by
    the key it has (delta-rs' SQL refused the missing column, so such a store was never compacted)."""
    point = {
        "run_id": "old", "time": pa.array([T0.to_pydatetime()], pa.timestamp("us", tz="UTC")), "account": "a",
        "database": "d", "container": "c", "metric": "NormalizedRUConsumption", "aggregation": "Maximum",
        "pkrange_id": "0", "value": pa.array([50.0]), "unit": "Percent", "grain": "PT1M", "date": "2024-05-01",
    }  # fmt: skip
    old = pa.table({name: value if isinstance(value, pa.Array) else [value] for name, value in point.items()})
    write_deltalake(tmp_path / "metrics", old, partition_by=["date"])  # no `region` column: an older record
    write_deltalake(tmp_path / "metrics", old, partition_by=["date"], mode="append")  # the same point again
    reports = compact(store_location(tmp_path), retention_hours=0)
    metrics = [r for r in reports if getattr(r, "table", None) == "metrics"]
    assert [type(r).__name__ for r in metrics] == ["CompactReport"] and metrics[0].repeats == 1
    assert len(read_table(store_location(tmp_path), "metrics")) == 1
