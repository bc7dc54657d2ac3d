"""What a table's new versions changed: the time spans of the data files they added since a version a rollup
recorded (`changed_spans`), from each file's time statistics (Delta keeps each file's min and max per
column), the whole date partition for a file without them. A version that only rearranged files (a
compaction's OPTIMIZE, a vacuum) changed no data and adds no span. Shared by the metrics' rollup
(`increment`) and the derived tables' (`derived`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, TableNotFoundError

from store.delta import DATE
from store.location import StoreLocation
from store.records import Table
from store.rollups.periods import Period

NO_DATA_CHANGE = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END", "CREATE TABLE"})


def changed_spans(
    location: StoreLocation, table: Table, source: DeltaTable, consumed: int | None
) -> list[Period] | None:
    """The time spans of the data `source` (the store's `table`) added since version `consumed` (None when
    every file must be read: never rolled up, or that version's snapshot is gone)."""
    if consumed is None:
        return None
    history = [h for h in source.history() if int(h.get("version", -1)) > consumed]
    if all(str(h.get("operation", "")) in NO_DATA_CHANGE for h in history):
        return []
    try:
        before = DeltaTable(location.table_uri(table.name), version=consumed, storage_options=location.options())
    except (DeltaError, TableNotFoundError, OSError):
        return None
    old = set(pa.table(before.get_add_actions(flatten=True)).column("path").to_pylist())
    return [span for path, span in file_spans(table, source) if path not in old]


def every_span(table: Table, source: DeltaTable) -> list[Period]:
    return [span for _, span in file_spans(table, source)]


def file_spans(table: Table, source: DeltaTable) -> Iterable[tuple[str, Period]]:
    """Each data file's span of times, from its statistics (its whole date partition when it has none)."""
    actions = pa.table(source.get_add_actions(flatten=True))
    if not actions.num_rows:
        return
    names = actions.column_names
    paths = actions.column("path").to_pylist()
    days = actions.column(f"partition.{DATE}").to_pylist()
    low, high = f"min.{table.time}", f"max.{table.time}"
    lows = actions.column(low).to_pylist() if low in names else [None] * len(paths)
    highs = actions.column(high).to_pylist() if high in names else [None] * len(paths)
    for path, day, first, last in zip(paths, days, lows, highs, strict=True):
        if first is None or last is None:
            start = dt.datetime.combine(dt.date.fromisoformat(str(day)), dt.time(), dt.UTC)
            yield path, Period(start, start + dt.timedelta(days=1))
        else:
            yield path, Period(first.astimezone(dt.UTC), last.astimezone(dt.UTC) + dt.timedelta(microseconds=1))
