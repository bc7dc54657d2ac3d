"""Query-plan support for cross-partition queries (cosmos-wire-protocol §1.7-1.8).

`describe` extracts what the SDK's query plan carries; `rewrite_for_cross_partition` produces the
per-partition `rewrittenQuery` in the exact shapes the service compiler emits (from the .NET SDK's
recorded QueryPlanBaselineTests) and that azure-cosmos' client-side operators consume:
ORDER BY -> `{_rid, orderByItems: [{"item": k}], payload}` rows, VALUE aggregates -> `[{"item": ...}]`
with AVG as `{"sum", "count"}` and MIN/MAX with an `item2` partial, OFFSET o LIMIT l -> OFFSET 0
LIMIT o+l. An empty string means "send the original query".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from . import ast as a
from . import formatter as f
from .checks import is_aggregate, output_names, select_exprs
from .errors import SqlError
from .functions import AGGREGATES
from .scope import constants_context, param_value

ORDERBY_FILTER = "{documentdb-formattableorderbyquery-filter}"
COMPOSITION = "Compositions of aggregates and other expressions are not allowed."


@dataclass(frozen=True)
class QueryShape:
    """The plan's `queryInfo`. `aggregates` lists every top-level aggregate of the select clause
    without GROUP BY, for VALUE and non-VALUE queries alike (azure-cosmos raises its own "Cross
    partition query only supports 'VALUE <AggregateFunc>'" from aggregates + hasSelectValue=false)."""

    has_select_value: bool
    aggregates: list[str]
    order_by: list[str]
    order_by_expressions: list[str]
    top: int | None
    offset: int | None
    limit: int | None
    distinct_type: str
    group_by_expressions: list[str]
    group_by_aliases: list[str] = field(default_factory=list)
    group_by_alias_to_aggregate_type: dict[str, str | None] = field(default_factory=dict)
    is_streamable: bool = True

    def query_info(self, rewritten: str = "") -> dict[str, Any]:
        """The plan JSON's `queryInfo` object."""
        return {
            "distinctType": self.distinct_type,
            "top": self.top,
            "offset": self.offset,
            "limit": self.limit,
            "orderBy": self.order_by,
            "orderByExpressions": self.order_by_expressions,
            "groupByExpressions": self.group_by_expressions,
            "groupByAliases": self.group_by_aliases,
            "aggregates": self.aggregates,
            "groupByAliasToAggregateType": self.group_by_alias_to_aggregate_type,
            "rewrittenQuery": rewritten,
            "hasSelectValue": self.has_select_value,
            "dCountInfo": None,
            "hasNonStreamingOrderBy": False,
        }


def _resolve(value: int | a.Param | None, params: Mapping[str, Any] | None) -> int | None:
    if not isinstance(value, a.Param):
        return value
    resolved: int | None = param_value(value, constants_context(params or {}))
    return resolved


def _check_composition(q: a.Query) -> None:
    for e in select_exprs(q.select):
        if any(is_aggregate(n) for n in a.walk(e)) and not is_aggregate(e):
            raise SqlError(None, COMPOSITION)


def describe(query: a.Query, parameters: Mapping[str, Any] | None = None) -> QueryShape:
    """The plan features of a query. TOP/OFFSET/LIMIT parameters are resolved from `parameters`
    (SC2001 if one is missing). Raises the plan's legacy error for composed aggregates."""
    _check_composition(query)
    sel = query.select
    aggs = [AGGREGATES[e.name] for e in select_exprs(sel) if is_aggregate(e)]
    aliases: list[str] = []
    alias_types: dict[str, str | None] = {}
    if sel.kind == "list" and (query.group_by or aggs):
        for name, item in zip(output_names(sel.items), sel.items):
            aliases.append(name)
            alias_types[name] = AGGREGATES[item.expr.name] if is_aggregate(item.expr) else None
    top, offset, limit = (_resolve(v, parameters) for v in (sel.top, query.offset, query.limit))
    # an aggregate folds every row into one: the service's plan merges no order (the rewrite keeps the
    # ORDER BY for the partitions), so azure-cosmos aggregates the partials instead of merging rows (W70)
    order_by = [] if aggs and not query.group_by else list(query.order_by)
    distinct = "None" if not sel.distinct else ("Ordered" if order_by else "Unordered")
    streamable = not (query.order_by or top is not None or aggs or sel.distinct or offset is not None or query.group_by)
    return QueryShape(
        has_select_value=sel.kind == "value",
        aggregates=[] if query.group_by else aggs,
        order_by=["Descending" if i.descending else "Ascending" for i in order_by],
        order_by_expressions=[f.expr(i.expr) for i in order_by],
        top=top,
        offset=offset,
        limit=limit,
        distinct_type=distinct,
        group_by_expressions=[f.expr(g) for g in query.group_by],
        group_by_aliases=aliases if query.group_by or sel.kind == "list" else [],
        group_by_alias_to_aggregate_type=alias_types,
        is_streamable=streamable,
    )


def _partial(call: a.Call) -> str:
    """The per-partition partial of one aggregate, as the service rewrites it."""
    arg = f.expr(call.args[0])
    if call.name == "AVG":
        return f'{{"item": {{"sum": SUM({arg}), "count": COUNT({arg})}}}}'
    if call.name in ("MIN", "MAX"):
        fn, key = call.name, call.name.lower()
        return f'{{"item": {fn}({arg}), "item2": {{"{key}": {fn}({arg}), "count": COUNT({arg})}}}}'
    return f'{{"item": {f.expr(call)}}}'


def _payload_part(node: a.Expr) -> str:
    return _partial(node) if is_aggregate(node) else f.expr(node)


def _list_payload(sel: a.Select, with_aggregates: bool) -> str:
    names = output_names(sel.items)
    parts = [
        f"{f.quote(n)}: {_payload_part(i.expr) if with_aggregates else f.expr(i.expr)}"
        for n, i in zip(names, sel.items)
    ]
    return "{" + ", ".join(parts) + "}"


def _tail_clauses(q: a.Query, where: str | None = None) -> list[str]:
    parts = [f.from_clause(q, "\n")] if q.sources else []
    cond = where if where is not None else (f.expr(q.where) if q.where is not None else None)
    if cond:
        parts.append("WHERE " + cond)
    return parts


def _rewrite_group_by(q: a.Query) -> str:
    items = "[" + ", ".join(f'{{"item": {f.expr(g)}}}' for g in q.group_by) + "]"
    sel = q.select
    if sel.kind == "value":
        payload = f"[{_partial(sel.value)}]" if is_aggregate(sel.value) else f.expr(sel.value)
    else:
        payload = _list_payload(sel, with_aggregates=True)
    parts = [f"SELECT {items} AS groupByItems, {payload} AS payload", *_tail_clauses(q)]
    parts.append("GROUP BY " + ", ".join(f.expr(g) for g in q.group_by))
    return "\n".join(parts)


def _rewrite_aggregates(q: a.Query) -> str:
    sel = q.select
    if sel.kind == "value":
        # the value is the aggregate itself: describe() refuses composed aggregates
        head = f"SELECT VALUE [{_partial(cast(a.Call, sel.value))}]"
    else:
        head = f"SELECT {_list_payload(sel, with_aggregates=True)} AS payload"
    order = [f.order_clause(q)] if q.order_by else []  # kept, as the service compiler keeps it (W70)
    return "\n".join([head, *_tail_clauses(q), *order])


def _page(q: a.Query, shape: QueryShape) -> str | None:
    if shape.offset is None or shape.limit is None or q.select.distinct:
        return None
    return f"OFFSET 0 LIMIT {shape.offset + shape.limit}"


def _rewrite_order_by(q: a.Query, shape: QueryShape) -> str:
    sel = q.select
    alias = q.sources[0].alias if q.sources else "root"
    items = "[" + ", ".join(f'{{"item": {f.expr(i.expr)}}}' for i in q.order_by) + "]"
    cond = f"({ORDERBY_FILTER})"
    if q.where is not None:
        cond = f"({f.expr(q.where)} AND {cond})"
    if sel.kind == "star":
        payload = alias
    elif sel.kind == "value":
        payload = f.expr(sel.value)
        cond = f"({cond} AND IS_DEFINED({payload}))"
    else:
        payload = _list_payload(sel, with_aggregates=False)
    top = f"TOP {shape.top} " if shape.top is not None and not sel.distinct else ""
    parts = [
        f"SELECT {top}{alias}._rid, {items} AS orderByItems, {payload} AS payload",
        *_tail_clauses(q, where=cond),
        f.order_clause(q),
    ]
    page = _page(q, shape)
    return "\n".join(parts + ([page] if page else []))


def _rewrite_plain(q: a.Query, shape: QueryShape) -> str:
    """DISTINCT and/or OFFSET-LIMIT without ORDER BY: the query itself, paged from 0 per partition."""
    sel = q.select
    keep_top = shape.top is not None and not sel.distinct
    head = "SELECT " + ("DISTINCT " if sel.distinct else "") + (f"TOP {shape.top} " if keep_top else "")
    parts = [head + f.select_list(sel), *_tail_clauses(q)]
    page = _page(q, shape)
    return "\n".join(parts + ([page] if page else []))


def rewrite_for_cross_partition(query: a.Query, shape: QueryShape) -> str:
    """The per-partition query text for the plan's `rewrittenQuery` ("" = use the original)."""
    if query.group_by:
        return _rewrite_group_by(query)
    if any(is_aggregate(e) for e in select_exprs(query.select)):
        return _rewrite_aggregates(query)
    if query.order_by:
        return _rewrite_order_by(query, shape)
    if shape.offset is not None or (query.select.distinct and shape.top is not None):
        return _rewrite_plain(query, shape)
    return ""
