"""Derived tables: rows computed from several source tables, per whole UTC day, kept up to date incrementally
(`refresh`), exactly once, by `ruscope compact` and after `collect`.

What a derived table holds is not the store's to know: its `Derivation` names the table, the sources and
their columns, and the pure function that computes a day's rows from the sources' rows of that day; the
caller that knows (`analysis.spans.stored`: the span cells the container model reads) hands it in. The store
does the rest, as the metrics' rollup does (`increment`): each source's versions since the last refresh
name the files they added, whose time statistics bound the days that may have changed (`changes`); every
such day is computed again, whole, and its rows replace the day's stored ones (an overwrite of its date
partition) in one Delta commit that carries each source's version (an app transaction per source,
`<app id>:<source table>`). A refresh killed before its commit leaves the table as it was and the next one
computes the same days again; two at once write the same rows, the one that loses the commit race starts
again from the other's result. A long history (a first refresh) is committed a week of days at a time, the
last commit carrying the versions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from deltalake import Transaction

from store.delta import DATE, open_table, sql_literal, sql_name
from store.location import StoreLocation, require_location
from store.reader import read_table
from store.records import Table
from store.rollups.changes import changed_spans, every_span
from store.rollups.commits import new_run_id, replace_rows, until_committed
from store.rollups.periods import DAY, Period, days_of, merged

DAYS_PER_COMMIT = 7


@dataclass(frozen=True)
class Source:
    """A table a derivation reads, only `columns`, and `keep`: which of its rows (all when None)."""

    table: Table
    columns: tuple[str, ...]
    keep: Callable[[pd.DataFrame], pd.Series] | None = None


@dataclass(frozen=True)
class Derivation:
    """A derived table: its rows of some whole UTC days are `compute` of its sources' rows of those days
    (source table name -> frame), timed in those days."""

    table: Table
    sources: tuple[Source, ...]
    compute: Callable[[Mapping[str, pd.DataFrame]], pd.DataFrame]
    app_id: str

    def version_app(self, source: Source) -> str:
        return f"{self.app_id}:{source.table.name}"


@dataclass(frozen=True)
class DerivedReport:
    """What one refresh did: the sources' versions it reached, the days computed and the rows written."""

    table: str
    versions: dict[str, int]
    days: int = 0
    rows: int = 0
    rebuilt: bool = False

    def line(self) -> str:
        versions = ", ".join(f"{name} version {version}" for name, version in self.versions.items())
        if not self.days:
            return f"{self.table}: up to date ({versions})"
        how = "every day (a first refresh)" if self.rebuilt else f"{self.days} changed day(s)"
        return f"{self.table}: {how} computed again: {self.rows:,} row(s), up to {versions}"


def refresh(store: StoreLocation, derivation: Derivation, *, run_id: str | None = None) -> DerivedReport | None:
    """Bring the derived table up to its sources' latest versions (module docstring); None when no source
    table exists yet."""
    location = require_location(store, "refresh")
    rid = run_id or new_run_id("derive")
    return until_committed(lambda: _refresh_once(location, derivation, rid))


def consumed_versions(location: StoreLocation, derivation: Derivation) -> dict[str, int | None]:
    """Per source table: the version the derived table is complete for (None: never refreshed)."""
    table = open_table(location, derivation.table.name)
    out: dict[str, int | None] = {}
    for source in derivation.sources:
        recorded = table.transaction_version(derivation.version_app(source)) if table is not None else None
        out[source.table.name] = None if recorded is None else int(recorded) - 1
    return out


def stale_spans(store: StoreLocation, derivation: Derivation) -> list[Period] | None:
    """The time spans whose derived rows may be out of date: what the sources added since the versions the
    table records (None: all of it, never refreshed or a recorded snapshot gone). A reader takes the derived
    rows of a day outside them as complete, and reads the sources for a day inside."""
    location = require_location(store, "stale_spans")
    consumed = consumed_versions(location, derivation)
    spans: list[Period] = []
    for source in derivation.sources:
        table = open_table(location, source.table.name)
        if table is None:
            continue
        if consumed[source.table.name] is None:
            return None
        changed = changed_spans(location, source.table, table, consumed[source.table.name])
        if changed is None:
            return None
        spans += changed
    return merged(spans)


