"""One run of one collector: what every collector shares, so each collector module keeps only its own
`fetch_*` and record building.

A `Run` has a run id (sortable, unique, a safe file-name token), a clock and how to wait on it, a stop event
(set by SIGINT or SIGTERM), a budget, the output lines, and the pending segment its records are journaled to:
`record(r)` appends a store record to the segment at once, so a kill -9 loses nothing recorded; `seal()`
turns the segment into Parquet parts (the collector calls `seal(every=SEAL_SECONDS)` between items, so a
long run shows up in the dashboard while it runs); `finish()` seals the rest and returns the summary.

Waiting goes through the run, so a simulated clock (the demo's, a test's) moves instead of the wall clock
passing: `pause(s)` is a wait the collector itself makes (the replay's pacing; on the wall clock the stop
event's wait, which a signal ends at once; a clock with `advance` is advanced), `waiting(s)` is told of a
wait someone else makes (the SDK sleeping a 429's Retry-After before its retry): the wall clock passes by
itself, a simulated one moves by `s` when the run was given `waited` (the demo's `DemoClock.waited`).
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from tqdm import tqdm

from store import Record, Segment, StoreLocation

SEAL_SECONDS = 30.0  # how often a long run turns its recorded rows into Parquet (the dashboard sees them)
BUDGET, SIGNAL = "budget", "signal"
Line = Callable[[str], None]
Wait = Callable[[float], object]


class BudgetReached(Exception):
    """The run spent its budget: the item in progress ends early and no other starts."""


class Stopped(Exception):
    """A stop signal arrived: the item in progress ends after its current request."""


@dataclass
class RunSummary:
    run_id: str
    item: str = "execution"  # what the collector counts: executions of queries, containers read, ...
    items: int = 0
    failed: int = 0
    throttled_out: int = 0  # of the failed: still throttled (429) after the SDK's retries, nothing else wrong
    total_ru: float = 0.0
    ended_by: str = ""  # "" (all done), "budget" or "signal"

    @property
    def exit_code(self) -> int:
        """DESIGN.md: 0 all good, 1 ran but some items failed or were not run."""
        return 1 if self.failed or self.ended_by == BUDGET else 0

    def line(self, store: StoreLocation) -> str:
        """The run's one closing line."""
        ending = {BUDGET: " (stopped at the RU budget)", SIGNAL: " (stopped by a signal)"}.get(self.ended_by, "")
        return (
            f"run {self.run_id}: {self.items} {self.item}(s), {self.failed} failed, "
            f"{self.total_ru:.2f} RU{ending}; stored in {store}"
        )


def new_run_id(now: float) -> str:
    """Sortable and unique: UTC time plus a random suffix (also a safe file-name token)."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class Run:
    """The state one collector run shares with the framework (see the module docstring)."""

    def __init__(
        self,
        store: StoreLocation,
        *,
        clock: Callable[[], float] = time.time,
        stop: threading.Event | None = None,
        budget: float | None = None,
        progress: bool = False,
        out: Line = print,
        err: Line = print,
        item: str = "execution",
        sleep: Wait | None = None,
        waited: Wait | None = None,
    ) -> None:
        # a local directory or an az:// / abfss:// URI, as the store takes it (Path() would mangle a URI)
        self.store, self.clock, self.budget = store, clock, budget
        self.stop = stop or threading.Event()
        # a simulated clock (one with `advance(seconds)`: `SimulatedClock`, a test's) is moved, never slept on;
        # the wall clock: sleep on the stop event (a signal ends the wait), others' waits pass by themselves
        self._sleep: Wait = sleep or getattr(clock, "advance", None) or self.stop.wait
        self._waited: Wait = waited or (lambda seconds: None)
        self.out, self.err, self.show_progress = out, err, progress
        self.run_id = new_run_id(clock())
        self.summary = RunSummary(self.run_id, item)
        self.spent = 0.0  # RU charged so far (collectors call charge())
        self._parts = 0
        self._segment = Segment(self.store, self.run_id, "p000")
        self._sealed_at = time.monotonic()

    def record(self, record: Record) -> None:
        """Journal one store record; it reaches the OS before this returns."""
        self._segment.append(record)

    def charge(self, ru: float) -> None:
        self.spent += ru

    def pause(self, seconds: float) -> None:
        """Wait `seconds` of the run's clock (at once when a stop signal has arrived, or arrives meanwhile)."""
        if seconds > 0 and not self.stop.is_set():
            self._sleep(seconds)

    def waiting(self, seconds: float) -> None:
        """Someone else (the SDK) waits `seconds` now: `waited` is told (see the module docstring)."""
        if seconds > 0:
            self._waited(seconds)

    def count(self, *, failed: bool, throttled_out: bool = False) -> None:
        """One item (an execution) done, failed or not (`throttled_out`: failed only because the partition
        stayed throttled past the SDK's retries): the summary and the exit code follow from these."""
        self.summary.items += 1
        self.summary.failed += failed
        self.summary.throttled_out += failed and throttled_out

    def seal(self, *, every: float = 0.0) -> None:
        """Turn the recorded rows into Parquet parts, at most every `every` seconds (0: now)."""
        if self._segment.rows == 0 or time.monotonic() - self._sealed_at < every:
            return
        self._segment.seal(warn=self.err)
        self._parts += 1
        self._sealed_at = time.monotonic()
        self._segment = Segment(self.store, self.run_id, f"p{self._parts:03d}")

    def over_budget(self, expected: float = 0.0) -> bool:
        """Whether the next item, expected to cost `expected` RU, would take the run past its budget;
        once it would, the run ends by its budget."""
        if self.budget is not None and self.spent + expected > self.budget:
            self.summary.ended_by = BUDGET
        return self.summary.ended_by == BUDGET

    def check(self) -> None:
        """Between requests: raise Stopped on a signal, BudgetReached once the run has spent its budget."""
        if self.stop.is_set():
            raise Stopped
        if self.budget is not None and self.spent > self.budget:
            raise BudgetReached

    @contextmanager
    def progress(self, total: int, unit: str = "exec") -> Iterator[Callable[[int], object]]:
        """A progress bar on stderr (shown after 3 s, and only when asked); yields its advance function."""
        with tqdm(total=total, unit=unit, delay=3, disable=not self.show_progress, file=sys.stderr, leave=False) as bar:
            yield bar.update

    def finish(self) -> RunSummary:
        """Seal what is left and close the segment; the summary is final."""
        self.seal()
        self._segment.close()  # the segment opened last holds nothing
        self.summary.total_ru = round(self.spent, 2)
        if self.stop.is_set():
            self.summary.ended_by = SIGNAL
        return self.summary
