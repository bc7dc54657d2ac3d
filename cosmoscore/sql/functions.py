"""Built-in scalar functions: the registry (name, arity, implementation) the parser, checks and compiler use.

The implementations live by kind: `strings.py`, `arrays.py`, `numbers.py`, `datetimes.py`, `spatial.py`. To add a
function: write `_fn(args...) -> value` there, returning UNDEFINED for a wrong type, and add it to that
module's table (`STRING_FUNCTIONS`, ...) with its arity. `strict` functions are not called when an argument is undefined
(cosmos-sql-semantics §3.2); only the IS_* checks and IIF see undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import datetimes as dt
from .arrays import ARRAY_FUNCTIONS
from .numbers import NUMBER_FUNCTIONS
from .spatial import PREPARED_ARGUMENTS, SPATIAL_FUNCTIONS
from .strings import STRING_FUNCTIONS
from .values import (
    INT64_MAX,
    INT64_MIN,
    RANK_ARRAY,
    RANK_BOOL,
    RANK_NULL,
    RANK_NUMBER,
    RANK_OBJECT,
    RANK_STRING,
    is_finite_number,
    rank,
)


@dataclass(frozen=True)
class Builtin:
    name: str
    min_args: int
    max_args: int | None  # None: no upper bound
    impl: Callable[..., Any]
    strict: bool = True
    prepare: Callable[[Any], Any] | None = None  # applied once to a constant argument, at compile time

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


# -- type checks ---------------------------------------------------------------------------------
def _type_check(*ranks: int) -> Callable[[Any], bool]:
    return lambda v: rank(v) in ranks


def _is_integer(v: Any) -> bool:
    return v.__class__ is int and INT64_MIN <= v <= INT64_MAX


def _iif(cond: Any, then: Any, otherwise: Any) -> Any:
    return then if cond is True else otherwise


def _b(name: str, lo: int, hi: int | None, impl: Callable[..., Any], strict: bool = True) -> Builtin:
    return Builtin(name, lo, hi, impl, strict)


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
    **{
        name: Builtin(name, lo, hi, impl, prepare=PREPARED_ARGUMENTS.get(name))
        for table in (STRING_FUNCTIONS, ARRAY_FUNCTIONS, NUMBER_FUNCTIONS, dt.DATE_FUNCTIONS, SPATIAL_FUNCTIONS)
        for name, (lo, hi, impl) in table.items()
    },
}

# Aggregates are checked for arity like functions but evaluated by the executor.
AGGREGATE_ARITY = {name: _b(name, 1, 1, lambda x: x) for name in AGGREGATES}


def lookup(name: str) -> Builtin | None:
    """The built-in or aggregate called `name` (upper case), or None."""
    return FUNCTIONS.get(name) or AGGREGATE_ARITY.get(name)
