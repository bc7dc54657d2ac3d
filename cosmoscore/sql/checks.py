"""Semantic checks run once after parsing: names, functions, aggregates, GROUP BY, subqueries.

Each check raises the service's SqlError (cosmos-sql-semantics §8.2). Where the reference knows a
restriction but not its text, the code is UNVERIFIED and the wording is ours (or vq's).
"""

from __future__ import annotations

from typing import Any, TypeGuard

from . import ast as a
from .errors import UNVERIFIED, SqlError, unresolved
from .functions import AGGREGATES, lookup


def check_query(query: a.Query, text: str | None = None) -> None:
    """Validate a parsed top-level query against the service's compile rules."""
    _Checker(text if text is not None else query.text).query(query, (), subquery=False, container_ok=True)


def is_aggregate(node: Any) -> TypeGuard[a.Call]:
    return isinstance(node, a.Call) and not node.udf and node.name in AGGREGATES


def is_document_path(node: Any) -> bool:
    """An alias, or property/constant-index steps from one: what ORDER BY accepts."""
    while True:
        if isinstance(node, a.Ident):
            return True
        if (
            isinstance(node, a.Prop)
            or isinstance(node, a.Index)
            and isinstance(node.index, a.Literal)
            and node.index.value.__class__ is int
        ):
            node = node.target
        else:
            return False


def select_exprs(select: a.Select) -> list[a.Expr]:
    if select.kind == "value" and select.value is not None:
        return [select.value]
    return [item.expr for item in select.items]


def has_aggregate(node: Any) -> bool:
    return any(is_aggregate(n) for n in a.walk(node))


