"""Which physical partitions a query reaches: the routing rule in one place.

The rule (ru-cost-model.md Q5/H3, cosmos-wire-protocol.md §1.6-1.9): a full partition key -> the one
partition holding its EPK; an `IN` list -> the owners of its keys; a hierarchical prefix -> every
partition its EPK range overlaps; anything else -> all partitions. The emulator serves queries by it,
the replay collector predicts routing with it, analysis and the advisor name its classes.

`RoutingMap` holds a container's ranges; it accepts only a complete, non-overlapping set (a tiling of
["", "FF")), so an answer from it is never quietly wrong about a key the set leaves out or covers twice.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from cosmoscore.epk import FULL_RANGE, MAX_EPK, MIN_EPK, EpkRange, epk_for, hash_version, prefix_range
from cosmoscore.keys import key_paths

if TYPE_CHECKING:  # the SQL engine (and lark) load only when a query is analysed, not for the vocabulary
    from cosmoscore.sql import KeyFilter, Query

SINGLE, TARGETED, FAN_OUT, UNKNOWN = "single", "targeted", "fan-out", "unknown"
ROUTING_CLASSES = (UNKNOWN, SINGLE, TARGETED, FAN_OUT)  # narrowest to widest (unknown: nothing known)


def routing_class(hit: int, total: int) -> str:
    """single / targeted / fan-out, from how many of the container's partitions a query reached."""
    if hit <= 0 or total <= 0:
        return UNKNOWN
    if hit == 1:
        return SINGLE
    return FAN_OUT if hit >= total else TARGETED


def predicted_class(predicted: set[int] | None, total: int) -> str:
    """The class of a prediction; a contradictory filter reaches nothing, yet the SDK probes one partition."""
    if predicted is None or total == 0:
        return UNKNOWN
    if not predicted:
        return SINGLE
    return routing_class(len(predicted), total)


def key_intervals(kind: str, levels: int, keys: Iterable[Sequence[Any]] | None, version: int = 2) -> list[EpkRange]:
    """EPK intervals pinned by keys: a point per full key, a prefix range per hierarchical prefix.

    `keys` None means the query is not pinned: the whole key space.
    """
    if keys is None:
        return [FULL_RANGE]
    out = set()
    for key in keys:
        epk = epk_for(kind, tuple(key), version)
        out.add(EpkRange.point(epk) if len(key) == levels else EpkRange(*prefix_range(epk)))
    return sorted(out, key=lambda r: (r.min, r.max))


def filter_intervals(key_filter: KeyFilter, kind: str, levels: int, version: int = 2) -> list[EpkRange]:
    """The intervals a WHERE clause's partition-key filter pins."""
    return key_intervals(kind, levels, key_filter.keys, version)


def query_intervals(
    query: Query | None,
    definition: Mapping[str, Any],
    parameters: Mapping[str, Any],
    partition_key: Sequence[Any] | None = None,
) -> list[EpkRange]:
    """Intervals a query reaches: its explicit partition key (or prefix), else its WHERE clause's keys.

    Raises `SqlError` when the filter cannot be evaluated (an unknown parameter, say).
    """
    from cosmoscore.sql import partition_key_filter

    paths = key_paths(dict(definition))
    kind, version = str(definition.get("kind", "Hash")), hash_version(definition)
    if partition_key is not None:
        return key_intervals(kind, len(paths), [partition_key], version)
    if query is None:
        return [FULL_RANGE]
    return filter_intervals(partition_key_filter(query, paths, parameters), kind, len(paths), version)


class HasRange(Protocol):
    """What the routing map needs of a range: its EPK bounds [min, max). A range that also has an `id`
    (a pkrange) is checked for a duplicate id and named by it in errors; an `EpkRange` has none."""

    @property
    def min(self) -> str: ...

    @property
    def max(self) -> str: ...


R = TypeVar("R", bound=HasRange)


@dataclass(frozen=True)
class Target(Generic[R]):
    """One physical partition a query runs in, limited to an EPK interval inside it."""

    range: R
    interval: EpkRange

    @property
    def lo(self) -> str:
        return self.interval.min

    @property
    def hi(self) -> str:
        return self.interval.max


