"""The incremental rollup of the `metrics` table into `metric_cells` (`ruscope compact`, and after `collect`).

Only what changed is computed again. The metrics table's versions since the last rollup name the files they
added; those files' time statistics bound the spans of data that may have changed (`changes`), and every bin of every tier that meets a span is computed again, whole: the 10-minute
cells from the raw points of their bins, the hourly cells from the hour's 10-minute cells, the daily from
the day's hourly ones (`cells.merge_up`, exact). A version that only rearranged files (a compaction's
OPTIMIZE) changed no data and adds no span.

Exactly once by idempotence: the recomputed bins replace the stored ones in one Delta commit (an overwrite
whose predicate names exactly those tiers' bins), which carries the app transaction
(`APP_ID`, source version + 1). A rollup killed before its commit leaves the cells as they were and the next
one computes the same spans again; one killed after it finds its version recorded and has nothing to do; two
at once write the same cells, and the one that loses the commit race starts again from the other's result.
Every bin nests in its UTC day, so a long rebuild (a store rolled up for the first time) is committed day
batch by day batch, the last commit carrying the version.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from deltalake import Transaction

from store.delta import DATE, open_table, sql_literal, sql_name
from store.location import StoreLocation, require_location
from store.reader import read_table
from store.records import METRIC_CELLS, METRIC_DIMENSIONS, METRICS, SCOPE_COLUMNS
from store.rollups.cells import BIN, merge_up, roll_up
from store.rollups.changes import changed_spans, every_span
from store.rollups.commits import new_run_id, replace_rows, until_committed
from store.rollups.periods import Period, clipped, covers, days_of, merged, widened
from store.rollups.tiers import CELL_TIERS, Tier

APP_ID = "ruscope-rollup-metrics"
SERIES = [*SCOPE_COLUMNS, "metric", "aggregation", *METRIC_DIMENSIONS]  # the metrics key without its time
CARRIED = ["unit", "grain"]
DAYS_PER_COMMIT = 7  # a first rollup of a long history commits a week at a time (bounded memory)


@dataclass(frozen=True)
class RollupReport:
    """What one rollup did: the source version it reached, the spans and points it read, the cells written."""

    source_version: int | None
    spans: int = 0
    points: int = 0
    cells: int = 0
    rebuilt: bool = False  # the whole history was read (a first rollup, or the old snapshot was gone)
    pruned: int = 0  # cells past their tier's retention, deleted (`store.rollups.retention`)
    table: str = METRIC_CELLS.name

    def line(self) -> str:
        expired = f"; {self.pruned:,} cell(s) past their tier's retention deleted" if self.pruned else ""
        if self.source_version is None:
            return f"rollup: no metrics to roll up{expired}"
        if not self.spans:
            return f"rollup: metric cells up to date (metrics version {self.source_version}){expired}"
        how = "every point (a first rollup)" if self.rebuilt else f"{self.spans} changed span(s)"
        return (
            f"rollup: {how}: {self.points:,} metric point(s) -> {self.cells:,} cell(s) "
            f"({', '.join(t.name for t in CELL_TIERS)}), up to metrics version {self.source_version}{expired}"
        )


def rollup(store: StoreLocation, *, tiers: Sequence[Tier] = CELL_TIERS, run_id: str | None = None) -> RollupReport:
    """Bring `metric_cells` up to the `metrics` table's latest version (see the module docstring)."""
    location = require_location(store, "rollup")
    rid = run_id or new_run_id("rollup")
    return until_committed(lambda: _rollup_once(location, tiers, rid))


def rollup_due(store: StoreLocation, every: dt.timedelta, *, now: dt.datetime) -> bool:
    """Whether a rollup after `collect` is due: none yet, or the cells' last commit is `every` old. Why not after
    each pass: a pass of a few minutes' points costs a rollup's fixed price (opening tables, one commit) every
    time, and a page reads the newest minutes from the points anyway."""
    cells = open_table(require_location(store, "rollup_due"), METRIC_CELLS.name)
    latest = cells.history(1) if cells is not None else []
    if not latest:
        return True
    committed = dt.datetime.fromtimestamp(int(latest[0]["timestamp"]) / 1000, dt.UTC)
    return now - committed >= every


def consumed_version(location: StoreLocation) -> int | None:
    """The metrics version the stored cells are complete for (None: never rolled up)."""
    cells = open_table(location, METRIC_CELLS.name)
    recorded = cells.transaction_version(APP_ID) if cells is not None else None
    return None if recorded is None else int(recorded) - 1


def stale_spans(store: StoreLocation) -> list[Period] | None:
    """The time spans whose cells may be out of date: what the metrics added since the version the cells
    record (None: never rolled up, or that version's snapshot is gone); as `derived.stale_spans`."""
    location = require_location(store, "stale_spans")
    consumed, source = consumed_version(location), open_table(location, METRICS.name)
    if consumed is None or source is None:
        return None
    return changed_spans(location, METRICS, source, consumed)


