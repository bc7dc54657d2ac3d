"""The Log Analytics tables the stand-in serves, from the engine's per-minute `History` (and its request log).

Resource-specific tables (azure-monitor.md §6): CDBPartitionKeyRUConsumption, CDBPartitionKeyStatistics,
CDBDataPlaneRequests, CDBQueryRuntimeStatistics; and the legacy `AzureDiagnostics` table (§6.5, with
`Category` and `_s`/`_d`/`_g`-suffixed columns spelled per category: `databasename_s` in
QueryRuntimeStatistics rows, `databaseName_s` in the others). Names, types and spellings come from the
catalogue (`cosmoscore.monitor.logs`); which columns are served is the stand-in's choice (`_SERVED`). Both
modes are served for every workspace id, so a client in either diagnostic-settings mode finds its data.

History keeps per-minute aggregates, so a row is one minute (TimeGenerated = the minute's start, UTC)
of one combination of dimensions, with its request count as a hidden weight (`kql.evaluate.WEIGHT`):
RequestCharge / requestCharge_s hold the minute's RU *sum* (a measure). CDBPartitionKeyRUConsumption is
the exception: the service's rows are a key's aggregated consumption per second (azure-monitor.md §7b
R7), and History keeps the top keys' RU per operation and second, so each row is one (key, pkrange,
operation, second), TimeGenerated that second, RequestCharge its RU: the service's own rows, unweighted,
so every operator (a filter on RequestCharge, `max`, `count()` of rows, `bin(TimeGenerated, 1s)`) is
exact there (§7b R24). CDBPartitionKeyStatistics rows are per-minute snapshots of each key's size
(forward-filled by History), SizeKb = bytes / 1024 rounded. Time filters (`where TimeGenerated ...`, the
body's timespan) act on those minute starts (seconds, on CDBPartitionKeyRUConsumption), so a bound inside
a minute keeps or drops that whole minute. Deviations, by necessity:
- CDBDataPlaneRequests.PartitionId (AzureDiagnostics partitionId_g) is the pkrange id: the emulator
  has one physical partition per range and no partition GUIDs;
- only the top-N logical keys per (minute, pkrange) are kept (History's top_keys), as Azure's own
  PartitionKeyRUConsumption reports the top keys;
- columns the accounting cannot back are never filled: any use of one is refused with the reason
  (`Column.unbacked`), never answered from a made-up value. RequestResourceType: History's cells are not
  split by resource type, and Microsoft's documented values have none for some of the engine's requests
  (azure-monitor.md §7b R54); ActivityId of CDBPartitionKeyRUConsumption: a row there is a key's second,
  summed over requests; ActivityId and DurationMs of the per-minute rows (below). The others (UserAgent,
  ...) are absent, so a query naming them gets the service's "Failed to resolve" error.
Per-request rows (`request_log`, §7b R52-R55): History keeps counts, not ids, so a query naming ActivityId
(activityId_g) anywhere reads CDBDataPlaneRequests and CDBQueryRuntimeStatistics (and those categories'
AzureDiagnostics rows) from the engine's request log instead: one row per request at its own time, with its
ActivityId, StatusCode, RequestCharge and DurationMs (the emulator's own time), unweighted, so every
operator is exact on them; QueryRuntimeStatistics has a row per query the engine ran (not a 429, §7b R53),
as History's query cells count them. The log is bounded: a query whose scanned window reaches minutes the
log no longer fully holds is refused with the time from which ids are known (`Scan.per_request`).
Only the containers and minutes a query's leading `where` pins are read (`Scan`, from `kql.scan`).
The aggregated tables (CDBDataPlaneRequests5M / 15M, resource-specific only) are `aggregated`'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cosmoscore.monitor import logs as catalogue
from cosmoscore.monitor.logs import (
    ACCOUNT_NAME,
    ACTIVITY_ID,
    CATEGORY,
    COLLECTION_NAME,
    DATABASE_NAME,
    DURATION_MS,
    KEY_RU_CATEGORY,
    KEY_STATS_CATEGORY,
    LEGACY_TABLE,
    OPERATION_NAME,
    PARTITION_ID,
    PARTITION_KEY,
    PARTITION_KEY_RANGE_ID,
    QUERY_STATS_CATEGORY,
    QUERY_TEXT,
    REGION_NAME,
    REQUEST_CHARGE,
    REQUEST_RESOURCE_TYPE,
    REQUESTS_CATEGORY,
    RESOURCE,
    RESOURCE_GROUP,
    RESOURCE_ID,
    RESOURCE_ID_,
    RESOURCE_PROVIDER,
    RESOURCE_TYPE,
    SIZE_KB,
    SOURCE_SYSTEM,
    STATUS_CODE,
    SUBSCRIPTION_ID,
    SUBSCRIPTION_ID_,
    TENANT_ID,
    TIME_GENERATED,
    TYPE,
    USER_AGENT,
    legacy_type,
)
from emulator.engine.accounting import Accounting, RequestRecord
from emulator.history.aggregates import KEY_SIZE, History
from emulator.monitor import aggregated, request_log
from emulator.monitor.kql.ast import not_supported, semantic
from emulator.monitor.kql.evaluate import WEIGHT, Shape
from emulator.monitor.kql.expr import Column, Row

CATEGORIES = catalogue.CATEGORIES  # azure-monitor.md §6 diagnostic categories
SENT = (*CATEGORIES, *aggregated.CATEGORIES)  # what the stand-in's diagnostic setting sends unless told
TABLE_CATEGORY = {t.name: t.category for t in catalogue.TABLES.values()}
LEGACY = LEGACY_TABLE
# What the stand-in serves of each category's columns (azure-monitor.md §6.1-6.4), less what the accounting
# cannot back; the container columns lead every row.
_CONTAINER = (TIME_GENERATED, ACCOUNT_NAME, DATABASE_NAME, COLLECTION_NAME, REGION_NAME)
_SERVED = {
    KEY_RU_CATEGORY: (*_CONTAINER, OPERATION_NAME, PARTITION_KEY, PARTITION_KEY_RANGE_ID, REQUEST_CHARGE),
    KEY_STATS_CATEGORY: (*_CONTAINER, PARTITION_KEY, SIZE_KB),
    REQUESTS_CATEGORY: (*_CONTAINER, OPERATION_NAME, STATUS_CODE, PARTITION_ID, REQUEST_CHARGE),
    QUERY_STATS_CATEGORY: (*_CONTAINER[:4], PARTITION_KEY_RANGE_ID, QUERY_TEXT),  # §6.3 has no RegionName
}
_MEASURES = frozenset({REQUEST_CHARGE, catalogue.KEY_RU.legacy[REQUEST_CHARGE]})  # a minute's RU sum
# Rows the service writes as the stand-in does, one each: a key's snapshot, a key's second per operation
_UNWEIGHTED = frozenset({KEY_STATS_CATEGORY, KEY_RU_CATEGORY})
_STANDARD_NAMES = (TENANT_ID, SOURCE_SYSTEM, TYPE, RESOURCE_ID_, SUBSCRIPTION_ID_)
_LEGACY_OWN = (
    TIME_GENERATED,
    CATEGORY,
    RESOURCE,
    RESOURCE_ID,
    RESOURCE_GROUP,
    SUBSCRIPTION_ID,
    RESOURCE_PROVIDER,
    RESOURCE_TYPE,
)  # AzureDiagnostics' own columns the stand-in fills (§6.5)


def _column(name: str, kusto_type: str) -> Column:
    """The stand-in's column of a catalogue type (it has no guid type: a GUID is a string)."""
    return Column(catalogue.STRING if kusto_type == catalogue.GUID else kusto_type, measure=name in _MEASURES)


