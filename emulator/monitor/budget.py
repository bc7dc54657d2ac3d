"""What one monitor request may cost, as Log Analytics caps it: result rows, result bytes and time; and
the stand-in's shutdown, which cancels the request being computed.

Log Analytics' documented limits (learn.microsoft.com/azure/azure-monitor/service-limits, "Log queries and
language"; learn.microsoft.com/azure/azure-monitor/logs/api/timeouts):
- a query returns at most 500,000 records and about 100 MiB of data; past either it answers what it has
  with a `PartialError` (`LogsQueryPartialResult` in the SDK), naming the limit (`E_QUERY_RESULT_SET_TOO_LARGE`);
- a query runs at most the `Prefer: wait=N` seconds the client asked (default 3 minutes, at most 10),
  else the answer is 504 Gateway Timeout.
The work loops call `Budget.check` (cheap: a counter, then the clock every `CHECK_EVERY` calls), which
raises `TimedOut` or `Cancelled`; the request's handler turns those into the service's answer.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

MAX_ROWS = 500_000  # "Maximum records returned by a query: 500,000" (API)
MAX_BYTES = 100 * 1024 * 1024  # "Maximum size of data returned: ~104 MB (~100 MiB)" (API)
DEFAULT_WAIT_S = 180.0  # "The default timeout is 3 minutes."
MAX_WAIT_S = 600.0  # "The maximum timeout is 10 minutes."
CHECK_EVERY = 256  # calls of `check` between two readings of the clock
_WAIT = re.compile(r"(?:^|[,;\s])wait\s*=\s*(\d+)", re.IGNORECASE)


class TimedOut(Exception):
    """The request ran past its time budget."""


class Cancelled(Exception):
    """The stand-in is shutting down."""


def wait_seconds(prefer: str | None) -> float:
    """The time budget a `Prefer` header asks (`wait=N`), within the service's default and maximum."""
    match = _WAIT.search(prefer or "")
    return min(MAX_WAIT_S, float(match.group(1))) if match else DEFAULT_WAIT_S


@dataclass
class Budget:
    """One request's deadline and result caps; `stop` is the stand-in's shutdown."""

    seconds: float = DEFAULT_WAIT_S
    stop: threading.Event = field(default_factory=threading.Event)
    max_rows: int = MAX_ROWS
    max_bytes: int = MAX_BYTES
    deadline: float = field(init=False)
    _calls: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def check(self) -> None:
        """Raise `Cancelled` once the stand-in stops, `TimedOut` once past the deadline."""
        self._calls += 1
        if self._calls % CHECK_EVERY:
            return
        time.sleep(0)  # hand the GIL to a thread waiting for it: the Cosmos DB endpoint's requests go first
        if self.stop.is_set():
            raise Cancelled
        if time.monotonic() > self.deadline:
            raise TimedOut

    def spent(self) -> bool:
        """Whether the deadline passed or the stand-in stops (read now, not every CHECK_EVERY calls)."""
        return self.stop.is_set() or time.monotonic() > self.deadline
