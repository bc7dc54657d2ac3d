"""The query AST: frozen, hashable dataclasses built once by the parser.

Every node carries `span` (start, end character offsets, end exclusive) for error messages; spans
are left out of equality so that `GROUP BY c.a` matches `c.a` in the select list wherever it is
written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cosmoscore.epk import UNDEFINED as _UNDEFINED

Span = tuple[int, int]


UNDEFINED: Any = _UNDEFINED  # the one undefined of the emulator (see cosmoscore.epk)


@dataclass(frozen=True)
class Literal:
    """A constant: undefined, null, boolean, number or string.

    `kind` (the value's type name) takes part in equality, because Python's `1 == True` must not
    make `c.n = 1` and `c.n = true` the same query (plans are cached by query equality)."""

    value: Any
    span: Span = field(default=(0, 0), compare=False)
    kind: str = field(default="", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", type(self.value).__name__)


@dataclass(frozen=True)
class Param:
    """`@name`; `name` keeps the leading `@`."""

    name: str
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Ident:
    """A bare identifier: an input alias (`c`), or `NaN` / `Infinity`."""

    name: str
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Prop:
    """`target.name` or `target["name"]` (`bracket` only changes how it is printed)."""

    target: Expr
    name: str
    bracket: bool = False
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Index:
    """`target[expr]` where expr is not a string literal (array index, parameter)."""

    target: Expr
    index: Expr
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "+", "~", "NOT"
    operand: Expr
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Binary:
    op: str  # AND OR = != < <= > >= + - * / % || | & ^ << >> >>>
    left: Expr
    right: Expr
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Between:
    value: Expr
    low: Expr
    high: Expr
    negated: bool = False
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class In:
    value: Expr
    items: tuple[Expr, ...]
    negated: bool = False
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Like:
    value: Expr
    pattern: Expr
    escape: str | None = None
    negated: bool = False
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Ternary:
    cond: Expr
    then: Expr
    otherwise: Expr
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Coalesce:
    left: Expr
    right: Expr
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class ArrayCtor:
    items: tuple[Expr, ...]
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class ObjectCtor:
    props: tuple[tuple[str, Expr], ...]
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Call:
    """A built-in (or aggregate) function call; `name` is upper case, `spelled` as written."""

    name: str
    args: tuple[Expr, ...]
    spelled: str = ""
    udf: bool = False
    span: Span = field(default=(0, 0), compare=False)
    name_span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Exists:
    query: Query
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class ArraySubquery:
    query: Query
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class ScalarSubquery:
    query: Query
    span: Span = field(default=(0, 0), compare=False)


Expr = (
    Literal
    | Param
    | Ident
    | Prop
    | Index
    | Unary
    | Binary
    | Between
    | In
    | Like
    | Ternary
    | Coalesce
    | ArrayCtor
    | ObjectCtor
    | Call
    | Exists
    | ArraySubquery
    | ScalarSubquery
)


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    alias: str | None = None
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Select:
    """`kind` is "star", "value" or "list"; `top` is an int, a Param or None."""

    kind: str
    items: tuple[SelectItem, ...] = ()
    value: Expr | None = None
    distinct: bool = False
    top: int | Param | None = None
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Collection:
    """A FROM collection: `root` (container name or alias) plus a property/index path, or a subquery."""

    root: str | None
    path: tuple[str | int, ...] = ()
    subquery: Query | None = None
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Source:
    """One FROM/JOIN source. `iterate` is the `alias IN collection` form."""

    alias: str
    collection: Collection
    iterate: bool = False
    explicit_alias: bool = True
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class OrderItem:
    expr: Expr
    descending: bool = False
    explicit: str | None = None  # "ASC"/"DESC" as written, for printing
    span: Span = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Query:
    select: Select
    sources: tuple[Source, ...] = ()
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    order_by: tuple[OrderItem, ...] = ()
    offset: int | Param | None = None
    limit: int | Param | None = None
    text: str = field(default="", compare=False)
    spans: tuple[tuple[str, Span], ...] = field(default=(), compare=False)  # "top", "order", "offset"

    def __hash__(self) -> int:
        """Computed once: caches keyed by a query (plans, routing, index use) look it up on every page, and a
        query with a 70,000-item IN list would otherwise hash every item each time."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(
                (self.select, self.sources, self.where, self.group_by, self.order_by, self.offset, self.limit)
            )
            object.__setattr__(self, "_hash", cached)
        return cached

    def span_of(self, clause: str) -> Span | None:
        return next((s for name, s in self.spans if name == clause), None)


def children(node: Any) -> tuple[Any, ...]:
    """The direct sub-expressions of an expression node (subqueries are not entered)."""
    if isinstance(node, (Prop,)):
        return (node.target,)
    if isinstance(node, Index):
        return (node.target, node.index)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, (Binary, Coalesce)):
        return (node.left, node.right)
    if isinstance(node, Between):
        return (node.value, node.low, node.high)
    if isinstance(node, In):
        return (node.value, *node.items)
    if isinstance(node, Like):
        return (node.value, node.pattern)
    if isinstance(node, Ternary):
        return (node.cond, node.then, node.otherwise)
    if isinstance(node, ArrayCtor):
        return node.items
    if isinstance(node, ObjectCtor):
        return tuple(e for _, e in node.props)
    if isinstance(node, Call):
        return node.args
    return ()


def walk(node: Any) -> Iterator[Any]:
    """Pre-order walk over an expression, not entering subqueries."""
    yield node
    for child in children(node):
        yield from walk(child)


def substituted(node: Any, leaf: Callable[[Any], Any]) -> Any:
    """`node` rebuilt with every `Ident` and `Param` replaced by what `leaf` returns for it (None: kept),
    subqueries included: how a computed property reads the query's alias, and index metrics print `ROOT`."""
    if isinstance(node, tuple):
        return tuple(substituted(v, leaf) for v in node)
    if isinstance(node, (Ident, Param)):
        replacement = leaf(node)
        return node if replacement is None else replacement
    if not dataclasses.is_dataclass(node) or isinstance(node, (type, Literal)):
        return node
    changes = {f.name: substituted(getattr(node, f.name), leaf) for f in dataclasses.fields(node) if f.name != "span"}
    return dataclasses.replace(node, **changes)
