"""The integer-code joins equal the pandas joins they replace: `match` a left merge, `as_of` merge_asof
backward and forward, `group_codes` a groupby's groups (nulls a group of their own)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import joins

names = st.sampled_from(["a", "b", "c", None])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(names, st.integers(0, 5)), min_size=1, max_size=40), st.data())
def test_match_is_a_left_merge(left_rows: list, data: st.DataObject) -> None:
    keys = sorted({row for row in left_rows} | {("d", 1)}, key=repr)
    right_rows = data.draw(st.lists(st.sampled_from(keys), unique=True, max_size=len(keys)))
    left = pd.DataFrame(left_rows, columns=["name", "n"]).astype({"name": "string"})
    right = pd.DataFrame(right_rows, columns=["name", "n"]).astype({"name": object})
    right["value"] = np.arange(len(right))
    found = joins.match(left, right, ["name", "n"])
    merged = left.merge(right.astype({"name": "string"}), on=["name", "n"], how="left")
    expected = merged["value"].fillna(-1).astype(int).to_numpy()
    assert found.tolist() == expected.tolist()


def test_match_refuses_a_right_side_with_a_repeated_key() -> None:
    left = pd.DataFrame({"k": ["a", "b"]})
    with pytest.raises(ValueError, match="more than once"):
        joins.match(left, pd.DataFrame({"k": ["a", "a"]}), ["k"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20)), min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 20)), max_size=20, unique=True),
)
def test_as_of_is_merge_asof_backward_and_forward(left_rows: list, right_rows: list) -> None:
    left = pd.DataFrame(left_rows, columns=["g", "t"])
    right = pd.DataFrame(right_rows, columns=["g", "t"], dtype=np.int64)
    right["pos"] = np.arange(len(right))
    before, after = joins.as_of(
        left["g"].to_numpy(), left["t"].to_numpy(), right["g"].to_numpy(), right["t"].to_numpy()
    )
    usable = right[right["g"] >= 0].sort_values("t")
    ordered = left.reset_index().sort_values("t")
    for direction, got in (("backward", before), ("forward", after)):
        expected = pd.merge_asof(
            ordered, usable, on="t", by="g", direction=direction, allow_exact_matches=direction == "backward"
        )
        expected = expected.sort_values("index")["pos"].fillna(-1).astype(int).tolist()
        assert got.tolist() == expected, direction


@given(st.lists(st.tuples(names, st.integers(0, 3)), max_size=30))
def test_group_codes_number_the_groups_in_order_of_first_appearance(rows: list) -> None:
    frame = pd.DataFrame(rows, columns=["name", "n"]).astype({"name": object, "n": "int64"})
    codes = joins.group_codes(frame, ["name", "n"])
    expected = frame.groupby(["name", "n"], dropna=False, sort=False).ngroup().to_numpy()
    assert codes.codes.tolist() == expected.tolist()
    assert codes.size == (int(expected.max()) + 1 if len(rows) else 0)
    coarse = joins.coarser(codes, ["n"])
    assert coarse.codes.tolist() == frame.groupby("n", sort=False).ngroup().tolist()
