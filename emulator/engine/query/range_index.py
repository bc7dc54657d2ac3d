"""Per-partition equality and range indexes, so a selective filter touches only its matches.

The service answers filters on indexed paths from its inverted index (ru-cost-model.md §3.3: an
index-served filter loads only its matches). Scanning every document of a physical partition for them,
as the emulator did, made a filtered fan-out 8-10x a plain loop at 500,000 documents (measured). Here
each physical partition indexes, on demand, the paths its queries probe (`cosmoscore.sql.probes`):
numbers and strings in lists sorted by value (the stored items themselves: 16 bytes an entry, ties in
write order), nulls and booleans in maps by write sequence. Arrays, objects and undefined values are not
entered: no probe can match them.

An index only narrows the documents a query reads; the query still runs its whole WHERE over them, so
results and charges (which count matches, not documents read) are the same as a scan's, in the same
write order. A probed path is built by the server between requests, in slices (`emulator.engine.query.index_reads`),
or, with `IndexSettings.build_budget_ms`, within the pages that probe it; until then its queries scan.
No build stalls other clients; writes keep built indexes
current as they happen (a write always has the highest write sequence, so it goes last among its ties).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from sortedcontainers import SortedKeyList

from cosmoscore.sql.probes import Bound, OrderedScan, Probe, Steps
from cosmoscore.sql.scope import step
from cosmoscore.sql.values import RANK_BOOL, RANK_NULL, RANK_NUMBER, RANK_STRING, hash_key, rank
from emulator.engine import heap

if TYPE_CHECKING:
    from emulator.engine.model import StoredItem

_ORDERED = (RANK_NUMBER, RANK_STRING)
_KEYED = (RANK_NULL, RANK_BOOL)
_ABSENT = object()  # no value at the path (undefined): not indexed
_KEYS_PER_SCAN = 16  # ours: a key's two binary searches cost about what reading 16 documents does
_CHUNK = 4096  # documents indexed between two looks at the clock
_BY_SEQ = attrgetter("seq")
_FIRST = itemgetter(0)


@dataclass(frozen=True)
class IndexSettings:
    """How the emulator indexes; the defaults keep an index's cost below the scans it saves."""

    max_paths: int = 8  # paths indexed per physical partition; the least recently probed is dropped
    min_documents: int = 1_000  # smaller partitions are scanned: a scan is as fast as a lookup
    max_share: float = 0.25  # a probe matching more of the partition than this scans instead
    # building time a query page may spend on an index it needs; 0: none, the server builds it between
    # requests (`ruscope emulator` and the demo), and in-process engines, whose queries are mostly one-off
    # (the advisor), never build
    build_budget_ms: float = 0.0


def _reader(steps: Steps) -> Callable[[Any], Any]:
    if len(steps) == 1 and steps[0].__class__ is str:  # the common case, read directly
        key = steps[0]
        return lambda doc: doc.get(key, _ABSENT)

    def read(doc: Any) -> Any:
        for key in steps:
            doc = step(doc, key)
        return doc

    return read


def _item_reader(steps: Steps, read: Callable[[Any], Any]) -> Callable[[StoredItem], Any]:
    """A stored item's value at the path: the sorted lists' key, called for every entry they sort."""
    if len(steps) == 1 and steps[0].__class__ is str:
        key = steps[0]
        return lambda item: item.doc.get(key, _ABSENT)
    return lambda item: read(item.doc)


Span = tuple[SortedKeyList, int, int] | dict[int, "StoredItem"]  # a slice of a sorted list, or a map's items


