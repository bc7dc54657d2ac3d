"""Date and time built-ins over `YYYY-MM-DDThh:mm:ss.fffffffZ` strings, computed in 100 ns ticks.

Python's datetime stops at microseconds; the service keeps seven fractional digits, so values are
carried as integer ticks since 0001-01-01 and only the calendar part goes through `datetime.date`.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Callable
from datetime import date
from typing import Any, cast

from .ast import UNDEFINED

TICK = 1
MICROSECOND = 10
MILLISECOND = 10_000
SECOND = 10_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
UNIX_EPOCH = (date(1970, 1, 1).toordinal() - 1) * DAY
MAX_TICKS = (date(9999, 12, 31).toordinal()) * DAY - 1

_PARTS = {
    "year": "year",
    "yyyy": "year",
    "yy": "year",
    "month": "month",
    "mm": "month",
    "m": "month",
    "day": "day",
    "dd": "day",
    "d": "day",
    "hour": "hour",
    "hh": "hour",
    "minute": "minute",
    "mi": "minute",
    "n": "minute",
    "second": "second",
    "ss": "second",
    "s": "second",
    "millisecond": "millisecond",
    "ms": "millisecond",
    "microsecond": "microsecond",
    "mcs": "microsecond",
    "nanosecond": "nanosecond",
    "ns": "nanosecond",
}
_UNIT = {
    "day": DAY,
    "hour": HOUR,
    "minute": MINUTE,
    "second": SECOND,
    "millisecond": MILLISECOND,
    "microsecond": MICROSECOND,
}
_FORMAT = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z?")


def part_name(value: Any) -> str | None:
    return _PARTS.get(value.lower()) if value.__class__ is str else None


def parse_ticks(text: Any) -> int | None:
    """Ticks since 0001-01-01 for a round-trip date string, or None if it is not one."""
    if text.__class__ is not str:
        return None
    m = _FORMAT.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if h > 23 or mi > 59 or s > 59:
        return None
    try:
        days = date(y, mo, d).toordinal() - 1
    except ValueError:
        return None
    frac = int((m.group(7) or "0").ljust(7, "0"))
    return days * DAY + h * HOUR + mi * MINUTE + s * SECOND + frac


def format_ticks(ticks: int) -> Any:
    if not 0 <= ticks <= MAX_TICKS:
        return UNDEFINED
    days, rem = divmod(ticks, DAY)
    day = date.fromordinal(days + 1)
    h, rem = divmod(rem, HOUR)
    mi, rem = divmod(rem, MINUTE)
    s, frac = divmod(rem, SECOND)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}T{h:02d}:{mi:02d}:{s:02d}.{frac:07d}Z"


def _whole(n: Any) -> int | None:
    if n.__class__ is int:
        return n
    if n.__class__ is float and n.is_integer():
        return int(n)
    return None


def _add_months(ticks: int, months: int) -> int | None:
    days, rem = divmod(ticks, DAY)
    day = date.fromordinal(days + 1)
    total = day.year * 12 + day.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        return None
    dom = min(day.day, calendar.monthrange(year, month + 1)[1])
    return (date(year, month + 1, dom).toordinal() - 1) * DAY + rem


def date_time_add(part: Any, number: Any, text: Any) -> Any:
    name, n, ticks = part_name(part), _whole(number), parse_ticks(text)
    if name is None or n is None or ticks is None:
        return UNDEFINED
    if name in ("year", "month"):
        moved = _add_months(ticks, n * 12 if name == "year" else n)
        return UNDEFINED if moved is None else format_ticks(moved)
    if name == "nanosecond":
        return format_ticks(ticks + n // 100)
    return format_ticks(ticks + n * _UNIT[name])


def date_time_part(part: Any, text: Any) -> Any:
    name, ticks = part_name(part), parse_ticks(text)
    if name is None or ticks is None:
        return UNDEFINED
    days, rem = divmod(ticks, DAY)
    day = date.fromordinal(days + 1)
    frac = rem % SECOND
    values = {
        "year": day.year,
        "month": day.month,
        "day": day.day,
        "hour": rem // HOUR,
        "minute": rem % HOUR // MINUTE,
        "second": rem % MINUTE // SECOND,
        "millisecond": frac // MILLISECOND,
        "microsecond": frac // MICROSECOND,
        "nanosecond": frac * 100,
    }
    return values[name]


def date_time_diff(part: Any, start: Any, end: Any) -> Any:
    """Count of `part` boundaries crossed from start to end (negative when end is earlier)."""
    name, t0, t1 = part_name(part), parse_ticks(start), parse_ticks(end)
    if name is None or t0 is None or t1 is None:
        return UNDEFINED
    d0, d1 = date.fromordinal(t0 // DAY + 1), date.fromordinal(t1 // DAY + 1)
    if name == "year":
        return d1.year - d0.year
    if name == "month":
        return (d1.year - d0.year) * 12 + d1.month - d0.month
    if name == "nanosecond":
        return (t1 - t0) * 100
    unit = _UNIT[name]
    return t1 // unit - t0 // unit


def date_time_from_parts(*parts: Any) -> Any:
    values = [_whole(p) for p in parts]
    if any(v is None for v in values):
        return UNDEFINED
    y, mo, d, h, mi, s, frac = (cast("list[int]", values) + [0, 0, 0, 0])[:7]
    if not (0 <= h <= 23 and 0 <= mi <= 59 and 0 <= s <= 59 and 0 <= frac < SECOND):
        return UNDEFINED
    try:
        days = date(y, mo, d).toordinal() - 1
    except (ValueError, OverflowError):  # out of range, or too large for a C int
        return UNDEFINED
    return format_ticks(days * DAY + h * HOUR + mi * MINUTE + s * SECOND + frac)


def date_time_bin(text: Any, part: Any, size: Any = 1, origin: Any = "1970-01-01T00:00:00.0000000Z") -> Any:
    name, ticks, n, base = part_name(part), parse_ticks(text), _whole(size), parse_ticks(origin)
    if name not in _UNIT or ticks is None or n is None or n <= 0 or base is None:
        return UNDEFINED
    width = n * _UNIT[name]
    return format_ticks(base + (ticks - base) // width * width)


def _to_unix(unit: int) -> Callable[[Any], Any]:
    def fn(text: Any) -> Any:
        ticks = parse_ticks(text)
        return UNDEFINED if ticks is None else (ticks - UNIX_EPOCH) // unit

    return fn


def _from_unix(unit: int) -> Callable[[Any], Any]:
    def fn(number: Any) -> Any:
        n = _whole(number)
        return UNDEFINED if n is None else format_ticks(UNIX_EPOCH + n * unit)

    return fn


def _now_ticks() -> int:
    return UNIX_EPOCH + time.time_ns() // 100


DATE_FUNCTIONS: dict[str, tuple[int, int, Callable[..., Any]]] = {
    "DATETIMEADD": (3, 3, date_time_add),
    "DATETIMEPART": (2, 2, date_time_part),
    "DATETIMEDIFF": (3, 3, date_time_diff),
    "DATETIMEFROMPARTS": (3, 7, date_time_from_parts),
    "DATETIMEBIN": (2, 4, date_time_bin),
    "DATETIMETOTICKS": (1, 1, _to_unix(TICK)),
    "DATETIMETOTIMESTAMP": (1, 1, _to_unix(MILLISECOND)),
    "TICKSTODATETIME": (1, 1, _from_unix(TICK)),
    "TIMESTAMPTODATETIME": (1, 1, _from_unix(MILLISECOND)),
    "GETCURRENTDATETIME": (0, 0, lambda: format_ticks(_now_ticks())),
    "GETCURRENTTICKS": (0, 0, lambda: _now_ticks() - UNIX_EPOCH),
    "GETCURRENTTIMESTAMP": (0, 0, lambda: (_now_ticks() - UNIX_EPOCH) // MILLISECOND),
    # The *Static forms are one value per query in the service; here they are per call.
    "GETCURRENTDATETIMESTATIC": (0, 0, lambda: format_ticks(_now_ticks())),
    "GETCURRENTTICKSSTATIC": (0, 0, lambda: _now_ticks() - UNIX_EPOCH),
    "GETCURRENTTIMESTAMPSTATIC": (0, 0, lambda: (_now_ticks() - UNIX_EPOCH) // MILLISECOND),
}
