"""A store written by the Parquet layout before Delta Lake: refused until migrated, then migrated once, in place,
resumably (killed midway and run again), by `ruscope store migrate`."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from store import (
    EXECUTIONS,
    REQUESTS,
    StoreLayoutError,
    StoreWarning,
    compact,
    migrate,
    read_table,
    recover,
    store_location,
    write_frame,
)
from store.layout import MIGRATING
from tests.store.test_store import executions

REPO = Path(__file__).resolve().parents[2]
T0 = dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC)


def old_part(store: Path, table: str, run_id: str, part: str, data: pa.Table, day: dt.date) -> Path:
    """A part exactly as the writer before Delta Lake left it: its day's partition, `<run_id>-<part>.parquet`,
    the table's schema of then, and the write-time stamp it put in the metadata."""
    path = store / table / f"date={day.isoformat()}" / f"{run_id}-{part}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data.replace_schema_metadata({b"ruscope.written_ns": str(time.time_ns()).encode()}), path)
    return path


def old_executions(run_id: str, ids: list[str], start: dt.datetime) -> pa.Table:
    rows = [
        {
            "run_id": run_id,
            "time": start + dt.timedelta(seconds=i),
            "execution_id": e,
            "query_name": "q",
            "total_ru": 2.5,
        }
        for i, e in enumerate(ids)
    ]
    return pa.Table.from_pylist(rows, schema=EXECUTIONS.schema)


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """Three runs over two days in `executions`, one run in `requests` whose file predates two columns."""
    store = tmp_path / "store"
    for n, day in enumerate((dt.date(2024, 5, 1), dt.date(2024, 5, 1), dt.date(2024, 5, 2))):
        start = dt.datetime.combine(day, dt.time(10), dt.UTC)
        for part in ("p000", "p001"):
            ids = [f"r{n}-{part}-{i}" for i in range(3)]
            old_part(store, "executions", f"r{n}", part, old_executions(f"r{n}", ids, start), day)
    requests = pa.table(
        {"run_id": ["r0", "r0"], "time": pa.array([T0, T0], pa.timestamp("us", tz="UTC")), "seq": [0, 1]}
    )  # a file of an older RequestRecord: most columns did not exist yet
    old_part(store, "requests", "r0", "p000", requests, dt.date(2024, 5, 1))
    return store


def all_ids(store: Path) -> list[str]:
    return sorted(read_table(store_location(store), "executions")["execution_id"])


EXPECTED = sorted(f"r{n}-{p}-{i}" for n in range(3) for p in ("p000", "p001") for i in range(3))


def test_every_read_and_write_refuses_an_old_layout_store_naming_the_command(old_store: Path) -> None:
    attempts = [
        lambda: read_table(store_location(old_store), "executions"),
        lambda: read_table(store_location(old_store), "requests"),
        lambda: write_frame(
            store_location(old_store), "executions", executions(run_id="new"), run_id="new", part="p000"
        ),
        lambda: recover(store_location(old_store)),
        lambda: compact(store_location(old_store)),
    ]
    for attempt in attempts:
        with pytest.raises(StoreLayoutError, match="ruscope store migrate") as caught:
            attempt()
        assert "\n" not in str(caught.value)
    assert not (old_store / "executions" / "_delta_log").exists()


def test_migration_commits_every_old_row_once_and_removes_the_old_files(old_store: Path) -> None:
    report = migrate(store_location(old_store))
    assert (report.files, report.rows, report.skipped) == (7, 20, [])
    assert all_ids(old_store) == EXPECTED
    requests = read_table(store_location(old_store), "requests")
    assert requests["seq"].tolist() == [0, 1] and requests[["status", "index_utilization"]].isna().all().all()
    assert not list(old_store.rglob("r*-p00*.parquet")) and not (old_store / MIGRATING).exists()
    assert migrate(store_location(old_store)).files == 0  # nothing left: a re-run does nothing
    assert (
        write_frame(store_location(old_store), "executions", executions(run_id="new"), run_id="new", part="p000") == 3
    )
    assert len(read_table(store_location(old_store), "executions")) == 21


def test_an_unreadable_old_file_is_left_in_place_and_named(old_store: Path) -> None:
    bad = old_store / "executions" / "date=2024-05-02" / "r9-p000.parquet"
    bad.write_bytes(b"not parquet")
    warned: list[str] = []
    report = migrate(store_location(old_store), warn=warned.append)
    assert report.skipped == [bad] and bad.exists() and len(warned) == 1 and str(bad) in warned[0]
    with pytest.warns(StoreWarning, match="r9-p000.parquet"):  # the store is usable; the file left is named
        assert all_ids(old_store) == EXPECTED


class Killed(Exception):
    pass


def test_a_migration_interrupted_after_a_commit_resumes_exactly_once(old_store: Path) -> None:
    seen: list[Path] = []

    def crash_on_the_third(path: Path) -> None:
        seen.append(path)
        if len(seen) == 3:
            raise Killed  # committed, not yet removed

    with pytest.raises(Killed):
        migrate(store_location(old_store), committed=crash_on_the_third)
    assert (old_store / MIGRATING).exists() and seen[2].exists()
    with pytest.raises(StoreLayoutError, match="has not finished"):
        read_table(store_location(old_store), "executions")
    report = migrate(store_location(old_store))
    assert report.files == 5  # the interrupted file again (its commit skipped), then the rest
    assert all_ids(old_store) == EXPECTED
    assert (
        DeltaTable(old_store / "executions").transaction_version(f"ruscope-migrate-date=2024-05-01-{seen[2].name}") == 1
    )


KILLED_MIGRATION = """
import os, signal, sys
from store import migrate, store_location
count = []
def die(path):
    count.append(path)
    if len(count) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
migrate(store_location(sys.argv[1]), committed=die)
"""


def test_a_migration_killed_midway_is_finished_by_the_cli(old_store: Path, tmp_path: Path) -> None:
    killed = subprocess.run([sys.executable, "-c", KILLED_MIGRATION, str(old_store), "4"], cwd=REPO, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    config = tmp_path / "c.toml"
    config.write_text('[cosmos]\nendpoint = "http://127.0.0.1:8081/"\ndatabase = "shop"\n')
    compact = ruscope("compact", "--config", str(config), "--store", str(old_store))
    assert compact.returncode == 2 and compact.stdout == ""
    assert compact.stderr.count("\n") == 1 and "ruscope store migrate" in compact.stderr
    done = ruscope("store", "migrate", "--config", str(config), "--store", str(old_store))
    assert done.returncode == 0 and done.stdout.startswith("migrated 4 Parquet part(s)"), done.stderr
    assert all_ids(old_store) == EXPECTED and len(read_table(store_location(old_store), REQUESTS)) == 2


def ruscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruscope", *args], cwd=REPO, capture_output=True, text=True, timeout=120, env=os.environ
    )
