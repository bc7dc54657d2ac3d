"""The Log Analytics tables the stand-in serves, computed from the engine's per-minute `History`.

Resource-specific tables (azure-monitor.md §6): CDBPartitionKeyRUConsumption, CDBPartitionKeyStatistics,
CDBDataPlaneRequests, CDBQueryRuntimeStatistics; and the legacy `AzureDiagnostics` table (§6, with
`Category` and `_s`/`_d`/`_g`-suffixed columns). Both are served for every workspace id, so a client
in either diagnostic-settings mode finds its data.

History keeps per-minute aggregates, so a row is one minute (TimeGenerated = the minute's start, UTC)
of one combination of dimensions, with its request count as a hidden weight (`kql.evaluate.WEIGHT`):
RequestCharge / requestCharge_s hold the minute's RU *sum* (a measure). CDBPartitionKeyStatistics rows
are per-minute snapshots of each key's size (forward-filled by History), SizeKb = bytes / 1024 rounded.
Time filters (`where TimeGenerated ...`, the body's timespan) act on those minute starts, so a bound
inside a minute keeps or drops that whole minute. Deviations, by necessity:
- CDBDataPlaneRequests.PartitionId (AzureDiagnostics partitionId_g) is the pkrange id: the emulator
  has one physical partition per range and no partition GUIDs;
- only the top-N logical keys per (minute, pkrange) are kept (History's top_keys), as Azure's own
  PartitionKeyRUConsumption reports the top keys;
- columns the accounting cannot back (ActivityId, DurationMs, OperationName per key, ...) are absent,
  so a query naming them gets the service's "Failed to resolve" error instead of a made-up value.
Only the containers and minutes a query's leading `where` pins are read (`Scan`, from `kql.scan`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass

from emulator.history.aggregates import (
    KEY_COUNT,
    KEY_RU,
    KEY_SIZE,
    QUERY_COUNT,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
    History,
)
from emulator.monitor.kql.ast import semantic
from emulator.monitor.kql.evaluate import WEIGHT, Shape
from emulator.monitor.kql.expr import Column, Row

KEY_RU_CAT, KEY_SIZE_CAT = "PartitionKeyRUConsumption", "PartitionKeyStatistics"
REQUESTS_CAT, QUERY_CAT = "DataPlaneRequests", "QueryRuntimeStatistics"
CATEGORIES = (KEY_RU_CAT, KEY_SIZE_CAT, REQUESTS_CAT, QUERY_CAT)  # azure-monitor.md §6 diagnostic categories
TABLE_CATEGORY = {
    "CDBPartitionKeyRUConsumption": KEY_RU_CAT,
    "CDBPartitionKeyStatistics": KEY_SIZE_CAT,
    "CDBDataPlaneRequests": REQUESTS_CAT,
    "CDBQueryRuntimeStatistics": QUERY_CAT,
}
LEGACY = "AzureDiagnostics"
_S, _R, _I, _L, _T = Column("string"), Column("real"), Column("int"), Column("long"), Column("datetime")
_STANDARD = {"TenantId": _S, "SourceSystem": _S, "Type": _S, "_ResourceId": _S, "_SubscriptionId": _S}
_CONTAINER = {"TimeGenerated": _T, "AccountName": _S, "DatabaseName": _S, "CollectionName": _S, "RegionName": _S}
# Resource-specific columns per category (azure-monitor.md §6.1-6.4), less what the accounting cannot back.
_FIELDS: dict[str, dict[str, Column]] = {
    KEY_RU_CAT: {"PartitionKey": _S, "PartitionKeyRangeId": _S, "RequestCharge": Column("real", measure=True)},
    KEY_SIZE_CAT: {"PartitionKey": _S, "SizeKb": _I},
    REQUESTS_CAT: {
        "OperationName": _S,
        "StatusCode": _I,
        "PartitionId": _S,
        "RequestCharge": Column("real", measure=True),
    },
    QUERY_CAT: {"PartitionKeyRangeId": _S, "QueryText": _S},
}
# AzureDiagnostics spelling of each resource-specific column (azure-monitor.md §6; the suffix is the type).
LEGACY_NAMES = {
    "DatabaseName": "databaseName_s",
    "CollectionName": "collectionName_s",
    "RegionName": "regionName_s",
    "PartitionKey": "partitionKey_s",
    "PartitionKeyRangeId": "partitionKeyRangeId_s",
    "RequestCharge": "requestCharge_s",
    "SizeKb": "sizeKb_d",
    "StatusCode": "statusCode_s",
    "PartitionId": "partitionId_g",
    "OperationName": "OperationName",
    "QueryText": "querytext_s",
}
_LEGACY_COLUMNS = {
    "TimeGenerated": _T,
    "Category": _S,
    "Resource": _S,
    "ResourceId": _S,
    "ResourceGroup": _S,
    "SubscriptionId": _S,
    "ResourceProvider": _S,
    "ResourceType": _S,
    **{legacy: _S for legacy in LEGACY_NAMES.values()},
    "sizeKb_d": _R,
    "requestCharge_s": Column("string", measure=True),
    **_STANDARD,
}
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


@dataclass(frozen=True)
class Source:
    """The account the rows describe and the workspace they are said to sit in."""

    history: History
    containers: frozenset[tuple[str, str]]  # `Engine.monitored_containers()`: live ones and those with history
    account: str
    resource_id: str
    region: str
    workspace: str


def shape_of(table: str, scan: Scan) -> Shape:
    """The table's columns and weighting, or the service's SEM0100 for an unknown table."""
    if table in TABLE_CATEGORY:
        category = TABLE_CATEGORY[table]
        columns = {**_CONTAINER, **_FIELDS[category], **_STANDARD}
        return Shape(columns, weighted=category != KEY_SIZE_CAT)
    if table == LEGACY:
        categories = scan.categories if scan.categories is not None else frozenset(CATEGORIES)
        return Shape(dict(_LEGACY_COLUMNS), weighted=bool(categories - {KEY_SIZE_CAT}))
    raise semantic(f"Failed to resolve table or column expression named '{table}'")


def rows(table: str, scan: Scan, source: Source) -> Iterator[Row]:
    """The table's rows for `scan`, produced lazily container by container."""
    legacy = table == LEGACY
    categories = [TABLE_CATEGORY[table]] if not legacy else [c for c in CATEGORIES if _wanted(scan.categories, c)]
    sub = source.resource_id.split("/")[2] if source.resource_id.count("/") > 2 else ""
    group = source.resource_id.split("/")[4] if source.resource_id.count("/") > 4 else ""
    standard = {
        "TenantId": source.workspace,
        "SourceSystem": "Azure",
        "Type": table,
        "_ResourceId": source.resource_id.lower(),
        "_SubscriptionId": sub,
    }
    times: dict[float, dt.datetime] = {}
    for db, coll in _containers(scan, source):
        for category in categories:
            for minute, fields, weight in _facts(category, source.history, db, coll, scan):
                when = times.get(minute) or times.setdefault(minute, dt.datetime.fromtimestamp(minute, dt.UTC))
                common = {"DatabaseName": db, "CollectionName": coll, "RegionName": source.region, **fields}
                if not legacy:
                    yield {"TimeGenerated": when, "AccountName": source.account, **common, **standard, WEIGHT: weight}
                    continue
                row: Row = {LEGACY_NAMES[k]: _legacy_value(k, v) for k, v in common.items()}
                row.update(
                    TimeGenerated=when,
                    Category=category,
                    Resource=source.account.upper(),
                    ResourceId=source.resource_id.upper(),
                    ResourceGroup=group.upper(),
                    SubscriptionId=sub,
                    ResourceProvider="MICROSOFT.DOCUMENTDB",
                    ResourceType="DATABASEACCOUNTS",
                )
                row.update(standard)
                row[WEIGHT] = weight
                yield row


