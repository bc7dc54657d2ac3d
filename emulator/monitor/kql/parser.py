"""KQL text -> a small AST: the subset of the Kusto Query Language the Log Analytics stand-in evaluates.

Parsed with lark (LALR, the parser the SQL engine already uses). The grammar covers zero or more
`let Name = <tabular expression>;` statements, then one tabular expression: `Table | where ... |
summarize ... by ... | top N by ... | project ... | extend ... | order by ... | take N | count |
render ... | join [kind=K] (<tabular expression>) on Col1, Col2`, where a table may be a `let` name or a
parenthesized tabular expression, a join's right side also a bare table or `let` name, its keys also
`$left.A == $right.B`, joined by `,` or `and` (hints such as `hint.strategy=broadcast` are accepted and
ignored: they "don't change the semantic of join", azure-monitor.md §7b R56); with scalar expressions
(comparisons, `has`/`contains` and their `!` forms, `and`/`or`, `in`/`!in`, arithmetic, literals: strings, numbers, timespans like `5m`,
`datetime(...)`, `true`/`false`; function calls). Anything outside it (a scalar `let`, `union`, `parse`,
`startswith`, ...) is a syntax error in the service's shape (azure-monitor.md §3.1), naming the word the
stand-in does not know. Whether a parsed query makes sense (tables, `let` names, columns, functions,
types, join kinds and keys) is `evaluate`'s job (`plan`, through `tabular`).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from emulator.monitor.kql.ast import (
    BinOp,
    Call,
    Col,
    Expr,
    InList,
    Join,
    KqlError,
    Lit,
    Named,
    Operator,
    Query,
    Star,
    not_supported,
)

_GRAMMAR = r"""
start: (let_stmt ";")* tabular [";"]
let_stmt: "let" NAME "=" tabular
tabular: source ("|" _op)*
?source: NAME -> table_ref
       | "(" tabular ")"
_op: where | summarize | top | project | extend | order | take | count | render | join
join: "join" [join_kind] join_hint* source "on" join_key (("," | "and") join_key)*
join_kind: "kind" "=" NAME
join_hint: HINT "=" (NAME | NUMBER)
join_key: NAME -> same_key
        | "$left" "." NAME "==" "$right" "." NAME -> pair_key
where: ("where" | "filter") expr
summarize: "summarize" [named_list] ["by" named_list]
top: "top" expr "by" expr [DIR]
project: "project" named_list
extend: "extend" named_list
order: ("order" | "sort") "by" sort_key ("," sort_key)*
take: ("take" | "limit") expr
count: "count"
render: "render" NAME
named_list: named ("," named)*
named: NAME "=" expr -> assign
     | expr -> unnamed
sort_key: expr [DIR]
DIR: "asc" | "desc"

?expr: or_expr
?or_expr: or_expr "or" and_expr -> or_
        | and_expr
?and_expr: and_expr "and" comparison -> and_
         | comparison
?comparison: arith CMP arith -> compare
           | arith STROP arith -> compare
           | arith "in" "(" expr_list ")" -> in_
           | arith "!in" "(" expr_list ")" -> not_in
           | arith
?arith: arith ADD term -> binary
      | term
?term: term MUL unary -> binary
     | unary
?unary: "-" unary -> negate
      | atom
?atom: NAME -> column
     | (NAME | COUNT) "(" [expr_list] ")" -> call
     | "*" -> star
     | STRING -> string
     | NUMBER -> number
     | TIMESPAN -> timespan
     | DATETIME -> datetime
     | "true" -> true
     | "false" -> false
     | "(" expr ")"
expr_list: expr ("," expr)*