def _served(category: str, per_request: bool) -> tuple[str, ...]:
    """The category's served columns; per-request rows add the request's own (`request_log.ADDED`)."""
    return (*_SERVED[category], *(request_log.ADDED.get(category, ()) if per_request else ()))


# Columns of the service's tables the stand-in names but cannot fill, and why (`Column.unbacked`)
_WHY_IDS = (
    "the ruscope stand-in's per-minute rows keep request counts, not ids (a query naming ActivityId reads "
    "per-request rows instead)"
)
_WHY_KEY_IDS = (
    "a row of this table is a key's RU in one second summed over its requests (azure-monitor.md §7b R24): no "
    "one request's id"
)
_WHY_DURATION = (
    "the ruscope stand-in's per-minute rows keep no durations; its per-request rows (a query naming ActivityId) do"
)
_WHY_RESOURCE_TYPE = (
    "the ruscope stand-in keeps each minute's requests per operation, status and pkrange, not per resource type"
)


_WHY_USER_AGENT = (
    "the ruscope stand-in's per-minute rows keep no user agents; its per-request rows (a query naming ActivityId) do"
)


def _unbacked(category: str) -> dict[str, str]:
    ids = _WHY_KEY_IDS if category == KEY_RU_CATEGORY else _WHY_IDS
    return {
        ACTIVITY_ID: ids,
        DURATION_MS: _WHY_DURATION,
        REQUEST_RESOURCE_TYPE: _WHY_RESOURCE_TYPE,
        USER_AGENT: _WHY_USER_AGENT,
    }


