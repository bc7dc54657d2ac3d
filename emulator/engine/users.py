"""Users and permissions: a database's users, and each user's grants on containers.

A permission names a container (`resource`: its name link or `_self`), a mode (`All` or `Read`) and
optionally one logical partition (`resourcePartitionKey`). Each operation validates, journals an entry and
applies it through `emulator.engine.userlog`; charges are the cost model's flat metadata RU. The resource
tokens that carry a permission to a client are the REST layer's (`emulator.rest.resource_tokens`): the
engine answers what a permission grants now (`grant`), so a deleted permission, or a deleted user's,
grants nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cosmoscore.costmodel import CostModel
from emulator.engine import errors, userlog
from emulator.engine.catalog import require_id, select_resources
from emulator.engine.metering import Context, Metering
from emulator.engine.model import Container, Database, Permission, User, make_rid
from emulator.engine.results import Grant, Resource
from emulator.engine.state import State

MODES = ("All", "Read")


class Users:
    def __init__(self, state: State, metering: Metering, cost: CostModel) -> None:
        self.state = state
        self.metering = metering
        self.cost = cost

    # -- users ---------------------------------------------------------------------------------

    def create_user(self, ctx: Context, db_id: str, definition: Mapping[str, Any], *, upsert: bool = False) -> Resource:
        user_id = require_id(definition)
        with self.metering.metered(ctx, "Upsert" if upsert else "Create", "users", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            if user_id in db.users:
                if not upsert:
                    raise errors.conflict()
                return Resource(200, db.users[user_id].props, meter.charge)  # an upsert of the same id: as is
            meter.charge = self.cost.metadata_write_ru
            rid = make_rid(self.state.next_id(), self.state.next_id())
            entry = {"op": "create_user", "db": db_id, "id": user_id, "rid": rid, "ts": self.state.now()}
            self.state.commit(entry)
            meter.status = 201
            return Resource(201, userlog.apply_create_user(self.state.databases, entry).props, meter.charge)

    def read_user(self, ctx: Context, db_id: str, user_id: str) -> Resource:
        with self.metering.metered(ctx, "Read", "users", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            return Resource(200, self._user(db_id, user_id).props, meter.charge)

    def list_users(
        self, ctx: Context, db_id: str, query: str | None = None, parameters: Mapping[str, Any] | None = None
    ) -> Resource:
        """A database's users, or those a SQL query selects (the SDK's `query_users`)."""
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "users", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            return Resource(
                200, select_resources([u.props for u in db.users.values()], query, parameters), meter.charge, db.rid
            )

    def replace_user(self, ctx: Context, db_id: str, user_id: str, definition: Mapping[str, Any]) -> Resource:
        """A user's id replaced (its rid and permissions stay); 409 when the new id is another user's."""
        new_id = require_id(definition)
        with self.metering.metered(ctx, "Replace", "users", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            db = self.state.db(db_id)
            self._user(db_id, user_id)
            if new_id != user_id and new_id in db.users:
                raise errors.conflict()
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "replace_user", "db": db_id, "id": user_id, "new_id": new_id, "ts": self.state.now()}
            self.state.commit(entry)
            return Resource(200, userlog.apply_replace_user(self.state.databases, entry).props, meter.charge)

    def delete_user(self, ctx: Context, db_id: str, user_id: str) -> Resource:
        """The user and, with it, its permissions: their tokens stop working."""
        with self.metering.metered(ctx, "Delete", "users", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            self._user(db_id, user_id)
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "delete_user", "db": db_id, "id": user_id}
            self.state.commit(entry)
            userlog.apply_delete_user(self.state.databases, entry)
            meter.status = 204
            return Resource(204, None, meter.charge)

    # -- permissions ---------------------------------------------------------------------------

    def create_permission(
        self, ctx: Context, db_id: str, user_id: str, definition: Mapping[str, Any], *, upsert: bool = False
    ) -> Resource:
        """201 with the new permission; an upsert of an existing id replaces it (200)."""
        perm_id = require_id(definition)
        with self.metering.metered(ctx, "Upsert" if upsert else "Create", "permissions", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            user = self._user(db_id, user_id)
            old = user.permissions.get(perm_id)
            if old is not None and not upsert:
                raise errors.conflict()
            meter.charge = self.cost.metadata_write_ru
            permission = self._put(db_id, user, perm_id, definition, old)
            meter.status = 200 if old is not None else 201
            return Resource(meter.status, permission.props, meter.charge)

    def read_permission(self, ctx: Context, db_id: str, user_id: str, perm_id: str) -> Resource:
        with self.metering.metered(ctx, "Read", "permissions", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            return Resource(200, self._permission(db_id, user_id, perm_id).props, meter.charge)

    def list_permissions(
        self,
        ctx: Context,
        db_id: str,
        user_id: str,
        query: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> Resource:
        with self.metering.metered(ctx, "ReadFeed" if query is None else "Query", "permissions", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            user = self._user(db_id, user_id)
            found = select_resources([p.props for p in user.permissions.values()], query, parameters)
            return Resource(200, found, meter.charge, user.rid)

    def replace_permission(
        self, ctx: Context, db_id: str, user_id: str, perm_id: str, definition: Mapping[str, Any]
    ) -> Resource:
        """The permission's mode, resource or partition (or id) replaced; it keeps its rid."""
        new_id = require_id(definition)
        with self.metering.metered(ctx, "Replace", "permissions", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            user = self._user(db_id, user_id)
            old = self._permission(db_id, user_id, perm_id)
            if new_id != perm_id and new_id in user.permissions:
                raise errors.conflict()
            meter.charge = self.cost.metadata_write_ru
            return Resource(200, self._put(db_id, user, new_id, definition, old).props, meter.charge)

    def delete_permission(self, ctx: Context, db_id: str, user_id: str, perm_id: str) -> Resource:
        with self.metering.metered(ctx, "Delete", "permissions", db_id) as meter:
            meter.charge = self.cost.metadata_read_ru
            self._permission(db_id, user_id, perm_id)
            meter.charge = self.cost.metadata_write_ru
            entry = {"op": "delete_permission", "db": db_id, "user": user_id, "id": perm_id}
            self.state.commit(entry)
            userlog.apply_delete_permission(self.state.databases, entry)
            meter.status = 204
            return Resource(204, None, meter.charge)

    def grant(self, permission_rid: str) -> Grant | None:
        """What the permission with this rid grants now; None when it (or its user) was deleted. Not metered:
        the request it authorizes is."""
        with self.metering.lock:
            return self._grant(permission_rid)

    def _grant(self, permission_rid: str) -> Grant | None:
        for db in self.state.databases.values():
            for user in db.users.values():
                for permission in user.permissions.values():
                    if permission.rid == permission_rid:
                        coll = _container_by_rid(db, permission.coll_rid)
                        mode = permission.props["permissionMode"]
                        names = (db.id, coll.id) if coll is not None else (None, None)
                        return Grant(permission.rid, mode, permission.coll_rid, permission.key, *names)
        return None

    # -- helpers -------------------------------------------------------------------------------

    def _put(
        self, db_id: str, user: User, perm_id: str, definition: Mapping[str, Any], old: Permission | None
    ) -> Permission:
        mode, resource, key = _validated(definition)
        coll = _resolve(self.state.db(db_id), resource)
        for other in user.permissions.values():
            if other is not old and other.coll_rid == coll.rid and other.key == key:
                raise errors.conflict()  # one permission per resource and user (cosmos-wire-protocol.md W43)
        entry: dict[str, Any] = {
            "op": "put_permission",
            "db": db_id,
            "user": user.id,
            "id": perm_id,
            "rid": old.rid if old is not None else make_rid(*(self.state.next_id() for _ in range(3))),
            "ts": self.state.now(),
            "mode": mode,
            "resource": resource,
            "coll_rid": coll.rid,
            "key": key,
        }
        if old is not None:
            entry["old_id"] = old.id
        self.state.commit(entry)
        return userlog.apply_put_permission(self.state.databases, entry)

    def _user(self, db_id: str, user_id: str) -> User:
        user = self.state.db(db_id).users.get(user_id)
        if user is None:
            raise errors.not_found()
        return user

    def _permission(self, db_id: str, user_id: str, perm_id: str) -> Permission:
        permission = self._user(db_id, user_id).permissions.get(perm_id)
        if permission is None:
            raise errors.not_found()
        return permission


def _validated(definition: Mapping[str, Any]) -> tuple[str, str, list[Any] | None]:
    """(mode, resource, partition key JSON) of a permission definition; 400 when one is missing or invalid."""
    mode = definition.get("permissionMode")
    mode = next((m for m in MODES if isinstance(mode, str) and m.lower() == mode.lower()), None)
    if mode is None:
        raise errors.bad_request("The permissionMode of a permission must be 'All' or 'Read'.")
    resource = definition.get("resource")
    if not isinstance(resource, str) or not resource.strip("/"):
        raise errors.bad_request(
            "The input content is invalid because the required properties - 'resource; ' - are missing"
        )
    key = definition.get("resourcePartitionKey")
    if key is not None and not isinstance(key, list):
        key = [key]  # a single value, as some clients send it
    return mode, resource, key


def _resolve(db: Database, resource: str) -> Container:
    """The container a permission's `resource` names, by name link or `_self`, in the user's database."""
    parts = [p for p in resource.strip("/").split("/") if p]
    if len(parts) != 4 or parts[0] != "dbs" or parts[2] != "colls":
        raise errors.bad_request(
            f"The permission's resource {resource!r} is not a container link (dbs/{{db}}/colls/{{container}}); "
            "the ruscope emulator grants permissions on containers only."
        )
    if parts[1] not in (db.id, db.rid):
        raise errors.bad_request(f"The permission's resource {resource!r} is not in the user's database {db.id!r}.")
    coll = db.containers.get(parts[3]) or _container_by_rid(db, parts[3])
    if coll is None:
        raise errors.bad_request(f"The permission's resource {resource!r} names no container of {db.id!r}.")
    return coll


def _container_by_rid(db: Database, rid: str) -> Container | None:
    return next((c for c in db.containers.values() if c.rid == rid), None)