COUNT: "count"
HINT.2: /hint\.[A-Za-z_]+/
CMP: "==" | "!=" | "<=" | ">=" | "<" | ">" | "=~" | "!~"
STROP.2: /!?(has|contains)(?![A-Za-z0-9_])/
ADD: "+" | "-"
MUL: "*" | "/" | "%"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /@?"(?:[^"\\\n]|\\.)*"/ | /@?'(?:[^'\\\n]|\\.)*'/
NUMBER: /\d+(\.\d*)?([eE][+-]?\d+)?/
TIMESPAN.2: /\d+(\.\d+)?(microseconds?|milliseconds?|ms|ticks?|days?|hours?|hrs?|minutes?|min|seconds?|sec|d|h|m|s)(?![A-Za-z0-9_])/
DATETIME.3: /datetime\(\s*[^)]*\)/
%ignore /\s+/
%ignore /\/\/[^\n]*/
"""
# Words of the Kusto language the stand-in does not evaluate: named in the error instead of a bare
# "could not be parsed", so the user knows it is the stand-in's limit, not a typo.
UNSUPPORTED_WORDS = frozenset(
    [
        "union",
        "parse",
        "mv-expand",
        "mv",
        "mvexpand",
        "distinct",
        "project-away",
        "project-rename",
        "project-keep",
        "lookup",
        "make-series",
        "evaluate",
        "invoke",
        "as",
        "serialize",
        "sample",
        "range",
        "print",
        "datatable",
        "externaldata",
        "getschema",
        "search",
        "find",
        "fork",
        "facet",
        "partition",
        "reduce",
        "startswith",
        "endswith",
        "matches",
        "between",
        "hasprefix",
        "hassuffix",
        "has_any",
        "has_all",
        "contains_cs",
        "has_cs",
        "notcontains",
    ]
)
_SUPPORTED = (
    "let of a tabular expression, where, summarize ... by, top, project, extend, order by, take, count, render, join"
)
_TICKS_PER_UNIT = {
    "d": 864_000_000_000,
    "day": 864_000_000_000,
    "h": 36_000_000_000,
    "hour": 36_000_000_000,
    "hr": 36_000_000_000,
    "m": 600_000_000,
    "min": 600_000_000,  # Microsoft's 429 query bins by `1min`
    "minute": 600_000_000,
    "s": 10_000_000,
    "sec": 10_000_000,
    "second": 10_000_000,
    "ms": 10_000,
    "millisecond": 10_000,
    "microsecond": 10,
    "tick": 1,
}


# -- parsing ----------------------------------------------------------------------------------------


@v_args(inline=True)
class _ToAst(Transformer[Token, Any]):
    def start(self, *items: Any) -> Query:
        *lets, body = [i for i in items if i is not None]  # None: the optional closing `;`
        return Query(body.table, body.operators, tuple(lets))

    def let_stmt(self, name: Token, body: Query) -> tuple[str, Query]:
        return str(name), body

    def tabular(self, source: Query, *ops: Operator) -> Query:
        return Query(source.table, source.operators + ops)  # `(T | a) | b` is `T | a | b`

    def table_ref(self, name: Token) -> Query:
        return Query(str(name), ())

    def join(self, kind: str | None, *parts: Any) -> Operator:
        right, *keys = [p for p in parts if p is not None]  # None: a hint, which "don't change the semantic"
        return Operator("join", join=Join(kind, right, tuple(keys)))

    def join_hint(self, *_: Token) -> None:
        return None

    def join_kind(self, kind: Token) -> str:
        return str(kind)

    def same_key(self, name: Token) -> tuple[str, str]:
        return str(name), str(name)

    def pair_key(self, left: Token, right: Token) -> tuple[str, str]:
        return str(left), str(right)

    def where(self, expr: Expr) -> Operator:
        return Operator("where", expr=expr)

    def summarize(self, aggs: list[Named] | None, by: list[Named] | None) -> Operator:
        return Operator("summarize", items=tuple(aggs or ()), by=tuple(by or ()))

    def top(self, n: Expr, key: Expr, direction: Token | None) -> Operator:
        return Operator("top", expr=n, keys=((key, direction != "asc"),))

    def project(self, items: list[Named]) -> Operator:
        return Operator("project", items=tuple(items))

    def extend(self, items: list[Named]) -> Operator:
        return Operator("extend", items=tuple(items))

    def order(self, *keys: tuple[Expr, bool]) -> Operator:
        return Operator("order", keys=keys)

    def take(self, n: Expr) -> Operator:
        return Operator("take", expr=n)

    def count(self) -> Operator:
        return Operator("count")

    def render(self, _: Token) -> Operator:
        return Operator("render")

    def named_list(self, *items: Named) -> list[Named]:
        return list(items)

    def assign(self, name: Token, expr: Expr) -> Named:
        return str(name), expr

    def unnamed(self, expr: Expr) -> Named:
        return None, expr

    def sort_key(self, expr: Expr, direction: Token | None) -> tuple[Expr, bool]:
        return expr, direction != "asc"  # Kusto's order/top default: descending

    def or_(self, a: Expr, b: Expr) -> Expr:
        return BinOp("or", a, b)

    def and_(self, a: Expr, b: Expr) -> Expr:
        return BinOp("and", a, b)

    def compare(self, a: Expr, op: Token, b: Expr) -> Expr:
        return BinOp(str(op), a, b)

    def binary(self, a: Expr, op: Token, b: Expr) -> Expr:
        return BinOp(str(op), a, b)

    def in_(self, a: Expr, items: list[Expr]) -> Expr:
        return InList(a, tuple(items), negated=False)

    def not_in(self, a: Expr, items: list[Expr]) -> Expr:
        return InList(a, tuple(items), negated=True)

    def negate(self, a: Expr) -> Expr:
        if isinstance(a, Lit) and a.type in ("long", "real", "timespan"):
            return Lit(-a.value, a.type)
        return BinOp("-", Lit(0, "long"), a)

    def column(self, name: Token) -> Expr:
        return Col(str(name))

    def call(self, name: Token, args: list[Expr] | None) -> Expr:
        return Call(str(name), tuple(args or ()))

    def star(self) -> Expr:
        return Star()

    def expr_list(self, *items: Expr) -> list[Expr]:
        return list(items)

    def string(self, tok: Token) -> Expr:
        return Lit(decode_string(str(tok)), "string")

    def number(self, tok: Token) -> Expr:
        text = str(tok)
        if re.fullmatch(r"\d+", text):
            return Lit(int(text), "long")
        return Lit(float(text), "real")

    def timespan(self, tok: Token) -> Expr:
        return Lit(parse_timespan(str(tok)), "timespan")

    def datetime(self, tok: Token) -> Expr:
        return Lit(parse_datetime(str(tok)[len("datetime(") : -1]), "datetime")

    def true(self) -> Expr:
        return Lit(True, "bool")

    def false(self) -> Expr:
        return Lit(False, "bool")


def decode_string(token: str) -> str:
    """A Kusto string literal's value: `@"..."` verbatim, else backslash escapes."""
    if token.startswith("@"):
        return token[2:-1]
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), token[1:-1])


