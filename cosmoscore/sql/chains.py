"""Long OR chains of equalities, read without the grammar (like `inlists`).

`c.n = 1 OR c.n = 2 OR ...` and what the SDK's `read_items` sends, `(c.id = @id0 AND c.pk = @pk0) OR ...`,
cost the LALR parser about 200 us a term (2.5 s for 15,000 terms, the server answering no one meanwhile).
A chain that fills a whole expression slot (right after WHERE or `(`, up to `)`, the next clause or the
end) and whose terms are `path = constant` or a parenthesized AND of those is built here directly, with
the spans and the balanced shape `guards.balance_chains` gives the parser's tree; its text is replaced by a
placeholder parameter of the same length, which the parser swaps for the built expression. Anything else
(another operator, a keyword as a name, a comment of the chain's shape inside a string) is left to the
grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import ast as a
from .guards import BALANCE_FROM
from .literals import decode_number, decode_string

MIN_TERMS = 32
PLACEHOLDER = "@__ruscope_or_chain_"

_WS = r"[ \t\r\n]"
_NAME = r"[A-Za-z_][A-Za-z_0-9]*"
_STR = r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
_START = re.compile(rf"""{_STR}|\bWHERE\b{_WS}*|\({_WS}*""", re.IGNORECASE)
_ROOT = re.compile(_NAME)
_STEP = re.compile(rf"{_WS}*(?:\.{_WS}*(?P<name>{_NAME})|\[{_WS}*(?P<key>{_STR}){_WS}*\])")
_EQ = re.compile(
    rf"{_WS}*={_WS}*(?:(?P<neg>-{_WS}*)?(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?![A-Za-z_0-9.])"
    rf"|(?P<str>{_STR})|(?P<kw>true|false|null)(?![A-Za-z_0-9])|(?P<param>@{_NAME}))",
    re.IGNORECASE,
)
_OR = re.compile(rf"{_WS}*\bOR\b{_WS}*", re.IGNORECASE)
_AND = re.compile(rf"{_WS}*\bAND\b{_WS}*", re.IGNORECASE)
_OPEN = re.compile(rf"\({_WS}*")
_CLOSE = re.compile(rf"{_WS}*\)")
_END = re.compile(rf"{_WS}*(?:\)|$|\b(?:ORDER|GROUP|OFFSET)\b)", re.IGNORECASE)
_KEYWORDS = frozenset(
    [
        "select",
        "top",
        "distinct",
        "value",
        "as",
        "from",
        "join",
        "in",
        "where",
        "group",
        "by",
        "order",
        "asc",
        "desc",
        "offset",
        "limit",
        "and",
        "or",
        "not",
        "between",
        "like",
        "escape",
        "exists",
        "array",
        "true",
        "false",
        "null",
        "undefined",
        "udf",
        "left",
        "right",
        "nan",
        "infinity",
    ]
)
_CONSTANTS = {"true": True, "false": False, "null": None}

Chains = dict[str, a.Expr]


def _path(text: str, pos: int) -> tuple[a.Expr, int] | None:
    m = _ROOT.match(text, pos)
    if m is None or m.group(0).lower() in _KEYWORDS:
        return None
    node: a.Expr = a.Ident(m.group(0), m.span())
    end = m.end()
    while (s := _STEP.match(text, end)) is not None:
        if s.group("name") is not None:
            if s.group("name").lower() in _KEYWORDS:
                return None
            node = a.Prop(node, s.group("name"), False, (pos, s.end()))
        else:
            node = a.Prop(node, decode_string(s.group("key")), True, (pos, s.end()))
        end = s.end()
    return (node, end) if isinstance(node, a.Prop) else None


def _constant(m: re.Match[str]) -> a.Expr:
    if m.group("num") is not None:
        value: Any = decode_number(m.group("num"))
        start = m.start("neg") if m.group("neg") else m.start("num")
        return a.Literal(-value if m.group("neg") else value, (start, m.end("num")))
    if m.group("str") is not None:
        return a.Literal(decode_string(m.group("str")), m.span("str"))
    if m.group("kw") is not None:
        return a.Literal(_CONSTANTS[m.group("kw").lower()], m.span("kw"))
    return a.Param(m.group("param"), m.span("param"))


def _equality(text: str, pos: int) -> tuple[a.Expr, int] | None:
    found = _path(text, pos)
    if found is None:
        return None
    path, end = found
    m = _EQ.match(text, end)
    if m is None:
        return None
    value = _constant(m)
    return a.Binary("=", path, value, (pos, value.span[1])), m.end()


def _joined(op: str, parts: list[a.Expr]) -> a.Expr:
    """The tree the parser builds for a chain: left-deep, or balanced pairwise from BALANCE_FROM operands."""
    if len(parts) < BALANCE_FROM:
        node = parts[0]
        for right in parts[1:]:
            node = a.Binary(op, node, right, (node.span[0], right.span[1]))
        return node
    while len(parts) > 1:
        merged: list[a.Expr] = [
            a.Binary(op, parts[i], parts[i + 1], (parts[i].span[0], parts[i + 1].span[1]))
            for i in range(0, len(parts) - 1, 2)
        ]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _term(text: str, pos: int) -> tuple[a.Expr, int] | None:
    """`path = constant`, or `( path = constant AND ... )`."""
    opened = _OPEN.match(text, pos)
    if opened is None:
        return _equality(text, pos)
    found = _separated(text, opened.end(), _equality, _AND)
    if found is None:
        return None
    parts, end = found
    closed = _CLOSE.match(text, end)
    return (_joined("AND", parts), closed.end()) if closed else None


def _chain(text: str, pos: int) -> tuple[a.Expr, int] | None:
    found = _separated(text, pos, _term, _OR)
    if found is None:
        return None
    terms, end = found
    ok = len(terms) >= MIN_TERMS and _END.match(text, end) is not None
    return (_joined("OR", terms), end) if ok else None


def _separated(
    text: str, pos: int, item: Callable[[str, int], tuple[a.Expr, int] | None], joint: re.Pattern[str]
) -> tuple[list[a.Expr], int] | None:
    """Items separated by `joint` from `pos`: them and the end of the last, or None if one is not an item."""
    items: list[a.Expr] = []
    while True:
        found = item(text, pos)
        if found is None:
            return None
        items.append(found[0])
        sep = joint.match(text, found[1])
        if sep is None:
            return items, found[1]
        pos = sep.end()


def extract_chains(text: str) -> tuple[str, Chains]:
    """The text with each long equality OR chain replaced by a same-length placeholder, and the chains."""
    chains: Chains = {}
    pieces: list[str] = []
    pos = last = 0
    while (m := _START.search(text, pos)) is not None:
        pos = m.end()
        if m.group(0)[0] in "'\"":
            continue
        found = _chain(text, pos)
        if found is None:
            continue
        expr, end = found
        name = f"{PLACEHOLDER}{len(chains)}"
        if end - pos < len(name):
            continue
        pieces += [text[last:pos], name.ljust(end - pos)]
        chains[name] = expr
        last = pos = end
    if not chains:
        return text, chains
    pieces.append(text[last:])
    return "".join(pieces), chains
