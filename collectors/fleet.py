"""A fleet: every account of the config collected into one store, at most `[fleet] parallelism` at a time.

Each account is its own run of each collector (its own run id and pending segment, its rows labelled with
the account's name), so accounts share nothing but the store, which takes concurrent appends. Threads,
not processes: a collector mostly waits on the network and the SDK's clients are thread-safe.

What a fleet promises: one account's failure is its own (its lines name it, its exit code counts, the
others go on); the shared stop event (SIGINT/SIGTERM) ends every run after its request in flight and
starts no new one; the exit code is the worst account's. Killed runs' segments are recovered once, before
any account starts, so the recovery line is not repeated per account. Each account's endpoint and
credential are checked once, before the first of its collectors that reads the account: an account that
is down, or whose key is wrong or missing, is one line and exit 1, and those collectors do not run for it
(no error row per query); the Azure Monitor collectors still do.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from analysis.load.stored import DERIVATION
from collectors.client import check_account
from collectors.config import Account, Config
from collectors.errors import describe_error
from collectors.registry import Collector, Options, recover_store, run_collector
from collectors.run import Line, RunSummary
from store import (
    CompactFailure,
    CompactReport,
    DerivedReport,
    RollupReport,
    StoreLayoutError,
    StoreLocation,
    compact,
    refresh,
    rollup,
)
from store.rollups import rollup_due

EXIT_PARTIAL = 1
# the collectors that talk to the Cosmos DB account itself (the others read Azure Monitor): an account that
# fails its check at the start is one line, and these do not run for it (no error row per query)
READS_THE_ACCOUNT = ("replay", "storage")


@dataclass(frozen=True)
class AccountOutcome:
    """How one account's runs went; `error` is set when its job broke outside a collector's own care."""

    account: str
    summaries: tuple[RunSummary, ...] = ()
    error: str = ""

    @property
    def exit_code(self) -> int:
        return max([EXIT_PARTIAL if self.error else 0, *(s.exit_code for s in self.summaries)])


@dataclass(frozen=True)
class FleetOutcome:
    accounts: tuple[AccountOutcome, ...]

    @property
    def exit_code(self) -> int:
        """DESIGN.md's codes: the worst account's (0 all good, 1 some items failed)."""
        return max((a.exit_code for a in self.accounts), default=0)


class Lines:
    """Whole lines from many threads; with several accounts each line names its account (`[eu-1] ...` on
    out, `account 'eu-1': ...` on err, unless the line already starts so). An error line is said once per
    account: an account that is down fails every collector the same way, and one line says it."""

    def __init__(self, out: Line, err: Line, *, labelled: bool) -> None:
        self._out, self._err, self.labelled = out, err, labelled
        self._lock = threading.Lock()
        self._said: set[tuple[str, str]] = set()

    def of(self, account: str) -> tuple[Line, Line]:
        """The out and err lines of one account."""
        named = f"account {account!r}: "

        def out(line: str) -> None:
            with self._lock:
                self._out(f"[{account}] {line}" if self.labelled else line)

        def err(line: str) -> None:
            text = named + line if self.labelled and not line.startswith(named) else line
            with self._lock:
                if (account, text) not in self._said:
                    self._said.add((account, text))
                    self._err(text)

        return out, err


@dataclass(frozen=True)
class Job:
    """What every account's job shares: the collectors, the config, the store, the stop event."""

    chosen: Sequence[Collector]
    config: Config
    store: StoreLocation
    stop: threading.Event
    options: Options
    progress: bool

    def collect(self, account: Account, lines: Lines) -> AccountOutcome:
        """Every collector over one account, one run each; a broken job is one line and exit 1."""
        out, err = lines.of(account.name)
        summaries: list[RunSummary] = []
        problem: str | None = None
        checked = False
        try:
            for chosen in self.chosen:
                if self.stop.is_set():
                    break
                if chosen.name in READS_THE_ACCOUNT and not checked:  # once, before the first that reads it
                    problem, checked = check_account(account, self.options.credential), True
                    if problem:
                        err(f"account {account.name!r}: {problem}")
                if problem and chosen.name in READS_THE_ACCOUNT:
                    continue
                summary = run_collector(
                    chosen,
                    self.config,
                    store=self.store,
                    stop=self.stop,
                    progress=self.progress,
                    out=out,
                    err=err,
                    options=replace(self.options, account=account.name),
                    recovering=False,
                )
                summaries.append(summary)
                out(summary.line(self.store))
        except Exception as exc:  # the store or a bug: this account's line, and the others go on
            error = describe_error(exc, account.endpoint, key_env=account.key_env)
            err(f"account {account.name!r}: {error}")
            return AccountOutcome(account.name, tuple(summaries), error)
        return AccountOutcome(account.name, tuple(summaries), problem or "")


