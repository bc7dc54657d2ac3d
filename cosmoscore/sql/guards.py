"""Size and shape checks around parsing, so that no query text can exhaust the interpreter's stack.

- the text is measured before the parser sees it (SC3020, cosmos-sql-semantics §7: 512 KB);
- long AND/OR chains (the SDK's `read_items` sends one `(c.id=@idN AND c.pk=@pkN)` term per item) are
  rebalanced into trees of logarithmic depth before the AST is built: AND and OR are associative in the
  three-valued logic (cosmos-sql-semantics §2.1) and operands stay in their order, so results and
  short-circuiting are unchanged;
- what remains deeper than `SqlLimits.max_expression_depth` is a 400 (the service documents no limit);
- JOINs beyond `SqlLimits.max_joins` (cosmos-sql-semantics §7: 10) are a 400.
Every walk here is iterative.
"""

from __future__ import annotations

import typing
from typing import Any

from lark import Token, Tree

from . import ast as a
from . import bounds
from .errors import UNVERIFIED, SqlError

_CHAINS = ("or_", "and_")
BALANCE_FROM = 8  # shorter chains keep their left-deep shape (and their printed form)


def check_text(text: str) -> None:
    limit = bounds.LIMITS.max_query_chars
    if len(text) > limit:
        raise SqlError("SC3020", f"The SQL query text exceeded the maximum limit of {limit} characters.")


def _start(node: Any) -> int:
    return (node.start_pos or 0) if isinstance(node, Token) else node.meta.start_pos


def _end(node: Any) -> int:
    return (node.end_pos or 0) if isinstance(node, Token) else node.meta.end_pos


class _Joined(Tree[Any]):
    """A node `_balanced` made: already balanced, never collected as a chain again."""


def _joined(kind: str, left: Any, op: Token, right: Any) -> Tree[Any]:
    tree = _Joined(kind, [left, op, right])
    tree.meta.start_pos, tree.meta.end_pos, tree.meta.empty = _start(left), _end(right), False
    return tree


def _operands(chain: Tree[Any]) -> tuple[list[Any], list[Token]]:
    """The operands and operator tokens of a left-deep chain, in text order."""
    operands: list[Any] = []
    ops: list[Token] = []
    node: Any = chain
    while isinstance(node, Tree) and node.data == chain.data:
        operands.append(node.children[2])
        ops.append(typing.cast(Token, node.children[1]))
        node = node.children[0]
    operands.append(node)
    operands.reverse()
    ops.reverse()
    return operands, ops


def _balanced(chain: Tree[Any]) -> Tree[Any]:
    """The same chain as a tree of logarithmic depth, merging neighbours pairwise, level by level."""
    level, ops = _operands(chain)
    if len(level) < BALANCE_FROM:
        return chain
    while len(level) > 1:
        merged = [_joined(chain.data, level[i], ops[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            merged.append(level[-1])
        ops = ops[1::2]
        level = merged
    result: Tree[Any] = level[0]
    return result


def balance_chains(tree: Tree[Any]) -> None:
    """Rebalance every long AND/OR chain in place."""
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, Tree):
            continue
        for i, child in enumerate(node.children):
            if isinstance(child, Tree) and child.data in _CHAINS and not isinstance(child, _Joined):
                node.children[i] = _balanced(child)
        stack.extend(node.children)


def check_depth(tree: Tree[Any]) -> None:
    """Refuse a parse tree nested deeper than the configured limit (checked without recursion)."""
    limit = bounds.LIMITS.max_expression_depth
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise SqlError(
                UNVERIFIED,
                f"The SQL query is nested deeper than the emulator's limit of {limit} levels.",
                *(_start(node), _end(node)),
            )
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def _subqueries(q: a.Query) -> list[a.Query]:
    found = [s.collection.subquery for s in q.sources if s.collection.subquery is not None]
    exprs: list[Any] = [q.where, *q.group_by, *(o.expr for o in q.order_by)]
    exprs += [q.select.value] + [item.expr for item in q.select.items]
    pending = [e for e in exprs if e is not None]
    while pending:
        node = pending.pop()
        if isinstance(node, (a.Exists, a.ArraySubquery, a.ScalarSubquery)):
            found.append(node.query)
        elif not (isinstance(node, a.In) and all(i.__class__ is a.Literal for i in node.items)):
            pending += a.children(node)
        else:
            pending.append(node.value)
    return found


def check_joins(query: a.Query) -> None:
    """At most `max_joins` JOINs in the query, its subqueries included (cosmos-sql-semantics §7)."""
    limit = bounds.LIMITS.max_joins
    joins, pending = 0, [query]
    while pending:
        q = pending.pop()
        joins += max(len(q.sources) - 1, 0)
        pending += _subqueries(q)
    if joins > limit:
        raise SqlError(UNVERIFIED, f"The SQL query exceeded the maximum number of joins. The allowed limit is {limit}.")
