"""A simulated clock for the engine: time that moves only when told to.

The engine reads time through the `clock` callable it is given (`time.time` by default), for throttling
windows, `_ts`, the request log and the per-minute metrics `History`. Handing it a `SimulatedClock`
lets an in-process user (the demo, the advisor, tests, benchmarks) replay a day of traffic in seconds:
advance the clock between requests and the history, throttling and Azure Monitor stand-in all see
that day, minute by minute, exactly as they would have in real time.
"""

from __future__ import annotations

import threading


class SimulatedClock:
    """Epoch seconds that advance only through `advance` or `set`; safe to read from server threads."""

    def __init__(self, start: float) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self._now

    @property
    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by `seconds` (never back: the history and throttle windows assume order)."""
        if seconds < 0:
            raise ValueError("a simulated clock only moves forward")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to `when`, which must not be earlier than now."""
        with self._lock:
            if when < self._now:
                raise ValueError(f"cannot move the clock back from {self._now} to {when}")
            self._now = float(when)
