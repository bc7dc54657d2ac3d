"""KQL scalar expressions, checked against a table's columns and compiled to row functions.

Each expression gets its Kusto type statically (so a result's columns are typed even with no rows) and
a `measure` mark: the stand-in's rows are per-minute aggregates (`tables`), and a *measure* column
(RequestCharge) holds a minute's sum. Only additive uses of a measure are exact on such rows (the
column itself, `todouble` of it, inside `sum`); anything else that touches a measure is marked OTHER
and refused by the operator using it, never evaluated into a wrong number.
"""

from __future__ import annotations

import datetime as dt
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emulator.monitor.kql.ast import BinOp, Call, Col, Expr, InList, Lit, Star, not_supported, semantic

Row = dict[str, Any]
NONE, ADDITIVE, OTHER = 0, 1, 2  # how an expression uses measure columns
NUMERIC = ("int", "long", "real")
AGGREGATES = frozenset(
    {"count", "countif", "sum", "sumif", "avg", "max", "min", "dcount", "dcountif", "arg_max", "arg_min"}
)
FUNCTIONS = "todouble, toreal, toint, tolong, tostring, bin, floor, ago, now, round, not, isempty, isnotempty, iff"
_KUSTO_MIN = dt.datetime(1, 1, 1, tzinfo=dt.UTC)  # bin() rounds from 0001-01-01, as Kusto's ticks do
PER_MINUTE = "the ruscope stand-in keeps per-minute aggregates, not per-request rows"


@dataclass(frozen=True)
class Column:
    type: str
    measure: bool = False
    unbacked: str = ""  # why the stand-in cannot fill a column the service's table has ("": it can)


@dataclass(frozen=True)
class Compiled:
    type: str
    fn: Callable[[Row], Any]
    measure: int = NONE


@dataclass(frozen=True)
class Scope:
    """What an expression may refer to: the columns, the query's `now` and the operator (for messages)."""

    columns: dict[str, Column]
    now: dt.datetime
    where: str
    resolution: int = 60  # seconds a source row's time stands for: a time bin is a whole multiple of it


def compile_expr(node: Expr, scope: Scope) -> Compiled:
    """Type-check `node` against `scope` and return its row function."""
    if isinstance(node, Col):
        column = scope.columns.get(node.name)
        if column is None:
            raise semantic(f"'{scope.where}' operator: Failed to resolve scalar expression named '{node.name}'")
        name = node.name
        if column.unbacked:
            raise not_supported(f"'{scope.where}' operator: '{name}': {column.unbacked}")
        return Compiled(column.type, lambda row: row.get(name), ADDITIVE if column.measure else NONE)
    if isinstance(node, Lit):
        value = node.value
        return Compiled(node.type, lambda row: value)
    if isinstance(node, BinOp):
        return _binop(node, scope)
    if isinstance(node, InList):
        return _in_list(node, scope)
    if isinstance(node, Call):
        if node.name in AGGREGATES:
            raise semantic(f"'{node.name}' may only be used in the 'summarize' operator", "SEM0222")
        return _call(node, scope)
    if isinstance(node, Star):
        raise semantic(f"'{scope.where}' operator: '*' is only allowed in arg_max/arg_min", "SEM0002")
    raise not_supported(f"expression {node!r}")


def constant(node: Expr, now: dt.datetime) -> Any:
    """The value of an expression that uses no column (KqlError if it does)."""
    return compile_expr(node, Scope({}, now, "constant")).fn({})


def uses_columns(node: Any) -> bool:
    return bool(columns_in(node))


def columns_in(node: Any) -> frozenset[str]:
    """The names of the columns an expression refers to."""
    if isinstance(node, Col):
        return frozenset({node.name})
    parts: list[Any] = []
    if isinstance(node, BinOp):
        parts = [node.left, node.right]
    elif isinstance(node, InList):
        parts = [node.value, *node.items]
    elif isinstance(node, Call):
        parts = list(node.args)
    return frozenset().union(*(columns_in(p) for p in parts))


def _mix(*parts: Compiled) -> int:
    return OTHER if any(p.measure for p in parts) else NONE


def _cmp_family(t: str) -> str:
    return "number" if t in NUMERIC else t


def _check_comparable(a: Compiled, b: Compiled, op: str) -> None:
    if _cmp_family(a.type) != _cmp_family(b.type):
        raise semantic(
            f"Cannot compare values of types {a.type} and {b.type} with '{op}'. Try adding explicit casts", "SEM0025"
        )


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=~": lambda a, b: str(a).casefold() == str(b).casefold(),
    "!~": lambda a, b: str(a).casefold() != str(b).casefold(),
}