def _wanted(pinned: frozenset[str] | None, value: str) -> bool:
    return pinned is None or value in pinned


def _containers(scan: Scan, source: Source) -> list[tuple[str, str]]:
    return sorted(p for p in source.containers if _wanted(scan.databases, p[0]) and _wanted(scan.containers, p[1]))


def _legacy_value(name: str, value: object) -> object:
    """Legacy columns are strings (`_s`, `_g`) except sizeKb_d (real)."""
    if name == "SizeKb":
        return float(value)  # type: ignore[arg-type]
    return None if value is None else str(value)


Fact = tuple[float, dict[str, object], float | None]  # minute start, fields, request count


def _facts(category: str, history: History, db: str, coll: str, scan: Scan) -> Iterator[Fact]:
    since, until = scan.since, scan.until
    if category == KEY_RU_CAT:
        counts = _by_dims(history.series(db, coll, KEY_COUNT, since, until), "PartitionKeyRangeId", "PartitionKey")
        for p in history.series(db, coll, KEY_RU, since, until):
            pk, key = p.dimensions["PartitionKeyRangeId"], p.dimensions["PartitionKey"]
            fields: dict[str, object] = {"PartitionKey": key, "PartitionKeyRangeId": pk, "RequestCharge": p.value}
            yield p.time, fields, counts.get((p.time, pk, key))
    elif category == KEY_SIZE_CAT:
        for p in history.series(db, coll, KEY_SIZE, since, until):
            yield p.time, {"PartitionKey": p.dimensions["PartitionKey"], "SizeKb": round(p.value / 1024)}, 1.0
    elif category == REQUESTS_CAT:
        dims = ("OperationType", "StatusCode", "PartitionKeyRangeId")
        charges = _by_dims(history.series(db, coll, TOTAL_REQUEST_UNITS, since, until, split_pkrange=True), *dims)
        for p in history.series(db, coll, TOTAL_REQUESTS, since, until, split_pkrange=True):
            op, status, pk = (p.dimensions[d] for d in dims)
            charge = charges.get((p.time, op, status, pk), 0.0)
            yield (
                p.time,
                {"OperationName": op, "StatusCode": int(status), "PartitionId": pk, "RequestCharge": charge},
                p.value,
            )
    else:
        for p in history.series(db, coll, QUERY_COUNT, since, until):
            fields = {
                "PartitionKeyRangeId": p.dimensions["PartitionKeyRangeId"],
                "QueryText": p.dimensions["QueryText"],
            }
            yield p.time, fields, p.value


def _by_dims(points: list, *names: str) -> dict[tuple[object, ...], float]:  # type: ignore[type-arg]
    return {(p.time, *(p.dimensions[n] for n in names)): p.value for p in points}
