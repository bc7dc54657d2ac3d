"""The documents of a container over REST: its `docs` feed (create and upsert, transactional batch, a query
or its plan, the read feed and the change feed), one document (read, replace, patch, delete) and the
deletion of a logical partition. Each branch decodes the request, makes one engine call and shapes the
answer; a request whose partition key, body or continuation the protocol refuses is still metered, as the
operation it was meant for (`metered_refusals`). `emulator.rest.app` routes to it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

from emulator.engine import errors
from emulator.engine.facade import Context, Engine
from emulator.rest import batch, wire
from emulator.rest.request import PK_HEADER, Request, check_size, query_spec, required_key
from emulator.rest.wire import Reply, feed_reply, item_reply, query_reply


class Documents:
    """The REST handlers of one engine's documents."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def feed(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        if request.method == "POST":
            if request.is_query() or request.flag("x-ms-cosmos-is-query-plan-request"):
                return self._query(request, ctx, db, coll)
            if request.flag("x-ms-cosmos-is-batch-request"):
                return self._batch(request, ctx, db, coll)
            check_size(request, self.engine.limits.max_item_bytes)
            upsert = request.flag("x-ms-documentdb-is-upsert")
            doc, raw_key = request.json(), request.json_header(PK_HEADER)
            with metered_refusals(self.engine, ctx, "Upsert" if upsert else "Create", db, coll):
                key = required_key(raw_key)
            reply = item_reply(self.engine.create_item(ctx, db, coll, doc, key, upsert=upsert, intended_rid=rid))
            return minimal(request, reply)
        if request.method != "GET":
            raise errors.method_not_allowed(request.method)
        a_im = (request.header("a-im") or "").lower()
        if a_im == "incremental feed":
            return self._change_feed(request, ctx, db, coll)
        if a_im:  # "Full-Fidelity Feed": all versions and deletes, which needs continuous backup (W29)
            raise errors.bad_request(
                f"The change feed mode A-IM: {request.header('a-im')} (all versions and deletes) is not supported "
                "by the ruscope emulator; read the latest-version change feed instead."
            )
        raw_key, max_items = request.json_header(PK_HEADER), request.int_header("x-ms-max-item-count", -1)
        with metered_refusals(self.engine, ctx, "ReadFeed", db, coll):
            scope, cursor = wire.partition_key(raw_key), wire.feed_cursor(request.header("x-ms-continuation"))
        page = self.engine.read_feed(
            ctx,
            db,
            coll,
            key=scope,
            pkrange_id=request.header("x-ms-documentdb-partitionkeyrangeid"),
            epk_range=request.epk_range(),
            max_items=max_items,
            cursor=cursor,
            intended_rid=rid,
        )
        return feed_reply(page)

    def _change_feed(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """A change feed page (latest version) of the pkrange, EPK range or key the SDK names (W29)."""
        with metered_refusals(self.engine, ctx, "ReadFeed", db, coll):
            start, scope = request.change_feed_start(), wire.partition_key(request.json_header(PK_HEADER))
        page = self.engine.read_changes(
            ctx,
            db,
            coll,
            start,
            key=scope,
            pkrange_id=request.header("x-ms-documentdb-partitionkeyrangeid"),
            epk_range=request.epk_range(),
            max_items=request.int_header("x-ms-max-item-count", -1),
            intended_rid=request.header("x-ms-cosmos-intended-collection-rid"),
        )
        return wire.change_reply(page)

    def _batch(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """A transactional batch: 200, or 207 when an operation failed (cosmos-wire-protocol.md W22-W26)."""
        with metered_refusals(self.engine, ctx, "Batch", db, coll):
            check_size(request, self.engine.limits.max_batch_bytes)
            key, operations = required_key(request.json_header(PK_HEADER)), batch.batch_operations(request.json())
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        return batch.batch_reply(self.engine.execute_batch(ctx, db, coll, key, operations, intended_rid=rid))

    def _query(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """A SQL query page, or the query plan the SDK asks for after a 400/1004."""
        if request.flag("x-ms-cosmos-is-query-plan-request"):
            body = request.json()
            with metered_refusals(self.engine, ctx, "QueryPlan", db, coll):
                text, params = wire.query_text_and_parameters(body)
            features = request.header("x-ms-cosmos-supported-query-features")
            supported = None if features is None else frozenset(f.strip() for f in features.split(","))
            plan = self.engine.query_plan(ctx, db, coll, text, params, supported)
            return Reply(200, wire.plan_json(plan), self.engine.cost.query_plan_ru)
        body, raw_key = request.json(), request.json_header(PK_HEADER)
        with metered_refusals(self.engine, ctx, "Query", db, coll):
            spec = query_spec(request, body, raw_key)
        gate = functools.partial(
            wire.gateway_refusal,
            cross_partition=request.flag("x-ms-documentdb-query-enablecrosspartition"),
            refused_ru=self.engine.cost.refused_query_ru,
            continued=spec.cursor is not None,
        )
        return query_reply(self.engine.query_page(ctx, db, coll, spec, gate))

    def item(self, request: Request, ctx: Context, db: str, coll: str, item_id: str) -> Reply:
        engine, method = self.engine, request.method
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        operation = {"GET": "Read", "PUT": "Replace", "PATCH": "Patch", "DELETE": "Delete"}.get(method)
        if operation is None:
            raise errors.method_not_allowed(method)
        if method == "PUT":
            check_size(request, engine.limits.max_item_bytes)
        raw_key = request.json_header(PK_HEADER)
        body = request.json() if method in ("PUT", "PATCH") else None
        with metered_refusals(self.engine, ctx, operation, db, coll):
            key = required_key(raw_key)
        if method == "GET":
            reply = item_reply(engine.read_item(ctx, db, coll, item_id, key, intended_rid=rid))
            # the content's parent location, as the service's ResponseBase.ContentLocation documents it
            # ("for example, dbs/foo/colls/bar"; docs/reference/cosmos-wire-protocol.md W20)
            reply.headers["content-location"] = f"dbs/{db}/colls/{coll}"
            return reply
        if method == "PUT":
            return minimal(
                request, item_reply(engine.replace_item(ctx, db, coll, item_id, body, key, intended_rid=rid))
            )
        if method == "PATCH":
            operations = body.get("operations") if isinstance(body, dict) else None
            condition = body.get("condition") if isinstance(body, dict) else None
            patched = engine.patch_item(ctx, db, coll, item_id, operations, key, condition=condition, intended_rid=rid)
            return minimal(request, item_reply(patched))
        return item_reply(engine.delete_item(ctx, db, coll, item_id, key, intended_rid=rid))

    def delete_partition(self, request: Request, ctx: Context, db: str, coll: str) -> Reply:
        """`delete_all_items_by_partition_key`: the logical partition's items go, 200 with no body."""
        raw_key = request.json_header(PK_HEADER)
        with metered_refusals(self.engine, ctx, "Delete", db, coll):
            key = required_key(raw_key)
        rid = request.header("x-ms-cosmos-intended-collection-rid")
        result = self.engine.delete_partition_key(ctx, db, coll, key, intended_rid=rid)
        headers = wire.session_headers(result.pkrange_id, result.lsn)
        return Reply(result.status, None, result.request_charge, result.pkrange_id, headers)


@contextmanager
def metered_refusals(engine: Engine, ctx: Context, operation: str, db: str, coll: str) -> Iterator[None]:
    """Record a docs request whose headers or body the protocol refuses, as the operation it was for."""
    try:
        yield
    except errors.CosmosError as exc:
        engine.metering.record_refused(ctx, operation, "docs", db, coll, exc)
        raise


def minimal(request: Request, reply: Reply) -> Reply:
    """`Prefer: return=minimal` (the SDK's `no_response`): a write answers its status and headers, no body.
    The SDK sends it on every non-GET docs request when asked client-wide, so only item writes heed it."""
    if "return=minimal" in (request.header("prefer") or "").replace(" ", "").lower().split(","):
        reply.body = None
    return reply
