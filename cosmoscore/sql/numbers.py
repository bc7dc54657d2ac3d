"""Mathematical and 64-bit integer built-ins (cosmos-sql-semantics §3): pure implementations."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from .ast import UNDEFINED
from .values import INT64_MAX, INT64_MIN, is_number


def _math(op: Callable[..., Any]) -> Callable[..., Any]:
    """Apply an IEEE double operation to numbers; math domain errors give NaN, overflow infinity."""

    def fn(*args: Any) -> Any:
        if not all(is_number(x) for x in args):
            return UNDEFINED
        try:
            return op(*args)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf
        except ZeroDivisionError:
            return math.inf

    return fn


def _keep_int(op: Callable[[float], float]) -> Callable[[Any], Any]:
    """CEILING/FLOOR/TRUNC/ROUND: integers pass through, doubles stay doubles."""
    return lambda x: x if x.__class__ is int else float(op(x)) if math.isfinite(x) else x


def _round(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _sign(x: Any) -> Any:
    return (x > 0) - (x < 0) if not (x.__class__ is float and math.isnan(x)) else x


def _log(x: float, base: Any = None) -> float:
    if x == 0:
        return -math.inf
    return math.log(x) if base is None else math.log(x, base)


def _power(x: Any, y: Any) -> Any:
    if x.__class__ is int and y.__class__ is int and 0 <= y <= 64:
        result = x**y
        if INT64_MIN <= result <= INT64_MAX:
            return result
    return math.pow(x, y)


def _number_bin(x: Any, size: Any = 1) -> Any:
    if not (is_number(x) and is_number(size)) or size == 0:
        return UNDEFINED
    quotient = x / size
    if not math.isfinite(quotient):  # NaN or an infinity has no bin (floor would raise)
        return UNDEFINED
    return math.floor(quotient) * size


def _wrap64(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


def _int_op(op: Callable[..., Any]) -> Callable[..., Any]:
    def fn(*args: Any) -> Any:
        if not all(a.__class__ is int for a in args):
            return UNDEFINED
        result = op(*args)
        return UNDEFINED if result is UNDEFINED else _wrap64(result)

    return fn


def _int_div(a: int, b: int) -> Any:
    if b == 0:
        return UNDEFINED
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_mod(a: int, b: int) -> Any:
    if b == 0:
        return UNDEFINED
    return int(math.fmod(a, b)) if abs(a) < 2**53 and abs(b) < 2**53 else a - b * _int_div(a, b)


_MATH1: dict[str, Callable[..., Any]] = {
    "ABS": abs,
    "SQRT": math.sqrt,
    "SQUARE": lambda x: x * x,
    "EXP": math.exp,
    "LOG10": math.log10,
    "ACOS": math.acos,
    "ASIN": math.asin,
    "ATAN": math.atan,
    "COS": math.cos,
    "SIN": math.sin,
    "TAN": math.tan,
    "COT": lambda x: 1 / math.tan(x),
    "DEGREES": math.degrees,
    "RADIANS": math.radians,
    "CEILING": _keep_int(math.ceil),
    "FLOOR": _keep_int(math.floor),
    "TRUNC": _keep_int(math.trunc),
    "ROUND": _keep_int(_round),
    "SIGN": _sign,
}

NUMBER_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Any]]] = {
    **{name: (1, 1, _math(op)) for name, op in _MATH1.items()},
    "POWER": (2, 2, _math(_power)),
    "LOG": (1, 2, _math(_log)),
    "ATN2": (2, 2, _math(lambda x, y: math.atan2(y, x))),
    "PI": (0, 0, lambda: math.pi),
    "RAND": (0, 0, random.random),
    "NUMBERBIN": (1, 2, _number_bin),
    "INTADD": (2, 2, _int_op(lambda a, b: a + b)),
    "INTSUB": (2, 2, _int_op(lambda a, b: a - b)),
    "INTMUL": (2, 2, _int_op(lambda a, b: a * b)),
    "INTDIV": (2, 2, _int_op(_int_div)),
    "INTMOD": (2, 2, _int_op(_int_mod)),
    "INTBITAND": (2, 2, _int_op(lambda a, b: a & b)),
    "INTBITOR": (2, 2, _int_op(lambda a, b: a | b)),
    "INTBITXOR": (2, 2, _int_op(lambda a, b: a ^ b)),
    "INTBITNOT": (1, 1, _int_op(lambda a: ~a)),
    "INTBITLEFTSHIFT": (2, 2, _int_op(lambda a, b: a << b if 0 <= b < 64 else 0)),
    "INTBITRIGHTSHIFT": (2, 2, _int_op(lambda a, b: a >> b if 0 <= b < 64 else 0)),
}
