"""Physical partition layout: how many partition key ranges a container gets and where they split.

Pure functions over EPK strings. The occupied V2 space is 00..3F (the top two hash bits are cleared,
cosmos-wire-protocol.md §5), so ranges divide [0, 0x40<<120) evenly (ru-cost-model.md §2.6, an
ASSUMPTION the docs leave open); the outermost bounds are "" and "FF" as the service reports them.
A V1 container (`version=1`, W60) divides its 32-bit hash space instead: every V1 EPK starts with its
hash encoded as a number, so a bound is the encoding of a hash value (`epk.v1_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cosmoscore.epk import MAX_EPK, MIN_EPK, v1_bound, v1_hash_of
from cosmoscore.limits import Limits

_EPK_HEX = 32  # one V2 hash level
_SPACE_TOP = 0x40 << 120  # exclusive top of the occupied V2 space
_V1_TOP = 1 << 32  # exclusive top of the V1 hash space


def initial_range_count(throughput: int, autoscale: bool, limits: Limits) -> int:
    """Partitions at creation: ceil(RU/6,000) manual, ceil(max/10,000) autoscale (P6)."""
    per = limits.autoscale_ru_per_partition_at_creation if autoscale else limits.manual_ru_per_partition_at_creation
    return max(1, math.ceil(throughput / per))


def required_range_count(throughput: int, limits: Limits) -> int:
    """Partitions needed to serve a throughput: ROUNDUP(RU / 10,000) (P7)."""
    return max(1, math.ceil(throughput / limits.max_ru_per_partition))


def _to_int(epk: str, width: int) -> int:
    if epk == MIN_EPK:
        return 0
    if epk == MAX_EPK:
        return _SPACE_TOP << (4 * (width - _EPK_HEX))
    return int(epk.ljust(width, "0"), 16)


def _to_epk(value: int, width: int) -> str:
    return format(value, "X").rjust(width, "0")


def even_boundaries(count: int, version: int = 2) -> list[tuple[str, str]]:
    """`count` equal ranges over the occupied EPK space of a hash version, as (minInclusive, maxExclusive):
    each cut an exact multiple of the range width, the width truncated (cosmos-wire-protocol.md W83), the
    last range taking the remainder up to "FF"."""
    if version == 1:
        width = _V1_TOP // count
        cuts = [v1_bound(width * i) for i in range(1, count)]
    else:
        width = _SPACE_TOP // count
        cuts = [_to_epk(width * i, _EPK_HEX) for i in range(1, count)]
    bounds = [MIN_EPK, *cuts, MAX_EPK]
    return list(zip(bounds[:-1], bounds[1:]))


def midpoint(lo: str, hi: str, version: int = 2) -> str:
    """The key-space middle of a range: where a throughput split cuts it (P7)."""
    if version == 1:
        low, high = v1_hash_of(lo), v1_hash_of(hi)
        if high - low >= 2:  # a bound strictly inside: the hash halfway
            return v1_bound((low + high) // 2)
    width = max(_EPK_HEX, len(lo), len(hi) if hi != MAX_EPK else 0)
    mid = (_to_int(lo, width) + _to_int(hi, width)) // 2
    if mid <= _to_int(lo, width):
        width += _EPK_HEX  # too narrow at this width: go one hash level deeper
        mid = (_to_int(lo, width) + _to_int(hi, width)) // 2
    return _to_epk(mid, width)


def key_space_share(lo: str, hi: str, version: int = 2) -> float:
    """Fraction of the occupied EPK space a range covers (what uneven splits are measured in)."""
    if version == 1:
        return (v1_hash_of(hi) - v1_hash_of(lo)) / _V1_TOP
    width = max(_EPK_HEX, len(lo), len(hi) if hi != MAX_EPK else 0)
    return (_to_int(hi, width) - _to_int(lo, width)) / _to_int(MAX_EPK, width)


def ranges_to_split(range_count: int, target: int) -> list[int]:
    """Indexes (in EPK order) of the ranges to halve to reach `target` ranges, leftmost first (P7)."""
    return list(range(min(range_count, max(0, target - range_count))))


def storage_split_point(logical: Sequence[tuple[str, int]]) -> str | None:
    """Where a full partition splits: the first logical key past half the bytes (P8).

    `logical` is (epk, bytes) sorted by EPK. The cut falls on a logical-partition boundary, since a
    logical partition is never split (P5); None when a single logical partition fills the range.
    """
    if len(logical) < 2:
        return None
    half = sum(size for _, size in logical) / 2
    running = 0
    for i, (epk, size) in enumerate(logical):
        if i > 0 and running + size / 2 >= half:
            return epk
        running += size
    return logical[-1][0]
