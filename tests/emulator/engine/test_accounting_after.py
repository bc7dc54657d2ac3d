"""`Accounting.after`: the records after a sequence number, as the request log serves them, read from
either end of the log, with what its caps dropped."""

from __future__ import annotations

import pytest

from emulator.engine.accounting import Accounting, RequestRecord


def record(n: int) -> RequestRecord:
    return RequestRecord(float(n), "db", "c", "Read", "docs", 200, 0, 1.0, "0", "", f"a{n}", "", 0.1)


@pytest.mark.parametrize("seq", [0, 1, 37, 60, 98, 99, 100, 150])
@pytest.mark.parametrize("limit", [0, 1, 7, 50, 1000])
def test_a_window_is_the_records_after_the_number_in_order(seq: int, limit: int) -> None:
    log = Accounting(max_records=60)  # 100 added: 1..40 dropped
    for n in range(1, 101):
        log.add(record(n))
    picked, last, dropped = log.after(seq, limit)
    expected = [n for n in range(max(seq + 1, 41), 101)][:limit]
    assert [(s, r.time) for s, r in picked] == [(n, float(n)) for n in expected]
    assert last == 100 and dropped == (seq + 1 < 41)
