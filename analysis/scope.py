"""Scope and time range: which rows of a store frame a view covers.

The dashboard's frame asks once for a time range and a scope (one database and/or container, or all) and
every page applies them with these functions, so "database crm, last 7 days" means the same rows on every
page. A store fed by a fleet of collectors holds several accounts; the scope's `account` picks one (None:
all), and the dashboard offers it only when the store has more than one. The time range becomes a `Window`
(`window_for`: a preset's start, or a custom start and end): rows timed in [start, end), a None bound open.
The store's reader cuts at the start (`since`), opening only the date partitions from that day on; the
dashboard's loaders cut at the end; the scope is cut here. Pure functions on any store frame with
`account`, `database` and `container` columns (every store table has them); the clock is passed in, so tests choose
"now".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from store import records

SCOPE_COLUMNS = list(records.SCOPE_COLUMNS)


def in_containers(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that name a container (every key part present, the container not empty): an account's own
    reads, account-level metrics and a shared offer's rows (container "") are not any container's."""
    keyed = frame.dropna(subset=SCOPE_COLUMNS)
    return keyed[keyed["container"].astype(str).ne("")]


def span_text(span: dt.timedelta | pd.Timedelta) -> str:
    """A length as pages, ranges and alerts write it: whole days from 48 hours on, whole hours from 1 hour
    on, else minutes ("1 hour", "6 hours", "7 days", "90 minutes", "15 minutes")."""
    minutes = pd.Timedelta(span).total_seconds() / 60
    for size, unit in ((24 * 60, "day"), (60, "hour")):
        count = minutes / size
        if count.is_integer() and minutes >= (48 * 60 if unit == "day" else 60):
            return f"{count:g} {unit}{'' if count == 1 else 's'}"
    return f"{minutes:g} minute{'' if minutes == 1 else 's'}"


ALL_TIME, CUSTOM = "All time", "Custom"
# The time ranges a view offers, widest last; None: no lower bound. Labels are `span_text`'s, as alerts say it.
TIME_RANGES: dict[str, dt.timedelta | None] = {
    f"Last {span_text(span)}": span
    for span in (
        dt.timedelta(hours=1),
        dt.timedelta(hours=6),
        dt.timedelta(hours=24),
        dt.timedelta(days=7),
        dt.timedelta(days=30),
    )
}
TIME_RANGES[ALL_TIME] = None
RANGE_CHOICES = [*TIME_RANGES, CUSTOM]  # what the frame's picker offers: the presets, then a custom window
DEFAULT_TIME_RANGE = ALL_TIME  # what the dashboard showed before it had a time range


@dataclass(frozen=True, slots=True)
class Scope:
    """One database and/or one container (of one account); None means all of them."""

    database: str | None = None
    container: str | None = None
    account: str | None = None  # the account's name or endpoint host, as the store's rows carry it


@dataclass(frozen=True, slots=True)
class Window:
    """The rows a view covers: timed at or after `start` and before `end` (UTC, whole minutes; a None bound
    is open), and the range's name. Every page reads this one window (`dashboard.state.FrameState.window`)."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None
    label: str = ALL_TIME

    @property
    def span(self) -> dt.timedelta | None:
        """The window's length when both bounds are set (a custom window), else None."""
        return None if self.start is None or self.end is None else self.end - self.start

    def text(self) -> str:
        """What the window covers, as `window_text` writes it ("all the data" when open at both ends)."""
        if self.start is None and self.end is None:
            return "all the data"
        if self.end is None:
            return f"since {minute_text(self.start)}" if self.start is not None else ""
        if self.start is None:
            return f"before {minute_text(self.end)}"
        return window_text(self.start, self.end)

    def from_(self, start: dt.datetime) -> Window:
        """The window narrowed to rows at or after `start` (a run's own rows, say)."""
        return Window(start if self.start is None else max(self.start, start), self.end, self.label)


class WindowError(ValueError):
    """A custom window that cannot be: its end not after its start (the message says so, for the page)."""