def _own_columns(category: str, per_request: bool = False) -> dict[str, Column]:
    types = {c.name: c.type for c in catalogue.BY_CATEGORY[category].columns}  # KeyError: not catalogued
    served = {name: _column(name, types[name]) for name in _served(category, per_request)}
    unbacked = {
        name: Column(catalogue.STRING, unbacked=why)
        for name, why in _unbacked(category).items()
        if name in types and name not in served
    }
    return {**served, **unbacked}


_STANDARD = {name: Column(catalogue.STRING) for name in _STANDARD_NAMES}
_FIELDS = {category: _own_columns(category) for category in CATEGORIES}
_REQUEST_FIELDS = {category: _own_columns(category, per_request=True) for category in CATEGORIES}


def _legacy_names(per_request: bool) -> dict[str, dict[str, str]]:
    """The AzureDiagnostics spelling of each served column, per category (azure-monitor.md §6.5; they differ)."""
    return {
        category: {name: catalogue.BY_CATEGORY[category].legacy[name] for name in _served(category, per_request)}
        for category in CATEGORIES
    }


def _legacy_columns(names: dict[str, dict[str, str]]) -> dict[str, Column]:
    served = dict.fromkeys(legacy for by_name in names.values() for legacy in by_name.values())  # in order
    return {
        **{name: Column(legacy_type(name)) for name in _LEGACY_OWN},
        **{legacy: _column(legacy, legacy_type(legacy)) for legacy in served},
        **{
            table.legacy[name]: Column(catalogue.STRING, unbacked=why)
            for category, table in catalogue.BY_CATEGORY.items()
            for name, why in _unbacked(category).items()
            if name in table.legacy and table.legacy[name] not in served
        },
        **_STANDARD,
    }


LEGACY_NAMES = _legacy_names(per_request=False)
_REQUEST_LEGACY_NAMES = _legacy_names(per_request=True)
_LEGACY_COLUMNS = _legacy_columns(LEGACY_NAMES)
_REQUEST_LEGACY_COLUMNS = _legacy_columns(_REQUEST_LEGACY_NAMES)


def spellings(name: str) -> frozenset[str]:
    """Column `name` (resource-specific) and its legacy spellings in every category that serves it."""
    return frozenset({name} | {names[name] for names in LEGACY_NAMES.values() if name in names})


EVERYTHING = (0.0, 1e11)  # [since, until) with no time limit (History bounds it by its retention)


@dataclass(frozen=True)
class Scan:
    """What a query reads: [since, until) epoch seconds, and the containers and categories it pins
    (None: all)."""

    since: float = EVERYTHING[0]
    until: float = EVERYTHING[1]
    databases: frozenset[str] | None = None
    containers: frozenset[str] | None = None
    categories: frozenset[str] | None = None
    # rows of the request tables per request, from the request log (`request_log.wants_request_rows`)
    per_request: bool = False


