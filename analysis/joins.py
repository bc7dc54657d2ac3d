"""Joins of a large frame of points (millions of per-minute rows) with small per-key tables, as integer codes.

Why not `merge`: a merge, a `merge_asof` or a `groupby` on string key columns factorizes every key column of
the large side again each time (a month of one-minute points for 100 pkranges is 4.3 million rows; the
container model joins them half a dozen times), which cost the Hot partitions page seconds per join. Here
each key column of the large side is factorized once, the columns' codes combined into one int64 per row,
and the small side is mapped into the same codes; the join is then a hash lookup (`match`) or a sorted
search (`as_of`) over integers. Pure functions; the results equal the pandas joins they replace
(tests/analysis/test_joins.py compares them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

_LIMIT = 2**62  # combined codes stay below this (int64, with room for one more multiplication by 2)


@dataclass(frozen=True)
class Codes:
    """Each row's group (0..n-1) by some key columns, and the groups' keys (one row per group, in order of
    first appearance, the key columns' values as the frame holds them)."""

    codes: np.ndarray  # int64, one per row of the frame
    keys: pd.DataFrame

    @property
    def size(self) -> int:
        return len(self.keys)


def group_codes(frame: pd.DataFrame, columns: Sequence[str]) -> Codes:
    """Number the rows of `frame` by `columns` (a null is a value of its own, equal to other nulls)."""
    combined = np.zeros(len(frame), dtype=np.int64)
    width = 1
    for name in columns:
        codes, values = pd.factorize(frame[name], use_na_sentinel=False)
        size = max(len(values), 1)
        if width * size >= _LIMIT:  # too many combinations for one int64: renumber the ones seen so far
            combined, seen = pd.factorize(combined)
            width = max(len(seen), 1)
        combined, width = combined * size + codes, width * size
    codes, _ = pd.factorize(combined)
    # codes number the groups in order of first appearance: the first rows, in order, are the groups' keys
    first = np.flatnonzero(~pd.Series(codes).duplicated().to_numpy())
    keys = frame.iloc[first][list(columns)].reset_index(drop=True)
    return Codes(codes.astype(np.int64), keys)


def match(left: pd.DataFrame, right: pd.DataFrame, on: Sequence[str]) -> np.ndarray:
    """For each row of `left`, the position of the row of `right` with the same values in `on` (-1: none): a
    left join as an indexer. `right` must hold each key at most once (a ValueError says so). Values compare
    as a merge compares them (a null equals a null); columns of different dtypes on the two sides are
    compared by value."""
    if not len(left) or not len(right):
        return np.full(len(left), -1, dtype=np.int64)
    left_code = np.zeros(len(left), dtype=np.int64)
    right_code = np.zeros(len(right), dtype=np.int64)
    missing = np.zeros(len(right), dtype=bool)
    width = 1
    for name in on:
        codes, values = pd.factorize(left[name], use_na_sentinel=False)
        index = pd.Index(values)
        other = index.get_indexer(right[name])
        nulls = pd.isna(right[name]).to_numpy(dtype=bool)
        if nulls.any():  # None, NaN, NA and NaT are one null, as a merge matches them
            null_at = np.flatnonzero(pd.isna(index))
            other[nulls] = null_at[0] if len(null_at) else -1
        missing |= other < 0
        size = max(len(values), 1)
        width *= size
        if width >= _LIMIT:
            raise ValueError(f"too many distinct keys to match on {list(on)}")
        left_code = left_code * size + codes
        right_code = right_code * size + np.where(other < 0, 0, other)
    if missing.all():
        return np.full(len(left), -1, dtype=np.int64)
    if pd.Index(right_code[~missing]).has_duplicates:
        raise ValueError(f"the right side holds a key of {list(on)} more than once")
    found = pd.Index(right_code[~missing]).get_indexer(pd.Index(left_code))
    return np.where(found < 0, -1, np.flatnonzero(~missing)[np.maximum(found, 0)]).astype(np.int64)


def as_of(
    left_groups: np.ndarray, left_times: np.ndarray, right_groups: np.ndarray, right_times: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each left row, the position of the right row of its group timed at or before it (the latest; of
    rows at the same time, the last), and of the first one timed after it (-1: none): `merge_asof` backward
    and forward. Groups are int codes shared by both sides (-1: none); times int64 (`times_ns`)."""
    backward = np.full(len(left_groups), -1, dtype=np.int64)
    forward = backward.copy()
    valid = right_groups >= 0
    if not len(left_groups) or not valid.any():
        return backward, forward
    right_positions = np.flatnonzero(valid)
    # one order for both sides' times: ranks in their union, so (group, time) packs into one int64 exactly
    union = np.unique(np.concatenate([left_times, right_times[valid]]))
    span = len(union) + 1
    right_key = right_groups[valid].astype(np.int64) * span + np.searchsorted(union, right_times[valid])
    order = np.argsort(right_key, kind="stable")
    sorted_key, sorted_group = right_key[order], right_groups[valid][order]
    left_key = left_groups.astype(np.int64) * span + np.searchsorted(union, left_times)
    at = np.searchsorted(sorted_key, left_key, side="right") - 1  # the last right row at or before
    known = left_groups >= 0
    before = known & (at >= 0) & (sorted_group[np.maximum(at, 0)] == left_groups)
    after = at + 1
    later = known & (after < len(sorted_key)) & (sorted_group[np.minimum(after, len(sorted_key) - 1)] == left_groups)
    backward[before] = right_positions[order[at[before]]]
    forward[later] = right_positions[order[after[later]]]
    return backward, forward


def times_ns(times: pd.Series) -> np.ndarray:
    """UTC times as int64 nanoseconds since the epoch (NaT as the smallest int64)."""
    values = pd.to_datetime(times, utc=True).astype("datetime64[ns, UTC]")
    return values.to_numpy(dtype="datetime64[ns]").astype(np.int64)


def coarser(fine: Codes, columns: Sequence[str]) -> Codes:
    """The grouping by `columns` (a subset of `fine`'s key columns) of the rows `fine` numbers, from its small
    key table alone: no column of the large frame is factorized again."""
    groups = group_codes(fine.keys, columns)
    return Codes(groups.codes[fine.codes], groups.keys)


def reduce_at(codes: np.ndarray, values: np.ndarray, size: int, how: np.ufunc, empty: float | int) -> np.ndarray:
    """`how` (np.minimum, np.maximum, np.fmax: NaN skipped) of `values` per code 0..size-1, `empty` where a code
    has none: a grouped reduction over integer codes (a float result for a float `empty`, else int64)."""
    out = np.full(size, empty, dtype=float if isinstance(empty, float) else np.int64)
    how.at(out, codes, values)
    return out
