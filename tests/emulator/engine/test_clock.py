"""The simulated clock: a day of per-minute history through the engine without waiting a day."""

from __future__ import annotations

import pytest

from cosmoscore.monitor.metrics import TOTAL_REQUESTS
from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Engine
from tests.emulator.history.test_history import CTX, LIMITS, START, _reads, _setup


def test_a_simulated_day_fills_every_minute_of_the_history() -> None:
    clock = SimulatedClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    engine.create_item(CTX, "t", "c", {"id": "doc", "k": "a"}, ["a"])
    for _ in range(24 * 60):
        _reads(engine, "a", 2)
        clock.advance(60)
    minutes = engine.history.minutes()
    assert len(minutes) == 24 * 60 and minutes[-1] - minutes[0] == 24 * 60 - 1
    points = engine.history.series("t", "c", TOTAL_REQUESTS, START, clock.now, grain_minutes=60)
    reads = [p for p in points if p.dimensions["OperationType"] == "Read"]
    assert [p.value for p in reads] == [120.0] * 24  # two reads a minute, an hour per point
    stamps = [doc["_ts"] for doc in engine.run_query("t", "c", "SELECT c._ts FROM c").rows]
    assert stamps == [int(START)]  # written at the start; the day passed in simulated time only


def test_the_clock_only_moves_forward() -> None:
    clock = SimulatedClock(100.0)
    assert clock.advance(5) == 105.0 and clock() == clock.now == 105.0
    clock.set(200.0)
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="cannot move the clock back"):
        clock.set(150.0)
    assert clock() == 200.0
