"""Per-partition equality and range indexes, so a selective filter touches only its matches.

The service answers filters on indexed paths from its inverted index (ru-cost-model.md §3.3: an
index-served filter loads only its matches). Scanning every document of a physical partition for them,
as the emulator did, made a filtered fan-out 8-10x a plain loop at 500,000 documents (issue 14 §6). Here
each physical partition indexes, on demand, the paths its queries probe (`cosmoscore.sql.probes`):
numbers and strings in sorted lists of (value, write sequence), nulls and booleans in sets of write
sequences. Arrays, objects and undefined values are not entered: no probe can match them.

An index only narrows the documents a query reads; the query still runs its whole WHERE over them, so
results and charges (which count matches, not documents read) are the same as a scan's, in the same
write order. Building is paced (`IndexSettings.build_budget_ms` per query page; the page scans
meanwhile) so a large partition's first probe does not stall other clients; writes keep built indexes
current as they happen.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedList

from cosmoscore.sql.probes import Bound, OrderedScan, Probe, Steps
from cosmoscore.sql.scope import step
from cosmoscore.sql.values import RANK_BOOL, RANK_NULL, RANK_NUMBER, RANK_STRING, hash_key, rank

if TYPE_CHECKING:
    from emulator.model import StoredItem

_ORDERED = (RANK_NUMBER, RANK_STRING)
_KEYED = (RANK_NULL, RANK_BOOL)
_ABSENT = object()  # no value at the path (undefined): not indexed
_KEYS_PER_SCAN = 16  # ours: a key's two binary searches cost about what reading 16 documents does
_SEQ_BELOW, _SEQ_ABOVE = -1, math.inf
_CHUNK = 4096  # documents indexed between two looks at the clock  # write sequences are >= 0: bounds around every (value, seq)


@dataclass(frozen=True)
class IndexSettings:
    """How the emulator indexes; the defaults keep an index's cost below the scans it saves."""

    max_paths: int = 8  # paths indexed per physical partition; the least recently probed is dropped
    min_documents: int = 1_000  # smaller partitions are scanned: a scan is as fast as a lookup
    max_share: float = 0.25  # a probe matching more of the partition than this scans instead
    build_budget_ms: float = 40.0  # building time per query page; the page scans while it builds


def _reader(steps: Steps) -> Callable[[Any], Any]:
    if len(steps) == 1 and steps[0].__class__ is str:  # the common case, read directly
        key = steps[0]
        return lambda doc: doc.get(key, _ABSENT)

    def read(doc: Any) -> Any:
        for key in steps:
            doc = step(doc, key)
        return doc

    return read