class PathIndex:
    """One path's values in one physical partition."""

    def __init__(self, steps: Steps, written: dict[int, StoredItem]) -> None:
        self.steps = steps
        read = self.read = _reader(steps)
        self.value = _item_reader(steps, read)
        self.ordered: dict[int, SortedKeyList] = {r: SortedKeyList(key=self.value) for r in _ORDERED}
        self.keyed: dict[Any, dict[int, StoredItem]] = {}  # hash_key of null/true/false -> items by write sequence
        # building: the items present when it began (in write order), how far it got, which went meanwhile
        self._pending: list[StoredItem] | None = list(written.values())
        self._position = 0
        self._last_seq = self._pending[-1].seq if self._pending else -1
        self._removed: set[int] = set()
        self._found: dict[int, list[tuple[Any, StoredItem]]] = {r: [] for r in _ORDERED}

    @property
    def ready(self) -> bool:
        return self._pending is None

    def build(self, written: dict[int, StoredItem], deadline: float) -> bool:
        """Index more of the partition until `deadline` (perf_counter); True once it is complete."""
        pending = self._pending
        if pending is None:
            return True
        read, numbers, strings = self.read, self._found[RANK_NUMBER], self._found[RANK_STRING]
        while self._position < len(pending):
            chunk = pending[self._position : self._position + _CHUNK]
            self._position += len(chunk)
            for item in chunk:
                value = read(item.doc)
                cls = value.__class__
                if cls is str:
                    strings.append((value, item))
                elif cls is int or cls is float:
                    numbers.append((value, item))
                elif cls is bool or value is None:
                    self.keyed.setdefault(hash_key(value), {})[item.seq] = item
            if time.perf_counter() >= deadline:
                return False
        removed = self._removed
        for r, found in self._found.items():  # a stable sort of items in write order: ties stay in it
            kept = [pair for pair in found if pair[1].seq not in removed] if removed else found
            kept.sort(key=_FIRST)
            self.ordered[r] = presorted(kept, self.value)
        for items in self.keyed.values():
            for seq in removed & items.keys():
                del items[seq]
        self._pending, self._found, self._removed = None, {}, set()
        for item in _written_after(written, self._last_seq):
            self.add(item)
        heap.settle_again()  # long-lived from now: kept out of full collections where the heap is settled
        return True

    def add(self, item: StoredItem) -> None:
        """A new write: the highest write sequence, so it goes after the items its value ties with."""
        if self._pending is not None:
            return  # written after the build began: it takes these up when it completes
        value = self.read(item.doc)
        r = rank(value)
        if r in _ORDERED:
            self.ordered[r].add(item)
        elif r in _KEYED:
            self.keyed.setdefault(hash_key(value), {})[item.seq] = item

    def remove(self, item: StoredItem) -> None:
        if self._pending is not None:
            self._removed.add(item.seq)
            return
        value = self.read(item.doc)  # stored documents are replaced whole, never changed in place
        r = rank(value)
        if r in _ORDERED:
            items = self.ordered[r]
            at = _position_of(items, value, item.seq)
            if at is not None:
                del items[at]
        elif r in _KEYED:
            self.keyed.get(hash_key(value), {}).pop(item.seq, None)

    # -- lookups -------------------------------------------------------------------------------

    def spans(self, probe: Probe) -> list[Span]:
        """Where the probe's matches lie: slices of the sorted lists and maps of null/boolean items."""
        if probe.keys is None:
            return [self.span(probe.rank, probe.low, probe.high)]
        out: list[Span] = []
        for key in probe.keys:
            if key.__class__ is str:
                out.append(self.span(RANK_STRING, Bound(key, True), Bound(key, True)))
            elif key.__class__ is tuple and key[0] == RANK_NUMBER:
                out.append(self.span(RANK_NUMBER, Bound(key[1], True), Bound(key[1], True)))
            else:
                out.append(self.keyed.get(key, {}))
        return out

    def span(self, r: int, low: Bound | None, high: Bound | None) -> tuple[SortedKeyList, int, int]:
        items = self.ordered[r]
        start = 0
        if low is not None:
            start = items.bisect_key_left(low.value) if low.inclusive else items.bisect_key_right(low.value)
        stop = len(items)
        if high is not None:
            stop = items.bisect_key_right(high.value) if high.inclusive else items.bisect_key_left(high.value)
        return items, start, max(start, stop)


def presorted(pairs: list[tuple[Any, StoredItem]], key: Callable[[StoredItem], Any]) -> SortedKeyList:
    """The SortedKeyList of `(key, item)` pairs already sorted by key, as `SortedKeyList(items, key)` builds it
    but without reading every item's key twice more in sorted order: that walks memory at random, and was
    three quarters of a build (80 ms for 50,000 items). Fills the list's own fields the way its `update`
    does (sortedcontainers 2.4, pinned; tests/emulator/engine/query/test_range_index.py checks the result is the same)."""
    out = SortedKeyList(key=key)
    load = out._load
    out._lists.extend([item for _, item in pairs[i : i + load]] for i in range(0, len(pairs), load))
    out._keys.extend([k for k, _ in pairs[i : i + load]] for i in range(0, len(pairs), load))
    out._maxes.extend(keys[-1] for keys in out._keys)
    out._len = len(pairs)
    return out


def _position_of(items: SortedKeyList, value: Any, seq: int) -> int | None:
    """Where the item with this value and write sequence is: its ties are in write order, so a binary search
    by write sequence among them finds it (a tie of thousands costs a dozen looks, not thousands)."""
    lo, hi = items.bisect_key_left(value), items.bisect_key_right(value)
    while lo < hi:
        mid = (lo + hi) // 2
        if items[mid].seq < seq:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(items) and items[lo].seq == seq and items.key(items[lo]) == value else None


def _first_in_order(index: PathIndex, scan: OrderedScan, documents: int) -> tuple[list[StoredItem], int] | None:
    """The first `scan.limit` documents in the ORDER BY's order, and how many documents the query matches;
    None when the index does not hold every document the order needs. A stable sort keeps tied documents in
    write order, as the index does ascending; descending, every document tied with the last one taken
    comes too, and the query's own sort picks among them."""
    segments: list[Span]
    if len(scan.bounds) > 1:
        return [], 0  # a number bound and a string bound: no value is both
    if scan.bounds:
        (bound,) = scan.bounds
        segments = [index.span(bound.rank, bound.low, bound.high)]
    else:
        keyed = [index.keyed.get(hash_key(v), {}) for v in (None, False, True)]  # the type order (§3.6)
        segments = [*keyed, *(index.span(r, None, None) for r in _ORDERED)]
        if _count(segments) != documents:
            return None  # some documents have no primitive value there (undefined, arrays, objects)
    matched = _count(segments)
    if scan.descending:
        segments.reverse()
    taken: list[StoredItem] = []
    need = scan.limit
    for segment in segments:
        if need <= 0:
            break
        if isinstance(segment, dict):
            taken.extend(segment.values())  # one value: every document in it ties
            need -= len(segment)
            continue
        items, start, stop = segment
        if scan.descending:
            first = max(start, stop - need)
            if first > start:  # and the rest of the tie with the lowest value taken
                first = max(start, items.bisect_key_left(items.key(items[first])))
            part = range(first, stop)
        else:
            part = range(start, min(stop, start + need))  # ties are in write order already
        taken.extend(items.islice(part.start, part.stop))
        need -= len(part)
    taken.sort(key=_BY_SEQ)
    return taken, matched


