"""The thin HTTP layer: Cosmos DB REST requests in, engine calls out, REST responses back.

`CosmosApp.handle` maps one parsed request to (status, headers, body); `emulator.server` does the
networking. Routing, header parsing and response shaping live here; behaviour lives in the engine.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import orjson

from emulator import auth, errors
from emulator.engine import Context, Engine, Outcome, ThroughputSpec
from emulator.queries import QueryRequest

log = logging.getLogger("ruscope.emulator")

_UNSUPPORTED = {"sprocs", "triggers", "udfs", "users", "permissions", "conflicts", "attachments"}


class Request:
    """The parts of an HTTP request the protocol cares about (header names lower-case bytes)."""

    __slots__ = ("method", "path", "segments", "headers", "body", "scheme")

    def __init__(
        self, method: str, target: str, headers: dict[bytes, bytes], body: bytes, scheme: str = "http"
    ) -> None:
        self.method = method
        self.path = target.split("?", 1)[0]
        self.segments = [unquote(s) for s in self.path.split("/") if s]
        self.headers = headers
        self.body = body
        self.scheme = scheme

    def header(self, name: str) -> str | None:
        value = self.headers.get(name.encode())
        return None if value is None else value.decode("latin-1")

    def flag(self, name: str) -> bool:
        return (self.headers.get(name.encode()) or b"").lower() == b"true"

    def json(self) -> Any:
        try:
            return orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"The request body is not valid JSON: {exc}") from None

    def json_header(self, name: str) -> Any:
        raw = self.headers.get(name.encode())
        if raw is None:
            return None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise errors.bad_request(f"The {name} header is not valid JSON: {raw.decode('latin-1')!r}") from None

    def context(self) -> Context:
        return Context(
            activity_id=self.header("x-ms-activity-id") or str(uuid.uuid4()),
            correlated_activity_id=self.header("x-ms-cosmos-correlated-activityid") or "",
            consistency=self.header("x-ms-consistency-level"),
            if_match=self.header("if-match"),
            if_none_match=self.header("if-none-match"),
        )


class CosmosApp:
    """ASGI application serving one engine with one master key."""

    def __init__(self, engine: Engine, key: str = auth.WELL_KNOWN_KEY) -> None:
        self.engine = engine
        try:
            self._key_bytes = base64.b64decode(key, validate=True)
        except ValueError:
            raise ValueError("the emulator key must be base64 (like a Cosmos DB account key)") from None

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        """One request to (status, headers, body bytes): errors become the service's error responses."""
        ctx = request.context()
        try:
            self._authenticate(request, ctx)
            outcome = self.dispatch(request, ctx)
        except errors.CosmosError as exc:
            return exc.status, _error_headers(exc, ctx), orjson.dumps(exc.body(ctx.activity_id))
        except Exception:  # a bug must cost one request a 500, never the server or a stack trace
            log.exception("internal error on %s %s", request.method, request.path)
            exc = errors.CosmosError(500, "The ruscope emulator hit an internal error; see its log.")
            return 500, _error_headers(exc, ctx), orjson.dumps(exc.body(ctx.activity_id))
        body = b"" if outcome.body is None or outcome.status in (204, 304) else orjson.dumps(outcome.body)
        return outcome.status, _success_headers(outcome, ctx, request), body

    def _authenticate(self, request: Request, ctx: Context) -> None:
        resource_type, link = auth.resource_of(request.path)
        authorization = request.header("authorization")
        if not authorization:
            self.engine.record_rejected(ctx, resource_type, 401)
            raise errors.missing_auth()
        payload = auth.signing_payload(request.method, resource_type, link, request.header("x-ms-date") or "")
        if not auth.verify(self._key_bytes, authorization, payload):
            self.engine.record_rejected(ctx, resource_type, 401)
            raise errors.unauthorized(payload.replace("\n", "\\n"))

    def dispatch(self, request: Request, ctx: Context) -> Outcome:
        """Route by path shape; every branch is one engine call."""
        seg, method, engine = request.segments, request.method, self.engine
        n = len(seg)
        if n == 0 and method == "GET":
            return engine.read_account(ctx, f"{request.scheme}://{request.header('host') or 'localhost'}/")
        if n >= 1 and seg[0] == "offers":
            return self._offers(request, ctx)
        if n == 0 or seg[0] != "dbs":
            raise errors.CosmosError(404, f"Unknown resource path {request.path!r}.")
        if n == 1:
            if method == "POST":
                return engine.create_database(ctx, request.json(), _throughput(request))
            return _only(method, "GET", lambda: engine.list_databases(ctx))
        db = seg[1]
        if n == 2:
            if method == "DELETE":
                return engine.delete_database(ctx, db)
            return _only(method, "GET", lambda: engine.read_database(ctx, db))
        if seg[2] != "colls":
            raise _unsupported(seg[2])
        if n == 3:
            if method == "POST":
                return engine.create_container(ctx, db, request.json(), _throughput(request))
            return _only(method, "GET", lambda: engine.list_containers(ctx, db))
        coll = seg[3]
        if n == 4:
            return self._container(request, ctx, db, coll)
        if seg[4] == "pkranges" and n == 5:
            return _only(method, "GET", lambda: engine.read_pkranges(ctx, db, coll, request.header("if-none-match")))
        if seg[4] != "docs":
            raise _unsupported(seg[4])
        if n == 5:
            return self._docs_feed(request, ctx, db, coll)
        if n == 6:
            return self._item(request, ctx, db, coll, seg[5])
        raise errors.CosmosError(404, f"Unknown resource path {request.path!r}.")

    def _container(self, request: Request, ctx: Context, db: str, coll: str) -> Outcome:
        method = request.method
        if method == "GET":
            return self.engine.read_container(
                ctx,
                db,
                coll,
                statistics=request.flag("x-ms-documentdb-populatepartitionstatistics"),
                quota=request.flag("x-ms-documentdb-populatequotainfo"),
            )
        if method == "PUT":
            return self.engine.replace_container(ctx, db, coll, request.json())
        return _only(method, "DELETE", lambda: self.engine.delete_container(ctx, db, coll))

    def _docs_feed(self, request: Request, ctx: Context, db: str, coll: str) -> Outcome:
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        if request.method == "POST":
            if (
                request.flag("x-ms-documentdb-isquery")
                or request.flag("x-ms-cosmos-is-query-plan-request")
                or ((request.header("content-type") or "").startswith("application/query+json"))
            ):
                return self.query(request, ctx, db, coll)
            if request.flag("x-ms-cosmos-is-batch-request"):
                raise errors.bad_request("Transactional batch is not supported by the ruscope emulator.")
            _check_size(request, self.engine.limits.max_item_bytes)
            return self.engine.create_item(
                ctx,
                db,
                coll,
                request.json(),
                request.json_header("x-ms-documentdb-partitionkey"),
                upsert=request.flag("x-ms-documentdb-is-upsert"),
                intended_rid=rid,
            )
        if request.method != "GET":
            raise _method_not_allowed(request.method)
        if (request.header("a-im") or "").lower() == "incremental feed":
            raise errors.bad_request("The change feed is not supported by the ruscope emulator yet.")
        start, end = request.header("x-ms-start-epk"), request.header("x-ms-end-epk")
        return self.engine.read_feed(
            ctx,
            db,
            coll,
            pk_header=request.json_header("x-ms-documentdb-partitionkey"),
            pkrange_id=request.header("x-ms-documentdb-partitionkeyrangeid"),
            epk_range=(start, end) if start is not None and end is not None else None,
            max_items=_int_header(request, "x-ms-max-item-count", -1),
            continuation=request.header("x-ms-continuation"),
            intended_rid=rid,
        )

    def query(self, request: Request, ctx: Context, db: str, coll: str) -> Outcome:
        """A SQL query page, or the query plan the SDK asks for after a 400/1004."""
        if request.flag("x-ms-cosmos-is-query-plan-request"):
            return self.engine.query_plan(
                ctx, db, coll, request.json(), request.header("x-ms-cosmos-supported-query-features")
            )
        start, end = request.header("x-ms-start-epk"), request.header("x-ms-end-epk")
        max_items = request.header("x-ms-max-item-count")
        return self.engine.query(
            ctx,
            db,
            coll,
            QueryRequest(
                body=request.json(),
                pk_header=request.json_header("x-ms-documentdb-partitionkey"),
                pkrange_id=request.header("x-ms-documentdb-partitionkeyrangeid"),
                epk_range=(start, end) if start is not None and end is not None else None,
                max_items=None if max_items is None else _int_header(request, "x-ms-max-item-count", -1),
                continuation=request.header("x-ms-continuation"),
                cross_partition=request.flag("x-ms-documentdb-query-enablecrosspartition"),
                query_metrics=request.flag("x-ms-documentdb-populatequerymetrics"),
                index_metrics=request.flag("x-ms-cosmos-populateindexmetrics"),
                intended_rid=request.header("x-ms-cosmos-intended-collection-rid"),
            ),
        )

    def _item(self, request: Request, ctx: Context, db: str, coll: str, item_id: str) -> Outcome:
        engine, method = self.engine, request.method
        pk = request.json_header("x-ms-documentdb-partitionkey")
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        if method == "GET":
            return engine.read_item(ctx, db, coll, item_id, pk, intended_rid=rid)
        if method == "PUT":
            _check_size(request, engine.limits.max_item_bytes)
            return engine.replace_item(ctx, db, coll, item_id, request.json(), pk, intended_rid=rid)
        if method == "PATCH":
            return engine.patch_item(ctx, db, coll, item_id, request.json(), pk, intended_rid=rid)
        return _only(method, "DELETE", lambda: engine.delete_item(ctx, db, coll, item_id, pk, intended_rid=rid))

    def _offers(self, request: Request, ctx: Context) -> Outcome:
        seg, method = request.segments, request.method
        if len(seg) == 1 and method == "POST":
            return self.engine.list_offers(ctx, request.json())
        if len(seg) == 1:
            return _only(method, "GET", lambda: self.engine.list_offers(ctx))
        if method == "PUT":
            return self.engine.replace_offer(ctx, seg[1], request.json())
        return _only(method, "GET", lambda: self.engine.read_offer(ctx, seg[1]))


