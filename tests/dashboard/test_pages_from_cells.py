"""The Overview, the Fleet and Hot partitions from stored span cells (`dashboard.loaders.cells`): after `ruscope compact`
refreshed them, the pages read the whole days' cells instead of their NormalizedRUConsumption points, and show
the figures they show from every point (the same store, compacted without them), for all time, a preset and
a custom window, a split container and a shared offer; Hot partitions' heatmap from the rollup cells where
a tier nests in its bins; with new points since the refresh (a stale day) those days are read as points."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.hot import bins
from analysis.load import stored
from analysis.scope import Scope, Window
from dashboard.loaders import cells, fleet, hot_partitions, overview
from dashboard.state import FrameState
from store import compact, store_location, write_frame
from store.rollups.tiers import CELL_TIERS
from tests.analysis.test_load_stored import START, normalized, write_store
from tests.dashboard.apptest import run_app
from tests.dashboard.test_shared_throughput_pages import shared_store

WINDOWS = [
    Window(),
    Window(START + pd.Timedelta(hours=9, minutes=30), None, "Custom"),
    Window(START + pd.Timedelta(hours=5), START + pd.Timedelta(days=2, hours=22), "Custom"),
]


def twins(tmp_path: Path) -> tuple[Path, Path]:
    """The store at tmp_path/points twice, both compacted, the span cells refreshed in the second only."""
    shutil.copytree(tmp_path / "points", tmp_path / "cells")
    list(compact(store_location(tmp_path / "points"), retention_hours=0))
    list(compact(store_location(tmp_path / "cells"), retention_hours=0, derived=(stored.DERIVATION,)))
    return tmp_path / "points", tmp_path / "cells"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The 3-day store's twins, shared by the tests that only read them (compacting them is most of a test)."""
    root = tmp_path_factory.mktemp("twins")
    write_store(root / "points")
    return twins(root)


def containers(store: Path, window: Window) -> pd.DataFrame:
    view = FrameState(store=str(store), window=window)
    return overview._load_overview.__wrapped__(view).containers  # uncached: the two stores' own reads


@pytest.mark.parametrize("window", WINDOWS, ids=["all time", "since a morning", "custom"])
def test_the_overview_from_cells_is_the_overview_from_points(stores: tuple[Path, Path], window: Window) -> None:
    points, cells_store = stores
    read = cells.metrics_with_cells(FrameState(store=str(cells_store), window=window), ["time", "metric"], [])
    assert read.days and not read.metrics.frame["metric"].eq("NormalizedRUConsumption").all()  # cells indeed
    got, want = containers(cells_store, window), containers(points, window)
    assert want["sustained_normalized_ru"].notna().all() and want["own_minutes_excluded"].sum() > 0
    pd.testing.assert_frame_equal(got, want)


def test_a_day_with_points_newer_than_the_refresh_is_read_as_points(stores: tuple[Path, Path], tmp_path: Path) -> None:
    for root in stores:  # copies: this test writes to them
        shutil.copytree(root, tmp_path / root.name)
    stores = (tmp_path / "points", tmp_path / "cells")
    points, cells_store = stores
    late = normalized(1440 + 7, 1440 + 30, ("0",), 9).assign(value=100.0)  # day 2's busiest minutes, late
    assert len(late)
    for root in stores:
        write_frame(store_location(root), "metrics", late, run_id="late", part="m")
    view = FrameState(store=str(cells_store), window=Window())
    read = cells.metrics_with_cells(view, ["time", "metric"], [])
    assert (START + pd.Timedelta(days=1)).date() not in read.days and read.days  # the stale day, as points
    pd.testing.assert_frame_equal(containers(cells_store, Window()), containers(points, Window()))
    assert containers(points, Window())["hot_normalized_ru"].max() == 100.0  # the late points are in it


