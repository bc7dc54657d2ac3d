"""The per-page execution budget: a query page stops computing once it has spent its budget and
returns the rows found so far with a continuation, as the service does, so one slow query cannot stall the
other clients of the single-threaded server. The SDKs follow continuations transparently and tolerate
empty pages that carry one (cosmos-wire-protocol.md §1.6, path A).

Queries run in steps (`TopPlan.stream`): filters, JOINs and projections output as they go; ORDER BY,
aggregates, DISTINCT and OFFSET collect their input over steps and output it at the end. A run that
ends within the first page's budget is an ordinary whole result (`paging.RangeResult`), paged and
charged exactly as before; a longer one stays a `Progress` in the result cache, advanced by each page
request for it.

Charges: each page carries the documents its own steps loaded (so pages sum to the whole run), the
per-partition terms on the first page (the non-empty term on the first page that has rows).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from emulator.engine.query import paging
from emulator.engine.query.range_index import IndexSettings

DEFAULT_PAGE_BUDGET_MS = 50.0  # ours: keeps a reading client's worst wait near 100 ms behind a scanning query
FIRST_BATCH_ROWS = 128  # rows per step to begin with; then sized so a step takes about 1/8 of the budget
MAX_BATCH_ROWS = 16384
RESULT_SAMPLE_ROWS = 32  # rows serialized to estimate a cached result's bytes


@dataclass(frozen=True)
class QuerySettings:
    """How the emulator serves queries: compute time per page, and its per-partition indexes."""

    page_budget_ms: float = DEFAULT_PAGE_BUDGET_MS
    index: IndexSettings = field(default_factory=IndexSettings)


@dataclass
class Progress:
    """One target's result while it is being computed: rows so far and the counts of the run so far."""

    batches: Iterator[tuple[list[Any], int, int]]  # (outputs, documents loaded, rows matched) per step
    batch: list[int]  # rows per step, tuned as it runs
    served_by_index: bool
    average_bytes: float
    rows: list[Any] = field(default_factory=list)
    loaded: int = 0
    matched: int = 0
    done: bool = False
    charged_docs: int = 0  # retrieved documents already charged to earlier pages
    charged_first: bool = False
    charged_nonempty: bool = False
    step_ms: float = 0.0  # execution time of the latest advance
    index_only: bool = False  # an index-only COUNT (reports no retrieved documents)
    cap: int | None = None  # a bounded index-served query loads at most this many documents (Q20)
    order_without_composite: bool = False  # charged Q11's factor (CostModel.query_shape_factor)

    def advance(self, want: float, budget_ms: float, clock: Callable[[], float] = time.perf_counter) -> None:
        """Compute until `want` rows exist, the run ends, or the budget is spent (at least one step)."""
        started = clock()
        deadline = started + budget_ms / 1000
        while not self.done and len(self.rows) < want:
            before = clock()
            step = next(self.batches, None)
            if step is None:
                self.done = True
                break
            out, self.loaded, self.matched = step
            self.rows.extend(out)
            now = clock()
            self.batch[0] = next_batch(self.batch[0], now - before, budget_ms / 1000)
            if now >= deadline:
                break
        self.step_ms = (clock() - started) * 1000

    @property
    def retrieved(self) -> int:
        return paging.capped(self.matched, self.cap) if self.served_by_index else self.loaded

    @property
    def index_hit_ratio(self) -> float:
        if self.served_by_index or self.loaded == 0:
            return 1.0
        return max(0.0, min(1.0, self.matched / self.loaded))


def next_batch(rows: int, spent_s: float, budget_s: float) -> int:
    """Rows for the next step: about an eighth of the budget at the last step's pace."""
    if spent_s <= 0:
        return min(rows * 2, MAX_BATCH_ROWS)
    return max(1, min(MAX_BATCH_ROWS, rows * 2, int(rows * budget_s / 8 / spent_s)))


@dataclass(frozen=True)
class Cut:
    """One page of a target: its rows, whether more follow in the target, and what it is charged for."""

    page: list[Any]
    sizes: list[int]
    end: int
    more: bool
    retrieved: int
    retrieved_bytes: int
    first: bool  # the page carries the per-partition minimum
    nonempty: bool  # the page carries the non-empty partition term (on the first page, or the first with rows)
    execution_ms: float


def page_limit(max_items: int | None) -> float:
    """How many rows a page may hold (the REST default when none is asked for; -1: no limit)."""
    if max_items is None or max_items == 0:
        return paging.DEFAULT_PAGE_ITEMS
    return math.inf if max_items < 0 else max_items


def cut_whole(result: paging.RangeResult, offset: int, max_items: int | None) -> Cut:
    """A page of a whole result: each page carries its share of the range's documents (sums exactly)."""
    page, sizes = paging.page_rows(result.rows, offset, max_items)
    end, count = offset + len(page), len(result.rows)
    retrieved = paging.share(result.retrieved_docs, offset, end, count)
    retrieved_bytes = paging.share(result.retrieved_bytes, offset, end, count)
    elapsed = result.execution_ms if offset == 0 else 0.0
    first = offset == 0
    return Cut(page, sizes, end, end < count, retrieved, retrieved_bytes, first, first and count > 0, elapsed)


def cut_progress(progress: Progress, offset: int, max_items: int | None) -> Cut:
    """A page of a run in progress: the rows found so far (possibly none), charged for the documents
    loaded since the previous page."""
    page, sizes = paging.page_rows(progress.rows, offset, max_items)
    end = offset + len(page)
    retrieved = max(progress.retrieved - progress.charged_docs, 0)
    progress.charged_docs += retrieved
    first = not progress.charged_first
    progress.charged_first = True
    nonempty = bool(progress.rows) and not progress.charged_nonempty
    progress.charged_nonempty = progress.charged_nonempty or nonempty
    more = not progress.done or end < len(progress.rows)
    size = round(retrieved * progress.average_bytes)
    return Cut(page, sizes, end, more, retrieved, size, first, nonempty, progress.step_ms)


def result_bytes(rows: list[Any]) -> int:
    """An estimate of a result's serialized size from a sample of its rows (cache weights)."""
    if not rows:
        return 64
    step = max(1, len(rows) // RESULT_SAMPLE_ROWS)
    sample = rows[::step][:RESULT_SAMPLE_ROWS]
    total = 0
    for row in sample:
        try:
            total += len(orjson.dumps(row))
        except orjson.JSONEncodeError:
            total += 1024
    return 64 + total * len(rows) // len(sample)


def whole_result(run: Progress) -> paging.RangeResult:
    """A run that has ended, as the whole result it is."""
    return paging.RangeResult(
        rows=run.rows,
        retrieved_docs=run.retrieved,
        retrieved_bytes=round(run.retrieved * run.average_bytes),
        execution_ms=run.step_ms,
        index_hit_ratio=run.index_hit_ratio,
        index_only=run.index_only,
        order_without_composite=run.order_without_composite,
    )
