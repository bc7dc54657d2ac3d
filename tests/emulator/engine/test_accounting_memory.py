"""The request log's byte cap bounds what its records really cost (tracemalloc), not an estimate of it."""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
import uuid

import pytest

from emulator.engine.accounting import Accounting, RequestRecord

CAP = 2 * 1024 * 1024


def _record(i: int) -> RequestRecord:
    """A request as the endpoint records it: fresh ids and key per request, names per container."""
    return RequestRecord(
        time=1_800_000_000.0 + i / 1000,
        database=f"db{i % 3}",
        container=f"orders{i % 7}",
        operation="Upsert",
        resource_type="docs",
        status=429 if i % 10 == 0 else 201,
        substatus=3200 if i % 10 == 0 else 0,
        request_charge=10.29 + i % 5,
        pkrange_id=str(i % 4),
        partition_key=json.dumps([f"tenant-{i}"]),
        activity_id=str(uuid.uuid4()),
        correlated_activity_id=str(uuid.uuid4()),
        duration_ms=0.4 + (i % 100) / 100,
        retry_after_ms=5 if i % 10 == 0 else 0,
    )


@pytest.mark.parametrize(("name", "extra_chars"), [("activity_id", 0), ("activity_id", 300), ("query_text", 300)])
def test_the_byte_cap_bounds_the_records_real_memory(name: str, extra_chars: int) -> None:
    log = Accounting(max_records=10_000_000, max_bytes=CAP)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(10_000):
            record = _record(i)
            if extra_chars:
                long = getattr(record, name) + f"{i:08d}" + "x" * extra_chars  # a fresh string a record
                record = dataclasses.replace(record, **{name: long})
            log.add(record)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(log.records()) < 10_000, "the cap was reached"
    assert held <= CAP * 1.05, f"{held / CAP:.2f} x the cap"
    assert held >= CAP * 0.7, f"only {held / CAP:.2f} x the cap: the cap is over-counted"
