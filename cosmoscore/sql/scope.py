"""What compiled expressions read: the row layout (`Scope`), the compile-time context (`Context`:
parameters and how to compile subqueries), constants, and fused property-path getters.

A row is the bare value of the only alias when a query has one input set and no outer query
(`Scope.single`), else a tuple with one slot per alias (outer query aliases first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from . import ast as a
from .errors import unresolved

U = a.UNDEFINED
Fn = Callable[[Any], Any]


@dataclass(frozen=True)
class Scope:
    """Which aliases a row carries and how. `agg_slot`: tuple slot holding aggregate results."""

    names: tuple[str, ...]
    single: bool
    agg_slot: int | None = None
    documents: bool = False  # single mode and every row is a container document (a dict)


@dataclass
class Context:
    """Compile-time inputs: parameter values, and planner hooks for subqueries and aggregates."""

    params: Mapping[str, Any]
    subquery: Callable[[a.Query, Scope], Callable[[Any], Any]]
    aggregate: Callable[[a.Call, Scope], Fn] | None = None


def _no_subqueries(query: a.Query, scope: Scope) -> Fn:
    raise AssertionError("a constants-only context compiles no subquery")


def constants_context(params: Mapping[str, Any]) -> Context:
    """A Context that only reads literals and parameters (`constant`, `param_value`, `path_of`)."""
    return Context(params, _no_subqueries)


def constant(node: Any, ctx: Context) -> tuple[bool, Any]:
    """(True, value) when the node is a literal or a supplied parameter."""
    if isinstance(node, a.Literal):
        return True, node.value
    if isinstance(node, a.Param):
        return True, param_value(node, ctx)
    return False, None


def param_value(node: a.Param, ctx: Context) -> Any:
    for key in (node.name, node.name[1:]):
        if key in ctx.params:
            return ctx.params[key]
    raise unresolved(node.name, *node.span)


def path_of(node: Any, ctx: Context) -> tuple[str, tuple[str | int, ...]] | None:
    """(alias, steps) when the node is an alias followed by constant property/index steps."""
    steps: list[str | int] = []
    while True:
        if isinstance(node, a.Ident):
            return node.name, tuple(reversed(steps))
        if isinstance(node, a.Prop):
            steps.append(node.name)
        elif isinstance(node, a.Index):
            is_const, key = constant(node.index, ctx)
            if not is_const or key.__class__ not in (str, int):
                return None
            steps.append(key)
        else:
            return None
        node = node.target


def step(v: Any, key: str | int) -> Any:
    """One property or array-index step; anything that does not apply is undefined."""
    if key.__class__ is str:
        return v.get(key, U) if v.__class__ is dict else U
    if v.__class__ is list and 0 <= key < len(v):  # type: ignore[operator]  # an int: str returned above
        return v[key]  # type: ignore[index]
    return U


def direct_key(scope: Scope, steps: tuple[str | int, ...]) -> str | None:
    """The property name when a path is one step into a container document (a plain dict.get)."""
    if scope.documents and len(steps) == 1 and steps[0].__class__ is str:
        return steps[0]
    return None


def getter(scope: Scope, alias: str, steps: tuple[str | int, ...]) -> Fn:
    """A fused closure reading `alias.steps...` from a row."""
    if scope.single:
        if not steps:
            return lambda r: r
        direct = direct_key(scope, steps)
        if direct is not None:
            return lambda r: r.get(direct, U)
        if len(steps) == 1 and steps[0].__class__ is str:
            k = steps[0]
            return lambda r: r.get(k, U) if r.__class__ is dict else U
        if len(steps) == 2 and all(s.__class__ is str for s in steps):
            k1, k2 = steps

            def get2(r: Any) -> Any:
                if r.__class__ is dict:
                    v = r.get(k1, U)
                    if v.__class__ is dict:
                        return v.get(k2, U)
                return U

            return get2
        base: Fn = lambda r: r  # noqa: E731
    else:
        base = itemgetter(scope.names.index(alias))
        if not steps:
            return base

    def get(r: Any) -> Any:
        v = base(r)
        for key in steps:
            v = step(v, key)
            if v is U:
                return U
        return v

    return get
