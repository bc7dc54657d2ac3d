"""Which tier a chart reads: the finest that draws the range in a few hundred cells and still holds it."""

from __future__ import annotations

import datetime as dt

from store.rollups.tiers import TIERS, tier_for

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def test_a_day_reads_minutes_a_month_hours_a_year_days() -> None:
    day = tier_for(NOW - dt.timedelta(hours=6), NOW, NOW)
    month = tier_for(NOW - dt.timedelta(days=30), NOW, NOW)
    year = tier_for(NOW - dt.timedelta(days=365), NOW, NOW)
    assert (day.name, month.name, year.name) == ("1min", "1h", "1d")
    assert (day.label, month.label, year.label) == ("1-minute points", "hourly cells", "daily cells")


def test_a_short_range_older_than_the_raw_points_reads_the_tier_that_still_holds_it() -> None:
    start = NOW - dt.timedelta(days=20)  # minutes are kept 14 days
    tier = tier_for(start, start + dt.timedelta(hours=2), NOW)
    assert tier.name == "10min" and tier.label == "10-minute cells"


def test_the_default_retention_is_the_issues() -> None:
    assert [(t.name, t.keep) for t in TIERS] == [
        ("1min", dt.timedelta(days=14)),
        ("10min", dt.timedelta(days=90)),
        ("1h", dt.timedelta(days=730)),
        ("1d", None),
    ]
