"""Computed properties: a container's named `SELECT VALUE <expr> FROM c` definitions, checked as the service
checks them and inlined into the queries that name them (cosmos-sql-semantics.md CP1-CP3).

A computed property is not stored in the item: a query that reads `c.cp_name` reads `<expr>` with the
definition's alias renamed to the query's, so it can filter, order, group and project by it; a wildcard
projection (`SELECT *`, or the item itself) returns the stored item without it, as the service does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import ast as a
from .errors import SqlError
from .functions import AGGREGATES
from .parser import parse_query

MAX_COMPUTED = 20  # CP1: "Every container can have a maximum of 20 computed properties"
SYSTEM_NAMES = frozenset({"id", "_rid", "_ts", "_etag", "_self", "_attachments", "_lsn"})  # CP1
NON_DETERMINISTIC = frozenset({"GETCURRENTDATETIME", "GETCURRENTTIMESTAMP", "GETCURRENTTICKS", "RAND"})  # CP2


@dataclass(frozen=True)
class ComputedProperty:
    name: str
    alias: str  # the definition's FROM alias, renamed to the query's when inlined
    expr: a.Expr


def parse_computed(definitions: Any) -> tuple[ComputedProperty, ...]:
    """The container's `computedProperties`, checked (CP1, CP2); ValueError says what is wrong and where."""
    if definitions is None:
        return ()
    if not isinstance(definitions, list):
        raise ValueError("computedProperties must be a JSON array of {name, query} objects.")
    if len(definitions) > MAX_COMPUTED:
        raise ValueError(f"A container can have at most {MAX_COMPUTED} computed properties, not {len(definitions)}.")
    parsed: list[ComputedProperty] = []
    for number, definition in enumerate(definitions, 1):
        if not isinstance(definition, Mapping) or set(definition) != {"name", "query"}:
            raise ValueError(f"Computed property {number} must be an object with exactly 'name' and 'query'.")
        name, query = definition["name"], definition["query"]
        if not isinstance(name, str) or not name or not isinstance(query, str):
            raise ValueError(f"Computed property {number} needs a non-empty string name and a string query.")
        if name in SYSTEM_NAMES:
            raise ValueError(f"Computed property name '{name}' is a reserved system property name.")
        if any(p.name == name for p in parsed):
            raise ValueError(f"Computed property name '{name}' is used more than once.")
        parsed.append(_definition(name, query))
    names = {p.name for p in parsed}
    for prop in parsed:
        used = next((n.name for n in a.walk(prop.expr) if _is_root_prop(n, prop.alias, names)), None)
        if used is not None:
            raise ValueError(f"Computed property '{prop.name}' uses computed property '{used}'; it cannot.")
    return tuple(parsed)


def _definition(name: str, text: str) -> ComputedProperty:
    """One definition's query: `SELECT VALUE <expr> FROM <root alias>` and nothing more (CP2)."""
    where = f"Computed property '{name}'"
    try:
        query = parse_query(text)
    except SqlError as exc:
        raise ValueError(f"{where} has a query that does not parse: {exc.to_service_message()}") from None
    value = query.select.value
    if query.select.kind != "value" or value is None:
        raise ValueError(f"{where}: the query must project with SELECT VALUE.")
    if len(query.sources) != 1:
        raise ValueError(f"{where}: the query must read the root item in one FROM clause, with no JOIN.")
    source = query.sources[0]
    if source.iterate or source.collection.subquery is not None or source.collection.path:
        raise ValueError(f"{where}: the FROM clause must name the root item (FROM c, FROM root c).")
    select = query.select
    if query.where is not None or query.group_by or query.order_by or query.offset is not None:
        raise ValueError(f"{where}: WHERE, GROUP BY, ORDER BY and OFFSET LIMIT are not allowed.")
    if select.top is not None or select.distinct or query.limit is not None:
        raise ValueError(f"{where}: TOP and DISTINCT are not allowed.")
    for node in a.walk(value):
        if isinstance(node, (a.Exists, a.ArraySubquery, a.ScalarSubquery)):
            raise ValueError(f"{where}: subqueries are not allowed.")
        if isinstance(node, a.Call) and (
            node.udf or node.name in AGGREGATES or node.name in NON_DETERMINISTIC or node.name.startswith("ST_")
        ):
            raise ValueError(
                f"{where}: {node.spelled or node.name} is not allowed (aggregate, spatial, non-deterministic "
                "and user-defined functions are not)."
            )
    return ComputedProperty(name, source.alias, value)


