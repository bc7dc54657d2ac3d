"""AST -> query text in the service compiler's own layout (as in its rewritten queries):
binary operators parenthesized, clauses on new lines, JSON-quoted strings."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from . import ast as a
from .strings import format_number

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
KEYWORDS = frozenset(
    [
        "AND",
        "ARRAY",
        "AS",
        "ASC",
        "BETWEEN",
        "BY",
        "DESC",
        "DISTINCT",
        "ESCAPE",
        "EXISTS",
        "FALSE",
        "FROM",
        "GROUP",
        "IN",
        "JOIN",
        "LEFT",
        "LIKE",
        "LIMIT",
        "NOT",
        "NULL",
        "OFFSET",
        "OR",
        "ORDER",
        "RIGHT",
        "SELECT",
        "TOP",
        "TRUE",
        "UDF",
        "UNDEFINED",
        "VALUE",
        "WHERE",
    ]
)


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _member(name: str) -> str:
    if _IDENT.fullmatch(name) and name.upper() not in KEYWORDS:
        return f".{name}"
    return f"[{quote(name)}]"


def literal(value: Any) -> str:
    if value is a.UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def expr(node: Any) -> str:
    """One expression, as the service prints it."""
    fmt = _FORMATS.get(type(node))
    if fmt is None:
        raise TypeError(f"cannot format {type(node).__name__}")
    return fmt(node)


def _args(nodes: tuple[Any, ...]) -> str:
    return ", ".join(expr(n) for n in nodes)


def _unary(node: a.Unary) -> str:
    sep = " " if node.op == "NOT" else ""
    return f"({node.op}{sep}{expr(node.operand)})"


def _in(node: a.In) -> str:
    return f"({expr(node.value)} {'NOT IN' if node.negated else 'IN'} ({_args(node.items)}))"


def _like(node: a.Like) -> str:
    esc = f" ESCAPE {quote(node.escape)}" if node.escape else ""
    return f"({expr(node.value)} {'NOT LIKE' if node.negated else 'LIKE'} {expr(node.pattern)}{esc})"


def _between(node: a.Between) -> str:
    kw = "NOT BETWEEN" if node.negated else "BETWEEN"
    return f"({expr(node.value)} {kw} {expr(node.low)} AND {expr(node.high)})"


def _call(node: a.Call) -> str:
    return f"{node.spelled or node.name}({_args(node.args)})"


_FORMATS: dict[type, Callable[[Any], str]] = {
    a.Literal: lambda n: literal(n.value),
    a.Param: lambda n: n.name,
    a.Ident: lambda n: n.name,
    a.Prop: lambda n: f"{expr(n.target)}[{quote(n.name)}]" if n.bracket else expr(n.target) + _member(n.name),
    a.Index: lambda n: f"{expr(n.target)}[{expr(n.index)}]",
    a.Unary: _unary,
    a.Binary: lambda n: f"({expr(n.left)} {n.op} {expr(n.right)})",
    a.Between: _between,
    a.In: _in,
    a.Like: _like,
    a.Ternary: lambda n: f"({expr(n.cond)} ? {expr(n.then)} : {expr(n.otherwise)})",
    a.Coalesce: lambda n: f"({expr(n.left)} ?? {expr(n.right)})",
    a.ArrayCtor: lambda n: f"[{_args(n.items)}]",
    a.ObjectCtor: lambda n: "{" + ", ".join(f"{quote(k)}: {expr(v)}" for k, v in n.props) + "}",
    a.Call: _call,
    a.Exists: lambda n: f"EXISTS({query(n.query, ' ')})",
    a.ArraySubquery: lambda n: f"ARRAY({query(n.query, ' ')})",
    a.ScalarSubquery: lambda n: f"({query(n.query, ' ')})",
}


def collection(coll: a.Collection) -> str:
    base = f"({query(coll.subquery, ' ')})" if coll.subquery is not None else (coll.root or "")
    return base + "".join(f"[{s}]" if isinstance(s, int) else _member(s) for s in coll.path)


def source(src: a.Source) -> str:
    if src.iterate:
        return f"{src.alias} IN {collection(src.collection)}"
    coll = src.collection
    inferred = coll.subquery is None and (
        (not coll.path and src.alias == coll.root) or (bool(coll.path) and src.alias == coll.path[-1])
    )
    return collection(coll) if inferred else f"{collection(coll)} AS {src.alias}"


def count(value: int | a.Param) -> str:
    return value.name if isinstance(value, a.Param) else str(value)


def select_list(sel: a.Select) -> str:
    if sel.kind == "star":
        return "*"
    if sel.kind == "value":
        return f"VALUE {expr(sel.value)}"
    return ", ".join(expr(i.expr) + (f" AS {i.alias}" if i.alias else "") for i in sel.items)


def from_clause(q: a.Query, sep: str = " ") -> str:
    """FROM and its JOINs; the service's rewritten queries put each JOIN on a line of its own (`sep`)."""
    if not q.sources:
        return ""
    text = "FROM " + source(q.sources[0])
    return text + "".join(f"{sep}JOIN " + source(s) for s in q.sources[1:])


def order_clause(q: a.Query) -> str:
    items = [expr(i.expr) + (f" {i.explicit}" if i.explicit else "") for i in q.order_by]
    return "ORDER BY " + ", ".join(items)


def query(q: a.Query, sep: str = "\n") -> str:
    """A whole query; `sep` joins clauses (newline at top level, space in subqueries)."""
    head = "SELECT " + ("DISTINCT " if q.select.distinct else "")
    head += f"TOP {count(q.select.top)} " if q.select.top is not None else ""
    parts = [head + select_list(q.select)]
    if q.sources:
        parts.append(from_clause(q, sep))
    if q.where is not None:
        parts.append("WHERE " + expr(q.where))
    if q.group_by:
        parts.append("GROUP BY " + _args(q.group_by))
    if q.order_by:
        parts.append(order_clause(q))
    if q.offset is not None:
        parts.append(f"OFFSET {count(q.offset)} LIMIT {count(q.limit)}")  # type: ignore[arg-type]
    return sep.join(parts)