class PathIndex:
    """One path's values in one physical partition."""

    def __init__(self, steps: Steps, written: dict[int, StoredItem]) -> None:
        self.steps = steps
        self.read = _reader(steps)
        self.ordered: dict[int, SortedList] = {r: SortedList() for r in _ORDERED}
        self.keyed: dict[Any, set[int]] = {}  # hash_key of null/true/false -> write sequences
        # building: the write sequences present when it began, how far it got, what went meanwhile
        self._pending: list[int] | None = list(written)
        self._position = 0
        self._last_seq = self._pending[-1] if self._pending else -1
        self._removed: set[int] = set()
        self._pairs: dict[int, list[tuple[Any, int]]] = {r: [] for r in _ORDERED}

    @property
    def ready(self) -> bool:
        return self._pending is None

    def build(self, written: dict[int, StoredItem], deadline: float) -> bool:
        """Index more of the partition until `deadline` (perf_counter); True once it is complete."""
        pending = self._pending
        if pending is None:
            return True
        read, numbers, strings = self.read, self._pairs[RANK_NUMBER], self._pairs[RANK_STRING]
        while self._position < len(pending):
            chunk = pending[self._position : self._position + _CHUNK]
            self._position += len(chunk)
            for seq in chunk:
                item = written.get(seq)
                if item is None:
                    continue  # replaced or deleted since the build began
                value = read(item.doc)
                cls = value.__class__
                if cls is str:
                    strings.append((value, seq))
                elif cls is int or cls is float:
                    numbers.append((value, seq))
                elif cls is bool or value is None:
                    self.keyed.setdefault(hash_key(value), set()).add(seq)
            if time.perf_counter() >= deadline:
                return False
        removed = self._removed
        for r, found in self._pairs.items():
            self.ordered[r] = SortedList([p for p in found if p[1] not in removed] if removed else found)
        for seqs in self.keyed.values():
            seqs -= removed
        self._pending, self._pairs, self._removed = None, {}, set()
        for item in _written_after(written, self._last_seq):
            self.add(item)
        return True

    def add(self, item: StoredItem) -> None:
        if self._pending is not None:
            return  # written after the build began: it takes these up when it completes
        value = self.read(item.doc)
        r = rank(value)
        if r in _ORDERED:
            self.ordered[r].add((value, item.seq))
        elif r in _KEYED:
            self.keyed.setdefault(hash_key(value), set()).add(item.seq)

    def remove(self, item: StoredItem) -> None:
        if self._pending is not None:
            self._removed.add(item.seq)
            return
        value = self.read(item.doc)  # stored documents are replaced whole, never changed in place
        r = rank(value)
        if r in _ORDERED:
            self.ordered[r].discard((value, item.seq))
        elif r in _KEYED:
            self.keyed.get(hash_key(value), set()).discard(item.seq)

    # -- lookups -------------------------------------------------------------------------------

    def spans(self, probe: Probe) -> list[tuple[SortedList, int, int] | set[int]]:
        """Where the probe's matches lie: slices of the sorted lists and sets of write sequences."""
        if probe.keys is None:
            return [self.slice(probe.rank, probe.low, probe.high)]
        out: list[tuple[SortedList, int, int] | set[int]] = []
        for key in probe.keys:
            if key.__class__ is str:
                out.append(self.slice(RANK_STRING, Bound(key, True), Bound(key, True)))
            elif key.__class__ is tuple and key[0] == RANK_NUMBER:
                out.append(self.slice(RANK_NUMBER, Bound(key[1], True), Bound(key[1], True)))
            else:
                out.append(self.keyed.get(key, set()))
        return out

    def slice(self, r: int, low: Bound | None, high: Bound | None) -> tuple[SortedList, int, int]:
        values = self.ordered[r]
        start = 0
        if low is not None:
            start = values.bisect_left((low.value, _SEQ_BELOW) if low.inclusive else (low.value, _SEQ_ABOVE))
        stop = len(values)
        if high is not None:
            stop = values.bisect_right((high.value, _SEQ_ABOVE) if high.inclusive else (high.value, _SEQ_BELOW))
        return values, start, max(start, stop)


def _first_in_order(index: PathIndex, scan: OrderedScan, documents: int) -> tuple[list[int], int] | None:
    """The write sequences of the first `scan.limit` documents in the ORDER BY's order, and how many documents
    the query matches; None when the index does not hold every document the order needs. A stable sort keeps
    tied documents in write order, as (value, write sequence) does ascending; descending, every document
    tied with the last one taken comes too, and the query's own sort picks among them."""
    segments: list[set[int] | tuple[SortedList, int, int]]
    if len(scan.bounds) > 1:
        return [], 0  # a number bound and a string bound: no value is both
    if scan.bounds:
        (bound,) = scan.bounds
        segments = [index.slice(bound.rank, bound.low, bound.high)]
    else:
        keyed = [index.keyed.get(hash_key(v), set()) for v in (None, False, True)]  # the type order (§3.6)
        segments = [*keyed, *(index.slice(r, None, None) for r in _ORDERED)]
        if _count(segments) != documents:
            return None  # some documents have no primitive value there (undefined, arrays, objects)
    matched = _count(segments)
    if scan.descending:
        segments.reverse()
    taken: list[int] = []
    need = scan.limit
    for segment in segments:
        if need <= 0:
            break
        if isinstance(segment, set):
            taken.extend(segment)  # one value: every document in it ties
            need -= len(segment)
            continue
        values, start, stop = segment
        if scan.descending:
            first = max(start, stop - need)
            if first > start:  # and the rest of the tie with the lowest value taken
                first = max(start, values.bisect_left((values[first][0], _SEQ_BELOW)))
            part = range(first, stop)
        else:
            part = range(start, min(stop, start + need))  # ties are in write order already
        taken.extend(seq for _, seq in islice(values, part.start, part.stop))
        need -= len(part)
    taken.sort()
    return taken, matched


