"""The one CSV path: every dashboard download and `ruscope report` write CSV through `to_csv_bytes`.

Format (stable, so reports diff cleanly and golden files stay small):
- UTF-8 without a byte-order mark, a header row, "\\n" line ends, no index column;
- columns in the frame's order, or in `columns` order when given (a missing column is written empty);
- datetimes as ISO 8601 UTC with millisecond precision and a "Z" suffix (`2026-05-01T10:00:00.000Z`);
  naive datetimes are taken to be UTC already;
- booleans as `true` / `false`; missing values (None, NaN, NaT, pd.NA) as empty fields;
- floats with Python's shortest round-trip repr (round in the analysis, not here);
- line breaks inside a text cell written as "\\n" (the cell quoted): a bare "\\r" is not quoted by the csv
  module when lines end in "\\n", and a spreadsheet would start a new row there;
- text a spreadsheet would run as a formula (a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage
  return: OWASP "CSV Injection") gets a leading `'`, so it shows as text. Only text cells: numbers (a negative
  RU delta) stay numbers. A query text or partition key comes from users' data and must never execute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd
from pandas.api.typing import NAType

if TYPE_CHECKING:
    from xlsxwriter.worksheet import Worksheet

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP, "CSV Injection": what spreadsheets evaluate


def to_csv_bytes(frame: pd.DataFrame, *, columns: Sequence[str] | None = None) -> bytes:
    """The frame as CSV bytes, in the format described in the module docstring."""
    out = frame.reindex(columns=list(columns)) if columns is not None else frame.copy()
    for name in out.columns:
        out[name] = _csv_column(out[name])
    return out.to_csv(index=False, lineterminator="\n", na_rep="").encode("utf-8")


def to_xlsx_bytes(frame: pd.DataFrame, *, sheets_by: str | None = "section") -> bytes:
    """The frame as an xlsx workbook (xlsxwriter): a sheet per value of `sheets_by` (in order of appearance;
    one sheet "report" without that column). Cells are the CSV's (`to_csv_bytes`): the same text,
    formula-neutralised, written as text cells and never as formulas; numbers as numbers; missing blank."""
    import io

    import xlsxwriter

    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False})
    groups = frame.groupby(sheets_by, sort=False) if sheets_by in frame.columns else [("report", frame)]
    for name, part in groups:
        sheet = book.add_worksheet(str(name)[:31])
        cells = part.drop(columns=[sheets_by] if sheets_by in part.columns else [])
        sheet.write_row(0, 0, [str(column) for column in cells.columns])
        for c, column in enumerate(cells.columns):
            for r, value in enumerate(_csv_column(cells[column]).tolist(), start=1):
                _write_cell(sheet, r, c, value)
    book.close()
    return buffer.getvalue()


def _write_cell(sheet: Worksheet, row: int, col: int, value: str | float | NAType | None) -> None:
    """One cell of `_csv_column`'s values: text as text, a number as a number, a missing value left blank."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return
    if isinstance(value, str):
        sheet.write_string(row, col, value)
    else:
        sheet.write_number(row, col, float(value))


def _csv_column(column: pd.Series) -> pd.Series:
    if isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(column.dtype):
        return format_utc(column)
    if pd.api.types.is_bool_dtype(column.dtype):
        return column.map(lambda value: "" if pd.isna(value) else str(bool(value)).lower())
    if pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype):
        return column.map(_text_cell, na_action="ignore")
    return column


def _text_cell(value: object) -> object:
    if not isinstance(value, str):
        return value
    return neutralise_formula(value).replace("\r\n", "\n").replace("\r", "\n")


def neutralise_formula(text: str) -> str:
    """Text a spreadsheet would evaluate, prefixed with `'` so it stays text; other text as is."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def format_utc(times: pd.Series) -> pd.Series:
    """Datetimes as `YYYY-MM-DDTHH:MM:SS.mmmZ` strings in UTC (missing stays missing)."""
    utc = times.dt.tz_convert("UTC") if times.dt.tz is not None else times.dt.tz_localize("UTC")
    text: pd.Series = utc.dt.strftime(TIME_FORMAT).str.slice(0, 23) + "Z"
    return text.where(utc.notna(), None)