def inline(query: a.Query, computed: Sequence[ComputedProperty]) -> a.Query:
    """The query with every `<root>.<computed name>` replaced by its definition; unchanged without any."""
    if not computed or not query.sources or query.sources[0].collection.path or query.sources[0].iterate:
        return query
    by_name = {p.name: p for p in computed}
    root = query.sources[0].alias
    if not any(_is_root_prop(n, root, by_name) for n in _expressions(query)):
        return query
    rewrite = _Inliner(root, by_name)
    select = query.select
    items = tuple(
        dataclasses.replace(
            item, expr=rewrite(item.expr), alias=item.alias or _projected_name(item.expr, root, by_name)
        )
        for item in select.items
    )
    value = None if select.value is None else rewrite(select.value)
    return dataclasses.replace(
        query,
        select=dataclasses.replace(select, items=items, value=value),
        where=None if query.where is None else rewrite(query.where),
        group_by=tuple(rewrite(e) for e in query.group_by),
        order_by=tuple(dataclasses.replace(o, expr=rewrite(o.expr)) for o in query.order_by),
    )


def _expressions(query: a.Query) -> list[Any]:
    """Every node of the query's own expressions (not entering subqueries, which `_Inliner` does rewrite)."""
    roots = [i.expr for i in query.select.items] + [query.select.value, query.where, *query.group_by]
    roots += [o.expr for o in query.order_by]
    found: list[Any] = []
    for expr in roots:
        if expr is not None:
            found.extend(a.walk(expr))
            found.extend(n for sub in _subqueries(expr) for n in _expressions(sub))
    return found


def _subqueries(expr: a.Expr) -> list[a.Query]:
    return [n.query for n in a.walk(expr) if isinstance(n, (a.Exists, a.ArraySubquery, a.ScalarSubquery))]


def _is_root_prop(node: Any, root: str, names: Mapping[str, Any] | set[str]) -> bool:
    return (
        isinstance(node, a.Prop)
        and isinstance(node.target, a.Ident)
        and node.target.name == root
        and node.name in names
    )


def _projected_name(expr: a.Expr, root: str, by_name: Mapping[str, ComputedProperty]) -> str | None:
    """`SELECT c.cp_x` keeps the name `cp_x` once its expression is inlined."""
    return expr.name if _is_root_prop(expr, root, by_name) and isinstance(expr, a.Prop) else None


class _Inliner:
    """Rebuilds an expression with the root's computed properties inlined, into subqueries too (a
    subquery that binds the root's alias again shadows it)."""

    def __init__(self, root: str, by_name: Mapping[str, ComputedProperty]) -> None:
        self.root = root
        self.by_name = by_name

    def __call__(self, node: Any) -> Any:
        if _is_root_prop(node, self.root, self.by_name):
            prop = self.by_name[node.name]
            return _renamed(prop.expr, prop.alias, self.root)
        if isinstance(node, (a.Exists, a.ArraySubquery, a.ScalarSubquery)):
            if any(s.alias == self.root for s in node.query.sources):
                return node
            return dataclasses.replace(node, query=self._query(node.query))
        if not dataclasses.is_dataclass(node) or isinstance(node, (a.Literal, a.Param, a.Ident)):
            return node
        instance: Any = node
        changes = {
            f.name: self._value(getattr(instance, f.name)) for f in dataclasses.fields(instance) if f.name != "span"
        }
        return dataclasses.replace(instance, **changes)

    def _value(self, value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(self._value(v) for v in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return self(value)
        return value

    def _query(self, query: a.Query) -> a.Query:
        select = query.select
        return dataclasses.replace(
            query,
            select=dataclasses.replace(
                select,
                items=tuple(dataclasses.replace(i, expr=self(i.expr)) for i in select.items),
                value=None if select.value is None else self(select.value),
            ),
            sources=tuple(
                dataclasses.replace(s, collection=dataclasses.replace(s.collection, subquery=self._query(sub)))
                if (sub := s.collection.subquery) is not None
                else s
                for s in query.sources
            ),
            where=None if query.where is None else self(query.where),
            group_by=tuple(self(e) for e in query.group_by),
            order_by=tuple(dataclasses.replace(o, expr=self(o.expr)) for o in query.order_by),
        )


def _renamed(expr: a.Expr, old: str, new: str) -> a.Expr:
    """The definition's expression reading the query's alias instead of its own."""
    if old == new:
        return expr
    result: a.Expr = a.substituted(
        expr, lambda n: a.Ident(new, n.span) if isinstance(n, a.Ident) and n.name == old else None
    )
    return result
