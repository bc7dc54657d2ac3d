"""Tiered retention of the rollup cells: each tier keeps its cells for its `Tier.keep` (10-minute cells 90
days, hourly 2 years, daily for ever), so a year of history costs a few hundred thousand cells per container,
not half a million minutes per pkrange. Run by `ruscope compact`, after the rollup.

The raw `metrics` points are not deleted here: the container model still reads them at every window (issue
27's remaining step), so their retention waits until it reads the cells beyond them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from store.delta import DATE, open_table, sql_literal, sql_name
from store.location import StoreLocation
from store.records import METRIC_CELLS
from store.rollups.cells import BIN
from store.rollups.periods import DAY, floor
from store.rollups.tiers import CELL_TIERS, Tier


def expired_predicate(tiers: Sequence[Tier], now: dt.datetime) -> str | None:
    """The SQL predicate of the cells past their tier's retention (whole days, so a day's files go whole), or
    None when every tier keeps its cells for ever (pure)."""
    clauses = []
    for tier in tiers:
        if tier.keep is None:
            continue
        cutoff = floor(now - tier.keep, DAY)
        clauses.append(
            f"({sql_name('tier')} = {sql_literal(tier.name)} AND {sql_name(DATE)} < {sql_literal(cutoff.date().isoformat())}"
            f" AND {sql_name(BIN)} < {sql_literal(cutoff)})"
        )
    return " OR ".join(clauses) if clauses else None


def prune_cells(location: StoreLocation, *, now: dt.datetime, tiers: Sequence[Tier] = CELL_TIERS) -> int:
    """Delete the cells past their tier's retention; the cells deleted."""
    table = open_table(location, METRIC_CELLS.name)
    predicate = expired_predicate(tiers, now)
    if table is None or predicate is None:
        return 0
    metrics = table.delete(predicate)
    return int(metrics.get("num_deleted_rows", 0) or 0)