def has_term(text: str, term: str) -> bool:
    """Kusto's `has`: `term` found in `text` at term boundaries, case-insensitively. A string is "broken into
    maximal sequences of alphanumeric characters", each a term (azure-monitor.md §7b R72), so `term` must
    neither start after nor end before an alphanumeric character of `text`."""
    pattern = r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


# Kusto's string operators (§7b R72): case-insensitive, both sides strings
_STRING_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "has": has_term,
    "!has": lambda a, b: not has_term(a, b),
    "contains": lambda a, b: b.casefold() in a.casefold(),
    "!contains": lambda a, b: b.casefold() not in a.casefold(),
}


def _string_operator(op: str, a: Compiled, b: Compiled) -> Compiled:
    """`a has b` and the like; a null string is Kusto's empty string (strings are never null)."""
    if a.type != "string" or b.type != "string":
        raise semantic(f"'{op}' compares strings, not {a.type} and {b.type}", "SEM0025")
    test, fa, fb = _STRING_OPERATORS[op], a.fn, b.fn
    return Compiled("bool", lambda r: test(str(fa(r) or ""), str(fb(r) or "")), _mix(a, b))


def _binop(node: BinOp, scope: Scope) -> Compiled:
    a, b = compile_expr(node.left, scope), compile_expr(node.right, scope)
    fa, fb, op = a.fn, b.fn, node.op
    if op in ("and", "or"):
        if a.type != "bool" or b.type != "bool":
            raise semantic(f"'{op}' needs bool operands, not {a.type} and {b.type}", "SEM0025")
        if op == "and":
            return Compiled("bool", lambda r: bool(fa(r)) and bool(fb(r)), _mix(a, b))
        return Compiled("bool", lambda r: bool(fa(r)) or bool(fb(r)), _mix(a, b))
    if op in _STRING_OPERATORS:
        return _string_operator(op, a, b)
    if op in _COMPARE:
        if op in ("=~", "!~") and (a.type != "string" or b.type != "string"):
            raise semantic(f"'{op}' compares strings, not {a.type} and {b.type}", "SEM0025")
        _check_comparable(a, b, op)
        test = _COMPARE[op]

        def compare(r: Row) -> bool:
            x, y = fa(r), fb(r)
            return x is not None and y is not None and test(x, y)

        return Compiled("bool", compare, _mix(a, b))
    return _arith(op, a, b)


def _arith_type(op: str, a: str, b: str) -> str | None:
    if a in NUMERIC and b in NUMERIC:
        return "real" if "real" in (a, b) else "long"
    if op in "+-" and {a, b} == {"datetime", "timespan"} and not (op == "-" and a == "timespan"):
        return "datetime"
    if op == "-" and a == b == "datetime":
        return "timespan"
    if op in "+-" and a == b == "timespan":
        return "timespan"
    if op in "*/" and a == "timespan" and b in NUMERIC:
        return "timespan"
    return None


def _arith(op: str, a: Compiled, b: Compiled) -> Compiled:
    result = _arith_type(op, a.type, b.type)
    if result is None:
        raise semantic(f"Operator '{op}' is not defined for {a.type} and {b.type}", "SEM0025")
    fa, fb = a.fn, b.fn
    integral = result == "long"

    def apply(r: Row) -> Any:
        x, y = fa(r), fb(r)
        if x is None or y is None:
            return None
        if op == "+":
            return x + y
        if op == "-":
            return x - y
        if op == "*":
            return x * y
        if y == 0:
            return None
        if op == "%":
            return math.fmod(x, y) if not integral else int(math.fmod(x, y))
        return int(x / y) if integral else x / y  # Kusto: long / long truncates toward zero

    return Compiled(result, apply, _mix(a, b))


def _in_list(node: InList, scope: Scope) -> Compiled:
    value = compile_expr(node.value, scope)
    items = []
    for item in node.items:
        if uses_columns(item):
            raise not_supported("'in' takes a list of constants in the ruscope stand-in")
        compiled = compile_expr(item, scope)
        _check_comparable(value, compiled, "in")
        items.append(compiled.fn({}))
    members, negated, fv = frozenset(items), node.negated, value.fn

    def test(r: Row) -> bool:
        x = fv(r)
        return x is not None and ((x in members) != negated)

    return Compiled("bool", test, _mix(value))


def _to_real(x: Any) -> float | None:
    if x is None or isinstance(x, dt.datetime | dt.timedelta):
        return None
    try:
        return float(x)
    except ValueError:
        return None


def _to_long(x: Any) -> int | None:
    value = _to_real(x)
    return None if value is None or math.isnan(value) or math.isinf(value) else int(value)


