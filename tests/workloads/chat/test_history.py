"""The demo's history through the engine in-process: the containers, the backfill, and a short history
whose story (the split at half time, the hot tenant throttled) happens on the simulated clock."""

from __future__ import annotations

from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Engine
from workloads.chat import generator as gen
from workloads.chat import history

START = 1_767_225_600.0  # 2026-01-01T00:00:00Z, on a minute


def test_a_short_history_splits_the_hot_container_and_throttles_the_large_tenant() -> None:
    size = gen.Size(
        "tiny", tenants=8, history_minutes=12, peak_turns_per_minute=4.0, backfill_days=1, backfill_turns_per_hour=2.0
    )
    clock = SimulatedClock(START - 4 * 3600)  # the backfill is loaded before the history starts
    engine = Engine(limits=history.DEMO_LIMITS, clock=clock)
    history.create_containers(engine)
    loaded = history.load_backfill(engine, clock, gen.DEFAULT_SEED, size, START)
    assert loaded > 0 and clock() < START
    minutes: list[int] = []
    report = history.drive_history(engine, clock, gen.DEFAULT_SEED, size, START, on_minute=minutes.append)
    assert minutes == list(range(12)) and report.minutes == 12 and clock() == START + 12 * 60
    assert report.ranges_after_split > report.ranges_before_split  # 800 -> 2,000 RU/s split a partition
    assert report.writes > 0 and report.reads > 0 and report.throttled > 0  # the campaign's reads past the budget
