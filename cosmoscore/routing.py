"""Which physical partitions a query reaches: the routing rule in one place.

The rule (ru-cost-model.md Q5/H3, cosmos-wire-protocol.md §1.6-1.9): a full partition key -> the one
partition holding its EPK; an `IN` list -> the owners of its keys; a hierarchical prefix -> every
partition its EPK range overlaps; anything else -> all partitions. The emulator serves queries by it,
the replay collector predicts routing with it, analysis and the advisor name its classes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from cosmoscore.epk import FULL_RANGE, EpkRange, epk_for, prefix_range
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


def key_intervals(kind: str, levels: int, keys: Iterable[Sequence[Any]] | None) -> list[EpkRange]:
    """EPK intervals pinned by keys: a point per full key, a prefix range per hierarchical prefix.

    `keys` None means the query is not pinned: the whole key space.
    """
    if keys is None:
        return [FULL_RANGE]
    out = set()
    for key in keys:
        epk = epk_for(kind, tuple(key))
        out.add(EpkRange.point(epk) if len(key) == levels else EpkRange(*prefix_range(epk)))
    return sorted(out, key=lambda r: (r.min, r.max))


def filter_intervals(key_filter: KeyFilter, kind: str, levels: int) -> list[EpkRange]:
    """The intervals a WHERE clause's partition-key filter pins."""
    return key_intervals(kind, levels, key_filter.keys)


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
    kind = str(definition.get("kind", "Hash"))
    if partition_key is not None:
        return key_intervals(kind, len(paths), [partition_key])
    if query is None:
        return [FULL_RANGE]
    return filter_intervals(partition_key_filter(query, paths, parameters), kind, len(paths))


class HasRange(Protocol):
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
    """A container's physical partitions sorted by EPK: which holds an EPK, which overlap an interval."""

    def __init__(self, ranges: Iterable[R]) -> None:
        self.ranges: list[R] = sorted(ranges, key=lambda r: r.min)
        self._mins = [r.min for r in self.ranges]

    def __len__(self) -> int:
        return len(self.ranges)

    def range_for(self, epk: str) -> R:
        """The partition whose [min, max) holds an EPK."""
        return self.ranges[bisect.bisect_right(self._mins, epk) - 1]

    def overlapping(self, interval: EpkRange) -> list[R]:
        """The partitions sharing any EPK with the interval, in EPK order."""
        if interval.is_point:
            return [self.range_for(interval.min)]
        return [r for r in self.ranges if EpkRange(r.min, r.max).overlaps(interval)]

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
        hit = {id(r) for interval in intervals for r in self.overlapping(interval)}
        return {i for i, r in enumerate(self.ranges) if id(r) in hit}


def predict_partitions(
    sql: str,
    parameters: Mapping[str, Any],
    partition_key: Any,
    definition: Mapping[str, Any],
    ranges: Sequence[HasRange],
) -> set[int] | None:
    """Positions in `ranges` (sorted by EPK) a query should reach, or None when its SQL cannot be analysed."""
    from cosmoscore.sql import SqlError, parse_query

    key = None if partition_key is None else partition_key if isinstance(partition_key, list) else [partition_key]
    try:
        query = parse_query(sql) if key is None else None
        intervals = query_intervals(query, definition, parameters, key)
    except SqlError:
        return None  # the service may know syntax this engine does not; the run still records it
    return RoutingMap(ranges).indexes(intervals)
