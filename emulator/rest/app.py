"""The REST layer: Cosmos DB requests in, engine calls out, REST responses back.

`CosmosApp.handle` maps one parsed request to (status, headers, body); `emulator.rest.server` does the
networking. Routing and authentication live here, with the account's, databases', containers' and offers'
handlers; a container's documents are handled in `emulator.rest.documents`, request decoding is in
`emulator.rest.request`, response shaping in `emulator.rest.wire`; behaviour lives in the engine.
"""

from __future__ import annotations

import base64
import functools
import logging
import time
from collections.abc import Callable

import orjson

from cosmoscore.sql import parse_query
from cosmoscore.sql.executor import plan_for
from emulator.engine import errors
from emulator.engine.facade import Context, Engine
from emulator.rest import auth, links, requestlog, resource_tokens, wire
from emulator.rest.documents import Documents
from emulator.rest.request import PK_HEADER, Request, throughput
from emulator.rest.users import UserRoutes
from emulator.rest.wire import Reply, listing_reply, resource_reply

log = logging.getLogger("ruscope.emulator")

_UNSUPPORTED = {"sprocs", "triggers", "udfs", "attachments"}

Response = tuple[int, dict[str, str], bytes]
PREPARE_BYTES = 16 * 1024  # query bodies from this size are parsed and compiled off the event loop


