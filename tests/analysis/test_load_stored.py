"""The stored span cells (`analysis.load.stored`, refreshed into a real Delta store by `store.rollups.derived`):
a window's cells from the stored days and the raw points of its partial days give the figures the container
model computes from every raw minute (the same spans, p95, peak minute, own minutes), before and after late
points, a new day and a compaction; a refresh with nothing new computes nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import load, spans
from analysis.load import stored
from store import compact, read_table, store_location, write_frame
from store.records import SPAN_CELLS
from store.rollups.derived import consumed_versions, refresh
from tests.golden.make_store import GOLDEN_STORE

START = pd.Timestamp("2026-11-01T00:00:00Z")
SCOPE = dict(account="a", database="d", container="c")


def normalized(first: int, last: int, pkranges: tuple[str, ...], seed: int) -> pd.DataFrame:
    """NormalizedRUConsumption per minute in [first, last) of each range (some minutes missing: zeros)."""
    rng = np.random.default_rng(seed)
    rows = [
        dict(time=START + pd.Timedelta(minutes=m), **SCOPE, metric="NormalizedRUConsumption",
             aggregation="Maximum", pkrange_id=p, value=float(rng.integers(0, 100)), unit="Percent",
             grain="PT1M", region="West US")
        for m in range(first, last)
        for p in pkranges
        if rng.random() > 0.2
    ]  # fmt: skip
    return pd.DataFrame(rows)


def throughput(first: int, last: int) -> pd.DataFrame:
    rows = [
        dict(time=START + pd.Timedelta(minutes=m), **SCOPE, metric="ProvisionedThroughput", aggregation="Maximum",
             value=400.0 if m < 1500 else 1200.0, unit="Count", grain="PT1M", region="West US")
        for m in range(first, last, 5)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def replay(minutes: list[int], pkranges: tuple[str, ...], charge: float) -> pd.DataFrame:
    rows = [
        dict(time=START + pd.Timedelta(minutes=m, seconds=7), **SCOPE, seq=i, pkrange_id=p,
             request_charge=charge, status=200)
        for i, (m, p) in enumerate((m, p) for m in minutes for p in pkranges)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def snapshot(minute: int, pkranges: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(
        [dict(time=START + pd.Timedelta(minutes=minute), **SCOPE, pkrange_id=p, size_kb=10) for p in pkranges]
    )


def write_store(root: Path, days: int = 3) -> object:
    """`days` (3) of one container: NormalizedRUConsumption of 3 ranges, its throughput, an hourly replay and
    a split on day 2 (the store the tests here and tests/dashboard/test_pages_from_cells.py read)."""
    location = store_location(root)
    write_frame(location, "metrics", normalized(0, days * 1440, ("0", "1", "2"), 1), run_id="m1", part="m")
    write_frame(location, "metrics", throughput(0, days * 1440), run_id="m1", part="t")
    # the replay: hourly, big charges (own minutes: half a 400 RU/s budget over 3 ranges is ~67 RU in a second)
    # and small ones (candidates the rule gives back to the workload)
    write_frame(location, "requests", replay(list(range(0, days * 1440, 60)), ("0", "1"), 150.0), run_id="q1", part="q")
    write_frame(location, "requests", replay(list(range(30, days * 1440, 60)), ("2",), 2.0), run_id="q2", part="q")
    # a split on day 2: range 2 is gone from the latest snapshot (retired)
    write_frame(location, "partitions", snapshot(10, ("0", "1", "2")), run_id="p1", part="p")
    write_frame(location, "partitions", snapshot(2 * 1440 + 10, ("0", "1", "3")), run_id="p2", part="p")
    return location


@pytest.fixture()
def location(tmp_path: Path) -> object:
    return write_store(tmp_path)


def frames(location: object) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return (
        read_table(location, "metrics", columns=load.METRIC_COLUMNS),  # type: ignore[arg-type]
        read_table(location, "requests", columns=load.REQUEST_COLUMNS),  # type: ignore[arg-type]
        read_table(location, "partitions", columns=load.PARTITION_COLUMNS),  # type: ignore[arg-type]
    )


def assert_window_matches(location: object, start: pd.Timestamp, end: pd.Timestamp) -> None:
    """The window [start, end)'s figures from stored whole days and raw partial days are the raw model's."""
    metrics, requests, partitions = (f[(f["time"] >= start) & (f["time"] < end)] for f in frames(location))
    model = load.build(metrics, requests, partitions)
    first_day, last_day = start.ceil("D"), end.floor("D")
    rows = read_table(location, SPAN_CELLS)  # type: ignore[arg-type]
    rows = rows[(rows["time"] >= first_day) & (rows["time"] < last_day)]
    normalized_ = metrics["metric"].eq("NormalizedRUConsumption")
    whole = (metrics["time"] >= first_day) & (metrics["time"] < last_day)
    cells, own = stored.window_cells(rows, metrics[~(normalized_ & whole)], requests, partitions)
    ranges = spans.span_statistics(cells, load.SUSTAINED_QUANTILE)
    pd.testing.assert_frame_equal(ranges, model.ranges)
    pd.testing.assert_frame_equal(load.summarize_cells(cells, ranges), model.load)
    order = stored.OWN_MINUTE_COLUMNS

    def minutes(frame: pd.DataFrame) -> list[tuple]:
        frame = frame.assign(time=pd.to_datetime(frame["time"], utc=True))
        return sorted(frame[order].astype({name: str for name in order if name != "time"}).itertuples(index=False))

    assert minutes(own) == minutes(model.own_minutes)  # the minutes a heatmap marks as the replay's


WINDOWS = [
    (START, START + pd.Timedelta(days=3)),  # whole days only
    (START + pd.Timedelta(hours=13, minutes=7), START + pd.Timedelta(days=2, hours=20, minutes=41)),
    (START + pd.Timedelta(days=1, hours=2), START + pd.Timedelta(days=1, hours=9)),  # inside one day: raw only
]


def test_a_windows_figures_from_stored_days_and_raw_edges_are_the_raw_models(location: object) -> None:
    first = refresh(location, stored.DERIVATION)  # type: ignore[arg-type]
    assert first is not None and first.rebuilt and first.days == 3
    metrics, requests, partitions = frames(location)
    model = load.build(metrics, requests, partitions)
    own = model.minutes[model.minutes["own"]]
    given_back = model.minutes[~model.minutes["own"] & model.minutes["own_peak_second_ru"].gt(0)]
    assert len(own) and len(given_back) and model.ranges["retired"].any()  # every case of the rule is here
    for start, end in WINDOWS:
        assert_window_matches(location, start, end)


def test_late_points_a_new_day_and_a_compaction_refresh_only_what_changed(location: object) -> None:
    refresh(location, stored.DERIVATION)  # type: ignore[arg-type]
    again = refresh(location, stored.DERIVATION)  # type: ignore[arg-type]
    assert again is not None and again.days == 0 and "up to date" in again.line()
    write_frame(location, "metrics", normalized(3 * 1440, 4 * 1440, ("0", "1", "3"), 2), run_id="m2", part="m")
    write_frame(location, "metrics", throughput(3 * 1440, 4 * 1440), run_id="m2", part="t")
    write_frame(location, "metrics", normalized(100, 104, ("4",), 3), run_id="m3", part="m")  # late, into day 1
    write_frame(location, "requests", replay([3 * 1440 + 5], ("3",), 150.0), run_id="q3", part="q")
    late = refresh(location, stored.DERIVATION)  # type: ignore[arg-type]
    assert late is not None and late.days == 2 and not late.rebuilt
    assert_window_matches(location, START + pd.Timedelta(hours=1), START + pd.Timedelta(days=3, hours=23))
    list(compact(location, retention_hours=0))  # type: ignore[arg-type]
    after = refresh(location, stored.DERIVATION)  # type: ignore[arg-type]
    assert after is not None and after.days == 0  # a compaction rearranged files: nothing to compute
    versions = consumed_versions(location, stored.DERIVATION)  # type: ignore[arg-type]
    assert all(version is not None for version in versions.values())
    assert_window_matches(location, START, START + pd.Timedelta(days=4))


def test_the_golden_stores_stored_cells_give_its_models_figures(tmp_path: Path) -> None:
    """On the real collectors' rows (replay requests, NormalizedRUConsumption per pkrange, snapshots)."""
    import shutil

    shutil.copytree(GOLDEN_STORE, tmp_path / "store")
    location = store_location(tmp_path / "store")
    refresh(location, stored.DERIVATION)
    metrics, requests, partitions = frames(location)
    model = load.build(metrics, requests, partitions)
    rows = read_table(location, SPAN_CELLS)
    others = metrics[~metrics["metric"].eq("NormalizedRUConsumption")]
    cells, _ = stored.window_cells(rows, others, requests, partitions)
    ranges = spans.span_statistics(cells, load.SUSTAINED_QUANTILE)
    pd.testing.assert_frame_equal(ranges, model.ranges)
    pd.testing.assert_frame_equal(load.summarize_cells(cells, ranges), model.load)
    assert model.load["own_minutes_excluded"].sum() > 0
