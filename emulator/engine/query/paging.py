"""Paging a query's per-range results: which target a continuation resumes, the next page's rows within the
item and 4 MB limits, the share of a range's charge a page carries (so paging does not change the total),
the range results computed once and paged from a cache, and a query's index utilization.

`emulator.engine.query.service.QueryService` uses them under the engine lock; `emulator.rest.wire` shapes
continuations and metrics for the protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from cosmoscore.indexing import IndexPolicy
from cosmoscore.routing import Target
from cosmoscore.sql import IndexUse, Query, canonical_json, index_use
from cosmoscore.sql.cache import BoundedCache, cached
from cosmoscore.sql.loading import Loading, loading
from cosmoscore.sql.parser import AST_BYTES_PER_CHAR
from cosmoscore.sql.utilization import Utilization, index_utilization
from emulator.engine import errors
from emulator.engine.results import QueryCursor

DEFAULT_PAGE_ITEMS = 100  # no page size asked for: the REST API's default page size
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a page never exceeds the service's 4 MB response size


def resume_index(targets: Sequence[Target[Any]], cursor: QueryCursor) -> tuple[int, bool]:
    """Which target a continuation resumes, and whether it is the very same partition (else begin the first
    one that reaches past the token's start afresh: the range split or vanished between pages)."""
    if cursor.start is None:
        return 0, True
    at = cursor.start if cursor.at is None else cursor.at
    for i, target in enumerate(targets):
        rng = target.range
        if (rng.min, rng.max, target.lo) == (cursor.start, cursor.end, at):
            return i, True
        if rng.max > cursor.start and target.lo >= at:
            return i, False
    return len(targets), False


def cursor_at(target: Target[Any], offset: int) -> QueryCursor:
    """The resume point `offset` rows into a target: its range, and where in it the target begins."""
    rng = target.range
    return QueryCursor(rng.min, rng.max, offset, None if target.lo == rng.min else target.lo)


def page_rows(rows: list[Any], offset: int, max_items: int | None) -> tuple[list[Any], list[int]]:
    """The next page of rows and each row's serialized size, within the item and 4 MB limits."""
    limit = DEFAULT_PAGE_ITEMS if max_items is None or max_items == 0 else max_items
    end = len(rows) if limit < 0 else min(len(rows), offset + limit)
    page: list[Any] = []
    sizes: list[int] = []
    total = 0
    for row in rows[offset:end]:
        try:
            size = len(orjson.dumps(row))
        except orjson.JSONEncodeError as exc:  # nested beyond what JSON serialisation allows
            raise errors.bad_request(f"The query result cannot be serialized: {exc}.") from None
        if page and total + size > MAX_RESPONSE_BYTES:
            break
        page.append(row)
        sizes.append(size)
        total += size
    return page, sizes


def share(total: int, start: int, end: int, count: int) -> int:
    """The integer part of `total` that rows [start, end) of `count` carry; the pages of a range sum to
    `total` exactly, and an empty result puts it all on the first page."""
    if count == 0:
        return total if start == 0 else 0
    return total * end // count - total * start // count


@dataclass(frozen=True)
class RangeResult:
    """A query's whole result in one target, computed once and paged from a cache."""

    rows: list[Any]
    retrieved_docs: int
    retrieved_bytes: int
    execution_ms: float
    index_hit_ratio: float
    index_only: bool = False  # answered from the index alone (a COUNT): reports no retrieved documents
    order_without_composite: bool = False  # charged Q11's factor (CostModel.query_shape_factor)


RESULT_CACHE_BYTES = 32 * 1024 * 1024  # ours: results kept for paging, by estimated serialized size


class ResultCache(BoundedCache[Any]):
    """Recently computed range results (whole, or a `budget.Progress` still running), so paging a result
    costs its rows once, not once per page. Bounded by entries and by estimated bytes; the most recent entry
    is always kept. Keyed by the range's LSN, so any write to the range makes later pages recompute."""

    def __init__(self, capacity: int = 64, max_bytes: int = RESULT_CACHE_BYTES) -> None:
        super().__init__(capacity, max_bytes)


def parameters_key(params: Mapping[str, Any]) -> bytes:
    return canonical_json(dict(params)) if params else b""


_INDEX_USE: BoundedCache[IndexUse] = BoundedCache(max_entries=1024, max_bytes=8 * 1024 * 1024)


def index_use_of(query: Query, policy: IndexPolicy) -> IndexUse:
    """Cached per query and policy; weighed by the query it keeps alive (bounded by bytes)."""
    return cached(
        _INDEX_USE,
        (query, policy),
        lambda: index_use(query, policy.is_indexed),
        lambda _: AST_BYTES_PER_CHAR * len(query.text),
    )


_UTILIZATION: BoundedCache[Utilization] = BoundedCache(max_entries=256, max_bytes=4 * 1024 * 1024)


def utilization_of(query: Query, params: Mapping[str, Any], policy: IndexPolicy) -> Utilization:
    """The index metrics of a query under a policy (`cosmoscore.sql.utilization`), cached per query,
    parameters and policy: the SDK asks for them on every page."""
    return cached(
        _UTILIZATION,
        (query, policy, parameters_key(params)),
        lambda: index_utilization(query, params, policy.is_indexed, policy.composites),
        lambda _: AST_BYTES_PER_CHAR * len(query.text),
    )


def loading_of(query: Query, params: Mapping[str, Any], policy: IndexPolicy, use: IndexUse) -> Loading:
    """What an index-served query loads in a partition (`cosmoscore.sql.loading`): its row cap, and whether
    its filter + ORDER BY lacks the composite index (ru-cost-model.md §3.3, Q11, Q20)."""
    return loading(query, params, use, policy.is_indexed, policy.composites)


def capped(retrieved: int, cap: int | None) -> int:
    """The documents a bounded query loads: its matches up to the cap (OFFSET + LIMIT, or TOP)."""
    return retrieved if cap is None else min(retrieved, cap)


def hit_ratio(served: bool, matched: int, retrieved: int) -> float:
    """Index utilization: the share of retrieved documents the filter kept (1 when the index served it)."""
    if served or retrieved == 0:
        return 1.0
    return max(0.0, min(1.0, matched / retrieved)) if matched >= 0 else 0.0
