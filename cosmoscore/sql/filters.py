"""WHERE clauses compiled for filtering, where only "is it true" matters.

A long OR of equality conjunctions over the same paths (`c.n = 1 OR c.n = 2 ...`, or what the SDK's
`read_items` sends, `(c.id = @id0 AND c.pk = @pk0) OR ...`) is a set lookup of the row's values instead
of one comparison per term, as the service answers it from the index. This is done only where a false and
an undefined result filter alike: the WHERE root and the conjuncts of a root AND (never under NOT, in a
projection or in an ORDER BY), so results are unchanged (cosmos-sql-semantics §2.1: a row passes when the
filter is true).
"""

from __future__ import annotations

from typing import Any

from . import ast as a
from .compiler import _and, compile_expr
from .scope import Context, Fn, Scope, constant, getter, path_of
from .values import RANK_BOOL, RANK_NULL, RANK_NUMBER, RANK_STRING, hash_key, rank

U = a.UNDEFINED
MIN_TERMS = 8  # shorter chains compare term by term, as written
_PRIMITIVE = (RANK_NULL, RANK_BOOL, RANK_NUMBER, RANK_STRING)
Path = tuple[str, tuple[str | int, ...]]


def compile_filter(node: Any, scope: Scope, ctx: Context) -> Fn:
    """Compile a WHERE expression whose result is only tested for `is True`."""
    if isinstance(node, a.Binary) and node.op == "AND":
        return _and(compile_filter(node.left, scope, ctx), compile_filter(node.right, scope, ctx))
    if isinstance(node, a.Binary) and node.op == "OR":
        lookup = _equality_set(node, scope, ctx)
        if lookup is not None:
            return lookup
    return compile_expr(node, scope, ctx)


def chain_operands(node: Any, op: str) -> list[Any]:
    """The operands of a chain of one operator, in order (iteratively: chains may be long)."""
    out: list[Any] = []
    pending = [node]
    while pending:
        n = pending.pop()
        if isinstance(n, a.Binary) and n.op == op:
            pending += [n.right, n.left]
        else:
            out.append(n)
    return out


def path_equality(node: Any, ctx: Context) -> tuple[Path, Any] | None:
    """(path, constant) for `path = constant` (either side) with a primitive constant, else None."""
    if not (isinstance(node, a.Binary) and node.op == "="):
        return None
    for side, other in ((node.right, node.left), (node.left, node.right)):
        is_const, value = constant(side, ctx)
        path = path_of(other, ctx)
        if is_const and path is not None and rank(value) in _PRIMITIVE:
            return path, value
    return None


def _term(node: Any, ctx: Context) -> dict[Path, Any] | None:
    """One OR term as {path: constant} when it is a conjunction of equalities on distinct paths."""
    found: dict[Path, Any] = {}
    for part in chain_operands(node, "AND"):
        eq = path_equality(part, ctx)
        if eq is None or eq[0] in found:
            return None
        found[eq[0]] = eq[1]
    return found


def _equality_set(node: a.Binary, scope: Scope, ctx: Context) -> Fn | None:
    terms = chain_operands(node, "OR")
    if len(terms) < MIN_TERMS:
        return None
    keyed: list[dict[Path, Any]] = []
    for t in terms:
        term = _term(t, ctx)
        if term is None or (keyed and term.keys() != keyed[0].keys()):
            return None
        keyed.append(term)
    paths = sorted(keyed[0], key=repr)
    getters = [getter(scope, alias, steps) for alias, steps in paths]
    keys = frozenset(tuple(hash_key(term[p]) for p in paths) for term in keyed)
    if len(getters) == 1:
        (get,) = getters
        singles = frozenset(k[0] for k in keys)
        return lambda r: hash_key(get(r)) in singles
    return lambda r: tuple(hash_key(g(r)) for g in getters) in keys
