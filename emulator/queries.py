"""Pure pieces of query serving: SQL errors as the service's 400s, routing intervals, the plan's
client-side features, ORDER BY index checks, paging and per-page RU shares, and the result cache.

`emulator.querying.QueryService` orchestrates them under the engine lock; `emulator.wire` shapes
plans, continuations and metrics for the protocol. Serving follows cosmos-wire-protocol.md §1.6-1.9 and the routing rule of ru-cost-model.md §3.3:
- a full partition key runs the whole query in its logical partition;
- a pkrange id (the SDK's own fan-out, feed ranges, hierarchical prefixes) runs it in that range,
  limited to `x-ms-start-epk`/`x-ms-end-epk` when given;
- no routing at all: streamable queries are served here, one physical partition per page, over the
  ranges the WHERE clause targets; anything else is refused 400/1004 so the SDK asks for the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from cosmoscore.epk import EpkRange
from cosmoscore.indexing import IndexPolicy
from cosmoscore.routing import Target, filter_intervals
from cosmoscore.sql import IndexUse, KeyFilter, Query, QueryShape, SqlError, ast, index_use, parse_query
from cosmoscore.sql.cache import BoundedCache, cached
from cosmoscore.sql.parser import AST_BYTES_PER_CHAR
from emulator import errors
from emulator.model import Container

DEFAULT_PAGE_ITEMS = 100  # no page size asked for: the REST API's default page size
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a page never exceeds the service's 4 MB response size

NO_COMPOSITE_INDEX = "The order by query does not have a corresponding composite index that it can be served from."
ORDER_BY_EXCLUDED = "The index path corresponding to the specified order-by item is excluded."
PLAN_PREFIX = "Gateway Failed to Retrieve Query Plan: "


def sql_error(exc: SqlError, prefix: str = "") -> errors.CosmosError:
    """A query compile/run error as the service's 400 body (`Message: {"errors":[...]}`)."""
    return errors.CosmosError(400, f"{prefix}Message: {exc.to_service_message()}")


def parse(text: str) -> Query:
    try:
        return parse_query(text)
    except SqlError as exc:
        raise sql_error(exc) from None


T = TypeVar("T")


def guarded(call: Callable[[], T]) -> T:
    """Run a step of the SQL engine; its errors become the service's 400."""
    try:
        return call()
    except SqlError as exc:
        raise sql_error(exc) from None


@dataclass(frozen=True)
class QueryPlan:
    """What the SDK needs to fan a query out itself: its shape, the per-partition rewrite, the EPK intervals."""

    shape: QueryShape
    rewritten: str
    intervals: list[EpkRange]


# -- routing ------------------------------------------------------------------------------------


def key_intervals(coll: Container, key_filter: KeyFilter) -> list[EpkRange]:
    """EPK intervals the filter pins (cosmoscore.routing): points for full keys, prefix ranges, or everything."""
    return filter_intervals(key_filter, coll.kind, len(coll.key_paths))


def required_features(query: Query, shape: QueryShape) -> list[str]:
    """Client-side operators a cross-partition plan needs, in the SDK's feature names (wire §1.7)."""
    needed = []
    if shape.aggregates:
        needed.append("Aggregate")
        if not shape.has_select_value:
            needed.append("NonValueAggregate")
    if shape.distinct_type != "None":
        needed.append("Distinct")
    if query.group_by:
        needed.append("GroupBy")
    if len(shape.order_by) > 1:
        needed.append("MultipleOrderBy")
    if shape.order_by:
        needed.append("OrderBy")
    if shape.offset is not None or shape.limit is not None:
        needed.append("OffsetAndLimit")
    if shape.top is not None:
        needed.append("Top")
    return needed


def check_features(query: Query, shape: QueryShape, supported: frozenset[str] | None) -> None:
    """Refuse a plan whose operators the client did not declare (how cross-partition GROUP BY fails)."""
    if supported is None:
        return
    missing = [f for f in required_features(query, shape) if f not in supported and f != "NonValueAggregate"]
    if missing:
        lines = " ".join(f"Query contained {f}, which the calling client does not support." for f in missing)
        raise errors.bad_request(
            "Query contains 1 or more unsupported features. Upgrade your SDK to a version that does support the "
            f"requested features: {lines}"
        )