def to_text(x: Any) -> str:
    """`tostring` as Kusto writes values: ISO datetimes, lower-case bools, "" for null."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, dt.datetime):
        return x.strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace(".000000Z", "Z")
    if isinstance(x, dt.timedelta):
        return format_timespan(x)
    return str(x)


def format_timespan(x: dt.timedelta) -> str:
    """Kusto's `[d.]hh:mm:ss[.fffffff]`."""
    sign = "-" if x < dt.timedelta(0) else ""
    x = abs(x)
    hours, rest = divmod(x.seconds, 3600)
    text = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    if x.microseconds:
        text += f".{x.microseconds:06d}0"
    return sign + (f"{x.days}.{text}" if x.days else text)


def _bin(value: Compiled, span: Any, scope: Scope) -> Compiled:
    fv = value.fn
    if value.type == "datetime" and isinstance(span, dt.timedelta):
        if span <= dt.timedelta(0) or span.total_seconds() % scope.resolution:
            if scope.resolution == 1:
                raise not_supported(f"bin(..., {format_timespan(span)}): time bins are whole seconds on this table")
            raise not_supported(f"bin(..., {format_timespan(span)}): time bins must be whole minutes, as {PER_MINUTE}")

        def bin_time(r: Row) -> Any:
            x = fv(r)
            return None if x is None else _KUSTO_MIN + ((x - _KUSTO_MIN) // span) * span

        return Compiled("datetime", bin_time, _mix(value))
    if value.type in NUMERIC and isinstance(span, int | float) and not isinstance(span, bool) and span > 0:
        kind = value.type if value.type == "real" or isinstance(span, int) else "real"

        def bin_number(r: Row) -> Any:
            x = fv(r)
            return None if x is None else (math.floor(x / span) * span)

        return Compiled(kind, bin_number, _mix(value))
    raise semantic(f"bin(): cannot round a {value.type} by {span!r}", "SEM0025")


def _call(node: Call, scope: Scope) -> Compiled:  # noqa: PLR0911 - one branch per function
    name, args = node.name, [compile_expr(a, scope) for a in node.args]
    arity = {"now": (0, 1), "ago": (1, 1), "round": (1, 2), "iff": (3, 3), "bin": (2, 2), "floor": (2, 2)}
    low, high = arity.get(name, (1, 1))
    if not low <= len(args) <= high:
        raise semantic(f"Function '{name}' expects {low} to {high} argument(s), got {len(args)}", "SEM0219")
    first = args[0].fn if args else None
    if name in ("todouble", "toreal"):
        assert first is not None
        return Compiled("real", lambda r: _to_real(first(r)), ADDITIVE if args[0].measure == ADDITIVE else _mix(*args))
    if name in ("toint", "tolong"):
        assert first is not None
        return Compiled("int" if name == "toint" else "long", lambda r: _to_long(first(r)), _mix(*args))
    if name == "tostring":
        assert first is not None
        return Compiled("string", lambda r: to_text(first(r)), _mix(*args))
    if name in ("bin", "floor"):
        if uses_columns(node.args[1]):
            raise semantic("bin(): the bin size must be a constant", "SEM0025")
        return _bin(args[0], args[1].fn({}), scope)
    if name == "now":
        offset = args[0].fn({}) if args else dt.timedelta(0)
        return Compiled("datetime", lambda r: scope.now + offset)
    if name == "ago":
        span = args[0].fn({})
        if not isinstance(span, dt.timedelta):
            raise semantic("ago() takes a timespan", "SEM0025")
        return Compiled("datetime", lambda r: scope.now - span)
    if name == "round":
        digits = args[1].fn({}) if len(args) > 1 else 0
        if not isinstance(digits, int) or isinstance(digits, bool):
            raise semantic(f"round(): the precision (argument 2) must be an int, not {to_text(digits)}", "SEM0219")
        assert first is not None
        return Compiled("real", lambda r: None if (x := _to_real(first(r))) is None else round(x, digits), _mix(*args))
    if name == "not":
        assert first is not None
        return Compiled("bool", lambda r: not first(r), _mix(*args))
    if name in ("isempty", "isnotempty"):
        assert first is not None
        empty = name == "isempty"
        return Compiled("bool", lambda r: (first(r) in (None, "")) == empty, _mix(*args))
    if name == "iff":
        cond, yes, no = (a.fn for a in args)
        return Compiled(args[1].type, lambda r: yes(r) if cond(r) else no(r), _mix(*args))
    raise not_supported(f"Function '{name}' is not supported by the ruscope stand-in (supported: {FUNCTIONS})")
