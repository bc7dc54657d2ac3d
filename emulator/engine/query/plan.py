"""What the service checks and plans before a query runs: the plan the SDK fans a query out with, the EPK
intervals a WHERE clause targets, the client-side features a cross-partition plan needs, and the ORDER BY
index checks.

Serving follows cosmos-wire-protocol.md §1.6-1.9 and the routing rule of ru-cost-model.md §3.3:
- a full partition key runs the whole query in its logical partition;
- a pkrange id (the SDK's own fan-out, feed ranges, hierarchical prefixes) runs it in that range,
  limited to `x-ms-start-epk`/`x-ms-end-epk` when given;
- no routing at all: streamable queries are served one physical partition per page, over the ranges the
  WHERE clause targets; anything else is refused 400/1004 so the SDK asks for the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cosmoscore.epk import EpkRange
from cosmoscore.indexing import IndexPolicy
from cosmoscore.routing import filter_intervals
from cosmoscore.sql import KeyFilter, Query, QueryShape, ast
from emulator.engine import errors
from emulator.engine.model import Container

NO_COMPOSITE_INDEX = "The order by query does not have a corresponding composite index that it can be served from."
ORDER_BY_EXCLUDED = "The index path corresponding to the specified order-by item is excluded."
PLAN_PREFIX = "Gateway Failed to Retrieve Query Plan: "


@dataclass(frozen=True)
class QueryPlan:
    """What the SDK needs to fan a query out itself: its shape, the per-partition rewrite, the EPK intervals."""

    shape: QueryShape
    rewritten: str
    intervals: list[EpkRange]


def key_intervals(coll: Container, key_filter: KeyFilter) -> list[EpkRange]:
    """EPK intervals the filter pins (cosmoscore.routing): points for full keys, prefix ranges, or everything.
    A contradictory filter pins none, yet still checks one physical partition's index, the first, and is
    charged Q3's minimum there, as a key that holds no items is (W75)."""
    intervals = filter_intervals(key_filter, coll.kind, len(coll.key_paths), coll.hash_version)
    if intervals or key_filter.keys is None:
        return intervals
    first = min(coll.ranges, key=lambda r: r.min)
    return [EpkRange(first.min, first.max)]


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
