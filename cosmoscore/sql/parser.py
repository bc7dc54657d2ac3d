"""Text -> AST: the lark LALR parser and syntax-error mapping (literals are decoded by `literals.py`).

`parse_query` also runs the semantic checks in `checks.py`, so a returned Query is always valid.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, cast

from lark import Lark, Token, Transformer_NonRecursive, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from lark.tree import Meta

from . import ast as a
from . import bounds
from .cache import BoundedCache, cached
from .chains import Chains, extract_chains
from .checks import check_query
from .errors import SqlError, syntax_error
from .guards import balance_chains, check_depth, check_joins, check_text
from .inlists import Lists, extract_lists
from .literals import decode_number, decode_string

MAX_COUNT = 4294967295  # the service compiler's bound for TOP, OFFSET and LIMIT


def _span(meta: Meta) -> a.Span:
    return (meta.start_pos, meta.end_pos) if not meta.empty else (0, 0)


def _tspan(tok: Token) -> a.Span:
    return (_start(tok), _end(tok))


# lark types a token's positions as optional; the basic lexer always sets them (`or 0` never applies).
def _start(tok: Token) -> int:
    return tok.start_pos or 0


def _end(tok: Token) -> int:
    return tok.end_pos or 0


def _count(tok: Token, code: str, message: str) -> int | a.Param:
    """A TOP/OFFSET/LIMIT operand: a parameter or an integer literal below 2^32."""
    if tok.type == "PARAM":
        return a.Param(tok.value, _tspan(tok))
    value = decode_number(tok.value)
    if isinstance(value, float) or value > MAX_COUNT:
        raise SqlError(code, message, tok.start_pos, tok.end_pos)
    return value


def _is(tok: Any, kind: str) -> bool:
    return isinstance(tok, Token) and tok.type == kind


# A rule's children, as lark hands them over: tokens, AST nodes, clause tuples and None placeholders,
# mixed, in grammar order (grammar.lark says which is where).
_Children = list[Any]
# A SELECT projection: ("star", None, span), ("value", expr, span) or ("list", select items, span).
_Selection = tuple[str, Any, a.Span]


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive[Token, a.Query]):
    """Builds the frozen AST bottom-up, without recursion; clause results are tagged tuples picked up by `query`."""

    def __init__(self, text: str, lists: Lists | None = None, chains: Chains | None = None) -> None:
        super().__init__()
        self.text = text
        self.anon = 0
        self.lists = lists or {}  # long literal IN lists read by `inlists`, by placeholder name
        self.chains = chains or {}  # long equality OR chains read by `chains`, by placeholder name

    def start(self, meta: Meta, children: _Children) -> a.Query:
        query: a.Query = children[0]
        return query

    def query(self, meta: Meta, children: _Children) -> a.Query:
        parts: dict[str, Any] = dict(children)
        return _make_query(parts, parts["select"], self.text, meta)

    # -- SELECT ------------------------------------------------------------------------------
    def select_clause(self, meta: Meta, children: _Children) -> tuple[str, tuple[a.Select, list[tuple[str, a.Span]]]]:
        distinct = any(_is(c, "DISTINCT") for c in children)
        top = next((c for c in children if isinstance(c, tuple) and c[0] == "top"), None)
        selection = children[-1]
        kind, payload, sel_span = selection
        sel = a.Select(
            kind=kind,
            items=payload if kind == "list" else (),
            value=payload if kind == "value" else None,
            distinct=distinct,
            top=top[1] if top else None,
            span=sel_span,
        )
        spans = [("top", top[2])] if top else []
        return ("select", (sel, spans))

    def top(self, meta: Meta, children: _Children) -> tuple[str, int | a.Param, a.Span]:
        tok = children[1]
        value = _count(tok, "SC2060", "The count value provided for a TOP clause must be an integer.")
        return ("top", value, _span(meta))

    def select_star(self, meta: Meta, children: _Children) -> _Selection:
        return ("star", None, _tspan(children[0]))

    def select_value(self, meta: Meta, children: _Children) -> _Selection:
        return ("value", children[1], _span(meta))

    def select_list(self, meta: Meta, children: _Children) -> _Selection:
        return ("list", tuple(children), _span(meta))

    def select_item(self, meta: Meta, children: _Children) -> a.SelectItem:
        alias = children[-1].value if len(children) > 1 and _is(children[-1], "IDENT") else None
        return a.SelectItem(children[0], alias, _span(meta))

    # -- FROM --------------------------------------------------------------------------------
    def from_clause(self, meta: Meta, children: _Children) -> tuple[str, tuple[a.Source, ...]]:
        return ("from", tuple(c for c in children if isinstance(c, a.Source)))

    def aliased_source(self, meta: Meta, children: _Children) -> a.Source:
        coll: a.Collection = children[0]
        if len(children) > 1 and _is(children[-1], "IDENT"):
            return a.Source(children[-1].value, coll, False, True, _span(meta))
        return a.Source(self._inferred_alias(coll), coll, False, False, _span(meta))

    def _inferred_alias(self, coll: a.Collection) -> str:
        if coll.path and isinstance(coll.path[-1], str):
            return coll.path[-1]
        if coll.subquery is None and not coll.path:
            return coll.root or ""
        self.anon += 1
        return f"${self.anon}"  # not bindable: `$` cannot start an identifier

    def iter_source(self, meta: Meta, children: _Children) -> a.Source:
        return a.Source(children[0].value, children[2], True, True, _span(meta))

    def coll_name(self, meta: Meta, children: _Children) -> a.Collection:
        return a.Collection(children[0].value, (), None, _span(meta))

    def coll_prop(self, meta: Meta, children: _Children) -> a.Collection:
        base: a.Collection = children[0]
        return a.Collection(base.root, base.path + (children[1].value,), base.subquery, _span(meta))

    def coll_index(self, meta: Meta, children: _Children) -> a.Collection:
        base: a.Collection = children[0]
        tok: Token = children[1]
        if tok.type == "STRING":
            step: str | int = decode_string(tok.value)
        elif tok.type == "PARAM":
            raise SqlError(
                "SC2990",
                "The specified query includes 'member indexer' which is currently not supported.",
                tok.start_pos,
                tok.end_pos,
            )
        else:
            number = decode_number(tok.value)
            if isinstance(number, float):
                raise syntax_error(tok.value, _start(tok), _end(tok))
            step = number
        return a.Collection(base.root, base.path + (step,), base.subquery, _span(meta))

    def coll_subquery(self, meta: Meta, children: _Children) -> a.Collection:
        return a.Collection(None, (), children[0], _span(meta))

    # -- other clauses -------------------------------------------------------------------------
    def where_clause(self, meta: Meta, children: _Children) -> tuple[str, a.Expr]:
        return ("where", children[1])

    def group_clause(self, meta: Meta, children: _Children) -> tuple[str, tuple[a.Expr, ...]]:
        return ("group", tuple(children[2:]))

    def order_clause(self, meta: Meta, children: _Children) -> tuple[str, tuple[tuple[a.OrderItem, ...], a.Span]]:
        items = tuple(children[2:])
        return ("order", (items, _span(meta)))

    def order_item(self, meta: Meta, children: _Children) -> a.OrderItem:
        direction = children[1].value.upper() if len(children) > 1 else None
        return a.OrderItem(children[0], direction == "DESC", direction, _span(meta))

    def offset_clause(
        self, meta: Meta, children: _Children
    ) -> tuple[str, tuple[tuple[int | a.Param, int | a.Param], a.Span]]:
        off = _count(children[1], "SC2062", "The OFFSET count value exceeds the maximum allowed value.")
        lim = _count(children[3], "SC2061", "The LIMIT count value exceeds the maximum allowed value.")
        return ("offset", ((off, lim), _span(meta)))

    # -- expressions ---------------------------------------------------------------------------
    def ternary(self, meta: Meta, children: _Children) -> a.Ternary:
        return a.Ternary(children[0], children[1], children[2], _span(meta))

    def coalesce(self, meta: Meta, children: _Children) -> a.Coalesce:
        return a.Coalesce(children[0], children[1], _span(meta))

    def or_(self, meta: Meta, children: _Children) -> a.Binary:
        return a.Binary("OR", children[0], children[2], _span(meta))

    def and_(self, meta: Meta, children: _Children) -> a.Binary:
        return a.Binary("AND", children[0], children[2], _span(meta))

    def in_(self, meta: Meta, children: _Children) -> a.In:
        negated = _is(children[1], "NOT")
        items = tuple(children[3:] if negated else children[2:])
        if len(items) == 1 and isinstance(items[0], a.Param) and items[0].name in self.lists:
            items = self.lists[items[0].name]
        return a.In(children[0], items, negated, _span(meta))

    def like(self, meta: Meta, children: _Children) -> a.Like:
        negated = _is(children[1], "NOT")
        rest = children[3:] if negated else children[2:]
        escape = decode_string(rest[2].value) if len(rest) > 2 else None
        return a.Like(children[0], rest[0], escape, negated, _span(meta))

    def between(self, meta: Meta, children: _Children) -> a.Between:
        negated = _is(children[1], "NOT")
        rest = children[3:] if negated else children[2:]
        return a.Between(children[0], rest[0], rest[2], negated, _span(meta))

    def binary(self, meta: Meta, children: _Children) -> a.Binary:
        op = children[1].value
        op = "!=" if op == "<>" else op
        return a.Binary(op, children[0], children[2], _span(meta))

    def unary(self, meta: Meta, children: _Children) -> a.Literal | a.Unary:
        op = children[0].value.upper()
        operand = children[1]
        if op == "-" and isinstance(operand, a.Literal) and type(operand.value) in (int, float):
            return a.Literal(-operand.value, _span(meta))
        return a.Unary(op, operand, _span(meta))

    def dot(self, meta: Meta, children: _Children) -> a.Prop:
        return a.Prop(children[0], children[1].value, False, _span(meta))

    def bracket(self, meta: Meta, children: _Children) -> a.Prop | a.Index:
        target, index = children
        if isinstance(index, a.Literal) and isinstance(index.value, str):
            return a.Prop(target, index.value, True, _span(meta))
        return a.Index(target, index, _span(meta))

    def ident(self, meta: Meta, children: _Children) -> a.Literal | a.Ident:
        name = children[0].value
        if name == "NaN":
            return a.Literal(float("nan"), _span(meta))
        if name == "Infinity":
            return a.Literal(float("inf"), _span(meta))
        return a.Ident(name, _span(meta))

    def param(self, meta: Meta, children: _Children) -> a.Expr:
        name = children[0].value
        return self.chains[name] if name in self.chains else a.Param(name, _span(meta))

    def literal(self, meta: Meta, children: _Children) -> a.Literal:
        tok: Token = children[0]
        kind = tok.type
        if kind == "NUMBER":
            value: Any = decode_number(tok.value)
        elif kind == "STRING":
            value = decode_string(tok.value)
        elif kind in ("TRUE", "ORDERBY_FILTER"):
            value = True
        elif kind == "FALSE":
            value = False
        elif kind == "NULL":
            value = None
        else:
            value = a.UNDEFINED
        return a.Literal(value, _span(meta))

    def scalar_subquery(self, meta: Meta, children: _Children) -> a.ScalarSubquery:
        return a.ScalarSubquery(children[0], _span(meta))

    def exists(self, meta: Meta, children: _Children) -> a.Exists:
        return a.Exists(children[1], _span(meta))

    def array_subquery(self, meta: Meta, children: _Children) -> a.ArraySubquery:
        return a.ArraySubquery(children[1], _span(meta))

    def array_ctor(self, meta: Meta, children: _Children) -> a.ArrayCtor:
        return a.ArrayCtor(tuple(c for c in children if c is not None), _span(meta))

    def object_ctor(self, meta: Meta, children: _Children) -> a.ObjectCtor:
        return a.ObjectCtor(tuple(c for c in children if c is not None), _span(meta))

    def obj_prop(self, meta: Meta, children: _Children) -> tuple[str, a.Expr]:
        key: Token = children[0]
        name = decode_string(key.value) if key.type == "STRING" else key.value
        return (name, children[1])

    def func_name(self, meta: Meta, children: _Children) -> Token:
        name: Token = children[0]
        return name

    def call(self, meta: Meta, children: _Children) -> a.Call:
        name_tok: Token = children[0]
        args = tuple(c for c in children[1:] if c is not None)
        return a.Call(name_tok.value.upper(), args, name_tok.value, False, _span(meta), _tspan(name_tok))

    def udf_call(self, meta: Meta, children: _Children) -> a.Call:
        name_tok: Token = children[1]
        args = tuple(c for c in children[2:] if c is not None)
        return a.Call(name_tok.value, args, f"udf.{name_tok.value}", True, _span(meta), _tspan(name_tok))


def _make_query(parts: dict[str, Any], select_pair: Any, text: str, meta: Meta) -> a.Query:
    """Assemble a Query from the tagged clause results."""
    select, select_spans = select_pair
    spans = list(select_spans)
    order_items, order_span = parts.get("order", ((), None))
    if order_span:
        spans.append(("order", order_span))
    off_lim, off_span = parts.get("offset", ((None, None), None))
    if off_span:
        spans.append(("offset", off_span))
    group = parts.get("group", ())
    return a.Query(
        select=select,
        sources=parts.get("from", ()),
        where=parts.get("where"),
        group_by=group,
        order_by=order_items,
        offset=off_lim[0],
        limit=off_lim[1],
        text=text[meta.start_pos : meta.end_pos] if not meta.empty else "",
        spans=tuple(spans),
    )


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    # cache=True: Lark keeps the built LALR tables in a temp file keyed by the grammar (~0.1 s per process start)
    return Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=True, cache=True)


def _end_of_file(text: str) -> SqlError:
    """Input ended mid-query: SC1002, located at the end (cosmos-errors-and-stats.md §1.4)."""
    end = len(text.rstrip())
    return SqlError("SC1002", "Syntax error, unexpected end-of-file.", end, end)


def _to_sql_error(text: str, exc: UnexpectedInput) -> SqlError:
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            return _end_of_file(text)
        return syntax_error(tok.value, tok.start_pos, tok.end_pos)
    if isinstance(exc, UnexpectedCharacters):
        pos = cast(int, exc.pos_in_stream)  # lark declares it None on the base class; set here
        return syntax_error(text[pos], pos, pos + 1)
    return _end_of_file(text)


_PARSED: BoundedCache[a.Query] = BoundedCache(max_entries=1024, max_bytes=16 * 1024 * 1024)
AST_BYTES_PER_CHAR = 80  # measured with tracemalloc: a parsed query holds 55-72 bytes per character of text


def parse_query(text: str) -> a.Query:
    """Parse and check one query (cached, bounded by bytes); raises SqlError with the service's code and location.

    Cached per text and per limits in force: a query parsed under a raised limit must be checked again once
    the limit is put back (`bounds.configure`)."""
    key = (text, bounds.LIMITS)
    return cached(_PARSED, key, lambda: _parse(text), lambda q: AST_BYTES_PER_CHAR * len(text))


def _parse(text: str) -> a.Query:
    check_text(text)
    scanned, lists = extract_lists(text)
    scanned, chains = extract_chains(scanned)
    try:
        try:
            tree = _lark().parse(scanned)
        except UnexpectedInput:
            if not lists and not chains:
                raise
            lists, chains = {}, {}  # report the error on the text as written
            tree = _lark().parse(text)
        balance_chains(tree)
        check_depth(tree)
        query = _ToAst(text, lists, chains).transform(tree)
    except UnexpectedInput as exc:
        raise _to_sql_error(text, exc) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, SqlError):
            raise exc.orig_exc from None
        raise
    query = dataclasses.replace(query, text=text)
    check_joins(query)
    check_query(query)
    return query