class _Checker:
    def __init__(self, text: str) -> None:
        self.text = text

    def _fail(self, code: str, message: str, span: a.Span | None) -> SqlError:
        return SqlError(code, message, *(span if span else (None, None)))

    def query(self, q: a.Query, outer: tuple[str, ...], subquery: bool, container_ok: bool) -> None:
        if subquery:
            self._subquery_clauses(q)
        scope = self._sources(q, outer, container_ok)
        self._select_star(q)
        for expr in select_exprs(q.select):
            self.expr(expr, scope, allow_agg=True, in_agg=False)
        for part in (q.where, *q.group_by, *(item.expr for item in q.order_by)):
            if part is not None:
                self.expr(part, scope, allow_agg=False, in_agg=False)
        self._grouping(q)
        if not subquery:
            for item in q.order_by:
                if not is_document_path(item.expr):
                    raise SqlError(
                        2206,
                        "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.",
                    )

    def _subquery_clauses(self, q: a.Query) -> None:
        if q.order_by:
            raise self._fail("SC2202", "'ORDER BY' is not supported in subqueries.", q.span_of("order"))
        if q.select.top is not None:
            raise self._fail("SC2203", "'TOP' is not supported in subqueries.", q.span_of("top"))
        if q.offset is not None:
            raise self._fail("SC2204", "'OFFSET LIMIT' clause is not supported in subqueries.", q.span_of("offset"))

    def _sources(self, q: a.Query, outer: tuple[str, ...], container_ok: bool) -> tuple[str, ...]:
        aliases: list[str] = []
        for i, src in enumerate(q.sources):
            coll = src.collection
            visible = outer + tuple(aliases)
            if coll.subquery is not None:
                first = i == 0 and container_ok
                self.query(coll.subquery, () if first else visible, subquery=True, container_ok=first)
            elif not (i == 0 and container_ok) and coll.root not in visible:
                start = coll.span[0]
                raise unresolved(coll.root or "", start, start + len(coll.root or ""))
            if src.alias in aliases:
                raise self._fail(
                    "SC2021",
                    f"The input set name or alias '{src.alias}' is specified more than once in the FROM clause.",
                    src.span,
                )
            aliases.append(src.alias)
        return outer + tuple(aliases)

    def _select_star(self, q: a.Query) -> None:
        if q.select.kind != "star":
            return
        if not q.sources:
            raise self._fail(UNVERIFIED, "'SELECT *' is not valid if FROM clause is omitted.", q.select.span)
        if len(q.sources) > 1:
            raise self._fail(UNVERIFIED, "'SELECT *' is only valid with a single input set.", q.select.span)

    def expr(self, node: Any, scope: tuple[str, ...], allow_agg: bool, in_agg: bool) -> None:
        if isinstance(node, a.Ident):
            if node.name not in scope:
                raise unresolved(node.name, *node.span)
            return
        if isinstance(node, (a.Exists, a.ArraySubquery, a.ScalarSubquery)):
            if in_agg:
                raise self._no_nested(node)
            self.query(node.query, scope, subquery=True, container_ok=False)
            return
        if isinstance(node, a.Call):
            in_agg = self._call(node, allow_agg, in_agg)
        for child in a.children(node):
            if child.__class__ is not a.Literal:  # nothing to check (IN lists hold thousands)
                self.expr(child, scope, allow_agg, in_agg)

    def _no_nested(self, node: Any) -> SqlError:
        return self._fail(
            "SC2101",
            "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.",
            node.span,
        )

    def _call(self, node: a.Call, allow_agg: bool, in_agg: bool) -> bool:
        builtin = None if node.udf else lookup(node.name)
        if builtin is None:
            raise self._fail("SC2005", f"'{node.spelled}' is not a recognized built-in function name.", node.name_span)
        n = len(node.args)
        if n < builtin.min_args or (builtin.max_args is not None and n > builtin.max_args):
            raise self._fail("SC2050", builtin.arity_message(), node.span)
        if not is_aggregate(node):
            return in_agg
        if in_agg:
            raise self._no_nested(node)
        if not allow_agg:
            raise self._fail(
                UNVERIFIED,
                f"Aggregate function '{node.spelled}' is only allowed in the select list.",
                node.span,
            )
        return True

    def _grouping(self, q: a.Query) -> None:
        exprs = select_exprs(q.select)
        if q.group_by:
            if q.select.kind == "star":
                raise self._fail("SC2041", "'SELECT *' is not allowed with GROUP BY.", q.select.span)
            if q.order_by:
                raise self._fail(
                    UNVERIFIED, "'ORDER BY' is not supported together with 'GROUP BY'.", q.span_of("order")
                )
            for g in q.group_by:
                if has_aggregate(g):
                    raise self._fail(UNVERIFIED, "Aggregates are not allowed in the GROUP BY clause.", g.span)
        elif not any(has_aggregate(e) for e in exprs):
            return
        for e in exprs:
            for ref in _ungrouped(e, q.group_by):
                name = self.text[ref.span[0] : ref.span[1]]
                raise self._fail(
                    "SC2102",
                    f"Property reference '{name}' is invalid in the select list because "
                    "it is not contained in either an aggregate function or the GROUP BY "
                    "clause.",
                    ref.span,
                )


def _ungrouped(node: Any, group_by: tuple[a.Expr, ...]) -> list[Any]:
    """Property references outside aggregates and outside any GROUP BY expression."""
    if node in group_by or is_aggregate(node):
        return []
    if isinstance(node, (a.Exists, a.ArraySubquery, a.ScalarSubquery)):
        return []
    if is_document_path(node):
        return [node]
    out: list[Any] = []
    for child in a.children(node):
        out.extend(_ungrouped(child, group_by))
    return out


def output_names(items: tuple[a.SelectItem, ...]) -> list[str]:
    """Projection names (§6): alias, else the alias or last property name, else $1, $2, ... counting
    only the unnamed items."""
    names: list[str] = []
    unnamed = 0
    for item in items:
        expr = item.expr
        if item.alias:
            names.append(item.alias)
        elif isinstance(expr, (a.Ident, a.Prop)):
            names.append(expr.name)
        else:
            unnamed += 1
            names.append(f"${unnamed}")
    return names
