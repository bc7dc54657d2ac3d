"""The incremental rollup against a real Delta store: after any sequence of commits (late points into old
bins, a compaction, a rollup killed between its commits, two rollups at once) the stored cells are those a
rollup of every point computes, and a rollup with nothing new reads nothing."""

from __future__ import annotations

import datetime as dt
import multiprocessing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from store import compact, read_table, rollup, store_location, write_frame
from store.rollups import increment
from store.rollups.cells import merge_up, roll_up
from store.rollups.increment import CARRIED, SERIES, consumed_version
from store.rollups.retention import prune_cells
from store.rollups.tiers import CELL_TIERS

START = pd.Timestamp("2026-11-01T00:00:00Z")
FIGURES = ["sum", "count", "max", "min", "last"]
TIMES = ["time", "max_time", "first_time", "last_time"]


def points(first: int, last: int, pkranges: tuple[str, ...] = ("0", "1"), *, shift: int = 0) -> pd.DataFrame:
    """One NormalizedRUConsumption point per minute in [first, last) and pkrange, a value that varies."""
    rows = [
        dict(
            time=START + pd.Timedelta(minutes=m), account="a", database="d", container="c",
            metric="NormalizedRUConsumption", aggregation="Maximum", pkrange_id=p, value=float((m * 7 + int(p) * 13 + shift) % 100),
            unit="Percent", grain="PT1M", region="West US",
        )
        for m in range(first, last)
        for p in pkranges
    ]  # fmt: skip
    return pd.DataFrame(rows)


def expected(location: object) -> dict[str, pd.DataFrame]:
    """Every tier's cells from all the stored points at once (10-minute cells from points, then merged up)."""
    raw = read_table(location, "metrics")  # type: ignore[arg-type]
    out, below = {}, roll_up(raw, CELL_TIERS[0].width, SERIES, carried=CARRIED)
    out[CELL_TIERS[0].name] = below
    for tier in CELL_TIERS[1:]:
        below = out[tier.name] = merge_up(below, tier.width, SERIES, carried=CARRIED)
    return out


def assert_cells_match(location: object) -> None:
    stored = read_table(location, "metric_cells")  # type: ignore[arg-type]
    for name, want in expected(location).items():
        got = stored[stored["tier"] == name].sort_values(["pkrange_id", "time"]).reset_index(drop=True)
        want = want.sort_values(["pkrange_id", "time"]).reset_index(drop=True)
        assert len(got) == len(want), name
        for column in FIGURES:
            assert np.allclose(got[column].astype(float), want[column].astype(float)), (name, column)
        for column in TIMES:
            left, right = pd.to_datetime(got[column], utc=True), pd.to_datetime(want[column], utc=True)
            assert (left.to_numpy() == right.to_numpy()).all(), (name, column)


def test_increments_late_points_and_reruns_give_the_cells_of_every_point(tmp_path: Path) -> None:
    location = store_location(tmp_path)
    write_frame(location, "metrics", points(0, 2 * 1440), run_id="r1", part="m")
    first = rollup(location)
    assert first.rebuilt and first.points == 2 * 1440 * 2
    write_frame(location, "metrics", points(2 * 1440, 2 * 1440 + 7), run_id="r2", part="m")  # the next minutes
    write_frame(location, "metrics", points(100, 103, ("2",)), run_id="r3", part="m")  # late, into old bins
    second = rollup(location)
    assert not second.rebuilt and second.points < 200  # the touched 10-minute bins only, not two days
    assert_cells_match(location)
    again = rollup(location)
    assert again.spans == 0 and again.points == 0 and "up to date" in again.line()
    assert consumed_version(location) == again.source_version


def test_a_compaction_changes_no_cell_and_leaves_nothing_to_read_again(tmp_path: Path) -> None:
    location = store_location(tmp_path)
    for day in range(3):
        for hour in range(0, 24, 6):  # several files per day: the compaction rewrites them
            m = day * 1440 + hour * 60
            write_frame(location, "metrics", points(m, m + 360), run_id=f"r{day}-{hour}", part="m")
    reports = compact(location, retention_hours=0)
    assert any(getattr(r, "table", "") == "metric_cells" and "first rollup" in r.line() for r in reports)
    assert_cells_match(location)
    after = rollup(location)
    assert after.points == 0, "the compacted files were read again"


def test_a_rollup_killed_between_its_commits_is_completed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = store_location(tmp_path)
    write_frame(location, "metrics", points(0, 10 * 1440, ("0",)), run_id="r1", part="m")  # two week batches
    real, calls = increment._commit, []

    def dies_on_the_second(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process killed after its first batch's commit
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(increment, "_commit", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        rollup(location)
    assert consumed_version(location) is None  # the first batch's cells, but no version: all read again
    monkeypatch.setattr(increment, "_commit", real)
    assert rollup(location).rebuilt
    assert_cells_match(location)


def _roll(path: str) -> None:
    rollup(store_location(path))


def test_two_rollups_at_once_store_each_cell_once(tmp_path: Path) -> None:
    location = store_location(tmp_path)
    write_frame(location, "metrics", points(0, 1440), run_id="r1", part="m")
    rollup(location)
    write_frame(location, "metrics", points(1440, 1500), run_id="r2", part="m")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_roll, args=(str(tmp_path),)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert_cells_match(location)


def test_each_tier_keeps_its_cells_for_its_retention(tmp_path: Path) -> None:
    location = store_location(tmp_path)
    write_frame(location, "metrics", points(0, 1440, ("0",)), run_id="r1", part="m")
    rollup(location)
    now = START.to_pydatetime() + dt.timedelta(days=91)  # the 10-minute cells' 90 days are over, not the hours'
    assert prune_cells(location, now=now) == 144
    left = read_table(location, "metric_cells")
    assert sorted(left["tier"].unique()) == ["1d", "1h"] and len(left) == 24 + 1
    assert prune_cells(location, now=now) == 0


def test_a_rollup_after_collect_is_due_once_the_last_is_old_enough(tmp_path: Path) -> None:
    location = store_location(tmp_path)
    now = dt.datetime.now(dt.UTC)
    assert increment.rollup_due(location, dt.timedelta(hours=1), now=now)  # never rolled up
    write_frame(location, "metrics", points(0, 60), run_id="r1", part="m")
    rollup(location)
    assert not increment.rollup_due(location, dt.timedelta(hours=1), now=dt.datetime.now(dt.UTC))
    assert increment.rollup_due(location, dt.timedelta(hours=1), now=now + dt.timedelta(minutes=61))
    assert increment.rollup_due(location, dt.timedelta(0), now=dt.datetime.now(dt.UTC))
