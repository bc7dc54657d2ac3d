"""`metrics:getBatch` served from the engine's per-minute `History` (an `emulator.server.App`).

The stand-in computes, it does not invent: every value comes from `History.series` at PT1M, then is
split, filtered and aggregated the way Azure Monitor documents it (azure-monitor.md §5):
`NormalizedRUConsumption` combines ranges by maximum (a container's value is its hottest range's),
the totals by sum; coarser intervals take the maximum/average/minimum of the minutes, or their sum.
The response is the REST spec's batch shape (§3.2), which `MetricsClient.query_resources` parses.
Metrics and aggregations the accounting cannot back (e.g. `DataUsage`, a per-request `Maximum` of
RU) are refused with a 400 that says so, rather than answered with made-up numbers.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from dataclasses import dataclass

import orjson

from emulator.engine import Engine
from emulator.history import NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS
from emulator.monitor.query import (
    AGGREGATIONS,
    DEFAULT_TOP,
    NAMESPACE,
    Filter,
    MonitorError,
    MonitorRequest,
    bad_request,
    iso,
    parse_filter,
    parse_interval,
    parse_resource,
    parse_time,
)
from emulator.request import Request

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


_CONTAINER = ("DatabaseName", "CollectionName")
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
    )
}
# In Azure's catalogue (azure-monitor.md §5) but not computed from the emulator's accounting yet.
NOT_COMPUTED = (
    "DataUsage",
    "IndexUsage",
    "DocumentCount",
    "PhysicalPartitionSizeInfo",
    "PhysicalPartitionThroughputInfo",
    "PhysicalPartitionCount",
    "AutoscaledRU",
    "ProvisionedThroughput",
    "AutoscaleMaxThroughput",
    "ServerSideLatencyDirect",
    "ServerSideLatencyGateway",
    "MetadataRequests",
    "ServiceAvailability",
)

Group = tuple[str, ...]


class MetricsApp:
    """Azure Monitor's metrics batch API for the emulator's one account; any bearer token is accepted."""

    request_type = MonitorRequest  # emulator.server builds this, so the query string is kept

    def __init__(self, engine: Engine, region: str = "local") -> None:
        self.engine = engine
        self.region = region

    def handle(self, request: Request) -> Response:
        """One request to (status, headers, body); errors in the service's ARM shape, never a traceback."""
        try:
            _authenticate(request)
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
        top = _int(request.param("top"), "top") if request.param("top") else DEFAULT_TOP
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
        aggregations = _aggregations(definition, aggregation)
        filt = parse_filter(query.filter, definition.dimensions, definition.name)
        rolled = {d.lower() for d in (query.rollup or "").split(",") if d.strip()}
        split = [d for d in filt.values if d.lower() not in rolled]
        minutes = self._minutes(definition, query, filt, split)
        first = int(query.since // 60)
        first -= first % query.grain
        last = math.ceil(query.until / 60)
        starts = range(first, last, query.grain)
        series = {g: _aggregate(definition, cells, starts, query.grain, aggregations) for g, cells in minutes.items()}
        if not split and not series:
            series[()] = [{"timeStamp": iso(s * 60)} for s in starts]
        groups = sorted(series)
        if query.filter:
            key, descending = _order(query.orderby, aggregations)
            groups.sort(key=lambda g: _rank(series[g], key), reverse=descending)
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
        """The containers to read: the live ones, plus any pinned by the filter (a deleted container's
        history is still served when asked for by name)."""
        with self.engine.metering.lock:
            pairs = {(db, c) for db, d in self.engine.databases.items() for c in d.containers}
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


def _authenticate(request: Request) -> None:
    """Any bearer token passes (azure-monitor.md §3.3); none is a 401 without `WWW-Authenticate`, so the
    SDK's bearer policy raises instead of attempting a claims challenge."""
    header = request.header("authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise MonitorError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")


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


def _aggregations(definition: Definition, text: str | None) -> list[str]:
    if not text:
        return [definition.aggregations[0]]
    canonical = {a.lower(): a for a in AGGREGATIONS}
    out = []
    for raw in (a.strip() for a in text.split(",") if a.strip()):
        name = canonical.get(raw.lower())
        if name is None or name not in definition.aggregations:
            raise bad_request(
                f"Aggregation {raw} is not supported for metric {definition.name}; "
                f"supported: {', '.join(definition.aggregations)}"
            )
        out.append(name)
    return out


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


def _order(orderby: str | None, aggregations: list[str]) -> tuple[str, bool]:
    if not orderby:
        return aggregations[0].lower(), True
    name, _, direction = orderby.strip().partition(" ")
    if name.lower() not in {a.lower() for a in aggregations} or direction.strip().lower() not in ("", "asc", "desc"):
        raise bad_request(f"Invalid orderby {orderby!r}: '<one of the requested aggregations> asc|desc'.")
    return name.lower(), direction.strip().lower() != "asc"


def _rank(points: list[dict[str, object]], key: str) -> float:
    values = [float(v) for p in points if isinstance(v := p.get(key), int | float)]
    if not values:
        return -math.inf
    if key in ("total", "count"):
        return sum(values)
    if key == "minimum":
        return min(values)
    return max(values) if key == "maximum" else sum(values) / len(values)


def _int(text: str | None, name: str) -> int:
    try:
        value = int(text or "")
    except ValueError:
        raise bad_request(f"Invalid {name} {text!r}: expected a positive integer.") from None
    if value < 1:
        raise bad_request(f"Invalid {name} {text!r}: expected a positive integer.")
    return value
