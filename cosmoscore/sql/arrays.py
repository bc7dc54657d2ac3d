"""Array and set built-ins (cosmos-sql-semantics §3): pure implementations returning UNDEFINED for a wrong type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ast import UNDEFINED
from .values import as_integer, deep_equal, flag_arg, hash_key, is_str


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
    partial = flag_arg(rest, 0)
    if not _is_list(arr) or partial is None:
        return UNDEFINED
    return _contains_value(arr, value, partial)


def _array_contains_any(arr: Any, *values: Any) -> Any:
    return any(_contains_value(arr, v, False) for v in values) if _is_list(arr) else UNDEFINED


def _array_contains_all(arr: Any, *values: Any) -> Any:
    return all(_contains_value(arr, v, False) for v in values) if _is_list(arr) else UNDEFINED


def _array_slice(arr: Any, start: Any, length: Any = None) -> Any:
    if not _is_list(arr):
        return UNDEFINED
    b = as_integer(start)
    n = len(arr) if length is None else as_integer(length)
    if b is None or n is None:
        return UNDEFINED
    if b < 0:
        b = max(len(arr) + b, 0)
    return arr[b : b + n] if n > 0 else []


def _array_concat(*arrays: Any) -> Any:
    if not all(_is_list(x) for x in arrays):
        return UNDEFINED
    return [item for arr in arrays for item in arr]


def _choose(index: Any, *values: Any) -> Any:
    i = as_integer(index)
    return values[i - 1] if i is not None and 1 <= i <= len(values) else UNDEFINED


def _object_to_array(obj: Any, key_name: Any = "k", value_name: Any = "v") -> Any:
    if obj.__class__ is not dict or not (is_str(key_name) and is_str(value_name)):
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


ARRAY_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Any]]] = {
    "ARRAY_CONTAINS": (2, 3, _array_contains),
    "ARRAY_CONTAINS_ANY": (2, None, _array_contains_any),
    "ARRAY_CONTAINS_ALL": (2, None, _array_contains_all),
    "ARRAY_LENGTH": (1, 1, lambda x: len(x) if _is_list(x) else UNDEFINED),
    "ARRAY_SLICE": (2, 3, _array_slice),
    "ARRAY_CONCAT": (2, None, _array_concat),
    "CHOOSE": (2, None, _choose),
    "OBJECTTOARRAY": (1, 3, _object_to_array),
    "SETINTERSECT": (2, 2, _set_intersect),
    "SETUNION": (2, 2, _set_union),
}