def collect_fleet(
    chosen: Sequence[Collector],
    config: Config,
    *,
    store: StoreLocation,
    accounts: Sequence[Account] | None = None,
    stop: threading.Event | None = None,
    progress: bool = False,
    out: Line = print,
    err: Line = print,
    options: Options = Options(),
) -> FleetOutcome:
    """Run `chosen` over `accounts` (default: all of the config's), `config.fleet.parallelism` at a time."""
    targets = list(accounts if accounts is not None else config.all_accounts())
    workers = max(1, min(config.fleet.parallelism, len(targets)))
    lines = Lines(out, err, labelled=len(targets) > 1)
    recover_store(store, out=out, err=err)
    # one progress bar at a time: bars of concurrent accounts would overwrite each other
    job = Job(chosen, config, store, stop or threading.Event(), options, progress and workers == 1)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ruscope-account")
    try:
        futures = [pool.submit(job.collect, account, lines) for account in targets]
        outcomes = tuple(future.result() for future in futures)
    except BaseException:  # a second Ctrl+C: start nothing more; runs in flight end on the stop event
        job.stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return FleetOutcome(outcomes)


def maintain_after_collect(config: Config, store: StoreLocation, *, out: Line = print, err: Line = print) -> int:
    """The optional pass after `collect`: with `[store] compact_after_collect`, the store's rollup, optimize,
    checkpoint and vacuum (keeping `vacuum_retention_hours` for readers in flight); else, with
    `rollup_after_collect` (the default), the rollup of the new metrics and the span cells' refresh
    (`analysis.load.stored`) alone, when the last rollup is `rollup_every_minutes` old. A line per table. Returns an exit code: 1 when it failed (the rows are stored
    either way; only the maintenance did not happen)."""
    settings = config.store
    if not (settings.compact_after_collect or settings.rollup_after_collect):
        return 0
    try:
        every = dt.timedelta(minutes=settings.rollup_every_minutes)
        if not settings.compact_after_collect and not rollup_due(store, every, now=dt.datetime.now(dt.UTC)):
            return 0
        reports: list[CompactReport | CompactFailure | RollupReport | DerivedReport] = (
            list(compact(store, retention_hours=config.store.vacuum_retention_hours, derived=(DERIVATION,)))
            if config.store.compact_after_collect
            else [rollup(store), *filter(None, [refresh(store, DERIVATION)])]
        )
    except Exception as exc:  # the store's own errors (a layout to migrate, storage access): one line
        cause = str(exc) if isinstance(exc, StoreLayoutError) else describe_error(exc, str(store))
        what = "compaction" if config.store.compact_after_collect else "rollup"
        err(f"{what} of {store} failed: {cause}")
        return EXIT_PARTIAL
    for report in reports:
        if isinstance(report, CompactFailure):  # a damaged table, named with its repair command
            err(report.line())
        elif isinstance(report, RollupReport):
            if report.source_version is not None:  # nothing said of a store without metrics
                out(report.line())
        elif isinstance(report, DerivedReport):
            out(report.line())
        else:
            out(f"compacted {report.line()}")
    return EXIT_PARTIAL if any(isinstance(r, CompactFailure) for r in reports) else 0