def window_for(time_range: str, now: dt.datetime) -> Window:
    """The window of a preset `time_range` ending now (open-ended: up to the newest row), from `since_for`."""
    return Window(since_for(time_range, now), None, time_range)


def custom_window(start: dt.datetime, end: dt.datetime) -> Window:
    """A custom window [start, end), both floored to the minute in UTC (a naive time is UTC); WindowError
    when the end is not after the start."""
    first, last = _minute(start), _minute(end)
    if last <= first:
        raise WindowError(
            f"The custom range ends ({minute_text(last)}) before or when it starts ({minute_text(first)}): "
            "choose an end after the start."
        )
    return Window(first, last, CUSTOM)


def _minute(time: dt.datetime) -> dt.datetime:
    utc = time.replace(tzinfo=dt.UTC) if time.tzinfo is None else time.astimezone(dt.UTC)
    return utc.replace(second=0, microsecond=0)


def since_for(time_range: str, now: dt.datetime) -> dt.datetime | None:
    """The start (UTC) of the preset `time_range` ending at `now`, or None for "All time".

    `now` is floored to the minute first, so a cached read keyed on the result is reused for a minute
    instead of missing on every rerun.
    """
    span = TIME_RANGES[time_range]
    if span is None:
        return None
    return _minute(now) - span


def minute_text(time: dt.datetime | pd.Timestamp) -> str:
    """An instant as pages and reports write it: UTC, to the minute ("2026-05-01 10:00 UTC")."""
    stamp = pd.Timestamp(time)
    stamp = stamp.tz_convert("UTC") if stamp.tzinfo is not None else stamp  # naive: UTC already, as stored
    return f"{stamp:%Y-%m-%d %H:%M} UTC"


def window_text(start: dt.datetime | pd.Timestamp, end: dt.datetime | pd.Timestamp) -> str:
    """The window a figure covers, from its first to its last counted time: "2026-05-01 10:00-10:20 UTC"
    within a day, else both instants in full (one instant when they are the same minute)."""
    first, last = minute_text(start), minute_text(end)
    if first == last:
        return first
    return f"{first[:-4]}-{last[11:]}" if first[:10] == last[:10] else f"{first[:-4]} - {last}"


def select_scope(frame: pd.DataFrame, scope: Scope) -> pd.DataFrame:
    """The rows of the scope's account, database and/or container; a None part keeps all."""
    keep = pd.Series(True, index=frame.index)
    if scope.account is not None:
        keep &= _is(frame["account"], scope.account)
    if scope.database is not None:
        keep &= _is(frame["database"], scope.database)
    if scope.container is not None:
        keep &= _is(frame["container"], scope.container)
    return frame[keep]


def scope_choices(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The distinct (account, database, container) triples of some frames, sorted: what a scope picker offers."""
    pairs = [frame[SCOPE_COLUMNS] for frame in frames]
    if not pairs:
        return pd.DataFrame(columns=SCOPE_COLUMNS)
    both = pd.concat(pairs, ignore_index=True).dropna().astype(str).drop_duplicates()
    return both.sort_values(SCOPE_COLUMNS, ignore_index=True)


def accounts(frame: pd.DataFrame) -> list[str]:
    """The accounts in a frame, sorted."""
    return sorted(frame["account"].dropna().unique().tolist())


def databases(frame: pd.DataFrame) -> list[str]:
    """The databases in a frame, sorted."""
    return sorted(frame["database"].dropna().unique().tolist())


def containers(frame: pd.DataFrame, database: str | None = None) -> list[str]:
    """The containers in a frame (of one database when given), sorted."""
    return sorted(select_scope(frame, Scope(database=database))["container"].dropna().unique().tolist())


def _is(values: pd.Series, value: str) -> pd.Series:
    """values == value as plain bools: a missing value (the store's pd.NA) is not equal."""
    return values.eq(value).fillna(False).astype(bool)
