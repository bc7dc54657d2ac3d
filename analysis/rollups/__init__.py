"""Rollups (issue 27, first pieces): the store's fine-grained points summarised into coarser cells, so a page
reads at most a few hundred columns of cells whatever the length of the history it draws.

`tiers` names the resolutions (1 minute, 10 minutes, 1 hour, 1 day) with how long each is kept, and picks
the tier a chart of a given range and width reads. `cells` computes a tier's cells from points: per key and
bin, the sum, maximum, count and last value, which merge exactly (a 1-hour cell of six 10-minute cells is the
1-hour cell of their minutes), so a rollup can be built from the tier below it.

A rollup is recomputed per whole bin: the bins an increment of new points touches are computed again from
every point they hold (`touched_bins`), so running it twice, or again after it was killed, gives the same
cells: exactly once by being idempotent, not by counting. Pure functions; the store tables and the
incremental driver come next.
"""
