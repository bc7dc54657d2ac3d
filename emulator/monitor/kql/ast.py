"""The KQL stand-in's syntax tree and its error: what `parser` parses into and every stage raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class KqlError(Exception):
    """A refused query, in the service's 400 shape (azure-monitor.md §3.1): `kind` is the inner error's
    code (SyntaxError or SemanticError), `code` and `message` the innermost's."""

    def __init__(self, kind: str, code: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.code, self.message = kind, code, message

    def body(self) -> dict[str, Any]:
        summary = "A recognition error occurred in the query." if self.kind == "SyntaxError" else None
        return {
            "error": {
                "message": "The request had some invalid properties",
                "code": "BadArgumentError",
                "innererror": {
                    "code": self.kind,
                    "message": summary or "A semantic error occurred.",
                    "innererror": {"code": self.code, "message": self.message},
                },
            }
        }


def semantic(message: str, code: str = "SEM0100") -> KqlError:
    """A semantic error; SEM0100 (name resolution) is the service's code from the recording in §3.1."""
    return KqlError("SemanticError", code, message)


def not_supported(message: str) -> KqlError:
    """Valid KQL the stand-in does not evaluate: refused, never answered wrongly. The innermost code is
    the stand-in's own (Kusto has no code for "this server does not implement it")."""
    return KqlError("SemanticError", "NotSupportedByStandIn", message)


# -- AST --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Col:
    name: str


@dataclass(frozen=True)
class Lit:
    value: Any
    type: str  # a Kusto type: string, long, real, bool, datetime, timespan


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Star:
    pass


@dataclass(frozen=True)
class BinOp:
    op: str  # and, or, ==, !=, <, <=, >, >=, =~, !~, +, -, *, /, %
    left: Any
    right: Any


@dataclass(frozen=True)
class InList:
    value: Any
    items: tuple[Any, ...]
    negated: bool


Expr = Col | Lit | Call | Star | BinOp | InList
Named = tuple[str | None, Expr]  # `name = expr` or a bare `expr`


@dataclass(frozen=True)
class Operator:
    """One `| ...` stage: `kind` is the operator's word; the fields its parts."""

    kind: str  # where, summarize, top, project, extend, order, take, count, render, join
    expr: Expr | None = None  # where's predicate, take's/top's count
    items: tuple[Named, ...] = ()  # summarize's aggregates, project/extend's columns
    by: tuple[Named, ...] = ()  # summarize's groups
    keys: tuple[tuple[Expr, bool], ...] = ()  # order/top: (expression, descending)
    join: Join | None = None  # join's flavor, right side and keys


@dataclass(frozen=True)
class Query:
    """A tabular expression: a table (or a `let` name) and its operators; the whole query's `let`
    statements, in order, on the outermost one (a `let` body or a join's right side has none)."""

    table: str
    operators: tuple[Operator, ...]
    lets: tuple[tuple[str, Query], ...] = ()


@dataclass(frozen=True)
class Join:
    """`join kind=K (right) on keys`: `kind` as written (None: the default), `keys` as (left column,
    right column) pairs (`on A` is (A, A), `on $left.A == $right.B` is (A, B))."""

    kind: str | None
    right: Query
    keys: tuple[tuple[str, str], ...]
