"""The routes of users and permissions: `dbs/{db}/users[/{user}[/permissions[/{permission}]]]`.

Each route is one call of `Engine.users`; a permission's answer (create, read, replace, upsert, and each
one of a listing) carries a fresh `_token`, valid for one hour or for `x-ms-documentdb-expiry-seconds`
(`emulator.rest.resource_tokens`; cosmos-wire-protocol.md W40, W41).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.engine import errors
from emulator.engine.facade import Context, Engine
from emulator.engine.results import Resource
from emulator.rest import resource_tokens, wire
from emulator.rest.request import Request
from emulator.rest.wire import Reply, listing_reply, resource_reply


class UserRoutes:
    """Users and permissions over one engine; tokens signed with the master key, dated by `now`."""

    def __init__(self, engine: Engine, key_bytes: bytes, now: Callable[[], float]) -> None:
        self.engine = engine
        self._key_bytes = key_bytes
        self._now = now

    def dispatch(self, request: Request, ctx: Context, db: str) -> Reply:
        seg, method, users = request.segments, request.method, self.engine.users
        n = len(seg)
        if n == 3:
            if method == "POST" and request.is_query():
                text, params = wire.query_text_and_parameters(request.json())
                return listing_reply("Users", users.list_users(ctx, db, text, params))
            if method == "POST":
                upsert = request.flag("x-ms-documentdb-is-upsert")
                return resource_reply(users.create_user(ctx, db, request.json(), upsert=upsert))
            return _only(method, "GET", lambda: listing_reply("Users", users.list_users(ctx, db)))
        user = seg[3]
        if n == 4:
            if method == "PUT":
                return resource_reply(users.replace_user(ctx, db, user, request.json()))
            if method == "DELETE":
                return resource_reply(users.delete_user(ctx, db, user))
            return _only(method, "GET", lambda: resource_reply(users.read_user(ctx, db, user)))
        if seg[4] != "permissions" or n > 6:
            raise errors.CosmosError(404, f"Unknown resource path {request.path!r}.")
        if n == 5:
            return self._permissions(request, ctx, db, user)
        return self._permission(request, ctx, db, user, seg[5])

    def _permissions(self, request: Request, ctx: Context, db: str, user: str) -> Reply:
        method, users = request.method, self.engine.users
        seconds = _lifetime(request)  # read first: a refused lifetime creates nothing
        if method == "POST" and request.is_query():
            text, params = wire.query_text_and_parameters(request.json())
            return self._listing(seconds, users.list_permissions(ctx, db, user, text, params))
        if method == "POST":
            upsert = request.flag("x-ms-documentdb-is-upsert")
            return self._with_token(seconds, users.create_permission(ctx, db, user, request.json(), upsert=upsert))
        return _only(method, "GET", lambda: self._listing(seconds, users.list_permissions(ctx, db, user)))

    def _permission(self, request: Request, ctx: Context, db: str, user: str, permission: str) -> Reply:
        method, users = request.method, self.engine.users
        seconds = _lifetime(request)
        if method == "PUT":
            return self._with_token(seconds, users.replace_permission(ctx, db, user, permission, request.json()))
        if method == "DELETE":
            return resource_reply(users.delete_permission(ctx, db, user, permission))
        return _only(method, "GET", lambda: self._with_token(seconds, users.read_permission(ctx, db, user, permission)))

    def _with_token(self, seconds: int, result: Resource) -> Reply:
        return Reply(result.status, self._tokened(result.value, seconds), result.request_charge)

    def _listing(self, seconds: int, result: Resource) -> Reply:
        found = [self._tokened(p, seconds) for p in result.value]
        return Reply(result.status, wire.feed_body("Permissions", found, result.owner_rid), result.request_charge)

    def _tokened(self, props: dict[str, Any], seconds: int) -> dict[str, Any]:
        """The permission's JSON with a token minted now (each read of a permission mints a new one)."""
        grant = self.engine.users.grant(props.get("_rid", "")) if isinstance(props, dict) else None
        if grant is None:  # a query's projection without the rid: nothing to mint a token for
            return props
        return {**props, "_token": resource_tokens.mint(self._key_bytes, grant, self._now(), seconds)}


def _lifetime(request: Request) -> int:
    return resource_tokens.lifetime(request.header("x-ms-documentdb-expiry-seconds"))


def _only(method: str, allowed: str, call: Callable[[], Reply]) -> Reply:
    if method != allowed:
        raise errors.CosmosError(405, f"The HTTP method {method} is not allowed on this resource.")
    return call()
