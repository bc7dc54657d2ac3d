"""Cached loaders: the only dashboard code that reads the store.

Each loader reads through `collectors.store` and returns a `Loaded`: the frame plus the store's warnings
(a skipped corrupt file, a leftover temp file) as text, so a page can show them even when the result
comes from the cache. Results are cached for `TTL_SECONDS`, so a running collector's new files show up
within that time without hammering the disk on every widget change. `st.cache_data` sits here and
nowhere else; tests call `st.cache_data.clear()` between runs.
"""

from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from collectors.schema import TABLES
from collectors.store import StoreWarning, read_table

STORE_ENV = "RUSCOPE_STORE"  # set by `ruscope dashboard --store DIR`
DEFAULT_STORE = "ruscope-data"
TTL_SECONDS = 30
_WARNINGS_LOCK = threading.Lock()  # catch_warnings is process-wide: one capturing read at a time


@dataclass(frozen=True)
class Loaded:
    """A table read from the store, with the warnings the read raised."""

    frame: pd.DataFrame
    warnings: tuple[str, ...] = field(default=())


def default_store() -> str:
    """The store directory: $RUSCOPE_STORE, else `ruscope-data` (relative to the working directory)."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


@st.cache_data(ttl=TTL_SECONDS, show_spinner="Reading the store...")
def load_table(store: str, table: str, run_ids: tuple[str, ...] | None = None) -> Loaded:
    """Every row of `table` in the store (of `run_ids` only, when given); empty with its columns if none."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StoreWarning)
        frame = read_table(Path(store), table, run_ids=run_ids)
    messages = tuple(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, StoreWarning)))
    return Loaded(frame, messages)


def load_executions(store: str) -> Loaded:
    """The `executions` table (one row per query execution, or per feed range of one)."""
    return load_table(store, "executions")


def load_requests(store: str, run_id: str) -> Loaded:
    """The `requests` rows of one run (the table is large: never read it whole for a page)."""
    return load_table(store, "requests", (run_id,))
