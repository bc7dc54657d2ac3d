"""The value model: type order, type-strict equality, ordering and hashable keys.

Python's `True == 1` and `[1] == [True]` are wrong for Cosmos, so equality between containers is
done here, element by element, with the type rank checked first.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from .ast import UNDEFINED

# Ascending type order (cosmos-sql-semantics §3.6): undefined < null < boolean < number < string
# < array < object.
RANK_UNDEFINED, RANK_NULL, RANK_BOOL, RANK_NUMBER, RANK_STRING, RANK_ARRAY, RANK_OBJECT = range(7)
_RANKS = {
    type(None): RANK_NULL,
    bool: RANK_BOOL,
    int: RANK_NUMBER,
    float: RANK_NUMBER,
    str: RANK_STRING,
    list: RANK_ARRAY,
    tuple: RANK_ARRAY,
    dict: RANK_OBJECT,
}


def rank(value: Any) -> int:
    """Type rank of a value; anything unknown (UNDEFINED) ranks lowest."""
    return _RANKS.get(value.__class__, RANK_UNDEFINED)


def is_number(value: Any) -> bool:
    cls = value.__class__
    return cls is int or cls is float


def equal(x: Any, y: Any) -> Any:
    """SQL `=`: true/false for the same type, undefined across types or with undefined."""
    rx, ry = rank(x), rank(y)
    if rx != ry or rx == RANK_UNDEFINED:
        return UNDEFINED
    return deep_equal(x, y)


def deep_equal(x: Any, y: Any) -> bool:
    """Type-strict deep equality; object property order does not matter."""
    rx = rank(x)
    if rx != rank(y):
        return False
    if rx == RANK_ARRAY:
        return len(x) == len(y) and all(deep_equal(i, j) for i, j in zip(x, y))
    if rx == RANK_OBJECT:
        return len(x) == len(y) and all(k in y and deep_equal(v, y[k]) for k, v in x.items())
    same: bool = x == y
    return same


def compare(x: Any, y: Any) -> Any:
    """-1/0/1 for two primitives of one type; UNDEFINED across types, for undefined, arrays, objects."""
    rx = rank(x)
    if rx != rank(y) or rx in (RANK_UNDEFINED, RANK_ARRAY, RANK_OBJECT):
        return UNDEFINED
    if rx == RANK_NULL:
        return 0
    return (x > y) - (x < y)


def sort_key(value: Any) -> tuple[Any, ...]:
    """A total order over all values for ORDER BY, MIN/MAX: type rank first, then value.

    Arrays and objects (ordered by an internal hash in the service) order by their canonical JSON.
    """
    r = rank(value)
    if r in (RANK_NUMBER, RANK_STRING):
        return (r, value)
    if r == RANK_BOOL:
        return (r, int(value))
    if r >= RANK_ARRAY:
        return (r, canonical_json(value))
    return (r, 0)


def canonical_json(value: Any) -> bytes:
    """Compact JSON with sorted keys, equal for equal values: an ordering or a cache key. Right-sized,
    since these are kept: orjson >= 3.12 returns a buffer of at least 4 KB whatever the text's length
    (home-assistant/core#181240). Raises TypeError for a value JSON cannot hold."""
    return bytes(memoryview(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)))


def hash_key(value: Any) -> Any:
    """A hashable key equal exactly when `deep_equal` is: for GROUP BY and DISTINCT."""
    cls = value.__class__
    if cls is str:
        return value
    if cls is int or cls is float:
        return (RANK_NUMBER, value)
    if cls is bool:
        return (RANK_BOOL, value)
    if value is None:
        return (RANK_NULL,)
    if cls is list or cls is tuple:
        return (RANK_ARRAY, tuple(hash_key(v) for v in value))
    if cls is dict:
        return (RANK_OBJECT, frozenset((k, hash_key(v)) for k, v in value.items()))
    return (RANK_UNDEFINED,)


def is_finite_number(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


def to_json_text(value: Any) -> str:
    """Compact JSON as ToString renders arrays and objects."""
    return orjson.dumps(value).decode("utf-8")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def is_str(v: Any) -> bool:
    return v.__class__ is str


def as_integer(v: Any) -> int | None:
    """An integral number as int (floats with a zero fraction too), else None."""
    if v.__class__ is int:
        return v
    if v.__class__ is float and v.is_integer():
        return int(v)
    return None


def flag_arg(args: tuple[Any, ...], index: int) -> bool | None:
    """An optional boolean flag argument; None when present but not a boolean."""
    if len(args) <= index:
        return False
    return args[index] if args[index].__class__ is bool else None