def test_the_page_draws_from_cells(stores: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Through Streamlit, as a user opens it: the same table as from the points."""
    shown = {}
    for root in stores:
        monkeypatch.setenv("RUSCOPE_STORE", str(root))
        app = run_app()
        shown[root.name] = app.dataframe[0].value.reset_index(drop=True)
    assert len(shown["points"]) == 1  # the one container, with its figures
    pd.testing.assert_frame_equal(shown["cells"], shown["points"])


def test_a_shared_offer_from_cells_is_the_shared_offer_from_points(tmp_path: Path) -> None:
    """A database's shared offer (its partitions' points under container "", never in cells) and a container
    of its own: the same throughput units, members and hot ranges from cells as from points."""
    shared_store(tmp_path / "points")
    twins(tmp_path)
    read = cells.metrics_with_cells(FrameState(store=str(tmp_path / "cells")), ["container", "metric"], [])
    kept = read.metrics.frame
    assert read.days
    normalized_ = kept[kept["metric"].eq("NormalizedRUConsumption")]
    assert set(normalized_["container"]) == {""}  # the offer's points read, the own container's from cells
    got, want = containers(tmp_path / "cells", Window()), containers(tmp_path / "points", Window())
    assert set(want["container"]) == {"a", "b", "own"}
    pd.testing.assert_frame_equal(got, want)


def fleet_of(store: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    data = fleet._load_fleet.__wrapped__(FrameState(store=str(store)))  # uncached, as `containers`
    return data.ranked, data.units


@pytest.mark.parametrize("shared", [False, True], ids=["a split container", "a shared offer"])
def test_the_fleet_from_cells_is_the_fleet_from_points(tmp_path: Path, shared: bool) -> None:
    (shared_store if shared else write_store)(tmp_path / "points")
    points, cells_store = twins(tmp_path)
    (ranked, units), (want_ranked, want_units) = fleet_of(cells_store), fleet_of(points)
    assert want_ranked["max_normalized_ru"].notna().any() and len(want_units)
    pd.testing.assert_frame_equal(ranked, want_ranked)
    pd.testing.assert_frame_equal(units, want_units)


def hot_of(store: Path, window: Window, container: str | None = None) -> hot_partitions.HotData:
    database = "d" if container is not None else None
    view = FrameState(store=str(store), window=window, scope=Scope(database=database, container=container))
    return hot_partitions._load_hot.__wrapped__(view)  # uncached


def assert_same_hot(got: hot_partitions.HotData, want: hot_partitions.HotData) -> None:
    np.testing.assert_array_equal(got.heatmap.z, want.heatmap.z)  # NaN where both have no point
    np.testing.assert_array_equal(got.heatmap.times, want.heatmap.times)
    assert got.heatmap.bin == want.heatmap.bin
    np.testing.assert_array_equal(got.heatmap.own, want.heatmap.own)
    pd.testing.assert_frame_equal(got.heatmap.rows, want.heatmap.rows)
    pd.testing.assert_frame_equal(got.heatmap.splits, want.heatmap.splits)
    assert got.loads.keys() == want.loads.keys()
    for name in want.loads:
        pd.testing.assert_frame_equal(got.loads[name], want.loads[name])
    pd.testing.assert_frame_equal(got.pkranges, want.pkranges)
    assert (got.hottest, got.region, got.shared_database) == (want.hottest, want.region, want.shared_database)


@pytest.mark.parametrize(
    ("days", "window", "container", "nested"),
    [
        (10, Window(), None, True),  # a heatmap of hourly bins: the hourly rollup cells draw it
        (10, Window(START + pd.Timedelta(days=1, hours=7), None, "Custom"), "c", True),  # one container's view
        (3, Window(), None, False),  # 15-minute bins: no tier nests, the cell days' points are read for it
    ],
    ids=["rollup cells", "one container", "points for the heatmap"],
)
def test_hot_partitions_from_cells_are_hot_partitions_from_points(
    tmp_path: Path, days: int, window: Window, container: str | None, nested: bool
) -> None:
    write_store(tmp_path / "points", days)
    points, cells_store = twins(tmp_path)
    want, got = hot_of(points, window, container), hot_of(cells_store, window, container)
    read = cells.metrics_with_cells(FrameState(store=str(cells_store), window=window), ["time"], [], rollup=True)
    assert read.days and want.heatmap.own_minutes > 0 and want.heatmap.rows["current"].any()
    assert (bins.cell_tier(want.heatmap.bin, CELL_TIERS) is not None) == nested  # which path drew it
    assert_same_hot(got, want)
