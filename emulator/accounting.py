"""What the emulator records: one row per request, as the service would meter it.

This is the emulator's own ground truth. The Azure Monitor stand-in, the demo history and the tests
read it (in-process); the collectors never do, so they work the same against Azure.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass


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


class Accounting:
    """A bounded, thread-safe log of request records."""

    def __init__(self, max_records: int = 2_000_000) -> None:
        self._records: deque[RequestRecord] = deque(maxlen=max_records)
        self._lock = threading.Lock()

    def add(self, record: RequestRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()
