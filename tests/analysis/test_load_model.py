"""analysis.load.build: a figure handed the model of its frames is the figure of those frames, and a figure
handed a model does read it (the model is not rebuilt behind the caller's back). On the golden store (the
real collectors' rows: replay requests, NormalizedRUConsumption per pkrange, storage snapshots)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from analysis import fleet, hottest, load, overview, spans
from analysis.capacity import evidence, review, sections
from analysis.capacity.autoscale import interval_needs
from analysis.cost import queries as query_cost
from analysis.cost.hours import unit_hours
from store import read_table, store_location
from tests.golden.make_store import GOLDEN_STORE


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    store = store_location(GOLDEN_STORE)
    return {table: read_table(store, table, columns=columns) for table, columns in review.REPORT_TABLES.items()}


def test_the_golden_store_has_what_the_model_derives(frames: dict[str, pd.DataFrame]) -> None:
    model = load.build(frames["metrics"], frames["requests"], frames["partitions"])
    assert len(model.minutes) > 100 and len(model.consumed) > 10  # the checks below compare real figures
    assert set(model.ranges["pkrange_id"]) == set(model.minutes["pkrange_id"])
    assert model.load["max_normalized_ru"].notna().all()
    assert (model.ranges["reported_max"] >= model.ranges["max"].fillna(0)).all()  # the replay's points in


def test_each_figure_given_the_model_is_the_figure_of_its_frames(frames: dict[str, pd.DataFrame]) -> None:
    metrics, requests, partitions = frames["metrics"], frames["requests"], frames["partitions"]
    model = load.build(metrics, requests, partitions)
    executions, keys = frames["executions"], frames["logical_keys"]
    pairs = {
        "fleet": lambda m: fleet.summarize_fleet(executions, requests, metrics, partitions, model=m),
        "overview": lambda m: overview.summarize_containers(executions, requests, metrics, partitions, keys, model=m),
        "hottest": lambda m: hottest.hottest_range(metrics, requests, partitions, model=m),
        "needs": lambda m: interval_needs(metrics, requests, partitions, model=m),
        "hours": lambda m: unit_hours(metrics, requests, partitions, model=m),
        "consumed": lambda m: query_cost.consumed_ru_s(metrics, requests, intervals=None if m is None else m.consumed),
        "partitions": lambda m: sections.partition_rows(partitions, metrics, None, None if m is None else m.ranges),
    }
    for name, figure in pairs.items():
        pd.testing.assert_frame_equal(figure(model), figure(None), obj=name)
    throttles = evidence.throttle_terms(metrics, frames["log_throttles"], requests)
    assert evidence.throttle_terms(metrics, frames["log_throttles"], requests, consumed=model.consumed) == throttles


def test_a_figure_reads_the_model_it_is_handed(frames: dict[str, pd.DataFrame]) -> None:
    """A model of another window (the first half of the minutes) gives other figures: the one handed in is
    the one read."""
    metrics, requests, partitions = frames["metrics"], frames["requests"], frames["partitions"]
    middle = metrics["time"].min() + (metrics["time"].max() - metrics["time"].min()) / 2
    early = load.build(metrics[metrics["time"] < middle], requests, partitions)
    whole = load.build(metrics, requests, partitions)
    shown = fleet.summarize_fleet(frames["executions"], requests, metrics, partitions, model=early)
    full = fleet.summarize_fleet(frames["executions"], requests, metrics, partitions, model=whole)
    # the golden store's hot minutes are in its second hour: the first half's p95 and sustained load are lower
    assert shown["p95_ru_s"].iloc[0] < full["p95_ru_s"].iloc[0]
    assert shown["sustained_normalized_ru"].iloc[0] < full["sustained_normalized_ru"].iloc[0] == 100.0


@pytest.mark.parametrize("width", [dt.timedelta(minutes=1), dt.timedelta(minutes=10), dt.timedelta(hours=1)])
def test_the_load_figures_of_cells_of_any_width_are_the_models(frames: dict[str, pd.DataFrame], width) -> None:
    model = load.build(frames["metrics"], frames["requests"], frames["partitions"])
    minutes = model.minutes
    cut = minutes["time"].min().floor("D") + (minutes["time"].max() - minutes["time"].min()) / 2
    cut = cut.floor(pd.Timedelta(width))  # a bin's edge: 1-minute cells before it, `width` after
    cells = spans.SpanCells.concat(
        [
            spans.span_cells(minutes[minutes["time"] < cut], dt.timedelta(minutes=1)),
            spans.span_cells(minutes[minutes["time"] >= cut], width),
        ]
    )
    assert len(cells.ranges) != len(model.cells.ranges) or width == dt.timedelta(days=1)  # other cells indeed
    ranges = spans.span_statistics(cells, load.SUSTAINED_QUANTILE)
    pd.testing.assert_frame_equal(ranges, model.ranges)
    pd.testing.assert_frame_equal(load.summarize_cells(cells, ranges), model.load)
    assert model.load["own_minutes_excluded"].sum() > 0  # the replay's minutes are among them
