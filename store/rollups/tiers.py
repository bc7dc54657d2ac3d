"""The rollup tiers: each a cell width and how long its cells are kept, and the tier a chart reads.

Defaults follow issue 27 (raw minutes 14 days, 10-minute cells 90 days, hourly 2 years, daily for ever),
after the key visualizers of other databases (Spanner keeps 1-minute cells 6 hours, 10-minute cells 4 days,
hourly 28 days). Every page names the tier it drew ("10-minute cells").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

MAX_COLUMNS = 1000  # cells a chart draws across at most (Bigtable's key visualizer draws 1,000 key buckets)


@dataclass(frozen=True)
class Tier:
    name: str  # "1min", "10min", "1h", "1d"
    width: dt.timedelta
    keep: dt.timedelta | None  # None: for ever

    @property
    def label(self) -> str:
        """How a page names the cells it drew."""
        minutes = int(self.width.total_seconds() // 60)
        if minutes < 60:
            return f"{minutes}-minute cells" if minutes > 1 else "1-minute points"
        hours = minutes // 60
        return "hourly cells" if hours == 1 else ("daily cells" if hours == 24 else f"{hours}-hour cells")


TIERS: tuple[Tier, ...] = (
    Tier("1min", dt.timedelta(minutes=1), dt.timedelta(days=14)),
    Tier("10min", dt.timedelta(minutes=10), dt.timedelta(days=90)),
    Tier("1h", dt.timedelta(hours=1), dt.timedelta(days=730)),
    Tier("1d", dt.timedelta(days=1), None),
)
CELL_TIERS = TIERS[1:]  # the tiers stored as `metric_cells`; the finest is the `metrics` table's own points


def retained(tier: Tier, start: dt.datetime, now: dt.datetime) -> bool:
    """Whether `tier` still holds cells from `start` at `now`."""
    return tier.keep is None or start >= now - tier.keep


def tier_for(
    start: dt.datetime,
    end: dt.datetime,
    now: dt.datetime,
    *,
    tiers: Sequence[Tier] = TIERS,
    max_columns: int = MAX_COLUMNS,
) -> Tier:
    """The finest tier that draws [start, end) in at most `max_columns` cells and still holds `start`; the
    coarsest when none does (a range longer than `max_columns` days)."""
    for tier in tiers:
        if (end - start) / tier.width <= max_columns and retained(tier, start, now):
            return tier
    return tiers[-1]
