"""Half-open periods of time [start, end) in UTC: the spans of changed data a rollup computes again, widened
to a tier's bins, cut at UTC midnights (every bin nests in its day). Pure."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


@dataclass(frozen=True, order=True)
class Period:
    start: dt.datetime
    end: dt.datetime


def merged(periods: Iterable[Period]) -> list[Period]:
    """The union of `periods` as sorted, disjoint, non-touching periods."""
    out: list[Period] = []
    for period in sorted(p for p in periods if p.end > p.start):
        if out and period.start <= out[-1].end:
            out[-1] = Period(out[-1].start, max(out[-1].end, period.end))
        else:
            out.append(period)
    return out


def floor(moment: dt.datetime, width: dt.timedelta) -> dt.datetime:
    return EPOCH + ((moment - EPOCH) // width) * width


def ceil(moment: dt.datetime, width: dt.timedelta) -> dt.datetime:
    low = floor(moment, width)
    return low if low == moment else low + width


def widened(periods: Iterable[Period], width: dt.timedelta) -> list[Period]:
    """`periods` grown to whole bins of `width` (the bins they meet), merged."""
    return merged(Period(floor(p.start, width), ceil(p.end, width)) for p in periods)


def days_of(periods: Iterable[Period]) -> list[dt.date]:
    """The UTC days the periods meet, sorted."""
    days: set[dt.date] = set()
    for period in periods:
        day = period.start.date()
        while dt.datetime.combine(day, dt.time(), dt.UTC) < period.end:
            days.add(day)
            day += DAY
    return sorted(days)


def clipped(periods: Iterable[Period], day: dt.date) -> list[Period]:
    """The parts of `periods` inside UTC `day`."""
    start = dt.datetime.combine(day, dt.time(), dt.UTC)
    parts = (Period(max(p.start, start), min(p.end, start + DAY)) for p in periods)
    return [p for p in parts if p.end > p.start]


def covers(times: pd.Series, periods: Iterable[Period]) -> pd.Series:
    """Which of `times` fall in one of `periods`."""
    inside = pd.Series(False, index=times.index)
    for period in periods:
        inside |= ((times >= period.start) & (times < period.end)).fillna(False).astype(bool)
    return inside