def _throughput(request: Request) -> ThroughputSpec | None:
    manual = request.header("x-ms-offer-throughput")
    if manual is not None:
        try:
            return ThroughputSpec(int(manual))
        except ValueError:
            raise errors.bad_request(f"x-ms-offer-throughput must be an integer, not {manual!r}.") from None
    autopilot = request.json_header("x-ms-cosmos-offer-autopilot-settings")
    if autopilot is not None:
        maximum = autopilot.get("maxThroughput") if isinstance(autopilot, dict) else None
        if not isinstance(maximum, int):
            raise errors.bad_request("x-ms-cosmos-offer-autopilot-settings needs an integer maxThroughput.")
        return ThroughputSpec(maximum, autoscale=True)
    return None


def _int_header(request: Request, name: str, default: int) -> int:
    raw = request.header(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f"{name} must be an integer, not {raw!r}.") from None


def _check_size(request: Request, limit: int) -> None:
    if len(request.body) > limit:
        raise errors.too_large()


def _only(method: str, allowed: str, call: Callable[[], Outcome]) -> Outcome:
    if method != allowed:
        raise _method_not_allowed(method)
    return call()


def _method_not_allowed(method: str) -> errors.CosmosError:
    return errors.CosmosError(405, f"The HTTP method {method} is not allowed on this resource.")


