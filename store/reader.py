"""Reading store tables into pandas: the files of a Delta snapshot, pruned by date partition and by column.

Why this shape:
- **Pruning first.** `since` becomes a partition filter on `date`, so older days are never listed or opened;
  `columns` are the only ones read from disk; the row filter on the time column runs in Arrow.
- **No read-time dedupe.** Commits are exactly once (app transactions, see `delta`), so a row is stored once.
- **The files of the snapshot, read by pyarrow.** A local table's files are read through pyarrow's own
  file system, with its threads; `DeltaTable.to_pyarrow_dataset()` routes reads through a Python file
  system handler, and with pyarrow's thread pool that aborts about one process exit in two ("terminate called
  without an active exception", exit 134: a CLI must not do that). A remote table is read through delta-rs'
  dataset, single-threaded, for the same reason.
- **Readers survive, and a damaged table loses only what is damaged.** A vacuum may remove a file under a
  reader holding an older snapshot: the read starts again from a fresh one. A file the fresh snapshot still
  names but storage does not have was lost (not vacuumed): it is skipped with a `StoreWarning` naming it, its
  table and its rows, and every other file is read. A file that cannot be read is skipped with a warning
  naming it. A table whose log does not load is read as of the version before its first damaged entry
  (`check.damaged_entry`), with one warning naming that entry; one whose damage cannot be located gives an
  empty frame and one warning line naming the table and why. Each warning names `ruscope store repair`.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import warnings
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.fs as pafs
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError

from cosmoscore.keys import key_text
from store.check import damaged_entry, missing_files, missing_text, one_line, repair_hint
from store.conform import pandas_dtypes, selected, table_spec
from store.delta import DATE, open_table
from store.layout import MIGRATE_HINT, refuse_old_layout, stray_parts
from store.location import StoreLocation, require_location
from store.records import TABLES, UTC_TIME, Table

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("ruscope.store")
VERSION_THREADS = 8  # a remote store's table logs opened at once by `table_versions`
READ_ATTEMPTS = 5  # fresh snapshots tried when a vacuum removes files under a read
_READ_ERRORS = (OSError, pa.ArrowException, ValueError, TypeError, DeltaError)


class StoreWarning(UserWarning):
    """Part of the store could not be read (the message names the table or file, and why)."""


# The tables whose `partition_key` is a logical key's JSON text (advice tables hold definitions there).
KEY_TEXT_TABLES = frozenset({"executions", "logical_keys", "log_key_ru", "log_key_operation_ru", "log_key_sizes"})


def read_table(
    store: StoreLocation,
    table: Table | str,
    *,
    since: dt.datetime | dt.date | None = None,
    until: dt.datetime | None = None,
    columns: Sequence[str] | None = None,
    run_ids: Collection[str] | None = None,
    exclude: Mapping[str, Collection[str]] | None = None,
    only: Mapping[str, Collection[str]] | None = None,
    distinct: bool = False,
) -> pd.DataFrame:
    """The rows of `table`, sorted by its time column (rows without one last), with pandas' nullable dtypes
    (Int32/Int64, Float64, boolean, string[pyarrow], datetime64[us, UTC]); empty with the same dtypes for a
    missing table. A store in the old layout raises StoreLayoutError.

    - `since`: a date keeps rows timed on or after its midnight UTC, a datetime (naive means UTC) rows at or
      after it; earlier date partitions are never opened, and rows without a time are dropped.
    - `until`: rows before it (naive means UTC); later date partitions are never opened.
    - `columns`: only these, in this order (the schema's when None); an unknown name is a ValueError.
    - `run_ids`: only these runs.
    - `exclude`: column -> values: the rows holding one of its values in every column named are dropped
      while reading (a null matches none), so a page that has some points' cells leaves those points out; the
      filter is Arrow's, so the rows dropped are never converted.
    - `only`: column -> values: only the rows holding one of its values in every column named (a page that
      reads one metric of a table of millions of points: its other rows are never converted).
    - `distinct`: one row per distinct combination of `columns` instead, in no order, computed in Arrow (the
      regions a store's metrics name: millions of rows, a handful of answers, none of the rows converted).
    """
    spec, location = table_spec(table), require_location(store, "read_table")
    names = selected(spec, columns)
    excluded, kept = dict(exclude or {}), dict(only or {})
    selected(spec, [*excluded, *kept])  # an unknown column is a ValueError, as for `columns`
    needed = {*names, spec.time, *(["run_id"] if run_ids is not None else []), *excluded, *kept}
    schema = pa.schema([f for f in spec.schema if f.name in needed])
    first_day, cutoff = _since(since)
    refuse_old_layout(location)
    row_filter = None if _whole_days(first_day, cutoff) else pc.field(spec.time) >= pa.scalar(cutoff, UTC_TIME)
    partitions = [(DATE, ">=", first_day)] if first_day else []
    if until is not None:
        end = _utc(until)
        partitions.append((DATE, "<=", (end - dt.timedelta(microseconds=1)).date().isoformat()))
        before = pc.field(spec.time) < pa.scalar(end, UTC_TIME)
        row_filter = before if row_filter is None else row_filter & before
    if excluded:
        dropped = ~_holding(excluded)
        row_filter = dropped if row_filter is None else row_filter & dropped
    if kept:
        row_filter = _holding(kept) if row_filter is None else row_filter & _holding(kept)
    data = _read(location, spec, schema, first_day, row_filter, partitions or None)
    if run_ids is not None:
        data = data.filter(pc.is_in(data["run_id"], value_set=pa.array(sorted(map(str, run_ids)), pa.string())))
    if distinct:
        unique: pd.DataFrame = (
            data.select(names).group_by(names).aggregate([]).to_pandas(types_mapper=pandas_dtypes().get)
        )
        return unique[names]
    data = _by_time(data, spec.time).select(names)
    data = _one_key_spelling(data) if spec.name in KEY_TEXT_TABLES else data
    frame: pd.DataFrame = data.to_pandas(types_mapper=pandas_dtypes().get)
    return frame


def _holding(values: Mapping[str, Collection[str]]) -> pc.Expression:
    """The rows holding one of its values in every column of `values` (a null holds none)."""
    matches = [
        # as string: a compacted file may store the column as string_view, which Arrow's is_in and the
        # statistics' comparisons do not take against a string value set; a null matches none (false & null
        # is false: Kleene logic)
        pc.field(column).cast(pa.string()).is_valid()
        & pc.is_in(pc.field(column).cast(pa.string()), value_set=pa.array(sorted(map(str, found)), pa.string()))
        for column, found in values.items()
    ]
    holding = matches[0]
    for match in matches[1:]:
        holding = holding & match
    return holding


def _one_key_spelling(data: pa.Table, column: str = "partition_key") -> pa.Table:
    """`column` (a key's JSON text) in the one spelling, `cosmoscore.keys.key_text`: rows written before the
    collectors wrote it so (`["a", "b"]`) join the others (`["a","b"]`). Only spaced values are re-encoded."""
    kind = data.schema.field(column).type if column in data.column_names else None
    if kind is None or not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return data
    keys = data[column]
    spaced = pc.fill_null(pc.match_substring_regex(keys, r"[\[,:]\s"), False)
    if not pc.any(spaced).as_py():
        return data
    old = pc.unique(pc.filter(keys, spaced))
    new = pa.array([key_text(value) for value in old.to_pylist()], kind)
    fixed = pc.take(new, pc.index_in(keys, value_set=old))
    return data.set_column(data.column_names.index(column), column, pc.if_else(spaced, fixed, keys))


def empty_frame(table: Table | str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """What `read_table` returns for a table with no rows: `columns` (the schema's when None) and their dtypes,
    for a caller that could not reach the store at all and must still hand analysis the table's shape."""
    spec = table_spec(table)
    schema = pa.schema([spec.schema.field(name) for name in selected(spec, columns)])
    frame: pd.DataFrame = schema.empty_table().to_pandas(types_mapper=pandas_dtypes().get)
    return frame


def _by_time(data: pa.Table, time: str) -> pa.Table:
    """Sorted by time, stably, rows without one last; in Arrow, and only when not already in order (commits
    and compacted files usually are), since sorting is most of a large read's cost otherwise."""
    times = data[time]
    if data.num_rows < 2 or (not times.null_count and pc.all(pc.greater_equal(times[1:], times[:-1])).as_py()):
        return data
    return data.take(pc.sort_indices(data, sort_keys=[(time, "ascending", "at_end")]))


def _since(since: dt.datetime | dt.date | None) -> tuple[str | None, dt.datetime | None]:
    """The first date partition to open and the first row time to keep."""
    if since is None:
        return None, None
    if isinstance(since, dt.datetime):
        moment = _utc(since)
        return moment.date().isoformat(), moment
    if isinstance(since, dt.date):
        return since.isoformat(), dt.datetime.combine(since, dt.time(), dt.UTC)
    raise TypeError(f"since must be a date or a datetime, not {type(since).__name__}")


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def _whole_days(first_day: str | None, cutoff: dt.datetime | None) -> bool:
    """True when the date partitions alone select the rows: a row's partition is its own UTC date, so from a
    midnight on, every row of the partitions kept is at or after the cutoff (no row filter to evaluate)."""
    return cutoff is None or (cutoff.time() == dt.time() and cutoff.date().isoformat() == first_day)


class _Snapshots:
    """The tables this process has opened, brought up to date on each read (`update_incremental` reads only the
    commits since), instead of replaying the log from its last checkpoint every time: the dashboard reads the
    same tables again and again. A table that cannot be brought up to date is opened afresh."""

    def __init__(self) -> None:
        self._open: dict[str, DeltaTable] = {}
        self._lock = threading.Lock()

    def latest(self, location: StoreLocation, table: str) -> DeltaTable | None:
        key = location.table_uri(table)
        with self._lock:
            cached = self._open.pop(key, None)
        if cached is not None:
            try:
                cached.update_incremental()
                fresh: DeltaTable | None = cached
            except _READ_ERRORS:
                fresh = open_table(location, table)
        else:
            fresh = open_table(location, table)
        if fresh is not None:
            with self._lock:
                self._open[key] = fresh
        return fresh

    def forget(self, location: StoreLocation, table: str) -> None:
        with self._lock:
            self._open.pop(location.table_uri(table), None)


_SNAPSHOTS = _Snapshots()


def _read(
    location: StoreLocation,
    spec: Table,
    schema: pa.Schema,
    first_day: str | None,
    row_filter: pc.Expression | None,
    partitions: list[tuple[str, str, str]] | None = None,
) -> pa.Table:
    """The snapshot's rows (in the date `partitions`, default from `first_day` on); a fresh snapshot if a file
    vanished (vacuumed) meanwhile, and if the fresh one still names a file that is gone, the rows of every
    other file; as of the version before a damaged log entry."""
    _warn_strays(location, spec, first_day)
    if partitions is None and first_day:
        partitions = [(DATE, ">=", first_day)]
    for attempt in range(READ_ATTEMPTS):
        try:
            delta = _SNAPSHOTS.latest(location, spec.name)
            if delta is None:
                return schema.empty_table()
            gone = _missing(location, spec.name, delta) if attempt else frozenset()
            return _scan(location, delta, schema, partitions, row_filter, gone)
        except FileNotFoundError:
            _SNAPSHOTS.forget(location, spec.name)
            continue
        except _READ_ERRORS as exc:
            _SNAPSHOTS.forget(location, spec.name)
            return _read_before_damage(location, spec, schema, partitions, row_filter, exc)
    _warn(f"store: table {spec.name!r} in {location} kept changing under the read (files vacuumed); try again")
    return schema.empty_table()


def _missing(location: StoreLocation, table: str, delta: DeltaTable) -> frozenset[str]:
    """The files a fresh snapshot still names that storage does not have (so not a vacuum's), each named in a
    warning with the rows it held: a file lost by hand or with a disk, which `ruscope store repair` drops."""
    gone = missing_files(delta)
    for missing in gone:
        _warn(
            f"store: table {table!r} in {location}: {missing_text(location, table, missing)}; the rest of the table "
            f"is read; `{repair_hint(location)}` drops it from the table (`ruscope store check` lists the damage)"
        )
    return frozenset(m.path for m in gone)


def _read_before_damage(
    location: StoreLocation,
    spec: Table,
    schema: pa.Schema,
    partitions: list[tuple[str, str, str]] | None,
    row_filter: pc.Expression | None,
    exc: Exception,
) -> pa.Table:
    """A table whose log does not load: read as of the version before its first damaged entry (the last
    checkpoint plus the intact commits before it) when that entry can be found; else empty. One warning."""
    damaged = damaged_entry(location, spec.name) if isinstance(exc, DeltaError) else None
    if damaged is None:
        _warn(f"store: table {spec.name!r} in {location} cannot be read: {one_line(exc)}")
        return schema.empty_table()
    hint = f"`{repair_hint(location)}` restores it from the intact entries"
    if damaged.version == 0:
        _warn(f"store: table {spec.name!r} in {location}: {damaged.describe()}; nothing is read; {hint}")
        return schema.empty_table()
    try:
        before = DeltaTable(location.table_uri(spec.name), version=damaged.version - 1)
        data = _scan(location, before, schema, partitions, row_filter, frozenset())
    except _READ_ERRORS as again:
        _warn(
            f"store: table {spec.name!r} in {location}: {damaged.describe()}; nothing is read ({one_line(again)}); {hint}"
        )
        return schema.empty_table()
    _warn(
        f"store: table {spec.name!r} in {location}: {damaged.describe()}; read as of version {damaged.version - 1}, "
        f"without the rows of that commit and the ones after it; {hint}"
    )
    return data


def _scan(
    location: StoreLocation,
    delta: DeltaTable,
    schema: pa.Schema,
    partitions: list[tuple[str, str, str]] | None,
    row_filter: pc.Expression | None,
    gone: frozenset[str],
) -> pa.Table:
    """The rows of the snapshot's files but those in `gone` (missing from storage, already named)."""
    if location.local is None:
        dataset = _without(delta.to_pyarrow_dataset(partitions=partitions), gone)
        raw = dataset.to_table(
            columns=[n for n in schema.names if n in dataset.schema.names], filter=row_filter, use_threads=False
        )
        return _conformed(raw, schema)
    # in path order, i.e. by date partition: compacted files are each in time order, so the rows come out sorted
    # and `_by_time` has nothing to do (a sort is most of a large read's cost otherwise)
    uris = (uri.removeprefix("file://") for uri in delta.file_uris(file_pruning_predicate=partitions))
    paths = sorted(path for path in uris if not any(path.endswith(f"/{lost}") for lost in gone))
    try:
        return _local_dataset(paths, schema).to_table(filter=row_filter)
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:  # one bad file: read the others, name it
        log.debug("whole-table read failed (%s); reading file by file", exc)
        return _file_by_file(paths, schema, row_filter)


def _without(dataset: pds.Dataset, gone: frozenset[str]) -> pds.Dataset:
    """`dataset` without the fragments of the files in `gone` (paths relative to the table)."""
    if not gone:
        return dataset
    kept = [f for f in dataset.get_fragments() if f.path not in gone]
    return pds.FileSystemDataset(kept, dataset.schema, dataset.format, dataset.filesystem)


def _local_dataset(paths: list[str], schema: pa.Schema) -> pds.Dataset:
    """The files as one dataset of `schema`: a file written before a column existed reads it as nulls."""
    return pds.dataset(paths, schema=schema, format="parquet", filesystem=pafs.LocalFileSystem())


def _file_by_file(paths: list[str], schema: pa.Schema, row_filter: pc.Expression | None) -> pa.Table:
    pieces = []
    for path in paths:
        try:
            pieces.append(_local_dataset([path], schema).to_table(filter=row_filter))
        except FileNotFoundError:
            raise
        except (OSError, pa.ArrowException) as exc:
            _warn(f"store: skipped {path}: {one_line(exc)}")
    return pa.concat_tables(pieces) if pieces else schema.empty_table()


def _conformed(raw: pa.Table, schema: pa.Schema) -> pa.Table:
    arrays = [
        raw[f.name].cast(f.type) if f.name in raw.column_names else pa.nulls(raw.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _warn_strays(location: StoreLocation, spec: Table, first_day: str | None) -> None:
    strays = stray_parts(location, spec.name, first_day)
    if strays:
        named = ", ".join(str(p) for p in strays[:3]) + (", ..." if len(strays) > 3 else "")
        _warn(
            f"store: table {spec.name!r} in {location}: {len(strays)} file(s) not in the Delta table are not read "
            f"({named}); if they are parts of the old layout, `{MIGRATE_HINT}` adds them"
        )


def list_runs(store: StoreLocation, table: Table | str = "executions") -> list[str]:
    """Distinct run ids in `table`, newest first by the run's first `time` (runs with no time last)."""
    frame = read_table(store, table, columns=["run_id", "time"]).dropna(subset=["run_id"])
    starts = frame.groupby("run_id", sort=False)["time"].min().reset_index()
    starts = starts.sort_values(["time", "run_id"], ascending=False, na_position="last")
    return [str(run_id) for run_id in starts["run_id"]]


def table_versions(store: StoreLocation) -> tuple[tuple[str, int | None], ...]:
    """Every table's latest committed version (None: never committed, or its log does not load), in name
    order: what a reader's cache is keyed by, since every change of what a read returns (a collect, a
    compact, a refresh of a derived table, a repair) is a commit and so a new version."""
    location = require_location(store, "table_versions")

    def version(name: str) -> tuple[str, int | None]:
        try:
            table = open_table(location, name)
        except (DeltaError, OSError):  # damaged: a read says so; the key changes when it is repaired
            table = None
        return name, None if table is None else int(table.version())

    names = sorted(TABLES)
    if location.local is not None:  # a local log is read in a few ms a table
        return tuple(version(name) for name in names)
    with ThreadPoolExecutor(max_workers=VERSION_THREADS) as pool:  # a remote one is round trips: at once
        return tuple(pool.map(version, names))


def _warn(message: str) -> None:
    log.warning(message)
    warnings.warn(message, StoreWarning, stacklevel=3)