def parse_timespan(text: str) -> dt.timedelta:
    """`5m`, `1min`, `1.5h`, `30s`, `100ms`, `2d` (Kusto timespan literals) as a timedelta."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]+)", text)
    unit = match.group(2) if match else ""
    if unit not in _TICKS_PER_UNIT and unit.endswith("s"):
        unit = unit[:-1]  # plurals: days, hours, ticks
    if match is None or unit not in _TICKS_PER_UNIT:
        raise KqlError("SyntaxError", "SYN0002", f"Invalid timespan literal '{text}'")
    ticks = float(match.group(1)) * _TICKS_PER_UNIT[unit]
    return dt.timedelta(microseconds=ticks / 10)


_DATETIME_FORMATS = ("%m/%d/%Y, %I:%M:%S.%f %p", "%m/%d/%Y, %I:%M:%S %p", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y")


def parse_datetime(inner: str) -> dt.datetime:
    """The inside of `datetime(...)`: ISO 8601 (`2024-01-02`, `2024-01-02 10:00`, `...Z`), quoted or not,
    or the US form the official Cosmos DB queries use (`"02/12/2021, 11:20:00.000 PM"`); always UTC."""
    text = inner.strip().strip("\"'").strip()
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        value = None
        for form in _DATETIME_FORMATS:
            try:
                value = dt.datetime.strptime(text, form)
                break
            except ValueError:
                continue
    if value is None:
        raise KqlError("SyntaxError", "SYN0002", f"Invalid datetime literal 'datetime({inner})'")
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(_GRAMMAR, parser="lalr", maybe_placeholders=True, cache=True)


def _line_pos(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - text.rfind("\n", 0, pos)  # 1-based, as the service reports


def _syntax_error(text: str, exc: UnexpectedInput) -> KqlError:
    pos = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) else len(text)
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        return KqlError("SyntaxError", "SYN0002", "Query could not be parsed at the end of the query")
    word = re.match(r"[A-Za-z_][\w-]*|\S", text[pos:])
    found = word.group(0) if word else text[pos : pos + 1]
    if isinstance(exc, UnexpectedCharacters) and pos > 0 and text[pos - 1].isalpha():
        start = re.search(r"[\w-]*$", text[:pos])
        found = (start.group(0) if start else "") + found
    line, col = _line_pos(text, pos)
    scalar_let = _scalar_let(text[:pos], found)
    if found in UNSUPPORTED_WORDS or scalar_let:
        what = "a 'let' of a scalar value or a function" if scalar_let else f"'{found}'"
        return not_supported(
            f"{what} is not supported by the ruscope Log Analytics stand-in, which evaluates a KQL subset "
            f"({_SUPPORTED}); line [{line},{col}]"
        )
    return KqlError("SyntaxError", "SYN0002", f"Query could not be parsed at '{found}' on line [{line},{col}]")


def _scalar_let(before: str, found: str) -> bool:
    """Whether the parse failed at the start of a `let` value that is no tabular expression: a literal
    (`let n = 10;`), a call (`let t = ago(1d);`) or a function (`let f = (x: long) {...};`)."""
    value = re.search(r"(?:^|;)\s*let\s+[A-Za-z_]\w*\s*=([^;|]*)$", before)
    if value is None:
        return False
    start = value.group(1).strip()
    return (
        not start
        or (found == "(" and re.fullmatch(r"[A-Za-z_]\w*", start) is not None)
        or ((found == ")" or found.endswith(":")) and re.fullmatch(r"\(\s*[A-Za-z_]?\w*", start) is not None)
    )


@functools.lru_cache(maxsize=256)
def parse(text: str) -> Query:
    """Parse one query; raises KqlError (SyntaxError) with the position of the first bad token."""
    if not text.strip():
        raise KqlError("SyntaxError", "SYN0002", "Query could not be parsed: the query is empty")
    try:
        return _ToAst().transform(_lark().parse(text))  # type: ignore[no-any-return]
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, KqlError):
            raise exc.orig_exc from None
        if isinstance(exc.orig_exc, RecursionError):
            raise KqlError("SyntaxError", "SYN0002", "The query is nested too deeply.") from None
        raise
    except RecursionError:
        raise KqlError("SyntaxError", "SYN0002", "The query is nested too deeply.") from None
