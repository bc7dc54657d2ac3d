"""Rollups: the `metrics` table's one-minute points summarised into coarser cells (`metric_cells`), so a page
reads at most a few hundred columns of cells whatever the length of the history it draws.

- `tiers`: the resolutions (raw points, 10 minutes, 1 hour, 1 day) with how long each is kept, and the tier a
  chart of a given range and width reads (`tier_for`).
- `cells`: a tier's cells from points, and a coarser tier's from finer cells, exactly (pure).
- `periods`: the half-open periods a rollup recomputes, widened to bins, cut at days (pure).
- `increment`: `rollup(store)`, the incremental driver: the bins the metrics' new files touch computed again,
  whole, and committed in one overwrite carrying the source version, so a rerun or a run after a kill gives
  the same cells (exactly once by idempotence); `rollup_due`, whether `collect` should run it now.
- `retention`: each tier's cells deleted after its `keep` (`ruscope compact`).
- `changes`: the time spans a table's new versions added; `commits`: a commit race run again (both drivers).
- `derived`: `refresh(store, derivation)`, the same incremental, exactly-once driver for a table derived from
  several sources per whole UTC day by a function the caller hands in (the span cells of
  `analysis.load.stored`: the store does not know what the rows mean).
"""

from store.rollups.derived import Derivation, DerivedReport, Source, refresh
from store.rollups.increment import RollupReport, rollup, rollup_due

__all__ = ["Derivation", "DerivedReport", "RollupReport", "Source", "refresh", "rollup", "rollup_due"]
