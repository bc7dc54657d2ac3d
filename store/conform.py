"""Data in the shape of a table's declared schema: frames and Arrow tables conformed before they are committed,
and files written before a column existed conformed when they are read or migrated.

Why one place: the writer, the reader and the migration must agree exactly on what a value of each column may
be (a fraction is never silently truncated into an int, an overflow is an error naming its column), and the
reader must hand the dashboard the same pandas dtypes for every read, an empty one included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from store.records import TABLES, Table

if TYPE_CHECKING:
    import pandas as pd

TOKEN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")  # run ids and part names: safe in a file name and an app id
CAST_ERRORS = (pa.ArrowException, TypeError, ValueError, OverflowError)


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


def table_spec(table: Table | str) -> Table:
    """The declared `Table` for a name (ValueError listing the known ones)."""
    if isinstance(table, Table):
        return table
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; known: {', '.join(sorted(TABLES))}")
    return TABLES[table]


def check_token(what: str, value: str) -> None:
    if not isinstance(value, str) or not TOKEN.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a safe file-name token ([A-Za-z0-9_.-]+, no leading '.')")


def selected(spec: Table, columns: Sequence[str] | None) -> list[str]:
    """The columns a read returns: all of the schema's, or the ones asked for (each known, once)."""
    if columns is None:
        return list(spec.schema.names)
    if isinstance(columns, str):
        raise ValueError("columns is a list of column names, not one string")
    unknown = [c for c in columns if c not in spec.schema.names]
    if unknown:
        raise ValueError(f"table {spec.name!r} has no column(s) {', '.join(map(repr, unknown))}")
    return list(dict.fromkeys(columns))


def arrow_of_frame(spec: Table, frame: pd.DataFrame, run_id: str) -> pa.Table:
    """The frame as an Arrow table of exactly the schema (columns in order, values cast, missing ones null),
    its `run_id` column filled with `run_id` (another value there is a ValueError)."""
    if "run_id" in frame.columns:
        others = sorted({str(v) for v in frame["run_id"].dropna()} - {run_id})
        if others:
            raise ValueError(f"column 'run_id' holds {others[:3]}, not the run_id {run_id!r} being written")
    frame = frame.assign(run_id=run_id)
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


def arrow_of_run(spec: Table, data: pa.Table, run_id: str) -> pa.Table:
    """Arrow data with the schema's columns (cast when compatible, else ValueError), null run ids filled with
    `run_id` and any other run id refused: a part holds one run's rows."""
    try:
        data = data.select(spec.schema.names).cast(spec.schema)
    except (KeyError, *CAST_ERRORS) as exc:
        raise ValueError(f"table {spec.name!r}: the data does not match its schema: {exc}") from exc
    if data["run_id"].null_count:
        filled = pc.fill_null(data["run_id"], run_id)
        data = data.set_column(data.schema.get_field_index("run_id"), spec.schema.field("run_id"), filled)
    # Arrow -> Python only: turning a Python value into Arrow makes pyarrow import pandas (~0.25 s)
    others = sorted(set(data["run_id"].unique().to_pylist()) - {run_id})
    if others:
        raise ValueError(f"column 'run_id' holds {others[:3]}, not the run_id {run_id!r} being written")
    return data


def conform_file(spec: Table, schema: pa.Schema, raw: pa.Table) -> pa.Table:
    """A file's table with `schema`'s columns: older files lack new columns (nulls); extra ones are dropped;
    one without the table's key or time column is not this table's (ValueError)."""
    lacking = [name for name in (*spec.key, spec.time) if name not in raw.column_names]
    if lacking:
        raise ValueError(f"wrong schema: no column(s) {', '.join(lacking)}")
    arrays = [
        cast(raw.column(f.name), f) if f.name in raw.column_names else pa.nulls(raw.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _column(values: pd.Series, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    try:
        arrow = pa.array(values, from_pandas=True)  # NaN/None/pd.NA become nulls
    except CAST_ERRORS as exc:
        raise ValueError(f"column {field.name!r} cannot be cast to {field.type}: {exc}") from exc
    return cast(arrow, field)


def cast(values: pa.Array | pa.ChunkedArray, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    """Cast safely (no overflow, no float truncation), except that sub-microsecond time is dropped."""
    try:
        return pc.cast(values, options=pc.CastOptions(target_type=field.type, allow_time_truncate=True))
    except CAST_ERRORS as exc:
        raise ValueError(f"column {field.name!r} cannot be cast to {field.type}: {exc}") from exc