class RoutingMap(Generic[R]):
    """A container's physical partitions, which tile the EPK space: which holds an EPK, which overlap an interval.

    The ranges must cover ["", "FF") exactly once: no gap, no overlap, no range twice, none empty. A map
    that trusted a broken set would route a key to a neighbour (a gap) or to two partitions (an overlap)
    and every query plan built on it would be silently wrong, so a broken set is refused at construction
    with a `ValueError` naming the ranges at fault. The service and the emulator always hold such a tiling
    (after a split the parent is gone and its two children cover its span), and so do the feed ranges the
    SDK reads. Sorted once here, the map answers by bisection: an EPK in O(log n), an interval in
    O(log n + k) for the k ranges it reaches.
    """

    def __init__(self, ranges: Iterable[R]) -> None:
        self.ranges: list[R] = sorted(ranges, key=lambda r: (r.min, r.max))
        faults = tiling_faults(self.ranges)
        if faults:
            raise ValueError('partition key ranges must tile the EPK space ["", "FF") exactly: ' + "; ".join(faults))
        self._mins = [r.min for r in self.ranges]

    def __len__(self) -> int:
        return len(self.ranges)

    def range_for(self, epk: str) -> R:
        """The partition whose [min, max) holds an EPK."""
        return self.ranges[bisect.bisect_right(self._mins, epk) - 1]

    def _span(self, interval: EpkRange) -> range:
        """Positions of the partitions an interval reaches: from the one holding its start up to the last
        starting below its end. The tiling makes this exact: every range before the first ends at or
        below the interval's start, every range from the end on starts at or above its end."""
        first = bisect.bisect_right(self._mins, interval.min) - 1
        if interval.is_point:
            return range(first, first + 1)
        end = len(self._mins) if interval.max == MAX_EPK else bisect.bisect_left(self._mins, interval.max)
        return range(first, end)  # an inverted interval (min above max) holds no EPK: empty

    def overlapping(self, interval: EpkRange) -> list[R]:
        """The partitions sharing any EPK with the interval, in EPK order."""
        span = self._span(interval)
        return self.ranges[span.start : span.stop]

    def targets(self, intervals: Iterable[EpkRange]) -> list[Target[R]]:
        """Each overlapping partition with the part of the interval inside it, in EPK order."""
        out = [
            Target(rng, EpkRange(rng.min, rng.max).clip(interval))
            for interval in intervals
            for rng in self.overlapping(interval)
        ]
        out.sort(key=lambda t: (t.range.min, t.interval.min))
        return out

    def indexes(self, intervals: Iterable[EpkRange]) -> set[int]:
        """Positions (in EPK order) of the partitions the intervals reach."""
        return {i for interval in intervals for i in self._span(interval)}


def tiling_faults(ordered: Sequence[HasRange]) -> list[str]:
    """What keeps ranges sorted by (min, max) from covering ["", "FF") exactly once, one line per fault
    (an empty list for a tiling). Ranges are named by their `id` when they have one."""
    if not ordered:
        return ["there are no ranges"]
    faults = [f"{_name(r)} is empty (min >= max)" for r in ordered if r.min >= r.max]
    faults += _duplicate_ids(ordered)
    spans = [r for r in ordered if r.min < r.max]
    if not spans:
        return faults
    if spans[0].min != MIN_EPK:
        faults.append(f'the first range {_name(spans[0])} starts above ""')
    reach = spans[0]  # of the ranges so far, the one ending highest
    for rng in spans[1:]:
        if rng.min > reach.max:
            faults.append(f"a gap [{reach.max!r}, {rng.min!r}) between {_name(reach)} and {_name(rng)}")
        elif rng.min < reach.max:
            same = (rng.min, rng.max) == (reach.min, reach.max)
            faults.append(f"{_name(reach)} and {_name(rng)} {'are the same range' if same else 'overlap'}")
        if rng.max > reach.max:
            reach = rng
    if reach.max != MAX_EPK:
        faults.append(f'the last range {_name(reach)} ends below "FF"')
    return faults


def _duplicate_ids(ranges: Sequence[HasRange]) -> list[str]:
    by_id: dict[str, list[HasRange]] = {}
    for rng in ranges:
        range_id = getattr(rng, "id", None)
        if range_id is not None:
            by_id.setdefault(str(range_id), []).append(rng)
    return [
        f"id {rid!r} names {len(same)} ranges: {', '.join(_bounds(r) for r in same)}"
        for rid, same in by_id.items()
        if len(same) > 1
    ]


def _name(rng: HasRange) -> str:
    """A range as an error names it: its id (a pkrange, a feed range with one) and its bounds."""
    range_id = getattr(rng, "id", None)
    return _bounds(rng) if range_id is None else f"range {str(range_id)!r} {_bounds(rng)}"


def _bounds(rng: HasRange) -> str:
    return f"[{rng.min!r}, {rng.max!r})"


def predict_partitions(
    sql: str,
    parameters: Mapping[str, Any],
    partition_key: Any,
    definition: Mapping[str, Any],
    ranges: Sequence[HasRange],
) -> set[int] | None:
    """Positions in `ranges` (sorted by EPK) a query should reach, or None when that cannot be known.

    `ranges` are the container's whole set, which must tile the EPK space (see `RoutingMap`), or none at
    all when the layout is unknown: a query against a container that could not be read (not found, the
    endpoint unreachable) is still recorded, with nothing predicted. None also when its SQL cannot be
    analysed.
    """
    from cosmoscore.sql import SqlError, parse_query

    if not ranges:
        return None

    key = None if partition_key is None else partition_key if isinstance(partition_key, list) else [partition_key]
    try:
        query = parse_query(sql) if key is None else None
        intervals = query_intervals(query, definition, parameters, key)
    except SqlError:
        return None  # the service may know syntax this engine does not; the run still records it
    return RoutingMap(ranges).indexes(intervals)