def _rollup_once(location: StoreLocation, tiers: Sequence[Tier], run_id: str) -> RollupReport:
    source = open_table(location, METRICS.name)
    if source is None:
        return RollupReport(None)
    version, consumed = source.version(), consumed_version(location)
    if consumed is not None and consumed >= version:
        return RollupReport(version)
    changed = changed_spans(location, METRICS, source, consumed)
    rebuilt = changed is None
    spans = merged(changed if changed is not None else every_span(METRICS, source))
    days = days_of(spans)
    if not days:  # only files rearranged: nothing to compute, the version recorded
        _commit(location, pd.DataFrame(), [], version, run_id)
        return RollupReport(version)
    points = cells = 0
    batches = [days[i : i + DAYS_PER_COMMIT] for i in range(0, len(days), DAYS_PER_COMMIT)]
    for number, batch in enumerate(batches):
        batch_spans = [part for day in batch for part in clipped(spans, day)]
        fresh, read = _cells_of(location, batch_spans, tiers)
        replaced = [(tier, widened(batch_spans, tier.width)) for tier in tiers]
        last = number + 1 == len(batches)
        _commit(location, fresh, replaced, version if last else None, run_id)
        points, cells = points + read, cells + len(fresh)
    return RollupReport(version, len(spans), points, cells, rebuilt)


def _cells_of(location: StoreLocation, spans: list[Period], tiers: Sequence[Tier]) -> tuple[pd.DataFrame, int]:
    """Every tier's cells in the bins `spans` meet, computed again (the module docstring's cascade); the
    cells and the raw points read."""
    finest = widened(spans, tiers[0].width)
    points = _points(location, finest)
    level = roll_up(points, tiers[0].width, SERIES, carried=CARRIED)
    out, below, below_spans = [level.assign(tier=tiers[0].name)], (tiers[0], level), finest
    for tier in tiers[1:]:
        mine = widened(spans, tier.width)
        stored = _stored_cells(location, below[0], mine)  # the finer tier's cells around the recomputed ones
        kept = stored[~covers(stored[BIN], below_spans)]
        finer = pd.concat([part for part in (kept, below[1]) if not part.empty] or [below[1]], ignore_index=True)
        level = merge_up(finer, tier.width, SERIES, carried=CARRIED)
        out.append(level.assign(tier=tier.name))
        below, below_spans = (tier, level), mine
    frames = [frame for frame in out if not frame.empty]
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), len(points)


def _points(location: StoreLocation, spans: list[Period]) -> pd.DataFrame:
    """The raw metric points in `spans`, one per key (two collectors' repeats before compaction, once)."""
    columns = [*SERIES, METRICS.time, "value", *CARRIED]
    if not spans:
        return read_table(location, METRICS, columns=columns).iloc[0:0]
    frame = read_table(location, METRICS, since=spans[0].start, until=spans[-1].end, columns=columns)
    frame = frame[covers(frame[METRICS.time], spans)]
    return frame.drop_duplicates(subset=list(METRICS.key), keep="first").reset_index(drop=True)


def _stored_cells(location: StoreLocation, tier: Tier, spans: list[Period]) -> pd.DataFrame:
    """The stored cells of `tier` in `spans` (the figures and the series, no run id)."""
    if not spans:
        return pd.DataFrame()
    frame = read_table(location, METRIC_CELLS, since=spans[0].start, until=spans[-1].end)
    frame = frame[frame["tier"].eq(tier.name).fillna(False) & covers(frame[BIN], spans)]
    return frame.drop(columns=["run_id", "tier"]).reset_index(drop=True)


def _commit(
    location: StoreLocation,
    fresh: pd.DataFrame,
    replaced: list[tuple[Tier, list[Period]]],
    version: int | None,
    run_id: str,
) -> None:
    """Replace the cells of `replaced` bins with `fresh` in one commit; with `version`, record it (APP_ID)."""
    clauses = [
        f"({sql_name('tier')} = {sql_literal(tier.name)} AND {sql_name(BIN)} >= {sql_literal(span.start)} "
        f"AND {sql_name(BIN)} < {sql_literal(span.end)})"
        for tier, spans in replaced
        for span in spans
    ]
    transactions = [Transaction(app_id=APP_ID, version=version + 1)] if version is not None else None
    if not clauses:  # nothing replaced: an empty append records the version
        replace_rows(location, METRIC_CELLS, fresh, run_id, None, transactions)
        return
    days = [day.isoformat() for day in days_of(span for _, spans in replaced for span in spans)]
    partitions = f"{sql_name(DATE)} IN ({', '.join(map(sql_literal, days))})"
    replace_rows(location, METRIC_CELLS, fresh, run_id, f"{partitions} AND ({' OR '.join(clauses)})", transactions)
