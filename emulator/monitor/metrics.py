"""`metrics:getBatch` served from the engine's per-minute `History` (an `emulator.rest.server.App`).

The stand-in computes, it does not invent: every value comes from `History.series` at PT1M, then is
split, filtered and aggregated the way Azure Monitor documents it (azure-monitor.md §5):
`NormalizedRUConsumption` combines ranges by maximum (a container's value is its hottest range's),
the totals by sum; coarser intervals take the maximum/average/minimum of the minutes, or their sum.
The response is the REST spec's batch shape (§3.2), which `MetricsClient.query_resources` parses.
Storage and throughput metrics (`DataUsage`, `IndexUsage`, `DocumentCount`, `PhysicalPartitionSizeInfo`,
`PhysicalPartitionThroughputInfo`, `ProvisionedThroughput`, `AutoscaleMaxThroughput`) come from the
history's forward-filled change-points, one sample per series at the metric's emitted grain (PT5M for
most, §5), aggregated over the samples in each interval; a finer interval is refused as Azure does.
`IndexUsage` is 0: the emulator does not model index storage (its quota headers report collectionSize =
documentsSize), so that is its state, not an invented figure. Metrics and aggregations the accounting
cannot back (e.g. `ServerSideLatencyDirect`, a per-request `Maximum` of RU) are refused with a 400 that
says so, rather than answered with made-up numbers.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from dataclasses import dataclass

import orjson

from emulator.engine.facade import Engine
from emulator.history.aggregates import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    NORMALIZED_RU,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    STORAGE_METRICS,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)
from emulator.monitor.query import (
    DEFAULT_TOP,
    INTERVALS,
    NAMESPACE,
    Filter,
    MonitorError,
    MonitorRequest,
    aggregations,
    authenticate,
    bad_request,
    iso,
    order,
    parse_filter,
    parse_interval,
    parse_resource,
    parse_time,
    positive_int,
    rank,
)
from emulator.rest.request import Request

log = logging.getLogger("ruscope.emulator.monitor")

Response = tuple[int, dict[str, str], bytes]
_JSON = {"content-type": "application/json; charset=utf-8"}


@dataclass(frozen=True)
class Definition:
    """A metric as the stand-in serves it: azure-monitor.md §5, less what the accounting cannot back."""

    name: str
    unit: str
    description: str
    aggregations: tuple[str, ...]  # the default first
    dimensions: tuple[str, ...]
    grain: int = 1  # the finest time grain it is emitted at, in minutes (§5); finer intervals are refused


_CONTAINER = ("DatabaseName", "CollectionName")
_SIZES = ("Total", "Average", "Maximum", "Minimum")
DEFINITIONS = {
    d.name.lower(): d
    for d in (
        Definition(
            NORMALIZED_RU,
            "Percent",
            "Max RU consumption percentage per minute",
            ("Maximum", "Average", "Minimum"),
            # PhysicalPartitionId: one physical partition per range in the emulator, so the same id
            (*_CONTAINER, "PartitionKeyRangeId", "PhysicalPartitionId"),
        ),
        Definition(
            TOTAL_REQUEST_UNITS,
            "Count",
            "SQL Request Units consumed",
            ("Total", "Average", "Count"),
            (*_CONTAINER, "OperationType", "StatusCode"),
        ),
        Definition(
            TOTAL_REQUESTS, "Count", "Number of requests made", ("Count",), (*_CONTAINER, "OperationType", "StatusCode")
        ),
        # azure-monitor.md §5: units, aggregations (default first), dimensions (less Region, OfferOwnerRid)
        # and the finest listed time grain.
        Definition(DATA_USAGE, "Bytes", "Total data usage reported at 5 minutes granularity", _SIZES, _CONTAINER, 5),
        Definition(INDEX_USAGE, "Bytes", "Total index usage reported at 5 minutes granularity", _SIZES, _CONTAINER, 5),
        Definition(DOCUMENT_COUNT, "Count", "Total document count", ("Total", "Average"), _CONTAINER, 5),
        Definition(
            PARTITION_SIZE,
            "Bytes",
            "Physical Partition Size in bytes",
            ("Maximum", "Average"),
            (*_CONTAINER, "PhysicalPartitionId"),
        ),
        Definition(
            PARTITION_THROUGHPUT,
            "Count",
            "Physical Partition Throughput",
            ("Maximum",),
            (*_CONTAINER, "PhysicalPartitionId"),
            5,
        ),
        Definition(PROVISIONED, "Count", "Provisioned Throughput", ("Maximum",), _CONTAINER, 5),
        Definition(AUTOSCALE_MAX, "Count", "Autoscale Max Throughput", ("Maximum",), _CONTAINER, 5),
    )
}
# In Azure's catalogue (azure-monitor.md §5) but not computed from the emulator's accounting yet.
NOT_COMPUTED = (
    "PhysicalPartitionCount",
    "AutoscaledRU",
    "ServerSideLatencyDirect",
    "ServerSideLatencyGateway",
    "MetadataRequests",
    "ServiceAvailability",
)

Group = tuple[str, ...]


class MetricsApp:
    """Azure Monitor's metrics batch API for the emulator's one account; any bearer token is accepted."""

    request_type = MonitorRequest  # emulator.rest.server builds this, so the query string is kept

    def __init__(self, engine: Engine, region: str = "local") -> None:
        self.engine = engine
        self.region = region

    def handle(self, request: Request) -> Response:
        """One request to (status, headers, body); errors in the service's ARM shape, never a traceback."""
        try:
            authenticate(request)
            seg = request.segments
            if len(seg) != 3 or seg[0].lower() != "subscriptions" or seg[2].lower() != "metrics:getbatch":
                raise MonitorError(404, "NotFound", f"No such API: {request.method} {request.path}.")
            if request.method != "POST":
                raise MonitorError(405, "MethodNotAllowed", f"{request.method} is not allowed; use POST.")
            if not isinstance(request, MonitorRequest):
                raise TypeError("MetricsApp needs a MonitorRequest (its request_type)")
            body = self.get_batch(seg[1], request)
        except MonitorError as exc:
            error = {"error": {"code": exc.code, "message": exc.message}}
            return exc.status, dict(_JSON), orjson.dumps(error)
        except Exception:  # a bug costs one request a 500, never the server
            log.exception("internal error on %s %s", request.method, request.path)
            error = {"error": {"code": "InternalServerError", "message": "The stand-in failed; see its log."}}
            return 500, dict(_JSON), orjson.dumps(error)
        return 200, dict(_JSON), orjson.dumps(body)

    def get_batch(self, subscription: str, request: MonitorRequest) -> dict[str, object]:
        """The batch response for the request's resources and metrics."""
        try:
            payload = orjson.loads(request.body) if request.body else None
        except orjson.JSONDecodeError:
            raise bad_request("The request body is not valid JSON.") from None
        ids = payload.get("resourceids") if isinstance(payload, dict) else None
        if not isinstance(ids, list) or not ids:
            raise bad_request('The body must be {"resourceids": [...]} with at least one resource id.')
        for rid in ids:
            if parse_resource(rid)[0].lower() != subscription.lower():
                raise bad_request(f"Resource {rid} is not in subscription {subscription}.")
        namespace = request.param("metricnamespace")
        if namespace is None or namespace.lower() != NAMESPACE.lower():
            raise bad_request(f"Invalid metricnamespace {namespace!r}: the stand-in serves {NAMESPACE} only.")
        definitions = [_definition(n) for n in (request.param("metricnames") or "").split(",") if n.strip()]
        if not definitions:
            raise bad_request("metricnames is required.")
        interval, grain = parse_interval(request.param("interval"))
        end_text, start_text = request.param("endtime"), request.param("starttime")
        until = parse_time(end_text, "endtime") if end_text else self.engine.clock()
        since = parse_time(start_text, "starttime") if start_text else until - 3600
        if since >= until:
            raise bad_request("starttime must be before endtime.")
        filter_text = request.param("filter")
        top = positive_int(request.param("top"), "top") if request.param("top") else DEFAULT_TOP
        query = _Query(since, until, grain, filter_text, top, request.param("orderby"), request.param("rollupby"))
        metrics = [self._metric(d, query, request.param("aggregation")) for d in definitions]
        return {
            "values": [
                {
                    "starttime": iso(since),
                    "endtime": iso(until),
                    "interval": interval,
                    "namespace": NAMESPACE,
                    "resourceregion": self.region,
                    "resourceid": rid,
                    "value": [
                        {**m, "id": f"{rid}/providers/Microsoft.Insights/metrics/{d.name}"}
                        for d, m in zip(definitions, metrics, strict=True)
                    ],
                }
                for rid in ids
            ]
        }

    def _metric(self, definition: Definition, query: _Query, aggregation: str | None) -> dict[str, object]:
        aggs = aggregations(definition.name, definition.aggregations, aggregation)
        if query.grain < definition.grain:
            allowed = ", ".join(name for name, minutes in INTERVALS.items() if minutes >= definition.grain)
            raise bad_request(
                f"Invalid time grain {_interval_name(query.grain)} for metric {definition.name}: it is emitted "
                f"every {_interval_name(definition.grain)}; supported intervals: {allowed}."
            )
        filt = parse_filter(query.filter, definition.dimensions, definition.name)
        rolled = {d.lower() for d in (query.rollup or "").split(",") if d.strip()}
        split = [d for d in filt.values if d.lower() not in rolled]
        minutes = self._minutes(definition, query, filt, split)
        first = int(query.since // 60)
        first -= first % query.grain
        last = math.ceil(query.until / 60)
        starts = range(first, last, query.grain)
        series = {g: _aggregate(definition, cells, starts, query.grain, aggs) for g, cells in minutes.items()}
        if not split and not series:
            series[()] = [{"timeStamp": iso(s * 60)} for s in starts]
        groups = sorted(series)
        if query.filter:
            key, descending = order(query.orderby, aggs)
            groups.sort(key=lambda g: rank(series[g], key), reverse=descending)
            groups = groups[: query.top]
        timeseries = [
            {
                "metadatavalues": [
                    {"name": {"value": d.lower(), "localizedValue": d.lower()}, "value": v}
                    for d, v in zip(split, g, strict=True)
                ],
                "data": series[g],
            }
            for g in groups
        ]
        return {
            "type": "Microsoft.Insights/metrics",
            "name": {"value": definition.name, "localizedValue": definition.description},
            "displayDescription": definition.description,
            "unit": definition.unit,
            "errorCode": "Success",
            "timeseries": timeseries,
        }

    def _minutes(
        self, definition: Definition, query: _Query, filt: Filter, split: list[str]
    ) -> dict[Group, dict[int, list[float]]]:
        """Per split group and minute: [value] (normalized RU, combined by max) or [RU, requests]."""
        out: dict[Group, dict[int, list[float]]] = defaultdict(dict)
        history = self.engine.history
        for db, coll in self._containers(filt):
            base = {"DatabaseName": db, "CollectionName": coll}
            if definition.name in STORAGE_METRICS:  # samples at the emitted grain, listed per minute
                now = self.engine.clock()
                for p in history.series(db, coll, definition.name, query.since, query.until, definition.grain, now=now):
                    pk = p.dimensions.get("PartitionKeyRangeId")
                    dims = {**base, "PhysicalPartitionId": pk} if pk is not None else base
                    if filt.matches(dims):
                        out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), []).append(p.value)
                continue
            if definition.name == NORMALIZED_RU:
                for p in history.series(db, coll, NORMALIZED_RU, query.since, query.until):
                    pk = p.dimensions["PartitionKeyRangeId"]
                    dims = {**base, "PartitionKeyRangeId": pk, "PhysicalPartitionId": pk}
                    if filt.matches(dims):
                        cell = out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), [p.value])
                        cell[0] = max(cell[0], p.value)
                continue
            counts = {
                (p.time, p.dimensions["OperationType"], p.dimensions["StatusCode"]): p.value
                for p in history.series(db, coll, TOTAL_REQUESTS, query.since, query.until)
            }
            for p in history.series(db, coll, TOTAL_REQUEST_UNITS, query.since, query.until):
                dims = {**base, **p.dimensions}
                if filt.matches(dims):
                    cell = out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), [0.0, 0.0])
                    cell[0] += p.value
                    cell[1] += counts.get((p.time, dims["OperationType"], dims["StatusCode"]), 0.0)
        return out

    def _containers(self, filt: Filter) -> list[tuple[str, str]]:
        """The containers to read: the live ones, those with history (deleted ones included), and any the
        filter pins by name."""
        pairs = self.engine.monitored_containers()
        dbs, colls = filt.exact("DatabaseName"), filt.exact("CollectionName")
        if dbs and colls:
            pairs |= {(d, c) for d in dbs for c in colls}
        return sorted(p for p in pairs if filt.matches({"DatabaseName": p[0], "CollectionName": p[1]}))


