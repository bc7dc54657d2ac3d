"""How data looks on a page: as written, never as markup (`markdown_text`), and in a table a missing value
is a blank cell, never Streamlit's grey "None".

Streamlit renders the text of `st.markdown`, `st.caption`, `st.subheader`, `st.info` and the like (and widget
labels) as Markdown: a container named `[clickme](https:evil.example)` became a link, `![x](https://...)` an
image fetched from another host. Every value from the store that goes into such text passes through
`markdown_text` (names, keys, query names and texts, verdicts, messages, paths); tables (`st.dataframe`) and
`st.code` show text as it is and need nothing.

Streamlit's data grid draws every null (None, NaN, NaT, pd.NA) as "None", in any column, and ignores a
pandas Styler's `na_rep`; it does show a Styler's display text for a non-null cell while sorting by the
value underneath. So `display_table` swaps each missing value for a sentinel that sorts first (-inf for
numbers, the earliest timestamp for times), formats the sentinel as "" and every other value with the
column's own format, and leaves text as text with "" for missing. The numbers the table sorts by stay
numbers; the CSV download is made from the original frame (`widgets.render_table`), so it never sees a
sentinel.

The column formats come from the page's `st.column_config` (a NumberColumn's printf-style `format`, a
DatetimeColumn's); they are moved from the config into the Styler, because a format left in the config
would be applied by the grid instead of the display text. Progress and checkbox columns are left to the grid.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

MISSING_NUMBER = -np.inf  # sorts before every number
MISSING_TIME = pd.Timestamp("1900-01-01T00:00:00Z")  # sorts before every time the store holds
DEFAULT_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
GRID_DRAWN = {"progress", "checkbox"}
_INLINE_MARKS = re.compile(r"([\\`*_\[\]<>&~$|@])")
_BARE_LINK = re.compile(r"(?i)\b(?:https?|ftp|mailto):|\bwww\.")
_BLOCK_START = re.compile(r"^(\s*\d*)([#>+-]|(?<=\d)[.)])")
_NEGATIVE_ZERO = re.compile(r"-0(\.0*)?(\D*)")  # column types the grid draws itself (a bar, a box)


def markdown_text(value: object) -> str:
    """`value` as literal text inside Markdown, by CommonMark's rule that a backslash-escaped punctuation mark
    is never markup: the marks that open inline markup (links and images `[`, emphasis `*` `_` `~`, code
    `` ` ``, HTML and autolinks `<`, entities `&`, math `$`, GFM's e-mail autolinks `@`, tables `|`) are
    escaped everywhere, those that open a block (`#`, `>`, `-`, `+`, `1.`) at the start, and the `:` or `.` of
    a bare `https:` / `www.` link; line breaks become spaces (no new block)."""
    text = _INLINE_MARKS.sub(r"\\\1", " ".join(str(value).splitlines()))
    text = _BARE_LINK.sub(lambda found: f"{found.group()[:-1]}\\{found.group()[-1]}", text)
    return _BLOCK_START.sub(r"\1\\\2", text, count=1)


def money_text(amount: float, currency: str) -> str:
    """Money as a page writes it in words: to the cent with thousands separated, its currency after it
    ("1,234.50 USD"); "-" for a missing amount."""
    return "-" if amount != amount else f"{round(amount, 2) + 0.0:,.2f} {currency}"  # never "-0.00"


def markdown_code(text: str) -> str:
    """`text` as an inline code span (shown as written), its delimiter longer than any backtick run in it."""
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if "`" in text else ""  # CommonMark strips one space each side, so a backtick at an edge is kept
    return f"{fence}{pad}{' '.join(text.splitlines())}{pad}{fence}"


def markdown_fence(text: str) -> str:
    """A code block's fence longer than any backtick run in `text`, so the text cannot close it."""
    return "`" * max(3, _longest_backticks(text) + 1)


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def display_table(frame: pd.DataFrame, column_config: Mapping[str, Any] | None = None) -> tuple[Styler, dict[str, Any]]:
    """The frame as a Styler whose missing cells read "", and the column config without the formats it
    took over (see the module docstring)."""
    config = {name: dict(spec) if isinstance(spec, Mapping) else spec for name, spec in (column_config or {}).items()}
    shown = frame.copy()
    formatters: dict[Any, str | Callable[[object], str] | None] = {}
    for name in frame.columns:
        spec = config.get(name)
        column = frame[name]
        if pd.api.types.is_bool_dtype(column.dtype) and column.isna().any():  # a box cannot be blank: text
            shown[name] = column.map(lambda v: "" if pd.isna(v) else ("yes" if v else "no")).astype(object)
            if isinstance(spec, dict):
                spec["type_config"] = {"type": "text"}
            continue
        if _type_of(spec) in GRID_DRAWN or pd.api.types.is_bool_dtype(column.dtype):
            continue
        if isinstance(column.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(column.dtype):
            times = column.dt.tz_localize("UTC") if column.dt.tz is None else column.dt.tz_convert("UTC")
            shown[name] = times.fillna(MISSING_TIME.as_unit(times.dt.unit))
            formatters[name] = _time_formatter(_pop_format(spec) or DEFAULT_TIME_FORMAT)
        elif pd.api.types.is_numeric_dtype(column.dtype):
            shown[name] = column.astype(float).fillna(MISSING_NUMBER)
            formatters[name] = _number_formatter(_pop_format(spec), integer=pd.api.types.is_integer_dtype(column.dtype))
        else:
            shown[name] = column.astype(object).where(column.notna(), "")
    return shown.style.format(formatters), config


def _type_of(spec: Any) -> str | None:
    if not isinstance(spec, Mapping):
        return None
    type_config = spec.get("type_config") or {}
    return type_config.get("type")


def _pop_format(spec: Any) -> str | None:
    """The printf-style format of a Number/Datetime column config, removed from it (None when there is none)."""
    if not isinstance(spec, dict):
        return None
    type_config = dict(spec.get("type_config") or {})
    found = type_config.pop("format", None)
    spec["type_config"] = type_config
    return found if isinstance(found, str) else None


def _number_formatter(fmt: str | None, *, integer: bool) -> Callable[[object], str]:
    """printf-style (`%.2f`, `%+.1f%%`) as Streamlit's NumberColumn takes it; other names: plain numbers."""

    def show(value: Any) -> str:
        if value == MISSING_NUMBER or pd.isna(value):
            return ""
        if fmt is not None and "%" in fmt:
            text: str = fmt % value
            return text if not _NEGATIVE_ZERO.fullmatch(text) else text[1:]  # -0.0 rounds a tiny negative
        if integer or float(value).is_integer():
            return f"{value:,.0f}"
        return f"{value:,.4f}".rstrip("0").rstrip(".")

    return show


MOMENT_TOKENS = (("YYYY", "%Y"), ("MM", "%m"), ("DD", "%d"), ("HH", "%H"), ("mm", "%M"), ("ss", "%S"))


def _time_formatter(fmt: str) -> Callable[[object], str]:
    strftime = fmt if "%" in fmt else _from_moment(fmt)  # a DatetimeColumn's format is moment.js's

    def show(value: Any) -> str:
        return "" if pd.isna(value) or value == MISSING_TIME else value.strftime(strftime)

    return show


def _from_moment(fmt: str) -> str:
    """A moment.js date format (what Streamlit's DatetimeColumn takes) as strftime's, for the usual tokens;
    a named format ("distance", "calendar") or anything else: the default."""
    converted = fmt
    for token, directive in MOMENT_TOKENS:
        converted = converted.replace(token, directive)
    leftover = re.sub(r"%[YmdHMS]", "", converted)
    return converted if converted != fmt and not any(c.isalpha() for c in leftover) else DEFAULT_TIME_FORMAT