class CosmosApp:
    """The Cosmos DB REST API over one engine with one master key (an `emulator.rest.server.App`)."""

    def __init__(
        self,
        engine: Engine,
        key: str = auth.WELL_KNOWN_KEY,
        *,
        auth_settings: auth.AuthSettings | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        """`now`: the wall clock signatures are dated by (not the engine's clock, which may be simulated)."""
        self.engine = engine
        self._documents = Documents(engine)
        self._endpoint = ""  # the URL it listens on (`advertise`), else each request's Host
        self._auth = auth_settings or auth.AuthSettings()
        self._now = now
        try:
            self._key_bytes = base64.b64decode(key, validate=True)
        except ValueError:
            raise ValueError("the emulator key must be base64 (like a Cosmos DB account key)") from None
        self._users = UserRoutes(engine, self._key_bytes, now)

    def advertise(self, url: str) -> None:
        """The URL the server listens on: the account read advertises it as the regional endpoint, as the
        official emulator does (`http://127.0.0.1:PORT/`), not an echo of the client's Host header, which an
        SDK that treats the endpoint as a region would route writes to. "" (a wildcard bind): the Host."""
        self._endpoint = url

    def handle(self, request: Request) -> Response:
        """One request to (status, headers, body bytes): errors become the service's error responses."""
        ctx = request.context()
        try:
            self._authenticate(request, ctx)
            reply = self.dispatch(request, ctx)
            body = b"" if reply.body is None or reply.status in (204, 304) else orjson.dumps(reply.body)
            return reply.status, wire.success_headers(reply, ctx.activity_id, request.segments), body
        except errors.CosmosError as exc:
            headers = wire.error_headers(exc, ctx.activity_id)
            headers["x-ms-request-charge"] = f"{exc.request_charge:.2f}"
            return exc.status, headers, orjson.dumps(exc.body(ctx.activity_id))
        except Exception as exc:  # a bug must cost one request a 500, never the server or a stack trace
            _log_internal_error(request, exc)
            failed = errors.CosmosError(500, "The ruscope emulator hit an internal error; see its log.")
            return 500, wire.error_headers(failed, ctx.activity_id), orjson.dumps(failed.body(ctx.activity_id))

    def prepare(self, request: Request) -> Callable[[], object] | None:
        """A large query's parsing and compiling, to run off the event loop before `handle` (measured: a
        400 KB IN list or OR chain held the one serving thread 0.3-0.5 s); `handle` finds them cached."""
        if request.method != "POST" or len(request.body) < PREPARE_BYTES or not request.is_query():
            return None
        return functools.partial(_compile_query, request.body)

    def _authenticate(self, request: Request, ctx: Context) -> None:
        resource_type, link = auth.resource_of(request.path)
        try:
            self._check_token(request, resource_type, link)
        except errors.CosmosError as exc:
            self.engine.metering.record_rejected(ctx, resource_type, exc.status, exc.substatus)
            raise

    def _check_token(self, request: Request, resource_type: str, link: str) -> None:
        """A current master-key signature, a resource token within its permission, or a well-formed Entra
        ID token where those are accepted."""
        authorization = request.header("authorization")
        if not authorization:
            raise errors.missing_auth()
        if auth.is_resource_token(authorization):
            self._check_resource_token(request, authorization)
            return
        if auth.is_aad(authorization) and self._accepts_aad(request):
            if not auth.well_formed_jwt(authorization):
                raise errors.aad_refused("The Entra ID token is not a well-formed JWT.")
            return
        date, http_date = request.header("x-ms-date") or "", request.header("date") or ""
        payload = auth.signing_payload(request.method, resource_type, link, date, http_date)
        if not auth.verify(self._key_bytes, authorization, payload):
            raise errors.unauthorized(payload.replace("\n", "\\n"))
        auth.check_time(date or http_date, self._now(), self._auth)

    def _check_resource_token(self, request: Request, authorization: str) -> None:
        """A resource token this key signed, current, of a permission that still grants this request."""
        claims = resource_tokens.read(self._key_bytes, auth.fields(authorization))
        grant = resource_tokens.check_current(claims, self.engine.users.grant(claims.permission_rid), self._now())
        key = request.json_header(PK_HEADER)
        named = links.named_path(self.engine, request.segments, key if isinstance(key, list) else None)
        read_only = request.method in ("GET", "HEAD") or (
            request.method == "POST" and (request.is_query() or request.flag("x-ms-cosmos-is-query-plan-request"))
        )
        resource_tokens.authorize(grant, named, read_only=read_only, key=key)

    def _accepts_aad(self, request: Request) -> bool:
        accept = self._auth.accept_aad
        return request.scheme == "https" if accept is None else accept

    def dispatch(self, request: Request, ctx: Context) -> Reply:
        """Route by path shape; every branch is one engine call."""
        if auth.is_rid_link(request.segments):  # `_self` links name the same resources by rid
            key = request.json_header(PK_HEADER)
            request.segments = links.named_path(self.engine, request.segments, key if isinstance(key, list) else None)
        seg, method, engine = request.segments, request.method, self.engine
        n = len(seg)
        if n == 0 and method == "GET":
            account = engine.read_account(ctx)
            endpoint = self._endpoint or f"{request.scheme}://{request.header('host') or 'localhost'}/"
            return Reply(200, wire.account_body(account.name, account.consistency, endpoint))
        if n >= 1 and seg[0] == "offers":
            return self._offers(request, ctx)
        if seg == requestlog.PATH:  # ruscope's own: the request log from a position (not a Cosmos DB resource)
            return _only(method, "GET", lambda: requestlog.requests_reply(engine, request))
        if n == 0 or seg[0] != "dbs":
            raise errors.CosmosError(404, f"Unknown resource path {request.path!r}.")
        if n == 1:
            if method == "POST" and request.is_query():
                text, params = wire.query_text_and_parameters(request.json())
                return listing_reply("Databases", engine.list_databases(ctx, text, params))
            if method == "POST":
                return resource_reply(engine.create_database(ctx, request.json(), throughput(request)))
            return _only(method, "GET", lambda: listing_reply("Databases", engine.list_databases(ctx)))
        db = seg[1]
        if n == 2:
            if method == "DELETE":
                return resource_reply(engine.delete_database(ctx, db))
            return _only(method, "GET", lambda: resource_reply(engine.read_database(ctx, db)))
        if seg[2] == "users":
            return self._users.dispatch(request, ctx, db)
        if seg[2] != "colls":
            raise _unsupported(seg[2])
        if n == 3:
            if method == "POST" and request.is_query():
                text, params = wire.query_text_and_parameters(request.json())
                return listing_reply("DocumentCollections", engine.list_containers(ctx, db, text, params))
            if method == "POST":
                return resource_reply(engine.create_container(ctx, db, request.json(), throughput(request)))
            return _only(method, "GET", lambda: listing_reply("DocumentCollections", engine.list_containers(ctx, db)))
        coll = seg[3]
        if n == 4:
            return self._container(request, ctx, db, coll)
        if seg[4] == "pkranges" and n == 5:
            return _only(method, "GET", lambda: self._pkranges(request, ctx, db, coll))
        if seg[4:] == ["operations", "partitionkeydelete"]:
            return _only(method, "POST", lambda: self._documents.delete_partition(request, ctx, db, coll))
        if seg[4] == "conflicts" and n in (5, 6):
            return self._conflicts(request, ctx, db, coll)
        if seg[4] != "docs":
            raise _unsupported(seg[4])
        if n == 5:
            return self._documents.feed(request, ctx, db, coll)
        if n == 6:
            return self._documents.item(request, ctx, db, coll, seg[5])
        raise errors.CosmosError(404, f"Unknown resource path {request.path!r}.")

    def _container(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        method = request.method
        if method == "GET":
            info = self.engine.read_container(
                ctx,
                db,
                coll,
                statistics=request.flag("x-ms-documentdb-populatepartitionstatistics"),
                quota=request.flag("x-ms-documentdb-populatequotainfo"),
            )
            body = info.props
            if info.statistics is not None:
                body["statistics"] = [wire.statistics_json(s) for s in info.statistics]
            headers = wire.quota_headers(info.usage) if info.usage is not None else {}
            if (
                info.usage is not None
            ):  # an indexing policy change applies at once here: always complete (cosmos-wire-protocol.md W21)
                headers["x-ms-documentdb-collection-index-transformation-progress"] = "100"
            return Reply(200, body, info.request_charge, headers=headers)
        if method == "PUT":
            return resource_reply(self.engine.replace_container(ctx, db, coll, request.json()))
        return _only(method, "DELETE", lambda: resource_reply(self.engine.delete_container(ctx, db, coll)))

    def _pkranges(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """The routing map as an incremental feed: etag = layout version, 304 when unchanged (§1.5)."""
        result = self.engine.read_pkranges(ctx, db, coll, wire.layout_version(request.header("if-none-match")))
        etag = f'"{result.version}"'
        if not result.changed:
            return Reply(304, None, headers={"etag": etag})
        ranges = [wire.pkrange_json(r, 1 / result.partitions) for r in result.ranges]
        return Reply(200, wire.feed_body("PartitionKeyRanges", ranges, result.container_rid), headers={"etag": etag})

    def _conflicts(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """The conflicts feed (read or queried; always empty) and one conflict (404 to any method): W28."""
        if len(request.segments) == 6:
            return resource_reply(self.engine.read_conflict(ctx, db, coll, request.segments[5]))
        if request.method == "POST" and request.is_query():
            text, params = wire.query_text_and_parameters(request.json())
            return listing_reply("Conflicts", self.engine.list_conflicts(ctx, db, coll, text, params))
        return _only(
            request.method, "GET", lambda: listing_reply("Conflicts", self.engine.list_conflicts(ctx, db, coll))
        )

    def _offers(self, request: Request, ctx: Context) -> Reply:
        seg, method, engine = request.segments, request.method, self.engine
        if len(seg) == 1 and method == "POST":
            text, params = wire.query_text_and_parameters(request.json())
            return listing_reply("Offers", engine.list_offers(ctx, text, params))
        if len(seg) == 1:
            return _only(method, "GET", lambda: listing_reply("Offers", engine.list_offers(ctx)))
        if method == "PUT":
            body = request.json()
            content = (body.get("content") if isinstance(body, dict) else None) or {}
            return resource_reply(
                engine.replace_offer(ctx, seg[1], content.get("offerThroughput"), content.get("offerAutopilotSettings"))
            )
        reply = _only(method, "GET", lambda: resource_reply(engine.read_offer(ctx, seg[1])))
        reply.headers["x-ms-cosmos-min-throughput"] = str(engine.limits.min_throughput)
        return reply


def _log_internal_error(request: Request, exc: Exception) -> None:
    """One line per failure (a recursion error's traceback is thousands of lines); the traceback at DEBUG."""
    text = str(exc).replace("\n", " ")[:300]
    log.error("internal error on %s %s: %s: %s", request.method, request.path[:200], type(exc).__name__, text)
    log.debug("internal error traceback", exc_info=exc)


def _compile_query(body: bytes) -> None:
    """Parse and compile a query body into the SQL engine's caches (errors are left for `handle` to report)."""
    sql, params = wire.query_text_and_parameters(orjson.loads(body))
    plan_for(parse_query(sql), params)


def _only(method: str, allowed: str, call: Callable[[], Reply]) -> Reply:
    if method != allowed:
        raise errors.method_not_allowed(method)
    return call()


def _unsupported(kind: str) -> errors.CosmosError:
    if kind in _UNSUPPORTED:
        return errors.bad_request(f"'{kind}' resources are not supported by the ruscope emulator.")
    return errors.CosmosError(404, f"Unknown resource type '{kind}'.")
