"""`analysis.spans.range_spans` equals the span it describes built as a grid (the definition, computed the
slow way here: every minute of the container's region from the range's first point to the region's last,
or the range's own last when it is retired; a minute without a point 0%; own minutes left out), and the
statistics of span cells of any width, or of cells of different widths over disjoint periods, equal it."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import spans

KEY = ["account", "database", "container"]
REGIONAL = [*KEY, "region"]
START = pd.Timestamp("2026-11-01T00:00:00Z")

points = st.lists(
    st.tuples(
        st.sampled_from(["orders", "carts"]),
        st.sampled_from(["", "West Europe"]),
        st.sampled_from(["0", "1", "2"]),
        st.integers(0, 30),  # minute
        st.integers(0, 100),  # normalized RU
        st.booleans(),  # own
    ),
    min_size=1,
    max_size=80,
)


def minutes_of(rows: list, retired: set[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["container", "region", "pkrange_id", "minute", "normalized_ru", "own"])
    return frame.assign(
        account="acct",
        database="shop",
        time=START + pd.to_timedelta(frame["minute"], unit="min"),
        normalized_ru=frame["normalized_ru"].astype(float),
        retired=frame["pkrange_id"].isin(retired),
    ).drop(columns="minute")


def grid(minutes: pd.DataFrame) -> pd.DataFrame:
    """The span as rows, one per range and minute (the definition)."""
    times = minutes[[*REGIONAL, "time"]].drop_duplicates()
    spans_ = minutes.groupby([*REGIONAL, "pkrange_id"]).agg(
        _first=("time", "min"), _last=("time", "max"), _retired=("retired", "any")
    )
    spans_ = spans_.reset_index().merge(times.groupby(REGIONAL)["time"].max().rename("_end").reset_index())
    spans_["_end"] = spans_["_last"].where(spans_.pop("_retired"), spans_["_end"])
    cells = spans_.merge(times, on=REGIONAL)
    cells = cells[cells["time"].ge(cells.pop("_first")) & cells["time"].le(cells.pop("_end"))].drop(columns="_last")
    first = minutes.drop_duplicates(subset=[*REGIONAL, "pkrange_id", "time"])
    cells = cells.merge(first[[*REGIONAL, "pkrange_id", "time", "normalized_ru", "own"]], how="left")
    cells = cells[~cells.pop("own").astype("boolean").fillna(False).astype(bool)]
    return cells.assign(normalized_ru=cells["normalized_ru"].fillna(0.0))


@settings(max_examples=80, deadline=None)
@given(points, st.sets(st.sampled_from(["0", "1", "2"]), max_size=1))
def test_range_spans_equal_the_grid_they_describe(rows: list, retired: set[str]) -> None:
    minutes = minutes_of(rows, retired)
    got = spans.range_spans(minutes, 0.95).set_index([*REGIONAL, "pkrange_id"])
    cells = grid(minutes).groupby([*REGIONAL, "pkrange_id"])
    expected = pd.DataFrame(
        {
            "mean": cells["normalized_ru"].mean(),
            "p95": cells["normalized_ru"].quantile(0.95),
            "minutes": cells.size(),
            "start": cells["time"].min(),
            "end": cells["time"].max(),
        }
    )
    with_span = got[got["minutes"] > 0]
    assert sorted(with_span.index) == sorted(expected.index)
    expected = expected.loc[with_span.index]
    assert with_span["minutes"].tolist() == expected["minutes"].tolist()
    assert with_span["mean"].to_numpy() == pytest.approx(expected["mean"].to_numpy())
    assert with_span["p95"].to_numpy() == pytest.approx(expected["p95"].to_numpy())
    assert (with_span["start"] == expected["start"]).all() and (with_span["end"] == expected["end"]).all()
    peaks = minutes[~minutes["own"]].groupby([*REGIONAL, "pkrange_id"])["normalized_ru"].max()
    assert got["max"].dropna().sort_index().to_dict() == peaks.sort_index().to_dict()
    assert list(got.index) == sorted(got.index)  # sorted by range, as a groupby sorts


def test_a_range_whose_span_is_all_its_own_minutes_has_no_figure() -> None:
    minutes = minutes_of([("orders", "", "0", 0, 90, True), ("orders", "", "1", 0, 10, False)], set())
    got = spans.range_spans(minutes, 0.95).set_index("pkrange_id")
    assert got.loc["0", "minutes"] == 0 and np.isnan(got.loc["0", "mean"]) and np.isnan(got.loc["0", "max"])
    assert got.loc["1", "mean"] == 10.0


@settings(max_examples=40, deadline=None)
@given(
    points,
    st.sets(st.sampled_from(["0", "1", "2"]), max_size=2),
    st.sampled_from([1, 3, 7, 10, 60, 1440]),
    st.integers(0, 31),
)
def test_cells_of_any_width_give_the_same_statistics(rows: list, retired: set[str], width: int, split: int) -> None:
    minutes = minutes_of(rows, retired)
    expected = spans.range_spans(minutes, 0.95)
    uniform = spans.span_cells(minutes, dt.timedelta(minutes=width))
    pd.testing.assert_frame_equal(spans.span_statistics(uniform, 0.95), expected)
    cut = (START + pd.Timedelta(minutes=split)).floor(f"{width}min")  # a bin's edge (from the epoch, as cells')
    early, late = minutes[minutes["time"] < cut], minutes[minutes["time"] >= cut]
    mixed = spans.SpanCells.concat(
        [spans.span_cells(early, dt.timedelta(minutes=1)), spans.span_cells(late, dt.timedelta(minutes=width))]
    )
    pd.testing.assert_frame_equal(spans.span_statistics(mixed, 0.95), expected)


def test_the_sustained_p95_is_of_the_minutes_at_a_whole_point() -> None:
    rows = [("orders", "", "0", minute, 50.4 if minute % 2 else 49.6, False) for minute in range(20)]
    got = spans.range_spans(minutes_of(rows, set()), 0.95).iloc[0]
    assert got["p95"] == pytest.approx(50.0)  # each minute's figure to the nearest point: 50 and 50
    assert got["mean"] == pytest.approx(50.0) and got["max"] == pytest.approx(50.4)  # the others are exact


@settings(max_examples=40, deadline=None)
@given(points, st.lists(st.booleans(), min_size=80, max_size=80), st.sampled_from([1, 10, 60, 1440]))
def test_candidates_given_back_to_the_workload_are_as_if_never_own(rows: list, extra: list, width: int) -> None:
    """Cells that counted every candidate minute as own (the stored cells: every minute the replay sent a request
    to), with the candidates the rule found to be the workload's given back, are the cells of the true marks."""
    minutes = minutes_of(rows, set())
    minute = [*REGIONAL, "pkrange_id", "time"]
    marks = minutes.drop_duplicates(subset=minute)[minute + ["own"]]  # one mark per range and minute, as kept
    minutes = minutes.drop(columns="own").merge(marks, on=minute)
    candidate = marks.assign(candidate=marks["own"].to_numpy() | np.array(extra[: len(marks)]))
    stored_minutes = minutes.merge(candidate[[*minute, "candidate"]], on=minute)
    stored = spans.span_cells(stored_minutes.assign(own=stored_minutes["candidate"]), dt.timedelta(minutes=width))
    back = stored_minutes[stored_minutes["candidate"] & ~stored_minutes["own"]]
    back = back.assign(bin=back["time"].dt.floor(f"{width}min"))
    got = spans.reclaimed(stored, back)
    expected = spans.span_cells(minutes, dt.timedelta(minutes=width))
    pd.testing.assert_frame_equal(spans.span_statistics(got, 0.95), spans.span_statistics(expected, 0.95))
    columns = ["own_points", "work_points", "work_sum", "max", "max_time", "open_first", "open_last"]
    order = [*REGIONAL, "pkrange_id", "time"]
    pd.testing.assert_frame_equal(
        got.ranges.sort_values(order)[columns].reset_index(drop=True),
        expected.ranges.sort_values(order)[columns].reset_index(drop=True),
    )
