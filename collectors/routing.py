"""Which physical partitions a query should reach, predicted from the container's partition key
definition and the SQL filter, and the routing class of the partitions it did reach.

Pure functions. The prediction uses the emulator's SQL engine and hashing (the same EPKs as the SDK's,
ru-cost-model.md E2-E5) and the routing rule of Q5/H3: equality on the full key -> its partition, `IN`
-> the owners, a hierarchical prefix -> the partitions its EPK range overlaps, anything else -> all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from emulator.hashing import MAX_EPK, epk_for, prefix_range
from emulator.model import split_path
from emulator.sql import SqlError, parse_query, partition_key_filter

SINGLE, TARGETED, FAN_OUT, UNKNOWN = "single", "targeted", "fan-out", "unknown"


@dataclass(frozen=True)
class FeedRange:
    """One physical partition's EPK range, as `read_feed_ranges()` reports it."""

    min: str
    max: str

    @property
    def label(self) -> str:
        return f"{self.min}..{self.max}"


def feed_ranges_of(raw: Iterable[Mapping[str, Any]]) -> list[FeedRange]:
    """The SDK's feed-range dicts (`{"Range": {"min", "max", ...}}`) as sorted EPK ranges."""
    out = []
    for item in raw:
        rng = item.get("Range", item)
        out.append(FeedRange(str(rng.get("min", "")), str(rng.get("max", MAX_EPK))))
    return sorted(out, key=lambda r: r.min)


def routing_class(hit: int, total: int) -> str:
    """single / targeted / fan-out, from how many of the container's partitions a query reached."""
    if hit <= 0 or total <= 0:
        return UNKNOWN
    if hit == 1:
        return SINGLE
    return FAN_OUT if hit >= total else TARGETED


def _overlapping(ranges: Sequence[FeedRange], lo: str, hi: str) -> set[int]:
    if lo == hi:
        return {i for i, r in enumerate(ranges) if r.min <= lo and (lo < r.max or r.max == MAX_EPK)}
    return {i for i, r in enumerate(ranges) if r.min < hi and (lo < r.max or r.max == MAX_EPK)}


def _key_intervals(keys: Iterable[Sequence[Any]], kind: str, levels: int) -> list[tuple[str, str]]:
    out = []
    for key in keys:
        epk = epk_for(kind, tuple(key))
        out.append((epk, epk) if len(key) == levels else prefix_range(epk))
    return out


def predict_partitions(sql: str, parameters: Mapping[str, Any], partition_key: Any,
                       key_definition: Mapping[str, Any], ranges: Sequence[FeedRange]) -> set[int] | None:
    """Indexes into `ranges` the query should reach, or None when the SQL cannot be analysed here."""
    paths = [split_path(p) for p in key_definition.get("paths", [])]
    kind = str(key_definition.get("kind", "Hash"))
    if partition_key is not None:
        key = partition_key if isinstance(partition_key, list) else [partition_key]
        intervals = _key_intervals([key], kind, len(paths))
    else:
        try:
            found = partition_key_filter(parse_query(sql), paths, parameters)
        except SqlError:
            return None  # the service may know syntax this engine does not; the run still records it
        if found.keys is None:
            return set(range(len(ranges)))
        intervals = _key_intervals(found.keys, kind, len(paths))
    hit: set[int] = set()
    for lo, hi in intervals:
        hit |= _overlapping(ranges, lo, hi)
    return hit


def predicted_class(predicted: set[int] | None, total: int) -> str:
    if predicted is None or total == 0:
        return UNKNOWN
    if not predicted:  # a contradictory filter reaches nothing; the SDK still probes one partition
        return SINGLE
    return routing_class(len(predicted), total)
