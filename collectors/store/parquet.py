"""The store: one Parquet dataset per table, `STORE/<table>/date=YYYY-MM-DD/<run_id>-<part>.parquet`.

Why it looks like this:
- **Atomic files.** A file is written under a hidden temp name (`.<name>.<random>.tmp`) in its own directory,
  flushed and fsynced, renamed over the final name with `os.replace`, and the directory is fsynced. A reader
  therefore sees a file whole or not at all, and a crash (even kill -9) loses at most the file in flight.
- **Parts.** One run writes many files, one per `part` (the collectors flush after each query), so a killed
  run keeps everything it flushed. Writing the same (run_id, part) again replaces the file: writes are
  idempotent, and a retried flush never duplicates rows.
- **A reader that survives crashes.** `read_table` skips (with a `StoreWarning` and a log line on the
  `ruscope.store` logger) any file it cannot use: zero bytes, truncated, not Parquet, the wrong schema.
  Temp files are ignored; one older than `STALE_TEMP_SECONDS` is reported, as it marks an interrupted write.
- **Schemas from `records`.** The writer conforms every frame to its declared `Table` (unknown
  columns and uncastable values are errors, missing columns are nulls); the reader conforms every file to
  it too, so files written before a column was added read back with that column null.

To add a table, declare its record in `records.py` (it needs `run_id`, a time column and a `key`);
`write_frame(store, "<name>", ...)` and `read_table(store, "<name>")` then work with no change here.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import re
import time
import uuid
import warnings
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from collectors.store.records import TABLES, UTC_TIME, Table

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("ruscope.store")

TOKEN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")  # run ids and part names: safe in a file name
PARTITION = re.compile(r"date=(\d{4}-\d{2}-\d{2})")
TEMP_SUFFIX = ".tmp"
STALE_TEMP_SECONDS = 600.0  # a temp file older than this is an interrupted write, not one in progress
WRITTEN_NS = b"ruscope.written_ns"  # Parquet metadata: when the file was written, to order duplicate keys


@functools.cache
def pandas_dtypes() -> dict[pa.DataType, object]:
    """How read_table maps Arrow types to pandas: nullable extension dtypes, so a null int stays an int.
    Timestamps are left to pyarrow's default, which gives tz-aware datetime64[us, UTC]. (pandas is imported
    here, not at module level: the collectors write with pyarrow alone and start faster without it.)"""
    import pandas as pd

    return {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.float32(): pd.Float32Dtype(),
        pa.float64(): pd.Float64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
        pa.string(): pd.StringDtype("pyarrow"),
        pa.large_string(): pd.StringDtype("pyarrow"),
    }


_CAST_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)
_READ_ERRORS = (OSError, pa.ArrowException, ValueError, TypeError)


class StoreWarning(UserWarning):
    """A store file was skipped by the reader (the message names the file and why)."""


def write_frame(
    store: Path,
    table: Table | str,
    frame: pd.DataFrame,
    *,
    run_id: str,
    part: str,
    day: dt.date | None = None,
) -> Path:
    """Write `frame` as `STORE/<table>/date=<day>/<run_id>-<part>.parquet`, atomically; return the path.

    The frame is conformed to the table's schema: missing columns become nulls, an unknown column or a
    value that does not cast to its declared type raises ValueError naming the column. Naive times are
    taken as UTC. The `run_id` column is filled with `run_id` (a different value there is a ValueError).
    `day` defaults to the UTC date of the first non-null `time`, or today. Writing the same (run_id, part)
    again replaces the file. An empty frame writes nothing and returns the path it would have written.
    """
    spec = _table(table)
    _check_token("run_id", run_id)
    _check_token("part", part)
    return _write_part(Path(store), spec, _arrow_table(spec, _with_run_id(frame, run_id)), run_id, part, day)


def write_arrow(
    store: Path, table: Table | str, data: pa.Table, *, run_id: str, part: str, day: dt.date | None = None
) -> Path:
    """`write_frame` for data already in Arrow (the collectors' path: no pandas, no Python objects).

    The table must have the schema's columns (cast when compatible, else ValueError); its `run_id` column
    must be `run_id` where it is not null. Atomic and idempotent per (run_id, part), like every write."""
    spec = _table(table)
    _check_token("run_id", run_id)
    _check_token("part", part)
    try:
        data = data.select(spec.schema.names).cast(spec.schema)
    except (KeyError, *_CAST_ERRORS) as exc:
        raise ValueError(f"table {spec.name!r}: the data does not match its schema: {exc}") from exc
    if data["run_id"].null_count:  # missing run ids are this run's
        filled = pc.fill_null(data["run_id"], run_id)
        data = data.set_column(data.schema.get_field_index("run_id"), spec.schema.field("run_id"), filled)
    # Arrow -> Python only: turning a Python value into Arrow makes pyarrow import pandas (~0.25 s)
    others = sorted(set(data["run_id"].unique().to_pylist()) - {run_id})
    if others:
        raise ValueError(f"column 'run_id' holds {others[:3]}, not the run_id {run_id!r} being written")
    return _write_part(Path(store), spec, data, run_id, part, day)


def _write_part(store: Path, spec: Table, data: pa.Table, run_id: str, part: str, day: dt.date | None) -> Path:
    """Where the part goes (its day's partition), written atomically unless it is empty."""
    path = _partition(store, spec, day or _first_day(data)) / f"{run_id}-{part}.parquet"
    if data.num_rows:
        _write_atomically(data, path)
    return path


def read_table(
    store: Path,
    table: Table | str,
    *,
    since: dt.datetime | dt.date | None = None,
    columns: Sequence[str] | None = None,
    run_ids: Collection[str] | None = None,
) -> pd.DataFrame:
    """Read the files of `table` into one frame, sorted by its time column.

    Dtypes are pandas' nullable extension dtypes, the same for every read (see pandas_dtypes): Int32/Int64
    for integers (nulls stay pd.NA, never floats), Float64, boolean, string[pyarrow], and datetime64[us, UTC]
    for `time`. Rows repeating the table's key keep the last written. Unusable files are skipped with a
    StoreWarning; a missing or empty store gives an empty frame with the same dtypes.

    - `since`: a date keeps the partitions dated on or after it (a part is dated by the writer's `day`)
      and their rows timed on or after its midnight UTC; a datetime (naive means UTC) keeps rows timed
      at or after it, and scans one more day of partitions, since a part is dated by its first row and
      may run past midnight. Partitions before that are never opened, and rows without a time are dropped.
    - `columns`: only these, in this order (the schema's when None); the key and time columns are read
      too, to drop repeats and sort, and dropped again unless asked for. An unknown name is a ValueError.
    - `run_ids`: only these runs.
    """
    spec = _table(table)
    wanted = None if run_ids is None else {str(r) for r in run_ids}
    names = _selected(spec, columns)
    schema = pa.schema([spec.schema.field(n) for n in spec.schema.names if n in {*names, *spec.key, "time"}])
    first_day, cutoff = _since(since)
    files = _data_files(Path(store) / spec.name, first_day, wanted)
    pieces = [piece for path in files if (piece := _read_file(spec, schema, path))]
    pieces.sort(key=lambda piece: piece[0])
    data = pa.concat_tables([t for _, t in pieces]) if pieces else schema.empty_table()
    if wanted is not None:
        data = data.filter(pc.is_in(data["run_id"], value_set=pa.array(sorted(wanted), pa.string())))
    if cutoff is not None:
        data = data.filter(pc.greater_equal(data["time"], pa.scalar(cutoff, UTC_TIME)))
    frame: pd.DataFrame = data.to_pandas(types_mapper=pandas_dtypes().get)
    frame = frame.drop_duplicates(subset=list(spec.key), keep="last")
    frame = frame.sort_values("time", kind="stable", na_position="last").reset_index(drop=True)
    return frame[names]


def _selected(spec: Table, columns: Sequence[str] | None) -> list[str]:
    """The columns a read returns: all of the schema's, or the ones asked for (each known, once)."""
    if columns is None:
        return list(spec.schema.names)
    if isinstance(columns, str):
        raise ValueError("columns is a list of column names, not one string")
    unknown = [c for c in columns if c not in spec.schema.names]
    if unknown:
        raise ValueError(f"table {spec.name!r} has no column(s) {', '.join(map(repr, unknown))}")
    return list(dict.fromkeys(columns))


def _since(since: dt.datetime | dt.date | None) -> tuple[dt.date | None, dt.datetime | None]:
    """The first partition day to open and the first row time to keep."""
    if since is None:
        return None, None
    if isinstance(since, dt.datetime):
        moment = since.replace(tzinfo=dt.UTC) if since.tzinfo is None else since.astimezone(dt.UTC)
        return moment.date() - dt.timedelta(days=1), moment
    if isinstance(since, dt.date):
        return since, dt.datetime.combine(since, dt.time(), dt.UTC)
    raise TypeError(f"since must be a date or a datetime, not {type(since).__name__}")


def list_runs(store: Path, table: Table | str = "executions") -> list[str]:
    """Distinct run ids in `table`, newest first by the run's first `time` (runs with no time last)."""
    frame = read_table(store, table, columns=["run_id", "time"]).dropna(subset=["run_id"])
    starts = frame.groupby("run_id", sort=False)["time"].min().reset_index()
    starts = starts.sort_values(["time", "run_id"], ascending=False, na_position="last")
    return [str(run_id) for run_id in starts["run_id"]]


def _table(table: Table | str) -> Table:
    if isinstance(table, Table):
        return table
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; known: {', '.join(sorted(TABLES))}")
    return TABLES[table]


def _check_token(what: str, value: str) -> None:
    if not isinstance(value, str) or not TOKEN.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a safe file-name token ([A-Za-z0-9_.-]+, no leading '.')")


def _with_run_id(frame: pd.DataFrame, run_id: str) -> pd.DataFrame:
    if "run_id" in frame.columns:
        others = sorted({str(v) for v in frame["run_id"].dropna()} - {run_id})
        if others:
            raise ValueError(f"column 'run_id' holds {others[:3]}, not the run_id {run_id!r} being written")
    return frame.assign(run_id=run_id)


def _arrow_table(spec: Table, frame: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table of exactly the schema: columns in order, values cast."""
    names = [str(c) for c in frame.columns]
    unknown = [n for n in names if n not in spec.schema.names]
    if unknown:
        raise ValueError(f"table {spec.name!r} has no column(s) {', '.join(map(repr, unknown))}")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"column(s) {', '.join(map(repr, repeated))} appear more than once")
    frame = frame.set_axis(names, axis=1)
    arrays = [_column(frame[f.name], f) if f.name in names else pa.nulls(len(frame), f.type) for f in spec.schema]
    return pa.Table.from_arrays(arrays, schema=spec.schema)


def _column(values: pd.Series, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    try:
        arrow = pa.array(values, from_pandas=True)  # NaN/None/pd.NA become nulls
    except _CAST_ERRORS as exc:
        raise ValueError(f"column {field.name!r} cannot be cast to {field.type}: {exc}") from exc
    return _cast(arrow, field)


def _cast(values: pa.Array | pa.ChunkedArray, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    """Cast safely (no overflow, no float truncation), except that sub-microsecond time is dropped."""
    try:
        return pc.cast(values, options=pc.CastOptions(target_type=field.type, allow_time_truncate=True))
    except _CAST_ERRORS as exc:
        raise ValueError(f"column {field.name!r} cannot be cast to {field.type}: {exc}") from exc


def _first_day(data: pa.Table) -> dt.date:
    """The UTC date of the first time (computed in Arrow: a timezone-aware `as_py()` imports pandas)."""
    times = data.column("time").drop_null()
    if len(times) == 0:
        return dt.datetime.now(dt.UTC).date()
    day: dt.date = pc.cast(times.slice(0, 1), pa.date32())[0].as_py()
    return day


def _partition(store: Path, spec: Table, day: dt.date) -> Path:
    return store / spec.name / f"date={day.isoformat()}"


def _write_atomically(data: pa.Table, path: Path) -> None:
    """Temp file in the same directory, flush + fsync, rename over `path`, fsync the directory."""
    created = _make_dirs(path.parent)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    stamped = data.replace_schema_metadata({WRITTEN_NS: str(time.time_ns()).encode()})
    try:
        with open(temp, "wb") as fh:
            pq.write_table(stamped, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    for directory in [path.parent, *created]:
        _fsync_dir(directory)


def _make_dirs(directory: Path) -> list[Path]:
    """Create the partition directory; return the parents whose entries changed (to fsync them)."""
    missing = [d for d in (directory.parent, directory) if not d.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    return [d.parent for d in missing]


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":  # directories cannot be opened for fsync elsewhere
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _data_files(root: Path, since: dt.date | None, wanted: set[str] | None) -> Iterator[Path]:
    """Every data file under the table's partitions, oldest partition first; temp files are not data."""
    if not root.is_dir():
        return
    for partition in sorted(root.iterdir()):
        day = _partition_day(partition)
        if day is None or (since is not None and day < since):
            continue
        for path in sorted(partition.iterdir()):
            if path.name.startswith("."):
                _note_temp(path)
            elif path.suffix == ".parquet" and (wanted is None or any(path.name.startswith(f"{r}-") for r in wanted)):
                yield path


def _partition_day(partition: Path) -> dt.date | None:
    match = PARTITION.fullmatch(partition.name)
    if not partition.is_dir() or not match:
        return None
    try:
        return dt.date.fromisoformat(match.group(1))
    except ValueError:
        _skip(partition, "not a valid date partition")
        return None


def _note_temp(path: Path) -> None:
    """Temp files are ignored; a stale one is reported, as it marks a write that never finished."""
    if not path.name.endswith(TEMP_SUFFIX):
        return
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:  # renamed into place or cleaned up meanwhile
        return
    if age > STALE_TEMP_SECONDS:
        _skip(path, f"leftover temp file of an interrupted write ({age:.0f} s old)")


def _read_file(spec: Table, schema: pa.Schema, path: Path) -> tuple[tuple[int, str], pa.Table] | None:
    """One file's `schema` columns (a subset of the table's), conformed, with its write order; None (and a
    warning) if it is unusable. Only those columns are read from disk."""
    try:
        with pq.ParquetFile(path) as parquet:
            present = set(parquet.schema_arrow.names)
            raw = parquet.read(columns=[n for n in schema.names if n in present])
        data = _conform_file(spec, schema, raw)
        stamp = (raw.schema.metadata or {}).get(WRITTEN_NS)
        written = int(stamp) if stamp else path.stat().st_mtime_ns
    except _READ_ERRORS as exc:
        _skip(path, f"{type(exc).__name__}: {exc}")
        return None
    return (written, str(path)), data


def _conform_file(spec: Table, schema: pa.Schema, raw: pa.Table) -> pa.Table:
    """A file's table with `schema`'s columns: older files lack new columns (nulls); extra ones are dropped."""
    lacking = [name for name in (*spec.key, "time") if name not in raw.column_names]
    if lacking:
        raise ValueError(f"wrong schema: no column(s) {', '.join(lacking)}")
    arrays = [
        _cast(raw.column(f.name), f) if f.name in raw.column_names else pa.nulls(raw.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _skip(path: Path, reason: str) -> None:
    message = f"store: skipped {path}: {reason}"
    log.warning(message)
    warnings.warn(message, StoreWarning, stacklevel=2)
