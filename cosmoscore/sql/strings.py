"""String built-ins (cosmos-sql-semantics §3): pure implementations returning UNDEFINED for a wrong type."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import orjson

from . import bounds
from .ast import UNDEFINED
from .patterns import regex_search
from .values import (
    RANK_ARRAY,
    RANK_BOOL,
    RANK_NULL,
    RANK_NUMBER,
    RANK_OBJECT,
    RANK_STRING,
    as_integer,
    flag_arg,
    is_finite_number,
    is_str,
    rank,
    to_json_text,
)


def _string_test(op: Callable[[str, str], bool]) -> Callable[..., Any]:
    def fn(s: Any, sub: Any, *rest: Any) -> Any:
        ignore = flag_arg(rest, 0)
        if not (is_str(s) and is_str(sub)) or ignore is None:
            return UNDEFINED
        return op(s.lower(), sub.lower()) if ignore else op(s, sub)

    return fn


def _concat(*args: Any) -> Any:
    if not all(is_str(x) for x in args) or sum(len(x) for x in args) > bounds.LIMITS.max_string_chars:
        return UNDEFINED
    return "".join(args)


def _index_of(s: Any, sub: Any, start: Any = 0) -> Any:
    begin = as_integer(start)
    if not (is_str(s) and is_str(sub)) or begin is None:
        return UNDEFINED
    return s.find(sub, max(begin, 0))


def _left(s: Any, n: Any) -> Any:
    k = as_integer(n)
    return s[: max(k, 0)] if is_str(s) and k is not None else UNDEFINED


def _right(s: Any, n: Any) -> Any:
    k = as_integer(n)
    if not is_str(s) or k is None:
        return UNDEFINED
    return s[len(s) - k :] if 0 < k < len(s) else (s if k >= len(s) else "")


def _substring(s: Any, start: Any, length: Any) -> Any:
    b, n = as_integer(start), as_integer(length)
    if not is_str(s) or b is None or n is None:
        return UNDEFINED
    b = max(b, 0)
    return s[b : b + n] if n > 0 else ""


def _trim(method: str) -> Callable[..., Any]:
    def fn(s: Any, chars: Any = None) -> Any:
        if not is_str(s) or (chars is not None and not is_str(chars)):
            return UNDEFINED
        return getattr(s, method)(chars)

    return fn


def _replace(s: Any, find: Any, repl: Any) -> Any:
    if not (is_str(s) and is_str(find) and is_str(repl)):
        return UNDEFINED
    if not find:
        return s
    if len(repl) > len(find) and len(s) + s.count(find) * (len(repl) - len(find)) > bounds.LIMITS.max_string_chars:
        return UNDEFINED  # sized before it is built
    return s.replace(find, repl)


def _replicate(s: Any, n: Any) -> Any:
    """cosmos-sql-semantics §3: a result over 10,000 characters is undefined; sized before it is built."""
    if not is_str(s) or not is_finite_number(n) or n < 0:
        return UNDEFINED
    count = int(n)
    if len(s) * count > bounds.LIMITS.max_replicate_chars:
        return UNDEFINED
    return s * count if s else ""  # '' * 1e308 would not fit an index


_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


def _regex_match(s: Any, pattern: Any, modifiers: Any = "") -> Any:
    if not (is_str(s) and is_str(pattern) and is_str(modifiers)):
        return UNDEFINED
    flags = 0
    for ch in modifiers:
        if ch not in _REGEX_FLAGS:
            return UNDEFINED
        flags |= _REGEX_FLAGS[ch]
    found = regex_search(pattern, flags, s)
    return UNDEFINED if found is None else found


def _parse_json(s: Any, want: int) -> Any:
    if not is_str(s):
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
    return len(s) if is_str(s) else UNDEFINED


def _str_map(op: Callable[[str], Any]) -> Callable[[Any], Any]:
    return lambda s: op(s) if is_str(s) else UNDEFINED


STRING_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Any]]] = {
    "CONCAT": (2, None, _concat),
    "CONTAINS": (2, 3, _string_test(lambda s, t: t in s)),
    "STARTSWITH": (2, 3, _string_test(str.startswith)),
    "ENDSWITH": (2, 3, _string_test(str.endswith)),
    "STRINGEQUALS": (2, 3, _string_test(str.__eq__)),
    "INDEX_OF": (2, 3, _index_of),
    "LEFT": (2, 2, _left),
    "RIGHT": (2, 2, _right),
    "SUBSTRING": (3, 3, _substring),
    "LENGTH": (1, 1, _length),
    "LOWER": (1, 1, _str_map(str.lower)),
    "UPPER": (1, 1, _str_map(str.upper)),
    "REVERSE": (1, 1, _str_map(lambda s: s[::-1])),
    "LTRIM": (1, 2, _trim("lstrip")),
    "RTRIM": (1, 2, _trim("rstrip")),
    "TRIM": (1, 2, _trim("strip")),
    "REPLACE": (3, 3, _replace),
    "REPLICATE": (2, 2, _replicate),
    "REGEXMATCH": (2, 3, _regex_match),
    "STRINGTONUMBER": (1, 1, lambda s: _parse_json(s, RANK_NUMBER)),
    "STRINGTOBOOLEAN": (1, 1, lambda s: _parse_json(s, RANK_BOOL)),
    "STRINGTONULL": (1, 1, lambda s: _parse_json(s, RANK_NULL)),
    "STRINGTOARRAY": (1, 1, lambda s: _parse_json(s, RANK_ARRAY)),
    "STRINGTOOBJECT": (1, 1, lambda s: _parse_json(s, RANK_OBJECT)),
    "TOSTRING": (1, 1, _to_string),
}
