"""Built-in scalar functions: the registry (name, arity) and the pure implementations.

To add a function: write `_fn(args...) -> value` returning UNDEFINED for a wrong type, and register
it in `FUNCTIONS` with its arity. `strict` functions are not called when an argument is undefined
(cosmos-sql-semantics §3.2); only the IS_* checks and IIF see undefined.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from . import datetimes as dt
from .ast import UNDEFINED
from .values import (
    RANK_ARRAY,
    RANK_BOOL,
    RANK_NULL,
    RANK_NUMBER,
    RANK_OBJECT,
    RANK_STRING,
    deep_equal,
    hash_key,
    is_finite_number,
    is_number,
    rank,
    to_json_text,
)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class Builtin:
    name: str
    min_args: int
    max_args: int | None  # None: no upper bound
    impl: Callable[..., Any]
    strict: bool = True

    def arity_message(self) -> str:
        if self.max_args == self.min_args:
            need = f"{self.min_args}"
        elif self.max_args is None:
            need = f"at least {self.min_args}"
        else:
            need = f"{self.min_args} to {self.max_args}"
        return f"The {self.name} function requires {need} argument(s)."


# Type checks: boolean-valued, and served by the range index when applied to a path.
TYPE_CHECK_FUNCTIONS = frozenset(
    {"IS_DEFINED", "IS_NULL", "IS_BOOL", "IS_NUMBER", "IS_STRING", "IS_ARRAY", "IS_OBJECT", "IS_PRIMITIVE"}
)
# String and array predicates: boolean-valued and index-served too (some with false positives).
PREDICATE_FUNCTIONS = frozenset(
    {
        "CONTAINS",
        "STARTSWITH",
        "ENDSWITH",
        "STRINGEQUALS",
        "REGEXMATCH",
        "ARRAY_CONTAINS",
        "ARRAY_CONTAINS_ANY",
        "ARRAY_CONTAINS_ALL",
    }
)

AGGREGATES = {
    "COUNT": "Count",
    "SUM": "Sum",
    "MIN": "Min",
    "MAX": "Max",
    "AVG": "Average",
    "MAKELIST": "MakeList",
    "MAKESET": "MakeSet",
}


def _s(v: Any) -> bool:
    return v.__class__ is str


def _integer(v: Any) -> int | None:
    """An integral number as int (floats with a zero fraction too), else None."""
    if v.__class__ is int:
        return v
    if v.__class__ is float and v.is_integer():
        return int(v)
    return None


def _flag(args: tuple[Any, ...], index: int) -> bool | None:
    """An optional boolean flag argument; None when present but not a boolean."""
    if len(args) <= index:
        return False
    return args[index] if args[index].__class__ is bool else None


# -- type checks ---------------------------------------------------------------------------------
def _type_check(*ranks: int) -> Callable[[Any], bool]:
    return lambda v: rank(v) in ranks


def _is_integer(v: Any) -> bool:
    return v.__class__ is int and INT64_MIN <= v <= INT64_MAX


# -- strings ------------------------------------------------------------------------------------
def _string_test(op: Callable[[str, str], bool]) -> Callable[..., Any]:
    def fn(s: Any, sub: Any, *rest: Any) -> Any:
        ignore = _flag(rest, 0)
        if not (_s(s) and _s(sub)) or ignore is None:
            return UNDEFINED
        return op(s.lower(), sub.lower()) if ignore else op(s, sub)

    return fn


def _concat(*args: Any) -> Any:
    return "".join(args) if all(_s(x) for x in args) else UNDEFINED


def _index_of(s: Any, sub: Any, start: Any = 0) -> Any:
    begin = _integer(start)
    if not (_s(s) and _s(sub)) or begin is None:
        return UNDEFINED
    return s.find(sub, max(begin, 0))


def _left(s: Any, n: Any) -> Any:
    k = _integer(n)
    return s[: max(k, 0)] if _s(s) and k is not None else UNDEFINED


def _right(s: Any, n: Any) -> Any:
    k = _integer(n)
    if not _s(s) or k is None:
        return UNDEFINED
    return s[len(s) - k :] if 0 < k < len(s) else (s if k >= len(s) else "")


def _substring(s: Any, start: Any, length: Any) -> Any:
    b, n = _integer(start), _integer(length)
    if not _s(s) or b is None or n is None:
        return UNDEFINED
    b = max(b, 0)
    return s[b : b + n] if n > 0 else ""


def _trim(method: str) -> Callable[..., Any]:
    def fn(s: Any, chars: Any = None) -> Any:
        if not _s(s) or (chars is not None and not _s(chars)):
            return UNDEFINED
        return getattr(s, method)(chars)

    return fn


def _replace(s: Any, find: Any, repl: Any) -> Any:
    if not (_s(s) and _s(find) and _s(repl)):
        return UNDEFINED
    return s.replace(find, repl) if find else s


def _replicate(s: Any, n: Any) -> Any:
    if not _s(s) or not is_finite_number(n) or n < 0:
        return UNDEFINED
    out = s * int(n)
    return out if len(out) <= 10000 else UNDEFINED


_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def _regex_match(s: Any, pattern: Any, modifiers: Any = "") -> Any:
    if not (_s(s) and _s(pattern) and _s(modifiers)):
        return UNDEFINED
    flags = 0
    for ch in modifiers:
        if ch not in _REGEX_FLAGS:
            return UNDEFINED
        flags |= _REGEX_FLAGS[ch]
    try:
        return re.search(pattern, s, flags) is not None
    except re.error:
        return UNDEFINED


def _parse_json(s: Any, want: int) -> Any:
    if not _s(s):
        return UNDEFINED
    try:
        value = orjson.loads(s.strip())
    except orjson.JSONDecodeError:
        return UNDEFINED
    return value if rank(value) == want else UNDEFINED


def format_number(v: int | float) -> str:
    """Number text as ToString gives it (JavaScript-like)."""
    if v.__class__ is int:
        return str(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v.is_integer() and abs(v) < 1e21:  # type: ignore[union-attr]  # a float: ints returned above
        return str(int(v))
    text = repr(v)
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", text)


def _to_string(v: Any) -> Any:
    r = rank(v)
    if r == RANK_STRING:
        return v
    if r == RANK_NUMBER:
        return format_number(v)
    if r == RANK_BOOL:
        return "true" if v else "false"
    if r == RANK_NULL:
        return "null"
    return to_json_text(v)


def _length(s: Any) -> Any:
    return len(s) if _s(s) else UNDEFINED


def _str_map(op: Callable[[str], Any]) -> Callable[[Any], Any]:
    return lambda s: op(s) if _s(s) else UNDEFINED


# -- arrays -------------------------------------------------------------------------------------
def _is_list(v: Any) -> bool:
    return v.__class__ is list


def _contains_value(arr: list[Any], value: Any, partial: bool) -> bool:
    if partial and value.__class__ is dict:
        return any(
            item.__class__ is dict and all(k in item and deep_equal(item[k], v) for k, v in value.items())
            for item in arr
        )
    return any(deep_equal(item, value) for item in arr)


def _array_contains(arr: Any, value: Any, *rest: Any) -> Any:
    partial = _flag(rest, 0)
    if not _is_list(arr) or partial is None:
        return UNDEFINED
    return _contains_value(arr, value, partial)


def _array_contains_any(arr: Any, *values: Any) -> Any:
    return any(_contains_value(arr, v, False) for v in values) if _is_list(arr) else UNDEFINED


def _array_contains_all(arr: Any, *values: Any) -> Any:
    return all(_contains_value(arr, v, False) for v in values) if _is_list(arr) else UNDEFINED


def _array_slice(arr: Any, start: Any, length: Any = None) -> Any:
    b = _integer(start)
    n = len(arr) if length is None else _integer(length)
    if not _is_list(arr) or b is None or n is None:
        return UNDEFINED
    if b < 0:
        b = max(len(arr) + b, 0)
    return arr[b : b + n] if n > 0 else []


def _array_concat(*arrays: Any) -> Any:
    if not all(_is_list(x) for x in arrays):
        return UNDEFINED
    return [item for arr in arrays for item in arr]


def _choose(index: Any, *values: Any) -> Any:
    i = _integer(index)
    return values[i - 1] if i is not None and 1 <= i <= len(values) else UNDEFINED


def _object_to_array(obj: Any, key_name: Any = "k", value_name: Any = "v") -> Any:
    if obj.__class__ is not dict or not (_s(key_name) and _s(value_name)):
        return UNDEFINED
    return [{key_name: k, value_name: v} for k, v in obj.items()]


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for item in items:
        key = hash_key(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _set_intersect(a: Any, b: Any) -> Any:
    if not (_is_list(a) and _is_list(b)):
        return UNDEFINED
    keys = {hash_key(x) for x in b}
    return _dedupe([x for x in a if hash_key(x) in keys])


def _set_union(a: Any, b: Any) -> Any:
    return _dedupe(a + b) if _is_list(a) and _is_list(b) else UNDEFINED


# -- math ---------------------------------------------------------------------------------------
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
    return math.floor(x / size) * size


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


def _iif(cond: Any, then: Any, otherwise: Any) -> Any:
    return then if cond is True else otherwise


def _b(name: str, lo: int, hi: int | None, impl: Callable[..., Any], strict: bool = True) -> Builtin:
    return Builtin(name, lo, hi, impl, strict)


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

FUNCTIONS: dict[str, Builtin] = {
    **{
        name: _b(name, 1, 1, _type_check(*ranks), strict=False)
        for name, ranks in {
            "IS_DEFINED": (RANK_NULL, RANK_BOOL, RANK_NUMBER, RANK_STRING, RANK_ARRAY, RANK_OBJECT),
            "IS_NULL": (RANK_NULL,),
            "IS_BOOL": (RANK_BOOL,),
            "IS_NUMBER": (RANK_NUMBER,),
            "IS_STRING": (RANK_STRING,),
            "IS_ARRAY": (RANK_ARRAY,),
            "IS_OBJECT": (RANK_OBJECT,),
            "IS_PRIMITIVE": (RANK_NULL, RANK_BOOL, RANK_NUMBER, RANK_STRING),
        }.items()
    },
    "IS_FINITE_NUMBER": _b("IS_FINITE_NUMBER", 1, 1, is_finite_number, strict=False),
    "IS_INTEGER": _b("IS_INTEGER", 1, 1, _is_integer, strict=False),
    "IIF": _b("IIF", 3, 3, _iif, strict=False),
    # strings
    "CONCAT": _b("CONCAT", 2, None, _concat),
    "CONTAINS": _b("CONTAINS", 2, 3, _string_test(lambda s, t: t in s)),
    "STARTSWITH": _b("STARTSWITH", 2, 3, _string_test(str.startswith)),
    "ENDSWITH": _b("ENDSWITH", 2, 3, _string_test(str.endswith)),
    "STRINGEQUALS": _b("STRINGEQUALS", 2, 3, _string_test(str.__eq__)),
    "INDEX_OF": _b("INDEX_OF", 2, 3, _index_of),
    "LEFT": _b("LEFT", 2, 2, _left),
    "RIGHT": _b("RIGHT", 2, 2, _right),
    "SUBSTRING": _b("SUBSTRING", 3, 3, _substring),
    "LENGTH": _b("LENGTH", 1, 1, _length),
    "LOWER": _b("LOWER", 1, 1, _str_map(str.lower)),
    "UPPER": _b("UPPER", 1, 1, _str_map(str.upper)),
    "REVERSE": _b("REVERSE", 1, 1, _str_map(lambda s: s[::-1])),
    "LTRIM": _b("LTRIM", 1, 2, _trim("lstrip")),
    "RTRIM": _b("RTRIM", 1, 2, _trim("rstrip")),
    "TRIM": _b("TRIM", 1, 2, _trim("strip")),
    "REPLACE": _b("REPLACE", 3, 3, _replace),
    "REPLICATE": _b("REPLICATE", 2, 2, _replicate),
    "REGEXMATCH": _b("REGEXMATCH", 2, 3, _regex_match),
    "STRINGTONUMBER": _b("STRINGTONUMBER", 1, 1, lambda s: _parse_json(s, RANK_NUMBER)),
    "STRINGTOBOOLEAN": _b("STRINGTOBOOLEAN", 1, 1, lambda s: _parse_json(s, RANK_BOOL)),
    "STRINGTONULL": _b("STRINGTONULL", 1, 1, lambda s: _parse_json(s, RANK_NULL)),
    "STRINGTOARRAY": _b("STRINGTOARRAY", 1, 1, lambda s: _parse_json(s, RANK_ARRAY)),
    "STRINGTOOBJECT": _b("STRINGTOOBJECT", 1, 1, lambda s: _parse_json(s, RANK_OBJECT)),
    "TOSTRING": _b("TOSTRING", 1, 1, _to_string),
    # arrays
    "ARRAY_CONTAINS": _b("ARRAY_CONTAINS", 2, 3, _array_contains),
    "ARRAY_CONTAINS_ANY": _b("ARRAY_CONTAINS_ANY", 2, None, _array_contains_any),
    "ARRAY_CONTAINS_ALL": _b("ARRAY_CONTAINS_ALL", 2, None, _array_contains_all),
    "ARRAY_LENGTH": _b("ARRAY_LENGTH", 1, 1, lambda x: len(x) if _is_list(x) else UNDEFINED),
    "ARRAY_SLICE": _b("ARRAY_SLICE", 2, 3, _array_slice),
    "ARRAY_CONCAT": _b("ARRAY_CONCAT", 2, None, _array_concat),
    "CHOOSE": _b("CHOOSE", 2, None, _choose),
    "OBJECTTOARRAY": _b("OBJECTTOARRAY", 1, 3, _object_to_array),
    "SETINTERSECT": _b("SETINTERSECT", 2, 2, _set_intersect),
    "SETUNION": _b("SETUNION", 2, 2, _set_union),
    # math
    **{name: _b(name, 1, 1, _math(op)) for name, op in _MATH1.items()},
    "POWER": _b("POWER", 2, 2, _math(_power)),
    "LOG": _b("LOG", 1, 2, _math(_log)),
    "ATN2": _b("ATN2", 2, 2, _math(lambda x, y: math.atan2(y, x))),
    "PI": _b("PI", 0, 0, lambda: math.pi),
    "RAND": _b("RAND", 0, 0, random.random),
    "NUMBERBIN": _b("NUMBERBIN", 1, 2, _number_bin),
    "INTADD": _b("INTADD", 2, 2, _int_op(lambda a, b: a + b)),
    "INTSUB": _b("INTSUB", 2, 2, _int_op(lambda a, b: a - b)),
    "INTMUL": _b("INTMUL", 2, 2, _int_op(lambda a, b: a * b)),
    "INTDIV": _b("INTDIV", 2, 2, _int_op(_int_div)),
    "INTMOD": _b("INTMOD", 2, 2, _int_op(_int_mod)),
    "INTBITAND": _b("INTBITAND", 2, 2, _int_op(lambda a, b: a & b)),
    "INTBITOR": _b("INTBITOR", 2, 2, _int_op(lambda a, b: a | b)),
    "INTBITXOR": _b("INTBITXOR", 2, 2, _int_op(lambda a, b: a ^ b)),
    "INTBITNOT": _b("INTBITNOT", 1, 1, _int_op(lambda a: ~a)),
    "INTBITLEFTSHIFT": _b("INTBITLEFTSHIFT", 2, 2, _int_op(lambda a, b: a << b if 0 <= b < 64 else 0)),
    "INTBITRIGHTSHIFT": _b("INTBITRIGHTSHIFT", 2, 2, _int_op(lambda a, b: a >> b if 0 <= b < 64 else 0)),
    # dates
    **{name: _b(name, lo, hi, impl) for name, (lo, hi, impl) in dt.DATE_FUNCTIONS.items()},
}

# Aggregates are checked for arity like functions but evaluated by the executor.
AGGREGATE_ARITY = {name: _b(name, 1, 1, lambda x: x) for name in AGGREGATES}


def lookup(name: str) -> Builtin | None:
    """The built-in or aggregate called `name` (upper case), or None."""
    return FUNCTIONS.get(name) or AGGREGATE_ARITY.get(name)