@dataclass(frozen=True)
class _Query:
    since: float
    until: float
    grain: int
    filter: str | None
    top: int
    orderby: str | None
    rollup: str | None


def _definition(name: str) -> Definition:
    definition = DEFINITIONS.get(name.strip().lower())
    if definition is not None:
        return definition
    valid = ", ".join(d.name for d in DEFINITIONS.values())
    if name.strip().lower() in {n.lower() for n in NOT_COMPUTED}:
        raise bad_request(f"Metric {name.strip()} is not computed by the ruscope stand-in; it serves: {valid}")
    raise bad_request(
        "Failed to find metric configuration for provider: Microsoft.DocumentDB, resource Type: databaseAccounts, "
        f"metric: {name.strip()}, Valid metrics: {valid}"
    )


def _aggregate(
    definition: Definition, cells: dict[int, list[float]], starts: range, grain: int, aggregations: list[str]
) -> list[dict[str, object]]:
    """One data point per interval: only `timeStamp` when the interval has no sample (§3.2)."""
    points: list[dict[str, object]] = []
    for start in starts:
        values = [cells[m] for m in range(start, start + grain) if m in cells]
        point: dict[str, object] = {"timeStamp": iso(start * 60)}
        if values:
            for agg in aggregations:
                point[agg.lower()] = _value(definition, agg, values)
        points.append(point)
    return points


def _value(definition: Definition, aggregation: str, values: list[list[float]]) -> float:
    if definition.name in STORAGE_METRICS:  # each value: the samples of one minute
        samples = [x for v in values for x in v]
        if aggregation == "Maximum":
            return max(samples)
        if aggregation == "Minimum":
            return min(samples)
        return sum(samples) / len(samples) if aggregation == "Average" else sum(samples)
    if definition.name == NORMALIZED_RU:
        peaks = [v[0] for v in values]
        if aggregation == "Maximum":
            return max(peaks)
        return min(peaks) if aggregation == "Minimum" else sum(peaks) / len(peaks)
    ru, requests = sum(v[0] for v in values), sum(v[1] for v in values)
    if definition.name == TOTAL_REQUESTS or aggregation == "Count":
        return requests
    if aggregation == "Average":
        return ru / requests if requests else 0.0
    return ru


def _interval_name(minutes: int) -> str:
    return next(name for name, m in INTERVALS.items() if m == minutes)
