"""Scope and time range: which rows of a store frame a view covers.

The dashboard's frame asks once for a time range and a scope (one database and/or container, or all) and
every page applies them with these functions, so "database crm, last 7 days" means the same rows on every
page. A store fed by a fleet of collectors holds several accounts; the scope's `account` picks one (None:
all), and the dashboard offers it only when the store has more than one. The time range becomes a `since` instant (`since_for`) that the store's reader cuts at, opening only
the date partitions from that day on; the scope is cut here. Pure functions on any store frame with
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

# The time ranges a view offers, widest last; None: no lower bound.
TIME_RANGES: dict[str, dt.timedelta | None] = {
    "Last 24 hours": dt.timedelta(hours=24),
    "Last 7 days": dt.timedelta(days=7),
    "Last 30 days": dt.timedelta(days=30),
    "All time": None,
}
DEFAULT_TIME_RANGE = "All time"  # what the dashboard showed before it had a time range


@dataclass(frozen=True, slots=True)
class Scope:
    """One database and/or one container (of one account); None means all of them."""

    database: str | None = None
    container: str | None = None
    account: str | None = None  # the account's name or endpoint host, as the store's rows carry it


def since_for(time_range: str, now: dt.datetime) -> dt.datetime | None:
    """The start (UTC) of `time_range` ending at `now`, or None for "All time".

    `now` is floored to the minute first, so a cached read keyed on the result is reused for a minute
    instead of missing on every rerun.
    """
    span = TIME_RANGES[time_range]
    if span is None:
        return None
    minute = now.astimezone(dt.UTC).replace(second=0, microsecond=0)
    return minute - span


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
