"""What the emulator records: one row per request, as the service would meter it.

This is the emulator's own ground truth: for in-process readers (the tests), and for the Azure Monitor
stand-in's per-request rows (a log query naming ActivityId reads CDBDataPlaneRequests and
CDBQueryRuntimeStatistics from this log, `emulator.monitor.request_log`; every other query reads the
per-minute `History`). The collectors never read it, so they work the same against Azure. A served
emulator keeps a small log (`--request-log-mb`, 16 MB): at the in-process default of 256 MiB it was the
whole of the server's growth under a steady load on a fixed data set (benchmarks/bench_soak.py: 570 bytes
of RSS a request, 150 MB in 5 minutes at 900 requests/s); at 16 MB the server stays flat once it is full.

The log is bounded twice: by records and by bytes, so clients sending long header values cannot make it
hoard memory (measured: 0.4-0.9 KB a record, 1.7 GB at the record cap alone); its string fields are capped
too. The oldest records go first, and the log remembers the latest time of any record it dropped
(`missing_until`): a reader knows from when on it holds every request, so it never answers from a log that
silently lost rows. A record's bytes are what it really holds (`record_bytes`: the object, each of its
strings, floats and ints, and its slot in the deque, as `sys.getsizeof` counts them; the empty string and
small ints are shared by the interpreter and cost nothing); an estimate of 200 bytes plus the characters let
the log hold 1.5-2 times its cap (tests/emulator/engine, tracemalloc).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import threading
from collections import deque
from dataclasses import dataclass

DEQUE_SLOT_BYTES = 9  # a deque keeps 64 references in a 520-byte block: 8.1 bytes a record, rounded up
THROTTLED = 429
MAX_FIELD_CHARS = 2048  # the longest legitimate field: a partition key of 2 KB (ru-cost-model.md P17)


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the service would meter it (slots: millions of these are kept in memory)."""

    time: float  # engine clock, epoch seconds
    database: str
    container: str
    operation: str  # e.g. "Create", "Read", "Query", "ReadFeed", "Upsert"
    resource_type: str  # "docs", "colls", "dbs", "pkranges", "offers", "databaseaccount"
    status: int
    substatus: int
    request_charge: float
    pkrange_id: str
    partition_key: str  # the logical key as JSON, "" when none
    activity_id: str
    correlated_activity_id: str
    duration_ms: float
    retry_after_ms: int = 0
    query_text: str = ""  # a query's SQL as sent (capped like every string), "" for other operations
    user_agent: str = ""  # the client's User-Agent header, "" for an in-process caller
    pkrange_count: int = 0  # the container's physical partitions when it was served (0: no partition served it)
    tag: str = ""  # the client's `x-ruscope-tag` header (a test run's or a test's name), "" without one


_STRING_FIELDS = tuple(f.name for f in dataclasses.fields(RequestRecord) if f.type == "str")
_FIELDS = tuple(f.name for f in dataclasses.fields(RequestRecord))


def capped(record: RequestRecord, max_chars: int = MAX_FIELD_CHARS) -> RequestRecord:
    """The record with every string field cut to `max_chars` (the same object when none is longer)."""
    long = {n: getattr(record, n)[:max_chars] for n in _STRING_FIELDS if len(getattr(record, n)) > max_chars}
    return dataclasses.replace(record, **long) if long else record


def record_bytes(record: RequestRecord) -> int:
    """The memory one record holds: its object, its fields' objects (small ints are shared by the
    interpreter and cost nothing) and its slot in the log."""
    size = sys.getsizeof(record) + DEQUE_SLOT_BYTES
    for name in _FIELDS:
        value = getattr(record, name)
        if not (type(value) is int and -5 <= value <= 256 or value == ""):
            size += sys.getsizeof(value)
    return size


