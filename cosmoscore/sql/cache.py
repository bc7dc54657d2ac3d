"""A least-recently-used cache bounded by entries and by bytes (caches of entries of any size
held hundreds of MB). The caller says what an entry weighs; the most recent entry is always kept, so a
result larger than the whole budget can still be paged, until the next one replaces it. Thread-safe: the
emulator parses large queries on a worker thread into the same caches its event loop reads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: V, weight: int) -> None:
        with self._lock:
            self._put(key, value, weight)

    def _put(self, key: Hashable, value: V, weight: int) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        self._entries[key] = (value, weight)
        self.bytes += weight
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self.bytes > self.max_bytes):
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped

    def pop(self, key: Hashable) -> None:
        with self._lock:
            hit = self._entries.pop(key, None)
            if hit is not None:
                self.bytes -= hit[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


def cached(cache: BoundedCache[V], key: Hashable, make: Callable[[], V], weight: Callable[[V], int]) -> V:
    """The cached value for key, else `make()` stored with its weight."""
    hit = cache.get(key)
    if hit is None:
        hit = make()
        cache.put(key, hit, weight(hit))
    return hit