def _order_path(expr: Any) -> tuple[str, ...] | None:
    """`c.a.b` / `c["a"]` -> ("a", "b"); None for anything that is not a plain property path."""
    steps: list[str] = []
    while isinstance(expr, ast.Prop):
        steps.append(expr.name)
        expr = expr.target
    return tuple(reversed(steps)) if isinstance(expr, ast.Ident) and steps else None


def check_order_by(query: Query, policy: IndexPolicy) -> None:
    """ORDER BY is served from the index: an excluded path, or several keys without a matching composite
    index, are refused like the service does (cosmos-sql-semantics §8.3)."""
    if not query.order_by:
        return
    items = [(_order_path(item.expr), item.descending) for item in query.order_by]
    if any(path is None for path, _ in items):
        return  # not a document path: the SQL checks report 2206
    paths = [(path, desc) for path, desc in items if path is not None]
    if len(paths) == 1:
        if policy.mode != "none" and not policy.is_indexed(paths[0][0]):
            raise errors.bad_request(ORDER_BY_EXCLUDED)
        return
    if not policy.serves_order_by(tuple(paths)):
        raise errors.bad_request(NO_COMPOSITE_INDEX)


# -- paging and charges ------------------------------------------------------------------------


def resume_index(targets: list[Target], start: str | None) -> tuple[int, bool]:
    """Which target a continuation resumes, and whether it is the very same one (else begin it afresh:
    the range split or vanished between pages)."""
    if start is None:
        return 0, True
    for i, target in enumerate(targets):
        if target.lo == start:
            return i, True
        if target.lo > start:
            return i, False
    return len(targets), False


def page_rows(rows: list, offset: int, max_items: int | None) -> tuple[list, list[int]]:
    """The next page of rows and each row's serialized size, within the item and 4 MB limits."""
    limit = DEFAULT_PAGE_ITEMS if max_items is None or max_items == 0 else max_items
    end = len(rows) if limit < 0 else min(len(rows), offset + limit)
    page, sizes, total = [], [], 0
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


# -- per-range results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RangeResult:
    """A query's whole result in one target, computed once and paged from a cache."""

    rows: list
    retrieved_docs: int
    retrieved_bytes: int
    execution_ms: float
    indexed: tuple[tuple[str, ...], ...]
    unindexed: tuple[tuple[str, ...], ...]
    index_hit_ratio: float
    index_only: bool = False  # answered from the index alone (a COUNT): reports no retrieved documents


RESULT_CACHE_BYTES = 32 * 1024 * 1024  # ours: results kept for paging, by estimated serialized size


class ResultCache(BoundedCache[Any]):
    """Recently computed range results (whole, or a `budget.Progress` still running), so paging a result
    costs its rows once, not once per page. Bounded by entries and by estimated bytes; the most recent entry
    is always kept. Keyed by the range's LSN, so any write to the range makes later pages recompute."""

    def __init__(self, capacity: int = 64, max_bytes: int = RESULT_CACHE_BYTES) -> None:
        super().__init__(capacity, max_bytes)


def parameters_key(params: Mapping[str, Any]) -> bytes:
    return orjson.dumps(dict(params), option=orjson.OPT_SORT_KEYS) if params else b""


_INDEX_USE: BoundedCache[IndexUse] = BoundedCache(max_entries=1024, max_bytes=8 * 1024 * 1024)


def index_use_of(query: Query, policy: IndexPolicy) -> IndexUse:
    """Cached per query and policy; weighed by the query it keeps alive (bounded by bytes)."""
    return cached(
        _INDEX_USE,
        (query, policy),
        lambda: index_use(query, policy.is_indexed),
        lambda _: AST_BYTES_PER_CHAR * len(query.text),
    )


def hit_ratio(served: bool, matched: int, retrieved: int) -> float:
    """Index utilization: the share of retrieved documents the filter kept (1 when the index served it)."""
    if served or retrieved == 0:
        return 1.0
    return max(0.0, min(1.0, matched / retrieved)) if matched >= 0 else 0.0
