"""The store's tables in the frame's view: every dashboard read of the store goes through here.

A page asks for a table in the frame's view (`FrameState`: store, window, scope) and only for the columns it
needs; the store prunes whole days by their date partitions and reads only those columns, so a page over
the last day of a large `requests` table reads a day of a few columns, not the table. The window's end (a
custom range's) is cut by the store (`read_table`'s `until`) in `_read`, the one place every read passes.

Each loader returns a `Loaded`: the frame plus the store's warnings (a skipped corrupt file, a leftover temp
file) as text, so a page can show them even when the result comes from the cache.

**What a cached result is keyed by.** Every cached read and every page loader's result is keyed by the
store's table versions (`store_versions`: every table's latest Delta version, looked at once per
`FRESH_SECONDS`) besides its arguments: any commit (a collect, a compact, a refresh of the span cells, a
repair) is a new version, so a running collector's rows show up within `FRESH_SECONDS`, and a store that has
not changed is never read again while its results are cached (`TTL_SECONDS`, an hour, only frees the memory
of views nobody looks at). A time-keyed cache (30 s before) made every visit after it cold: a page of a
month's store costs seconds to compute. `cached_view` is the key a page loader takes (the view and the
versions). In this module `st.cache_data` sits on `load_table` alone; the scope cut after it is a pure
function from `analysis.scope` (cheap, and cutting outside the cache keeps one entry per time range). The
page loaders beside this module cache their own results on top (the package docstring lists the caches).
Tests call `st.cache_data.clear()` between runs.

`read_view` is the one uncached read: the same view and scope cut as `load_view`, for a page that reduces a
large table (a month of one-minute metrics is millions of points) and caches the small reduced result in
its own loader instead (`hot_partitions`; the metrics of `overview`, `fleet`, `report` and `throttling`).
Caching the raw points would pickle them into the cache (hundreds of MB, and twice that at the peak while
pickling) only to reduce them once per view.
"""

from __future__ import annotations

import datetime as dt
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pandas as pd
import streamlit as st

from analysis import regions, scope
from dashboard.state import FrameState
from store import StoreLocation, StoreWarning, empty_frame, read_table, store_location, table_versions
from store.records import SHARED_OFFER_CONTAINER

FRESH_SECONDS = 10  # how often the store's table versions are looked at: a collect's rows show within this
TTL_SECONDS = 60 * 60  # a cached result's life: keyed by the versions, this only frees what nobody looks at
# and how many results each cache holds, least recently used out first: a collector committing every minute
# makes a new key a minute, and the time to live no longer bounds the entries of the versions before
READ_ENTRIES = 32  # store reads (a month's executions are tens of MB pickled)
PAGE_ENTRIES = 16  # a page loader's results (a few MB each)
SMALL_ENTRIES = 64  # stale spans, region choices, the versions themselves: a few KB each
LOCATION_TTL_SECONDS = 30 * 60  # under a bearer token's hour, so a cached location never holds an expired one
SCOPE_TABLES = ("executions",)  # the tables whose databases and containers the scope picker offers
_WARNINGS_LOCK = threading.Lock()  # catch_warnings is process-wide: one capturing read at a time


def cached_view(view: FrameState) -> FrameState:
    """The part of a view a page loader's result depends on (store, window, scope, region) and the store's
    table versions it is read at: a cached loader's argument, hashed by Streamlit (the store's list of regions
    is the store's, not the view's)."""
    return FrameState(
        store=view.store, window=view.window, scope=view.scope, region=view.region, versions=store_versions(view.store)
    )


@st.cache_data(ttl=FRESH_SECONDS, show_spinner=False, max_entries=SMALL_ENTRIES)
def store_versions(store: str) -> tuple[tuple[str, int | None], ...]:
    """Every table's latest version in `store` (`store.table_versions`), the key of every cached result (the
    module docstring); empty for a URI that cannot be a store (its reads say why)."""
    try:
        return table_versions(store_at(store))
    except (ValueError, OSError):
        return ()


@dataclass(frozen=True)
class Loaded:
    """A table read from the store, with the warnings the read raised."""

    frame: pd.DataFrame
    warnings: tuple[str, ...] = field(default=())


def load_table(
    store: str,
    table: str,
    *,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    columns: tuple[str, ...] | None = None,
    run_ids: tuple[str, ...] | None = None,
) -> Loaded:
    """The rows of `table` timed at or after `since` and before `until` (of `run_ids` only, when given), only
    `columns` (all when None); cached per the store's versions (the module docstring).

    Empty with its columns if none. The store opens only the date partitions from `since` on and only the
    columns asked for; an unknown table or column is its ValueError.
    """
    versions = store_versions(store)
    return _load_table(store, table, versions, since=since, until=until, columns=columns, run_ids=run_ids)


@st.cache_data(ttl=TTL_SECONDS, show_spinner="Reading the store...", max_entries=READ_ENTRIES)
def _load_table(
    store: str,
    table: str,
    versions: tuple[tuple[str, int | None], ...],
    *,
    since: dt.datetime | None,
    until: dt.datetime | None,
    columns: tuple[str, ...] | None,
    run_ids: tuple[str, ...] | None,
) -> Loaded:
    return _read(store, table, since=since, until=until, columns=columns, run_ids=run_ids)


@st.cache_resource(ttl=LOCATION_TTL_SECONDS, show_spinner=False)
def store_at(uri: str) -> StoreLocation:
    """The store the frame names, as the one location type the store reads (never `Path(uri)`, which folds
    `az://container/path` into `az:/container/path`). Cached per URI: a remote store's credentials (a bearer
    token lasts about an hour) are resolved once per `LOCATION_TTL_SECONDS`, not on every read."""
    return store_location(uri)


