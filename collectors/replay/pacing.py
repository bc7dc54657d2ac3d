"""The replay's RU/s ceiling: a token bucket fed by the RU each response actually charged.

Why: a replay on a production account spends the account's RU, in the same per-second partition budgets as
the application (docs/reference/azure-monitor.md R75); unpaced, a fan-out query's pages can take a small
partition's whole second and throttle the application's requests in it.

The rule (`Pacer`): before each HTTP request the replay waits until the bucket holds no debt; each response's
`x-ms-request-charge` is taken from the bucket, which refills at `rate` RU per second of the run's clock and
holds at most 0 (no credit is saved up while the replay waits or thinks). So a request, however costly, goes
out once the debt before it is repaid, and the RU of the requests sent in any `T` seconds is at most
`rate * T` plus the last one's charge: per clock second, the ceiling plus one page. The wait is the run's
(`Run.pause`): a stop signal ends it, and a simulated clock moves instead of the wall clock passing.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Pacer:
    """A token bucket of capacity 0 refilled at `rate` RU/s of `clock`; `pause` waits on that clock."""

    rate: float  # RU per second; inf: unpaced
    clock: Callable[[], float]
    pause: Callable[[float], None]
    debt: float = 0.0  # RU charged and not yet repaid at `at`
    at: float | None = None  # when `debt` was last brought up to date (None: nothing charged yet)
    waited_s: float = 0.0  # how long the pacing made the run wait, in all
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_s(self) -> float:
        """How long the next request must wait for the debt to be repaid (pure but for the clock)."""
        with self._lock:
            self._repay()
            return 0.0 if self.debt <= 0 or math.isinf(self.rate) else self.debt / self.rate

    def before_request(self) -> None:
        """Wait until the bucket allows the next request. The wait repays its share of the debt whatever the
        clock says after it (a clock that did not move, or a wait a stop signal cut short, never makes the
        next wait longer), and the time it took is not counted again."""
        wait = self.wait_s()
        if wait <= 0:
            return
        self.pause(wait)
        with self._lock:
            self.debt = max(0.0, self.debt - wait * self.rate)
            self.at = self.clock()
        self.waited_s += wait

    def charge(self, ru: float) -> None:
        """A response charged `ru`: a debt the bucket repays at `rate`."""
        with self._lock:
            self._repay()
            self.debt += max(ru, 0.0)

    def _repay(self) -> None:
        now = self.clock()
        if self.at is not None and now > self.at:
            self.debt = max(0.0, self.debt - (now - self.at) * self.rate) if not math.isinf(self.rate) else 0.0
        self.at = now if self.at is None else max(self.at, now)


def pacing_text(rate: float) -> str:
    """How a run line states the pacing in force."""
    return "unpaced" if math.isinf(rate) else f"paced at {rate:g} RU/s"