def _refresh_once(location: StoreLocation, derivation: Derivation, run_id: str) -> DerivedReport | None:
    opened = {source.table.name: open_table(location, source.table.name) for source in derivation.sources}
    present = {name: table for name, table in opened.items() if table is not None}
    if not present:
        return None
    versions = {name: table.version() for name, table in present.items()}
    consumed = consumed_versions(location, derivation)
    behind = {name for name, version in versions.items() if _older(consumed[name], version)}
    if not behind:
        return DerivedReport(derivation.table.name, versions)
    spans: list[Period] = []
    rebuilt = False
    for source in derivation.sources:
        name = source.table.name
        if name not in behind:
            continue
        changed = changed_spans(location, source.table, present[name], consumed[name])
        rebuilt |= changed is None
        spans += changed if changed is not None else every_span(source.table, present[name])
    days = days_of(merged(spans))
    if not days:  # only files rearranged: nothing to compute, the versions recorded
        _commit(location, derivation, pd.DataFrame(), [], versions, run_id)
        return DerivedReport(derivation.table.name, versions)
    rows = 0
    batches = [days[i : i + DAYS_PER_COMMIT] for i in range(0, len(days), DAYS_PER_COMMIT)]
    for number, batch in enumerate(batches):
        fresh = _rows_of(location, derivation, batch)
        _commit(location, derivation, fresh, batch, versions if number + 1 == len(batches) else None, run_id)
        rows += len(fresh)
    return DerivedReport(derivation.table.name, versions, len(days), rows, rebuilt)


def _older(consumed: int | None, version: int) -> bool:
    return consumed is None or consumed < version


def _rows_of(location: StoreLocation, derivation: Derivation, days: list[dt.date]) -> pd.DataFrame:
    """The derived rows of `days`, from each source's rows of those days (one read of their whole span)."""
    start = dt.datetime.combine(days[0], dt.time(), dt.UTC)
    end = dt.datetime.combine(days[-1], dt.time(), dt.UTC) + DAY
    wanted = [pd.Timestamp(day.isoformat(), tz="UTC") for day in days]
    frames = {}
    for source in derivation.sources:
        frame = read_table(location, source.table, since=start, until=end, columns=list(source.columns))
        inside = _in_days(frame[source.table.time], wanted)
        if source.keep is not None and len(frame):
            inside &= source.keep(frame).fillna(False).astype(bool)
        frames[source.table.name] = frame[inside.to_numpy(dtype=bool)].reset_index(drop=True) if len(frame) else frame
    out = derivation.compute(frames)
    if out.empty:
        return out
    return out[_in_days(out[derivation.table.time], wanted).to_numpy(dtype=bool)].reset_index(drop=True)


def _in_days(times: pd.Series, days: list[pd.Timestamp]) -> pd.Series:
    """Which of `times` fall in one of the UTC `days` (midnights)."""
    return pd.to_datetime(times, utc=True).dt.floor("D").isin(days)


def _commit(
    location: StoreLocation,
    derivation: Derivation,
    fresh: pd.DataFrame,
    days: Sequence[dt.date],
    versions: Mapping[str, int] | None,
    run_id: str,
) -> None:
    """Replace the rows of `days` with `fresh` in one commit; with `versions`, record them."""
    transactions = (
        [Transaction(app_id=f"{derivation.app_id}:{name}", version=version + 1) for name, version in versions.items()]
        if versions is not None
        else None
    )
    listed = ", ".join(sql_literal(day.isoformat()) for day in days)
    predicate = f"{sql_name(DATE)} IN ({listed})" if days else None  # none: an empty append records the versions
    replace_rows(location, derivation.table, fresh, run_id, predicate, transactions)
