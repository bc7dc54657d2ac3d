"""The collectors `ruscope collect` runs, and how one is run.

A collector is any object with a `name` (its `ruscope <name>` command and its label), `budget(config)`
(the run's RU budget, or None) and `collect(config, run, options)`, which fetches, builds store records
and hands them to `run.record(...)`; it reports per-item lines with `run.out`/`run.err` and counts items
with `run.count(...)`, and never raises for a failed item. `run_collector` does the rest: recovering what
killed runs left behind, the run id, sealing, the summary and its exit code.

To add a collector: a module `collectors/<name>.py` defining `COLLECTOR`, and its module name in
`REGISTERED` (modules are imported only when a command needs them, so the CLI starts quickly).
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from collectors.config import Config
from collectors.run import Line, Run, RunSummary, Wait
from store import StoreLocation, recover

REGISTERED = (
    "collectors.replay",
    "collectors.storage",
    "collectors.metrics",
    "collectors.logs",
)  # in the order `ruscope collect` runs them


@dataclass(frozen=True)
class Options:
    """What a command line adds to the config for one run."""

    only: str | None = None  # only the item of this name (a query, for the replay)
    account: str | None = None  # the account to collect (`Config.account`); None: the first (or only) one
    credential: Any = None  # a Cosmos DB key or token credential; None: from the environment
    item_lines: bool = True  # a line per item (the replay's per-query cost); off: the caller reads the store


class Collector(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def item(self) -> str:
        """What one counted item is (`execution`, `container`): the run's closing line says so."""
        ...

    def budget(self, config: Config) -> float | None: ...

    def collect(self, config: Config, run: Run, options: Options) -> None: ...


def collectors() -> list[Collector]:
    """Every registered collector, in order."""
    found: list[Collector] = [importlib.import_module(module).COLLECTOR for module in REGISTERED]
    return found


def collector(name: str) -> Collector:
    """The registered collector called `name` (LookupError naming the known ones if none is)."""
    for candidate in collectors():
        if candidate.name == name:
            return candidate
    raise LookupError(f"no collector {name!r} (known: {', '.join(c.name for c in collectors())})")


def run_collector(
    chosen: Collector,
    config: Config,
    *,
    store: StoreLocation,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
    progress: bool = False,
    out: Line = print,
    err: Line = print,
    options: Options = Options(),
    recovering: bool = True,
    sleep: Wait | None = None,
    waited: Wait | None = None,
) -> RunSummary:
    """One run of `chosen`: recover killed runs' segments (unless the caller did, as a fleet does once for
    all its runs), collect, seal; the summary says how it went. `sleep`/`waited`: how the run waits on a
    simulated `clock` (`collectors.run`; None: the wall clock's ways)."""
    if recovering:
        recover_store(store, out=out, err=err)
    run = Run(
        store,
        clock=clock,
        stop=stop,
        budget=chosen.budget(config),
        progress=progress,
        out=out,
        err=err,
        item=chosen.item,
        sleep=sleep,
        waited=waited,
    )
    try:
        chosen.collect(config, run, options)
    finally:
        summary = run.finish()
    return summary


def recover_store(store: StoreLocation, *, out: Line = print, err: Line = print) -> int:
    """Commit what killed runs left pending, exactly once; one line when there was any, with the rows each
    table got (rows of a table keyed by identity that were stored meanwhile are not counted: not added)."""
    tally: dict[str, int] = {}
    recovered = recover(store, warn=err, tally=tally)
    if recovered:
        rows = ", ".join(f"{n} {table}" for table, n in tally.items() if n) or "none new"
        out(f"recovered {recovered} unwritten part(s) of an interrupted earlier run into {store} (rows: {rows})")
    return recovered
