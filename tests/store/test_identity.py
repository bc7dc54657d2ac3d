"""Tables keyed by a point's identity (no run_id in the key: metrics, log bins) hold each key once, whoever
commits it and however many at once, on a local directory and on Azurite; `compact` removes repeats that an
older version stored, and only those."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError

from store import compact, read_table, store_location, write_arrow
from store.delta import CommitProperties, insert_new, with_date
from store.records import METRICS
from tests.store.test_delta import REPO, store_env  # noqa: F401  (the fixture, local and Azurite)

START = dt.datetime(2026, 11, 30, 23, 0, tzinfo=dt.UTC)  # an hour before midnight: points on two date partitions


def points(first: int, count: int, run_id: str = "r1", account: str = "a", status: str | None = "200") -> pa.Table:
    """`count` metric points, one a minute from minute `first` after START, half without a pkrange (null)."""
    times = [START + dt.timedelta(minutes=first + i) for i in range(count)]
    columns = {
        "run_id": [run_id] * count,
        "time": pa.array(times, pa.timestamp("us", tz="UTC")),
        "account": [account] * count,
        "database": ["d"] * count,
        "container": ["c"] * count,
        "metric": ["TotalRequests"] * count,
        "aggregation": ["Count"] * count,
        "pkrange_id": [None if (first + i) % 2 else "0" for i in range(count)],
        "physical_partition_id": [None] * count,
        "operation_type": ["Query"] * count,
        "status_code": [status] * count,
        "value": [float(first + i) for i in range(count)],
        "unit": ["Count"] * count,
        "grain": ["PT1M"] * count,
        "region": [None] * count,
    }
    return pa.table(columns).select(METRICS.schema.names).cast(METRICS.schema)


def key_counts(store: str) -> tuple[int, int]:
    frame = read_table(store_location(store), METRICS)
    return len(frame), len(frame.drop_duplicates(list(METRICS.key)))


def test_a_later_run_adds_only_the_points_not_stored(tmp_path: Path) -> None:
    store = store_location(tmp_path / "s")
    assert write_arrow(store, METRICS, points(0, 90), run_id="r1", part="m0") == 90
    assert write_arrow(store, METRICS, points(60, 60, run_id="r2"), run_id="r2", part="m0") == 30
    assert write_arrow(store, METRICS, points(0, 10, run_id="r3", account="b"), run_id="r3", part="m0") == 10
    assert write_arrow(store, METRICS, points(0, 5, run_id="r4", status=None), run_id="r4", part="m0") == 5
    assert write_arrow(store, METRICS, points(0, 5, run_id="r5", status=None), run_id="r5", part="m0") == 0
    twice = pa.concat_tables([points(200, 3, run_id="r6"), points(200, 3, run_id="r6")])  # one batch, twice
    assert write_arrow(store, METRICS, twice, run_id="r6", part="m0") == 3
    assert key_counts(str(tmp_path / "s")) == (138, 138)
    assert write_arrow(store, METRICS, points(0, 90), run_id="r1", part="m0") == 0  # its app id: nothing


def test_a_merge_from_a_snapshot_older_than_a_commit_of_the_same_keys_conflicts(tmp_path: Path) -> None:
    store = store_location(tmp_path / "s")
    write_arrow(store, METRICS, points(0, 1, run_id="r0"), run_id="r0", part="m0")
    stale = DeltaTable(store.table_uri("metrics"))
    assert write_arrow(store, METRICS, points(0, 30, run_id="r1"), run_id="r1", part="m0") == 29
    data = with_date(METRICS, points(10, 30, run_id="r2"))
    with pytest.raises(CommitFailedError):  # the other writer's keys may be among these: refused
        insert_new(store, METRICS, stale, data, CommitProperties())
    assert write_arrow(store, METRICS, points(10, 30, run_id="r2"), run_id="r2", part="m0") == 10
    other_day = DeltaTable(store.table_uri("metrics"))
    write_arrow(store, METRICS, points(24 * 60, 5, run_id="r3"), run_id="r3", part="m0")  # another day, later
    assert (
        insert_new(store, METRICS, other_day, with_date(METRICS, points(100, 5, run_id="r4")), CommitProperties()) == 5
    )
    assert key_counts(str(tmp_path / "s")) == (50, 50)


MERGER = """
import os, sys, time
from store import store_location, write_arrow
from store.records import METRICS
from tests.store.test_identity import points
store, writer, gate = store_location(sys.argv[1]), sys.argv[2], sys.argv[3]
while not os.path.exists(gate):
    time.sleep(0.001)
for n in range(4):  # overlapping windows, as runs with an overlap ask: minutes 0..149, by 30 a step
    write_arrow(store, METRICS, points(n * 30, 60, run_id=f"w{writer}"), run_id=f"w{writer}", part=f"m{n}")
"""


def test_four_processes_merging_the_same_points_at_once_store_each_once(store_env, tmp_path: Path) -> None:  # noqa: F811
    store, env = store_env
    gate = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", MERGER, store, str(w), str(gate)],
            cwd=REPO,
            env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        )
        for w in range(4)
    ]
    time.sleep(3)
    gate.touch()
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0, 0]
    assert key_counts(store) == (150, 150)


def test_compact_removes_exactly_the_planted_repeats_and_says_how_many(store_env) -> None:  # noqa: F811
    store, env = store_env
    location = store_location(store)
    write_arrow(location, METRICS, points(0, 120), run_id="r1", part="m0")
    options = location.options()
    for run_id, first, count in (("r2", 30, 40), ("r3", 50, 5)):  # later runs, as an older version appended
        data = with_date(METRICS, points(first, count, run_id=run_id))
        write_deltalake(location.table_uri("metrics"), data, mode="append", storage_options=options)
    assert key_counts(store) == (165, 120)

    reports = {r.table: r for r in compact(location, retention_hours=0)}
    assert reports["metrics"].repeats == 45 and reports["metrics"].line().endswith(", 45 repeated row(s) removed")
    frame = read_table(location, METRICS)
    assert key_counts(store) == (120, 120) and set(frame["run_id"]) == {"r1"}  # the earliest run's rows kept
    assert frame.sort_values("time")["value"].tolist() == [float(i) for i in range(120)]
    assert {r.table: r for r in compact(location, retention_hours=0)}["metrics"].repeats == 0  # type: ignore[union-attr]
