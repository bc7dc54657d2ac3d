"""The capacity report's first section, `report`: what the report is of (its window, store, generation time,
region and ruscope's version), so that a CSV or xlsx describes itself. The callers (`ruscope report`, the
Reports page) pass these in; nothing here reads a clock or the environment."""

from __future__ import annotations

import datetime as dt
import math
import urllib.parse
from dataclasses import dataclass

import pandas as pd

from analysis.capacity.actions import COLUMNS, KEY


@dataclass(frozen=True)
class ReportAbout:
    """What the report is of, written as its first section (`about_rows`) so a CSV or xlsx says it itself:
    the window (UTC), the store as the user named it (`public_store_text`: no credentials), when it was made,
    the region (None: all regions in total) and ruscope's version."""

    window_start: dt.datetime | None
    window_end: dt.datetime | None
    store: str
    generated: dt.datetime
    region: str | None
    version: str
    window_note: str = ""  # how the window was chosen, e.g. "--since 24h" or "all data: the first row read"


def data_window(frames: dict[str, pd.DataFrame]) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """The first and last `time` of any row of `frames`: the window of a report of all the data read."""
    times = [pd.to_datetime(f["time"], utc=True) for f in frames.values() if "time" in f.columns and not f.empty]
    stamps = pd.concat(times).dropna() if times else pd.Series(dtype="datetime64[ns, UTC]")
    return (stamps.min(), stamps.max()) if not stamps.empty else (None, None)


def public_store_text(uri: str) -> str:
    """A store location fit to print: no query string (a SAS token), fragment or credentials before an `@`
    (abfss' `container@account` is a name, kept unless it holds a `:` password)."""
    if "://" not in uri:
        return uri.split("?", 1)[0]
    scheme, netloc, path, _, _ = urllib.parse.urlsplit(uri)
    user, at, host = netloc.rpartition("@")
    if at and (":" in user or scheme not in ("abfs", "abfss")):
        netloc = host
    return urllib.parse.urlunsplit((scheme, netloc, path, "", ""))


def about_rows(about: ReportAbout) -> pd.DataFrame:
    """The `report` section: one row per fact of `about`, the fact in `detail` as text, `value` empty."""
    utc = [None if t is None else pd.Timestamp(t).tz_convert("UTC") if pd.Timestamp(t).tzinfo else pd.Timestamp(t, tz="UTC")
           for t in (about.window_start, about.window_end, about.generated)]  # fmt: skip
    text = ["" if t is None else t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in utc]
    note = f" ({about.window_note})" if about.window_note else ""
    facts = [
        ("window_start", text[0] + note if text[0] else f"none{note}"),
        ("window_end", text[1]),
        ("store", public_store_text(about.store)),
        ("generated_at", text[2]),
        ("region", about.region or "all regions"),
        ("ruscope_version", about.version),
    ]
    rows = [{"section": "report", **dict.fromkeys(KEY, ""), "subject": "", "measure": m, "value": math.nan,
             "unit": "", "detail": d} for m, d in facts]  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
