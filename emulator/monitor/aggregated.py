"""The aggregated data-plane tables the stand-in serves: `CDBDataPlaneRequests5M` and `CDBDataPlaneRequests15M`
(azure-monitor.md §6.6, §7b R60-R63), from History's per-minute `ops` cells (requests and RU per operation,
status and pkrange), summed into 5- or 15-minute rows.

A row is one interval of one container, operation, status and partition, as the service's rows are
"aggregated based on the columns in the CDBDataPlaneRequests table": RequestCount the interval's requests,
TotalRequestCharge their RU, AvgRequestCharge the ratio. They are the service's own rows, not weighted
ones: `sum(RequestCount)`, `sumif(RequestCount, StatusCode == 429)`, `sum(TotalRequestCharge)` equal the
per-request table's `count()`, `countif(StatusCode == 429)` and `sum(RequestCharge)` over the same whole
intervals. The stand-in's own rules where Microsoft's pages are silent (§7b R62):
- TimeGenerated ("Timestamp (in UTC) of the 5 minute interval") is the interval's start, intervals aligned
  on UTC multiples of the grain (as `bin(TimeGenerated, 5m)` is);
- a row is written once its interval has ended (`Source.now`): no partial interval is ever served;
- the service's rows are also split by the client's identity (UserAgent, ClientIpAddress, ConnectionMode,
  AAD and key columns), which History does not keep: the stand-in's rows are those of one client, so a
  `count()` of rows counts its (interval, operation, status, partition) groups;
- PartitionId is the pkrange id, as in the stand-in's CDBDataPlaneRequests.
Columns History cannot back (the largest charge, durations, sizes, the client's identity, the resource type)
are named and refused with the reason (`Column.unbacked`), never filled with a made-up value.
The tables exist in resource-specific mode only (there is no AzureDiagnostics spelling), and have rows
only when the diagnostic setting sends their category (`Source.categories`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import TYPE_CHECKING

from cosmoscore.monitor import logs as catalogue
from cosmoscore.monitor.logs import (
    ACCOUNT_NAME,
    AVG_DURATION_MS,
    AVG_REQUEST_CHARGE,
    AVG_REQUEST_LENGTH,
    AVG_RESPONSE_LENGTH,
    CLIENT_IP_ADDRESS,
    COLLECTION_NAME,
    CONNECTION_MODE,
    DATABASE_NAME,
    MAX_DURATION_MS,
    MAX_REQUEST_CHARGE,
    MAX_REQUEST_LENGTH,
    MAX_RESPONSE_LENGTH,
    OPERATION_NAME,
    PARTITION_ID,
    REGION_NAME,
    REQUEST_COUNT,
    REQUEST_RESOURCE_TYPE,
    STATUS_CODE,
    TIME_GENERATED,
    TOTAL_DURATION_MS,
    TOTAL_REQUEST_CHARGE,
    TOTAL_REQUEST_LENGTH,
    TOTAL_RESPONSE_LENGTH,
    USER_AGENT,
)
from emulator.monitor.kql.evaluate import Shape
from emulator.monitor.kql.expr import Column, Row

if TYPE_CHECKING:  # tables imports this module: its types only
    from emulator.monitor.tables import Scan, Source

TABLES = catalogue.AGGREGATED
CATEGORIES = catalogue.AGGREGATED_CATEGORIES
_SERVED = (
    TIME_GENERATED,
    ACCOUNT_NAME,
    DATABASE_NAME,
    COLLECTION_NAME,
    REGION_NAME,
    OPERATION_NAME,
    STATUS_CODE,
    PARTITION_ID,
    REQUEST_COUNT,
    TOTAL_REQUEST_CHARGE,
    AVG_REQUEST_CHARGE,
)
_KEEPS = "the ruscope stand-in keeps each minute's request count and RU sum per operation, status and pkrange"
_UNBACKED = {
    MAX_REQUEST_CHARGE: f"{_KEEPS}, not each request's charge: the largest one is not determined",
    **dict.fromkeys((TOTAL_DURATION_MS, AVG_DURATION_MS, MAX_DURATION_MS), f"{_KEEPS}, no server-side durations"),
    **dict.fromkeys(
        (
            TOTAL_REQUEST_LENGTH,
            AVG_REQUEST_LENGTH,
            MAX_REQUEST_LENGTH,
            TOTAL_RESPONSE_LENGTH,
            AVG_RESPONSE_LENGTH,
            MAX_RESPONSE_LENGTH,
        ),
        f"{_KEEPS}, no payload sizes",
    ),
    **dict.fromkeys((USER_AGENT, CLIENT_IP_ADDRESS, CONNECTION_MODE), f"{_KEEPS}, not the client that sent them"),
    REQUEST_RESOURCE_TYPE: f"{_KEEPS}, not per resource type",
}


def _columns(table: catalogue.Table) -> dict[str, Column]:
    types = {c.name: c.type for c in table.columns}
    served = {name: Column(types[name]) for name in _SERVED}
    refused = {name: Column(types[name], unbacked=why) for name, why in _UNBACKED.items()}
    return {**served, **refused}


_FIELDS = {name: _columns(table) for name, table in TABLES.items()}


def shape_of(table: str, standard: dict[str, Column]) -> Shape:
    """The table's columns (its own, then the standard ones): the service's own rows, unweighted; any
    whole-second time bin is exact on them."""
    return Shape({**_FIELDS[table], **standard}, weighted=False, resolution=1)


def rows(
    table: str, scan: Scan, source: Source, containers: list[tuple[str, str]], standard: dict[str, object]
) -> Iterator[Row]:
    """The table's rows for `scan`: the intervals starting in [since, until) that have ended by `source.now`."""
    spec = TABLES[table]
    if spec.category not in source.categories:  # the diagnostic setting does not send it: no rows
        return
    grain = 60 * (spec.grain_minutes or 1)
    first, stop = -(-scan.since // grain) * grain, -(-scan.until // grain) * grain
    if source.now is not None:
        stop = min(stop, source.now // grain * grain)  # the current interval is not written yet
    for db, coll in containers:
        for start, cells in _intervals(source, db, coll, first, stop, grain):
            when = dt.datetime.fromtimestamp(start, dt.UTC)
            common = {TIME_GENERATED: when, ACCOUNT_NAME: source.account, DATABASE_NAME: db, COLLECTION_NAME: coll}
            for (op, status, pk), (count, ru) in sorted(cells.items()):
                yield {
                    **common,
                    REGION_NAME: source.region,
                    OPERATION_NAME: op,
                    STATUS_CODE: int(status),
                    PARTITION_ID: pk,
                    REQUEST_COUNT: float(count),
                    TOTAL_REQUEST_CHARGE: ru,
                    AVG_REQUEST_CHARGE: ru / count if count else None,
                    **standard,
                }


Cells = dict[tuple[str, ...], list[float]]  # (operation, status, pkrange) -> [requests, RU]


def _intervals(
    source: Source, db: str, coll: str, first: float, stop: float, grain: int
) -> Iterator[tuple[float, Cells]]:
    """Each interval in [first, stop) with requests, summed from History's minutes as they stream (one
    interval held at a time)."""
    if stop <= first:
        return
    current: float | None = None
    cells: Cells = {}
    for minute, dims, (count, ru) in source.history.minute_entries(
        db, coll, "ops", first, stop, by_pk=True, tick=source.tick
    ):
        start = minute // grain * grain
        if start != current:
            if cells and current is not None:
                yield current, cells
            current, cells = start, {}
        cell = cells.setdefault(dims, [0.0, 0.0])
        cell[0] += count
        cell[1] += ru
    if cells and current is not None:
        yield current, cells