def _written_after(written: dict[int, StoredItem], seq: int) -> list[StoredItem]:
    """Items written after `seq`, in write order (they are at the end of it)."""
    after = []
    for key in reversed(written):
        if key <= seq:
            break
        after.append(written[key])
    after.reverse()
    return after


def _count(spans: list[Span]) -> int:
    return sum(len(s) if isinstance(s, dict) else s[2] - s[1] for s in spans)


def _in_write_order(spans: list[Span]) -> list[StoredItem]:
    items: list[StoredItem] = []
    for s in spans:
        items.extend(s.values() if isinstance(s, dict) else s[0].islice(s[1], s[2]))
    items.sort(key=_BY_SEQ)
    return items


class RangeIndexes:
    """The indexes of one physical partition, by path, the most recently probed last."""

    def __init__(self) -> None:
        self.paths: OrderedDict[Steps, PathIndex] = OrderedDict()
        self.wanted: OrderedDict[Steps, None] = OrderedDict()  # probed, not indexed yet: the server builds them

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
        self.wanted.clear()

    @property
    def building(self) -> bool:
        return bool(self.wanted) or any(not index.ready for index in self.paths.values())

    def advance(self, written: dict[int, StoredItem], settings: IndexSettings, deadline: float) -> bool:
        """Begin the wanted indexes and go on building unfinished ones until `deadline` (perf_counter);
        True once all are complete."""
        for steps in list(self.wanted):
            self._index(steps, written, settings)
        self.wanted.clear()
        return all(index.build(written, deadline) for index in list(self.paths.values()))

    def candidates(
        self, written: dict[int, StoredItem], probes: list[Probe], settings: IndexSettings
    ) -> list[dict[str, Any]] | None:
        """The documents that can satisfy every probe, in write order, from the most selective index;
        None when the partition should be scanned (too small, no index ready, or nothing selective)."""
        if not probes or len(written) < settings.min_documents:
            return None
        deadline = time.perf_counter() + settings.build_budget_ms / 1000
        best: list[Span] | None = None
        for probe in probes:
            if probe.keys is not None and len(probe.keys) * _KEYS_PER_SCAN > len(written):
                continue  # a search per key would cost more than reading the partition
            index = self._ready(probe.steps, written, settings, deadline)
            if index is None:
                continue
            spans = index.spans(probe)
            if best is None or _count(spans) < _count(best):
                best = spans
        if best is None or _count(best) > settings.max_share * len(written):
            return None
        return [item.doc for item in _in_write_order(best)]

    def ordered(
        self, written: dict[int, StoredItem], scan: OrderedScan, settings: IndexSettings
    ) -> tuple[list[dict[str, Any]], int] | None:
        """The documents among which a bounded ORDER BY's rows are, in write order, and how many documents
        the query matches (what a scan would charge); None when the partition should be scanned."""
        if len(written) < settings.min_documents:
            return None
        index = self._ready(scan.steps, written, settings, time.perf_counter() + settings.build_budget_ms / 1000)
        if index is None:
            return None
        found = _first_in_order(index, scan, len(written))
        if found is None or len(found[0]) > settings.max_share * len(written):
            return None
        return [item.doc for item in found[0]], found[1]

    def _ready(
        self, steps: Steps, written: dict[int, StoredItem], settings: IndexSettings, deadline: float
    ) -> PathIndex | None:
        """The path's index if it is complete. Without a build budget, a path not indexed yet is only
        wanted: the server builds it between requests (`advance`), and an in-process engine, whose queries
        are mostly one-off, never pays for it."""
        index = self.paths.get(steps)
        if index is None and settings.build_budget_ms <= 0:
            self.wanted[steps] = None
            while len(self.wanted) > settings.max_paths:
                self.wanted.popitem(last=False)
            return None
        index = self._index(steps, written, settings)
        if not index.ready and settings.build_budget_ms > 0:
            index.build(written, deadline)
        return index if index.ready else None

    def _index(self, steps: Steps, written: dict[int, StoredItem], settings: IndexSettings) -> PathIndex:
        index = self.paths.get(steps)
        if index is None:
            index = self.paths[steps] = PathIndex(steps, written)
            while len(self.paths) > settings.max_paths:
                self.paths.popitem(last=False)
        else:
            self.paths.move_to_end(steps)
        return index