def _written_after(written: dict[int, StoredItem], seq: int) -> Iterator[StoredItem]:
    """Items written after `seq`, from the end of the write order (where they are) backwards."""
    for key in reversed(written):
        if key <= seq:
            return
        yield written[key]


def _count(spans: list[tuple[SortedList, int, int] | set[int]]) -> int:
    return sum(len(s) if isinstance(s, set) else s[2] - s[1] for s in spans)


def _sequences(spans: list[tuple[SortedList, int, int] | set[int]]) -> list[int]:
    seqs: list[int] = []
    for s in spans:
        if isinstance(s, set):
            seqs.extend(s)
        else:
            seqs.extend(seq for _, seq in islice(s[0], s[1], s[2]))
    seqs.sort()
    return seqs


class RangeIndexes:
    """The indexes of one physical partition, by path, the most recently probed last."""

    def __init__(self) -> None:
        self.paths: OrderedDict[Steps, PathIndex] = OrderedDict()

    def record_write(self, old: StoredItem | None, new: StoredItem) -> None:
        for index in self.paths.values():
            if old is not None:
                index.remove(old)
            index.add(new)

    def record_delete(self, item: StoredItem) -> None:
        for index in self.paths.values():
            index.remove(item)

    def clear(self) -> None:
        self.paths.clear()

    def candidates(
        self, written: dict[int, StoredItem], probes: list[Probe], settings: IndexSettings
    ) -> list[dict[str, Any]] | None:
        """The documents that can satisfy every probe, in write order, from the most selective index;
        None when the partition should be scanned (too small, no index ready, or nothing selective)."""
        if not probes or len(written) < settings.min_documents:
            return None
        deadline = time.perf_counter() + settings.build_budget_ms / 1000
        best: list[tuple[SortedList, int, int] | set[int]] | None = None
        for probe in probes:
            if probe.keys is not None and len(probe.keys) * _KEYS_PER_SCAN > len(written):
                continue  # a search per key would cost more than reading the partition
            index = self._index(probe.steps, written, settings)
            if not index.build(written, deadline):
                continue
            spans = index.spans(probe)
            if best is None or _count(spans) < _count(best):
                best = spans
        if best is None or _count(best) > settings.max_share * len(written):
            return None
        return [written[seq].doc for seq in _sequences(best)]

    def ordered(
        self, written: dict[int, StoredItem], scan: OrderedScan, settings: IndexSettings
    ) -> tuple[list[dict[str, Any]], int] | None:
        """The documents among which a bounded ORDER BY's rows are, in write order, and how many documents
        the query matches (what a scan would charge); None when the partition should be scanned."""
        if len(written) < settings.min_documents:
            return None
        index = self._index(scan.steps, written, settings)
        if not index.build(written, time.perf_counter() + settings.build_budget_ms / 1000):
            return None
        found = _first_in_order(index, scan, len(written))
        if found is None or len(found[0]) > settings.max_share * len(written):
            return None
        return [written[seq].doc for seq in found[0]], found[1]

    def _index(self, steps: Steps, written: dict[int, StoredItem], settings: IndexSettings) -> PathIndex:
        index = self.paths.get(steps)
        if index is None:
            index = self.paths[steps] = PathIndex(steps, written)
            while len(self.paths) > settings.max_paths:
                self.paths.popitem(last=False)
        else:
            self.paths.move_to_end(steps)
        return index