def _read(
    store: str,
    table: str,
    *,
    since: dt.datetime | None,
    columns: tuple[str, ...] | None,
    run_ids: tuple[str, ...] | None,
    until: dt.datetime | None = None,
    exclude: dict[str, tuple[str, ...]] | None = None,
    only: dict[str, tuple[str, ...]] | None = None,
    distinct: bool = False,
) -> Loaded:
    """One store read with its warnings captured (`load_table`'s body, uncached), cut before `until`, less
    the rows holding `exclude`'s values, only those holding `only`'s (`store.read_table`)."""
    try:
        location = store_at(store)
    except ValueError as exc:  # a URI that cannot be a store, or a remote one without credentials
        return Loaded(empty_frame(table, columns), (f"store: {exc}",))
    with _WARNINGS_LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StoreWarning)
        frame = read_table(
            location, table, since=since, until=until, columns=columns, run_ids=run_ids, exclude=exclude, only=only,
            distinct=distinct,
        )  # fmt: skip
    messages = tuple(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, StoreWarning)))
    return Loaded(frame, messages)


def load_view(
    view: FrameState, table: str, *, columns: Sequence[str], run_ids: tuple[str, ...] | None = None
) -> Loaded:
    """The rows of `table` in the frame's view (its store, time range and scope), only `columns`.

    The scope's columns are read too, to cut the scope, and dropped again unless asked for.
    """
    wanted = list(dict.fromkeys(columns))
    read = tuple(dict.fromkeys([*wanted, *scope.SCOPE_COLUMNS]))
    loaded = load_table(view.store, table, since=view.since, until=view.until, columns=read, run_ids=run_ids)
    frame = scope.select_scope(loaded.frame, view.scope).reset_index(drop=True)
    return Loaded(frame[wanted], loaded.warnings)


def load_with_shared_offer(
    view: FrameState,
    table: str,
    *,
    columns: Sequence[str],
    cached: bool = True,
    exclude: dict[str, tuple[str, ...]] | None = None,
) -> Loaded:
    """Like `load_view` (`read_view` when not `cached`, with its `exclude`), and when the scope names one
    container, also the rows of its database's shared throughput offer (`store.records.SHARED_OFFER_CONTAINER`):
    a container that spends that offer has its provisioned RU/s and its partitions' utilisation there, not
    under its own name."""

    def read(chosen: FrameState) -> Loaded:
        if cached:
            return load_view(chosen, table, columns=columns)
        return read_view(chosen, table, columns=columns, exclude=exclude)

    loaded = read(view)
    chosen = view.scope
    if chosen.container is None or chosen.container == SHARED_OFFER_CONTAINER:
        return loaded
    extra = read(replace(view, scope=replace(chosen, container=SHARED_OFFER_CONTAINER)))
    if extra.frame.empty:
        return loaded
    return Loaded(pd.concat([loaded.frame, extra.frame], ignore_index=True), loaded.warnings)


def read_view(
    view: FrameState,
    table: str,
    *,
    columns: Sequence[str],
    exclude: dict[str, tuple[str, ...]] | None = None,
    only: dict[str, tuple[str, ...]] | None = None,
) -> Loaded:
    """Like `load_view` (the view's rows, only `columns`, the scope cut), but read from the store every call
    and never cached: for a loader that caches its own reduction of a large table (module docstring);
    `exclude`: rows holding these values left out in the read, `only`: only rows holding these (`store.read_table`).

    With no scope the frame is not copied to cut it (a copy of millions of points is seconds and memory).
    """
    wanted = list(dict.fromkeys(columns))
    read = tuple(dict.fromkeys([*wanted, *scope.SCOPE_COLUMNS]))
    loaded = _read(
        view.store, table, since=view.since, columns=read, run_ids=None, until=view.until, exclude=exclude, only=only
    )
    frame = loaded.frame if view.scope == scope.Scope() else scope.select_scope(loaded.frame, view.scope)
    return Loaded(frame[wanted], loaded.warnings)


def load_scope_choices(store: str, window: scope.Window) -> pd.DataFrame:
    """The (account, database, container) triples with data in the time range, for the frame's scope picker.

    The warnings of these reads are not returned: the page that reads the table shows them, once.
    """
    columns = tuple(scope.SCOPE_COLUMNS)
    return scope.scope_choices(
        load_table(store, t, since=window.start, until=window.end, columns=columns).frame for t in SCOPE_TABLES
    )


def load_region_choices(store: str, window: scope.Window, account: str | None) -> list[str]:
    """The regions the store's metrics name in the time range (of `account`, when the scope names one), for
    the frame's region picker (`analysis.regions`)."""
    columns = tuple(dict.fromkeys([*scope.SCOPE_COLUMNS, *regions.REGION_COLUMNS]))
    return _region_choices(store, store_versions(store), window.start, window.end, columns, account)


@st.cache_data(ttl=TTL_SECONDS, show_spinner=False, max_entries=SMALL_ENTRIES)
def _region_choices(
    store: str,
    versions: tuple[tuple[str, int | None], ...],
    since: dt.datetime | None,
    until: dt.datetime | None,
    columns: tuple[str, ...],
    account: str | None,
) -> list[str]:
    """`load_region_choices`' answer, cached small: the distinct (scope, region) rows of the metrics, computed
    by the store in Arrow (a month's points are millions of rows; caching them pickled half a GB)."""
    frame = _read(store, "metrics", since=since, until=until, columns=columns, run_ids=None, distinct=True).frame
    return regions.regions(scope.select_scope(frame, scope.Scope(account=account)))
