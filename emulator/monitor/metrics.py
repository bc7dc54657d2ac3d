"""`metrics:getBatch` served from the engine's per-minute `History` (an `emulator.rest.server.App`).

The stand-in computes, it does not invent: every value comes from `History.series` at PT1M, then is
split, filtered and aggregated the way Azure Monitor documents it (azure-monitor.md §5):
`NormalizedRUConsumption` combines ranges by maximum (a container's value is its hottest range's),
the totals by sum; coarser intervals take the maximum/average/minimum of the minutes, or their sum.
The response is the REST spec's batch shape (§3.2), which `MetricsClient.query_resources` parses. With
a filter, a metric's answer holds at most `top` series (10 unless asked, §7b R3), ordered by `orderby`
(default: the first aggregation, descending), and nothing says how many were left out (R12).
An account of several regions (`MetricsApp(regions=...)`; default: one) has each metric's `Region`
dimension but AutoscaleMaxThroughput's: storage and throughput in every region, requests in the first
(`regions`, §7b R1, R14).
Storage and throughput metrics (`DataUsage`, `IndexUsage`, `DocumentCount`, `PhysicalPartitionSizeInfo`,
`PhysicalPartitionThroughputInfo`, `ProvisionedThroughput`, `AutoscaleMaxThroughput`) come from the
history's forward-filled change-points, one sample per series at the metric's emitted grain (PT5M for
most, §5), aggregated over the samples in each interval; a finer interval is refused as Azure does.
`IndexUsage` is 0: the emulator does not model index storage (its quota headers report collectionSize =
documentsSize), so that is its state, not an invented figure. Metrics and aggregations the accounting
cannot back are never answered with made-up numbers: an aggregation (a per-request `Maximum` of RU) is
refused with a 400 that says so; a catalogued metric it does not compute (e.g. `ServerSideLatencyDirect`)
is answered as the service answers a metric it could not query, a 200 whose metric carries `errorCode` and
`errorMessage` and no time series (`NOT_COMPUTED`).
A shared-throughput database (containers without throughput of their own in a database that has some) is
answered as Azure answers it (`emulator.monitor.shared`; azure-monitor.md §7b R2, R30-R32): its
partition metrics under `CollectionName` `<empty>`, its offer's throughput under `__Empty`
(`cosmoscore.monitor.metrics.SHARED_DATABASE_COLLECTION`), the request and storage totals under the real
container names.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson

from cosmoscore.monitor.metrics import (
    AVERAGE,
    COLLECTION_NAME,
    COUNT,
    DATABASE_NAME,
    MAX_METRIC_NAMES,
    MAX_POINTS,
    MAX_RANGE_DAYS,
    MAX_RESOURCE_IDS,
    MAXIMUM,
    MINIMUM,
    NAMESPACE,
    NORMALIZED_RU,
    OPERATION_TYPE,
    PARTITION_KEY_RANGE_ID,
    PHYSICAL_PARTITION_ID,
    REGION,
    SHARED_DATABASE_COLLECTION,
    STATUS_CODE,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)
from cosmoscore.monitor.metrics import GRAIN_MINUTES as INTERVALS  # PT1M emitted, coarser ones aggregated
from emulator.engine.facade import Engine
from emulator.history.aggregates import STORAGE_METRICS
from emulator.monitor.budget import Budget, Cancelled, TimedOut
from emulator.monitor.definitions import NOT_COMPUTED, Definition, definition_of, failed_metric
from emulator.monitor.query import (
    DEFAULT_TOP,
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
from emulator.monitor.regions import account_regions, regional_minutes
from emulator.monitor.shared import shared_database_minutes, shared_offer_containers
from emulator.rest.request import Request

log = logging.getLogger("ruscope.emulator.monitor")

Response = tuple[int, dict[str, str], bytes]
_JSON = {"content-type": "application/json; charset=utf-8"}


Group = tuple[str, ...]


class MetricsApp:
    """Azure Monitor's metrics batch API for the emulator's one account; any bearer token is accepted."""

    request_type = MonitorRequest  # emulator.rest.server builds this, so the query string is kept

    def __init__(self, engine: Engine, region: str = "local", regions: Sequence[str] | None = None) -> None:
        """`regions`: the account's regions (default: `region` alone), the first the one that serves the
        engine's requests; `region` is the account's location (`resourceregion`)."""
        self.engine = engine
        self.region = region
        self.regions = account_regions(region, regions)

    def handle(self, request: Request, budget: Budget | None = None) -> Response:
        """One request to (status, headers, body); errors in the service's ARM shape, never a traceback.
        `budget`: its deadline and the shutdown (504 past the one, 503 at the other)."""
        budget = budget or Budget()
        try:
            authenticate(request)
            seg = request.segments
            if len(seg) != 3 or seg[0].lower() != "subscriptions" or seg[2].lower() != "metrics:getbatch":
                raise MonitorError(404, "NotFound", f"No such API: {request.method} {request.path}.")
            if request.method != "POST":
                raise MonitorError(405, "MethodNotAllowed", f"{request.method} is not allowed; use POST.")
            if not isinstance(request, MonitorRequest):
                raise TypeError("MetricsApp needs a MonitorRequest (its request_type)")
            body = self.get_batch(seg[1], request, budget)
        except TimedOut:
            message = f"The query ran past its {budget.seconds:g} s limit."
            error = {"error": {"code": "GatewayTimeout", "message": message}}
            return 504, dict(_JSON), orjson.dumps(error)
        except Cancelled:
            error = {"error": {"code": "ServiceUnavailable", "message": "The stand-in is shutting down."}}
            return 503, dict(_JSON), orjson.dumps(error)
        except MonitorError as exc:
            error = {"error": {"code": exc.code, "message": exc.message}}
            return exc.status, dict(_JSON), orjson.dumps(error)
        except RecursionError:  # a filter of parentheses nested beyond what the parser follows
            error = {"error": {"code": "BadRequest", "message": "Invalid filter: nested too deeply."}}
            return 400, dict(_JSON), orjson.dumps(error)
        except Exception:  # a bug costs one request a 500, never the server
            log.exception("internal error on %s %s", request.method, request.path)
            error = {"error": {"code": "InternalServerError", "message": "The stand-in failed; see its log."}}
            return 500, dict(_JSON), orjson.dumps(error)
        return 200, dict(_JSON), orjson.dumps(body)

    def get_batch(self, subscription: str, request: MonitorRequest, budget: Budget | None = None) -> dict[str, object]:
        """The batch response for the request's resources and metrics."""
        try:
            payload = orjson.loads(request.body) if request.body else None
        except orjson.JSONDecodeError:
            raise bad_request("The request body is not valid JSON.") from None
        ids = payload.get("resourceids") if isinstance(payload, dict) else None
        if not isinstance(ids, list) or not ids:
            raise bad_request('The body must be {"resourceids": [...]} with at least one resource id.')
        if len(ids) > MAX_RESOURCE_IDS:
            raise bad_request(
                f"The batch names {len(ids)} resource ids; a metrics:getBatch call takes at most {MAX_RESOURCE_IDS}."
            )
        for rid in ids:
            if parse_resource(rid)[0].lower() != subscription.lower():
                raise bad_request(f"Resource {rid} is not in subscription {subscription}.")
        namespace = request.param("metricnamespace")
        if namespace is None or namespace.lower() != NAMESPACE.lower():
            raise bad_request(f"Invalid metricnamespace {namespace!r}: the stand-in serves {NAMESPACE} only.")
        names = [n for n in (request.param("metricnames") or "").split(",") if n.strip()]
        if not names:
            raise bad_request("metricnames is required.")
        if len(names) > MAX_METRIC_NAMES:
            raise bad_request(f"The query names {len(names)} metrics; a query takes at most {MAX_METRIC_NAMES}.")
        definitions = [definition_of(n) for n in names]
        interval, grain = parse_interval(request.param("interval"))
        end_text, start_text = request.param("endtime"), request.param("starttime")
        until = parse_time(end_text, "endtime") if end_text else self.engine.clock()
        since = parse_time(start_text, "starttime") if start_text else until - 3600
        if since >= until:
            raise bad_request("starttime must be before endtime.")
        if until - since > MAX_RANGE_DAYS * 86400:
            raise bad_request(
                f"The time range {iso(since)}/{iso(until)} is longer than the {MAX_RANGE_DAYS} days metrics are kept."
            )
        filter_text = request.param("filter")
        top = positive_int(request.param("top"), "top") if request.param("top") else DEFAULT_TOP
        query = _Query(since, until, grain, filter_text, top, request.param("orderby"), request.param("rollupby"))
        points = _PointBudget(len(ids), len(query.starts), budget or Budget())
        points.spend(len(definitions))  # at least one series per metric: refused before any work
        # each metric's JSON made once (an orjson call holds the GIL: made per id, 50 ids stalled the endpoint)
        metrics = [orjson.dumps(self._metric(d, query, request.param("aggregation"), points)) for d in definitions]
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
                        _with_id(m, f"{rid}/providers/Microsoft.Insights/metrics/{d.name}", points.time)
                        for d, m in zip(definitions, metrics, strict=True)
                    ],
                }
                for rid in ids
            ]
        }

    def _metric(
        self, definition: Definition, query: _Query, aggregation: str | None, budget: _PointBudget
    ) -> dict[str, object]:
        aggs = aggregations(definition.name, definition.aggregations, aggregation)
        if query.grain < definition.grain:
            allowed = ", ".join(name for name, minutes in INTERVALS.items() if minutes >= definition.grain)
            raise bad_request(
                f"Invalid time grain {_interval_name(query.grain)} for metric {definition.name}: it is emitted "
                f"every {_interval_name(definition.grain)}; supported intervals: {allowed}."
            )
        filt = parse_filter(query.filter, definition.dimensions, definition.name)
        if definition.name in NOT_COMPUTED:
            return failed_metric(definition, "the ruscope stand-in does not compute it from the emulator's accounting")
        rolled = {d.lower() for d in (query.rollup or "").split(",") if d.strip()}
        split = [d for d in filt.values if d.lower() not in rolled]
        minutes = regional_minutes(
            lambda f, s: self._minutes(definition, query, f, s, budget.time.check),
            filt,
            split,
            self.regions if REGION in definition.dimensions else None,
            copied=definition.name in STORAGE_METRICS,
        )
        answered = min(len(minutes), query.top) if query.filter else len(minutes)
        budget.spend(max(0, answered - 1))  # the series past the one counted up front, before any point is made
        starts = query.starts
        series = {
            g: _aggregate(definition, cells, starts, query.grain, aggs, budget.time) for g, cells in minutes.items()
        }
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
        self, definition: Definition, query: _Query, filt: Filter, split: list[str], tick: Callable[[], None]
    ) -> dict[Group, dict[int, list[float]]]:
        """Per split group and minute: [value] (normalized RU, combined by max) or [RU, requests]; `tick`
        is the request's budget check, called as the history is read."""
        out: dict[Group, dict[int, list[float]]] = defaultdict(dict)
        history = self.engine.history
        shared = shared_offer_containers(self.engine) if definition.name in SHARED_DATABASE_COLLECTION else set()
        if shared:
            window = (query.since, query.until, definition.grain)
            shared_database_minutes(self.engine, definition.name, window, filt, split, tick, shared, out)
        for db, coll in self._containers(filt):
            if (db, coll) in shared:  # reported as its database's (`emulator.monitor.shared`), not under its name
                continue
            base = {DATABASE_NAME: db, COLLECTION_NAME: coll}
            if definition.name in STORAGE_METRICS:  # samples at the emitted grain, listed per minute
                now = self.engine.clock()
                for p in history.series(db, coll, definition.name, query.since, query.until, definition.grain, now=now):
                    pk = p.dimensions.get(PARTITION_KEY_RANGE_ID)
                    dims = {**base, PHYSICAL_PARTITION_ID: pk} if pk is not None else base
                    if filt.matches(dims):
                        out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), []).append(p.value)
                continue
            if definition.name == NORMALIZED_RU:
                for p in history.series(db, coll, NORMALIZED_RU, query.since, query.until, tick=tick):
                    pk = p.dimensions[PARTITION_KEY_RANGE_ID]
                    dims = {**base, PARTITION_KEY_RANGE_ID: pk, PHYSICAL_PARTITION_ID: pk}
                    if filt.matches(dims):
                        cell = out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), [p.value])
                        cell[0] = max(cell[0], p.value)
                continue
            counts = {
                (p.time, p.dimensions[OPERATION_TYPE], p.dimensions[STATUS_CODE]): p.value
                for p in history.series(db, coll, TOTAL_REQUESTS, query.since, query.until, tick=tick)
            }
            for p in history.series(db, coll, TOTAL_REQUEST_UNITS, query.since, query.until, tick=tick):
                dims = {**base, **p.dimensions}
                if filt.matches(dims):
                    cell = out[tuple(dims[d] for d in split)].setdefault(int(p.time // 60), [0.0, 0.0])
                    cell[0] += p.value
                    cell[1] += counts.get((p.time, dims[OPERATION_TYPE], dims[STATUS_CODE]), 0.0)
        return out

    def _containers(self, filt: Filter) -> list[tuple[str, str]]:
        """The containers to read: the live ones, those with history (deleted ones included), and any the
        filter pins by name."""
        pairs = self.engine.monitored_containers()
        dbs, colls = filt.exact(DATABASE_NAME), filt.exact(COLLECTION_NAME)
        if dbs and colls:
            pairs |= {(d, c) for d in dbs for c in colls}
        names = (DATABASE_NAME, COLLECTION_NAME)
        return sorted(p for p in pairs if filt.matches({DATABASE_NAME: p[0], COLLECTION_NAME: p[1]}, names))


@dataclass(frozen=True)
class _Query:
    since: float
    until: float
    grain: int
    filter: str | None
    top: int
    orderby: str | None
    rollup: str | None

    @property
    def starts(self) -> range:
        """The first minute of each interval the answer has a point for."""
        first = int(self.since // 60)
        return range(first - first % self.grain, math.ceil(self.until / 60), self.grain)


class _PointBudget:
    """The data points an answer may hold (MAX_POINTS): every series has a point per interval, and the
    answer repeats the metrics for each resource id. Refused (400) as soon as the count is past it."""

    def __init__(self, resources: int, intervals: int, time: Budget) -> None:
        self.per_series = resources * intervals
        self.points = 0
        self.time = time  # the deadline and the shutdown, checked as points are made

    def spend(self, series: int) -> None:
        self.points += series * self.per_series
        if self.points > MAX_POINTS:
            raise bad_request(
                f"The query asks for more than {MAX_POINTS:,} data points (resources x metrics x series x "
                "intervals); narrow the time range, use a coarser interval or fewer resources, metrics or series."
            )


def _with_id(metric: bytes, metric_id: str, budget: Budget) -> orjson.Fragment:
    """A metric's JSON object with its `id` first (the metric is the same for every resource id)."""
    budget.check()
    return orjson.Fragment(b'{"id":' + orjson.dumps(metric_id) + b"," + metric[1:])


def _aggregate(
    definition: Definition,
    cells: dict[int, list[float]],
    starts: range,
    grain: int,
    aggregations: list[str],
    budget: Budget,
) -> list[dict[str, object]]:
    """One data point per interval: only `timeStamp` when the interval has no sample (§3.2)."""
    points: list[dict[str, object]] = []
    for start in starts:
        budget.check()
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
        if aggregation == MAXIMUM:
            return max(samples)
        if aggregation == MINIMUM:
            return min(samples)
        return sum(samples) / len(samples) if aggregation == AVERAGE else sum(samples)
    if definition.name == NORMALIZED_RU:
        peaks = [v[0] for v in values]
        if aggregation == MAXIMUM:
            return max(peaks)
        return min(peaks) if aggregation == MINIMUM else sum(peaks) / len(peaks)
    ru, requests = sum(v[0] for v in values), sum(v[1] for v in values)
    if definition.name == TOTAL_REQUESTS or aggregation == COUNT:
        return requests
    if aggregation == AVERAGE:
        return ru / requests if requests else 0.0
    return ru


def _interval_name(minutes: int) -> str:
    return next(name for name, m in INTERVALS.items() if m == minutes)