def executed_query(record: RequestRecord) -> bool:
    """Whether the engine ran the query the record meters: a query routed to a partition and not throttled
    (a 429 is answered before the query runs). A CDBQueryRuntimeStatistics row is written for exactly these,
    per request and in `History`'s per-minute query cells alike: the stand-in's rule, azure-monitor.md §7b R53."""
    return bool(record.query_text) and bool(record.pkrange_id) and record.status != THROTTLED


def _window(records: deque[RequestRecord], offset: int, count: int) -> list[RequestRecord]:
    """`count` records from position `offset`, walked from the nearer end of the deque: a reader near the
    tail (a test's requests) touches only the tail, a reader paging from the start only its page."""
    if count <= 0:
        return []
    from_end = len(records) - offset - count  # records after the window
    if offset <= from_end:
        return list(itertools.islice(records, offset, offset + count))
    tail = list(itertools.islice(reversed(records), from_end, from_end + count))
    return tail[::-1]


class Accounting:
    """A thread-safe log of request records, bounded by count and by estimated bytes, that knows up to
    when it may be missing some (`missing_until`)."""

    def __init__(
        self, max_records: int = 2_000_000, max_bytes: int = 256 * 1024 * 1024, max_field_chars: int = MAX_FIELD_CHARS
    ) -> None:
        self._records: deque[RequestRecord] = deque()
        self._lock = threading.Lock()
        self.max_records, self.max_bytes, self.max_field_chars = max_records, max_bytes, max_field_chars
        self._bytes = 0
        self._missing_until: float | None = None
        self._added = 0  # records ever added: the last one's sequence number (`after`)

    def add(self, record: RequestRecord) -> None:
        record = capped(record, self.max_field_chars)
        size = record_bytes(record)
        with self._lock:
            self._records.append(record)
            self._added += 1
            self._bytes += size
            while self._records and (len(self._records) > self.max_records or self._bytes > self.max_bytes):
                dropped = self._records.popleft()
                self._bytes -= record_bytes(dropped)
                self._lost(dropped.time)

    def _lost(self, until: float) -> None:
        if self._missing_until is None or until > self._missing_until:
            self._missing_until = until

    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def window(
        self, since: float, until: float, containers: frozenset[tuple[str, str]]
    ) -> tuple[list[RequestRecord], float | None]:
        """The records of `containers` ((database, container)) timed in [since, until), in log order, and
        `missing_until` as of the same moment. One copy of the deque's references under the lock (a C-speed
        copy: writers wait for that, not for the filtering), then one pass outside it."""
        with self._lock:
            held, missing = list(self._records), self._missing_until
        return [r for r in held if since <= r.time < until and (r.database, r.container) in containers], missing

    def after(self, seq: int, limit: int) -> tuple[list[tuple[int, RequestRecord]], int, bool]:
        """Up to `limit` records added after the one numbered `seq` (records are numbered 1, 2, ... as they
        are added, however many the caps dropped since), with their numbers; the last number handed out;
        and whether some records after `seq` were dropped before they could be read. Reading from the last
        number on is how a client attributes requests to what it did in between (`ruscope check`)."""
        with self._lock:
            held, added = len(self._records), self._added
            first = added - held + 1  # the oldest record still held
            start = max(seq + 1, first)
            window = _window(self._records, start - first, max(0, min(limit, added - start + 1)))
        return [(start + i, record) for i, record in enumerate(window)], added, seq + 1 < first

    @property
    def missing_until(self) -> float | None:
        """The latest time up to which records may be missing (the newest time of any record dropped by
        the caps or `clear`, or marked by `lose_until`); None while the log holds every request it was given.
        Every request timed after it is in the log."""
        with self._lock:
            return self._missing_until

    def lose_until(self, time: float) -> None:
        """Declare requests up to `time` missing: the engine started on a history older than this log."""
        with self._lock:
            self._lost(time)

    @property
    def held_bytes(self) -> int:
        """The estimated bytes the kept records hold."""
        with self._lock:
            return self._bytes

    def clear(self) -> None:
        with self._lock:
            if self._records:
                self._lost(max(r.time for r in self._records))
            self._records.clear()
            self._bytes = 0
