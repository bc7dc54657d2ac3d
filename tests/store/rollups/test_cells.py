"""Rollup cells: the figures of a coarse cell are those of its points, whether computed from the points or
merged up from finer cells, and recomputing the bins an increment touches gives the same cells as a rollup
of everything (so a rerun, or a run after a kill, changes nothing)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from store.rollups.cells import merge_up, roll_up
from store.rollups.periods import Period, covers, widened

KEYS = ["container", "pkrange_id"]
START = pd.Timestamp("2026-11-01T00:00:00Z")
TEN, HOUR = dt.timedelta(minutes=10), dt.timedelta(hours=1)

points_strategy = st.lists(
    st.tuples(st.integers(0, 3 * 24 * 60 - 1), st.sampled_from(["0", "1", "2"]), st.integers(0, 100)),
    min_size=1,
    max_size=300,
    unique_by=lambda p: (p[0], p[1]),  # one point per minute and pkrange, as the metrics table keys them
)


def frame(points: list[tuple[int, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "container": "orders",
            "pkrange_id": [p[1] for p in points],
            "time": [START + pd.Timedelta(minutes=p[0]) for p in points],
            "value": [float(p[2]) for p in points],
        }
    )


def normalised(cells: pd.DataFrame) -> pd.DataFrame:
    return cells.sort_values([*KEYS, "time"]).reset_index(drop=True).astype({"count": "int64", "sum": "float64"})


@settings(max_examples=60, deadline=None)
@given(points_strategy)
def test_an_hour_merged_from_ten_minute_cells_is_the_hour_of_the_points(points: list[tuple[int, str, int]]) -> None:
    minutes = frame(points)
    direct = roll_up(minutes, HOUR, KEYS)
    merged = merge_up(roll_up(minutes, TEN, KEYS), HOUR, KEYS)
    pd.testing.assert_frame_equal(normalised(direct), normalised(merged))


@settings(max_examples=60, deadline=None)
@given(points_strategy, st.integers(1, 3 * 24 * 60 - 1))
def test_recomputing_the_touched_bins_equals_rolling_up_everything(
    points: list[tuple[int, str, int]], cut: int
) -> None:
    minutes = frame(points)
    old, new = (
        minutes[minutes["time"] < START + pd.Timedelta(minutes=cut)],
        minutes[minutes["time"] >= START + pd.Timedelta(minutes=cut)],
    )
    cells = roll_up(old, TEN, KEYS)
    touched = widened([Period(t, t + dt.timedelta(microseconds=1)) for t in new["time"]], TEN)  # as `increment`
    in_touched = minutes[covers(minutes["time"], touched)]

    def replaced(existing: pd.DataFrame) -> pd.DataFrame:
        kept, fresh = existing[~covers(existing["time"], touched)], roll_up(in_touched, TEN, KEYS)
        parts = [part for part in (kept, fresh) if not part.empty] or [fresh]  # as `increment._cells_of`
        return pd.concat(parts, ignore_index=True)

    once = replaced(cells)
    twice = replaced(once)  # the same increment again
    everything = roll_up(minutes, TEN, KEYS)
    pd.testing.assert_frame_equal(normalised(once), normalised(everything))
    pd.testing.assert_frame_equal(normalised(twice), normalised(everything))


def test_a_cell_holds_sum_count_min_max_at_its_minute_and_the_last_value() -> None:
    minutes = frame([(0, "0", 5), (3, "0", 40), (6, "0", 40), (9, "0", 7), (10, "0", 1)])
    cells = roll_up(minutes, TEN, KEYS)
    first = cells.iloc[0]
    assert (first["sum"], first["max"], first["min"], first["count"], first["last"]) == (92.0, 40.0, 5.0, 4, 7.0)
    assert first["max_time"] == START + pd.Timedelta(minutes=3)  # the earliest minute holding the maximum
    assert (first["first_time"], first["last_time"]) == (START, START + pd.Timedelta(minutes=9))
    assert first["time"] == START and cells.iloc[1]["time"] == START + pd.Timedelta(minutes=10)


def reference(points: pd.DataFrame, width: dt.timedelta, keys: list[str]) -> pd.DataFrame:
    """The cells by a plain pandas groupby (the definition `roll_up` computes faster): a null key is a group."""
    frame = points.assign(bin=points["time"].dt.floor(pd.Timedelta(width))).sort_values("time", kind="stable")
    rows = []
    for key, group in frame.groupby([*keys, "bin"], dropna=False, sort=True):
        peak = group["value"].max()
        rows.append(
            dict(zip([*keys, "time"], key, strict=True), sum=group["value"].sum(), count=len(group), max=peak,
                 max_time=group.loc[group["value"] == peak, "time"].iloc[0], min=group["value"].min(),
                 first_time=group["time"].iloc[0], last=group["value"].iloc[-1], last_time=group["time"].iloc[-1])
        )  # fmt: skip
    return pd.DataFrame(rows)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3 * 24 * 60 - 1), st.sampled_from(["0", "1", None]), st.integers(0, 5)),
        min_size=1,
        max_size=200,
        unique_by=lambda p: (p[0], p[1]),
    )
)
def test_cells_are_the_groupby_of_their_points_nulls_and_tied_peaks_included(points: list) -> None:
    minutes = pd.DataFrame(
        {
            "container": "orders",
            "pkrange_id": pd.array([p[1] for p in points], dtype="string"),
            "time": [START + pd.Timedelta(minutes=p[0]) for p in points],
            "value": [float(p[2]) for p in points],  # few values: maxima tie, the earliest minute is kept
        }
    )
    for width in (TEN, HOUR, dt.timedelta(days=1)):
        got = roll_up(minutes, width, KEYS).sort_values(["pkrange_id", "time"], na_position="last")
        want = reference(minutes, width, KEYS).sort_values(["pkrange_id", "time"], na_position="last")
        got, want = got.reset_index(drop=True), want.reset_index(drop=True)[got.columns]
        assert got["pkrange_id"].isna().tolist() == want["pkrange_id"].isna().tolist()
        pd.testing.assert_frame_equal(
            got.drop(columns="pkrange_id"), want.drop(columns="pkrange_id"), check_dtype=False
        )