@dataclass(frozen=True)
class Source:
    """The account the rows describe and the workspace they are said to sit in."""

    history: History
    containers: frozenset[tuple[str, str]]  # `Engine.monitored_containers()`: live ones and those with history
    account: str
    resource_id: str
    region: str
    workspace: str
    tick: Callable[[], None] | None = None  # the request's budget check, called as history is read
    categories: frozenset[str] = frozenset(SENT)  # what the diagnostic setting sends to the workspace
    now: float | None = None  # the query's now: an aggregated interval is written once it has ended
    accounting: Accounting | None = None  # the engine's request log: what per-request rows are read from


def shape_of(table: str, scan: Scan) -> Shape:
    """The table's columns and weighting, or the service's SEM0100 for an unknown table."""
    if table in aggregated.TABLES:
        return aggregated.shape_of(table, _STANDARD)
    per = scan.per_request
    if table in TABLE_CATEGORY:
        category = TABLE_CATEGORY[table]
        columns = {**(_REQUEST_FIELDS if per else _FIELDS)[category], **_STANDARD}
        weighted = category not in _unweighted(per)
        return Shape(columns, weighted=weighted, resolution=_resolution({category}, per))
    if table == LEGACY:
        categories = scan.categories if scan.categories is not None else frozenset(CATEGORIES)
        weighted = bool(categories - _unweighted(per))
        columns = dict(_REQUEST_LEGACY_COLUMNS if per else _LEGACY_COLUMNS)
        return Shape(columns, weighted=weighted, resolution=_resolution(categories, per))
    raise semantic(f"Failed to resolve table or column expression named '{table}'")


def _unweighted(per_request: bool) -> frozenset[str]:
    """The categories whose rows are the service's own rows, one each (per request: the request tables too)."""
    return _UNWEIGHTED | frozenset(request_log.CATEGORIES) if per_request else _UNWEIGHTED


def _resolution(categories: frozenset[str] | set[str], per_request: bool = False) -> int:
    """Seconds a row's TimeGenerated stands for: 1 where every category read is kept per second (or finer)."""
    fine = {KEY_RU_CATEGORY, *(request_log.CATEGORIES if per_request else ())}
    return 1 if categories and categories <= fine else 60


def rows(table: str, scan: Scan, source: Source) -> Iterator[Row]:
    """The table's rows for `scan`, produced lazily container by container."""
    if table in aggregated.TABLES:
        yield from aggregated.rows(table, scan, source, _containers(scan, source), _standard_values(table, source))
        return
    legacy = table == LEGACY
    categories = [TABLE_CATEGORY[table]] if not legacy else [c for c in CATEGORIES if _wanted(scan.categories, c)]
    categories = [c for c in categories if c in source.categories]  # a category not sent has no rows
    sub = source.resource_id.split("/")[2] if source.resource_id.count("/") > 2 else ""
    group = source.resource_id.split("/")[4] if source.resource_id.count("/") > 4 else ""
    standard = _standard_values(table, source)
    times: dict[float, dt.datetime] = {}
    log = _request_records(scan, source, categories)
    for db, coll in _containers(scan, source):
        for category in categories:
            records = log[(db, coll)] if log is not None and category in request_log.CATEGORIES else None
            per_request = records is not None
            facts = (
                request_log.facts(category, records)
                if records is not None
                else _facts(category, source, db, coll, scan)
            )
            for at, fields, weight in facts:
                if per_request:  # a request's own time (only minute starts are cached)
                    when = dt.datetime.fromtimestamp(at, dt.UTC)
                else:
                    when = times.get(at) or times.setdefault(at, dt.datetime.fromtimestamp(at, dt.UTC))
                common: dict[str, object] = {DATABASE_NAME: db, COLLECTION_NAME: coll}
                if REGION_NAME in _FIELDS[category]:  # not in every table (§6.3)
                    common[REGION_NAME] = source.region
                common.update(fields)
                if not legacy:
                    yield {TIME_GENERATED: when, ACCOUNT_NAME: source.account, **common, **standard, WEIGHT: weight}
                    continue
                names = (_REQUEST_LEGACY_NAMES if per_request else LEGACY_NAMES)[category]
                row: Row = {names[k]: _legacy_value(k, v) for k, v in common.items()}
                row[TIME_GENERATED], row[CATEGORY], row[RESOURCE] = when, category, source.account.upper()
                row[RESOURCE_ID], row[RESOURCE_GROUP], row[SUBSCRIPTION_ID] = (
                    source.resource_id.upper(),
                    group.upper(),
                    sub,
                )
                row[RESOURCE_PROVIDER], row[RESOURCE_TYPE] = "MICROSOFT.DOCUMENTDB", "DATABASEACCOUNTS"
                row.update(standard)
                row[WEIGHT] = weight
                yield row


