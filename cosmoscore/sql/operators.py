"""Operator semantics on plain values: arithmetic, bitwise, comparison, LIKE patterns.

Compiled closures call these; every function returns UNDEFINED for operands of the wrong type
(cosmos-sql-semantics §2.1, §3.3).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from . import bounds
from .ast import UNDEFINED
from .patterns import like_pattern
from .values import compare, equal

U = UNDEFINED
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _num(v: Any) -> bool:
    cls = v.__class__
    return cls is int or cls is float


def _fit(v: Any) -> Any:
    """Keep integers within int64 (the service's integer range); beyond that, a double."""
    if v.__class__ is int and not INT64_MIN <= v <= INT64_MAX:
        return float(v)
    return v


def divide(x: Any, y: Any) -> Any:
    if not (_num(x) and _num(y)):
        return U
    if y == 0:
        return math.nan if x == 0 or x != x else math.copysign(math.inf, x)
    return x / y


def modulo(x: Any, y: Any) -> Any:
    if not (_num(x) and _num(y)):
        return U
    if y == 0:
        return math.nan
    if x.__class__ is int and y.__class__ is int:
        r = abs(x) % abs(y)
        return r if x >= 0 else -r
    return math.fmod(x, y)


def _arith(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        if _num(x) and _num(y):
            try:
                return _fit(op(x, y))
            except OverflowError:
                return math.inf
        return U

    return fn


def to_int32(v: float) -> int:
    """JavaScript ToInt32."""
    if not math.isfinite(v):
        return 0
    n = int(v) & 0xFFFFFFFF
    return n - 0x100000000 if n & 0x80000000 else n


def _bitwise(op: Callable[[int, int], int], unsigned: bool = False) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        if not (_num(x) and _num(y)):
            return U
        result = op(to_int32(x), to_int32(y))
        return result & 0xFFFFFFFF if unsigned else to_int32(result)

    return fn


def _concat(x: Any, y: Any) -> Any:
    if x.__class__ is not str or y.__class__ is not str or len(x) + len(y) > bounds.LIMITS.max_string_chars:
        return U  # sized before it is built
    return x + y


def _not_equal(x: Any, y: Any) -> Any:
    r = equal(x, y)
    return r if r is U else not r


def _ordering(test: Callable[[int], bool]) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        c = compare(x, y)
        return c if c is U else test(c)

    return fn


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": _arith(operator.add),
    "-": _arith(operator.sub),
    "*": _arith(operator.mul),
    "/": divide,
    "%": modulo,
    "||": _concat,
    "=": equal,
    "!=": _not_equal,
    "<": _ordering(lambda c: c < 0),
    "<=": _ordering(lambda c: c <= 0),
    ">": _ordering(lambda c: c > 0),
    ">=": _ordering(lambda c: c >= 0),
    "&": _bitwise(operator.and_),
    "|": _bitwise(operator.or_),
    "^": _bitwise(operator.xor),
    "<<": _bitwise(lambda a, b: a << (b & 31)),
    ">>": _bitwise(lambda a, b: a >> (b & 31)),
    ">>>": _bitwise(lambda a, b: (a & 0xFFFFFFFF) >> (b & 31), unsigned=True),
}

# For a constant right-hand side: how the compared value's comparison result maps to a boolean.
ORDER_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
MIRROR = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def negate(v: Any) -> Any:
    return U if v is U else -v if _num(v) else U


def plus(v: Any) -> Any:
    return v if _num(v) else U


def bit_not(v: Any) -> Any:
    return to_int32(~to_int32(v)) if _num(v) else U


def logical_not(v: Any) -> Any:
    if v is True:
        return False
    if v is False:
        return True
    return U


UNARY: dict[str, Callable[[Any], Any]] = {"-": negate, "+": plus, "~": bit_not, "NOT": logical_not}


def like(value: Any, pattern: Any, escape: str | None) -> Any:
    if value.__class__ is not str or pattern.__class__ is not str:
        return U
    return like_pattern(pattern, escape).matches(value)