def _unsupported(kind: str) -> errors.CosmosError:
    if kind in _UNSUPPORTED:
        return errors.bad_request(f"'{kind}' resources are not supported by the ruscope emulator.")
    return errors.CosmosError(404, f"Unknown resource type '{kind}'.")


def _common_headers(ctx: Context, charge: float) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "x-ms-activity-id": ctx.activity_id,
        "x-ms-request-charge": f"{charge:.2f}",
        "x-ms-gatewayversion": "version=2.14.0",
        "x-ms-schemaversion": "1.18",
    }


def _success_headers(outcome: Outcome, ctx: Context, request: Request) -> dict[str, str]:
    headers = _common_headers(ctx, outcome.charge)
    if outcome.pkrange_id:
        headers["x-ms-documentdb-partitionkeyrangeid"] = outcome.pkrange_id
        headers["x-ms-cosmos-physical-partition-id"] = outcome.pkrange_id
    seg = request.segments
    if len(seg) >= 4 and seg[0] == "dbs":
        headers["x-ms-alt-content-path"] = f"dbs/{seg[1]}/colls/{seg[3]}"
    headers.update(outcome.headers)
    return headers


def _error_headers(exc: errors.CosmosError, ctx: Context) -> dict[str, str]:
    headers = _common_headers(ctx, 0.0)
    if exc.substatus:
        headers["x-ms-substatus"] = str(exc.substatus)
    if exc.retry_after_ms is not None:
        headers["x-ms-retry-after-ms"] = str(int(exc.retry_after_ms))
    return headers