def _standard_values(table: str, source: Source) -> dict[str, object]:
    """The standard columns of a row of `table` (azure-monitor.md §6): workspace, table, resource."""
    sub = source.resource_id.split("/")[2] if source.resource_id.count("/") > 2 else ""
    return {
        TENANT_ID: source.workspace,
        SOURCE_SYSTEM: "Azure",
        TYPE: table,
        RESOURCE_ID_: source.resource_id.lower(),
        SUBSCRIPTION_ID_: sub,
    }


def _request_records(
    scan: Scan, source: Source, categories: list[str]
) -> dict[tuple[str, str], list[RequestRecord]] | None:
    """The scanned containers' requests from the log when the query reads per-request rows, else None."""
    if not scan.per_request or not set(categories) & set(request_log.CATEGORIES):
        return None
    if source.accounting is None:
        raise not_supported(f"{ACTIVITY_ID}: this ruscope stand-in was started without the engine's request log")
    return request_log.read_log(
        source.accounting, source.history, (scan.since, scan.until), _containers(scan, source), source.tick
    )


def _wanted(pinned: frozenset[str] | None, value: str) -> bool:
    return pinned is None or value in pinned


def _containers(scan: Scan, source: Source) -> list[tuple[str, str]]:
    return sorted(p for p in source.containers if _wanted(scan.databases, p[0]) and _wanted(scan.containers, p[1]))


def _legacy_value(name: str, value: object) -> object:
    """Legacy columns are strings (`_s`, `_g`) except sizeKb_d (real)."""
    if name == SIZE_KB:
        return float(value)  # type: ignore[arg-type]
    return None if value is None else str(value)


Fact = tuple[float, dict[str, object], float | None]  # minute start, fields, request count


def _facts(category: str, source: Source, db: str, coll: str, scan: Scan) -> Iterator[Fact]:
    """One container's facts of `category`, minute by minute as History streams them (`minute_entries`):
    a query over the whole retention holds one minute, not the whole history's points."""
    since, until = scan.since, scan.until
    history, tick = source.history, source.tick
    if category == KEY_STATS_CATEGORY:  # states forward-filled per minute: what `series` computes
        for p in history.series(db, coll, KEY_SIZE, since, until, tick=tick):
            yield p.time, {PARTITION_KEY: p.dimensions[PARTITION_KEY], SIZE_KB: round(p.value / 1024)}, 1.0
    elif category == KEY_RU_CATEGORY:  # a row per key, operation and second, as the service writes them
        for minute, (pk, key, op, second), (ru,) in history.minute_entries(
            db, coll, "key_ops", since, until, tick=tick
        ):
            fields = {PARTITION_KEY: key, PARTITION_KEY_RANGE_ID: pk, OPERATION_NAME: op, REQUEST_CHARGE: ru}
            yield minute + int(second), fields, 1.0
    elif category == REQUESTS_CATEGORY:
        entries = history.minute_entries(db, coll, "ops", since, until, by_pk=True, tick=tick)
        for minute, (op, status, pk), (count, ru) in entries:
            yield minute, {OPERATION_NAME: op, STATUS_CODE: int(status), PARTITION_ID: pk, REQUEST_CHARGE: ru}, count
    else:
        for minute, (pk, text), (_, count) in history.minute_entries(db, coll, "queries", since, until, tick=tick):
            yield minute, {PARTITION_KEY_RANGE_ID: pk, QUERY_TEXT: text}, count
