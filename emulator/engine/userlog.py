"""Users and permissions as journal entries: the appliers `State.apply` runs and the entries
`State.snapshot_entries` writes them back as, so both survive a restart.

Entries: `create_user` {db, id, rid, ts}; `replace_user` {db, id, new_id, ts} (a rename);
`delete_user` {db, id} (its permissions go with it); `put_permission` {db, user, id, rid, ts, mode, resource,
coll_rid, key, old_id?} (a create, or a replace of `old_id`, renamed or not); `delete_permission`
{db, user, id}.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from emulator.engine.model import Database, Permission, User

Applier = Callable[[dict[str, Database], dict[str, Any]], Any]


def apply_create_user(databases: dict[str, Database], entry: dict[str, Any]) -> User:
    db = databases[entry["db"]]
    rid = entry["rid"]
    props = {
        "id": entry["id"],
        "_rid": rid,
        "_ts": entry["ts"],
        "_self": f"{db.props['_self']}users/{rid}/",
        "_etag": f'"{rid}-{entry["ts"]}"',
        "_permissions": "permissions/",
    }
    user = db.users[entry["id"]] = User(entry["id"], rid, props)
    return user


def apply_replace_user(databases: dict[str, Database], entry: dict[str, Any]) -> User:
    """A user's id replaced: it keeps its rid, `_self` and permissions."""
    users = databases[entry["db"]].users
    user = users.pop(entry["id"])
    user.id = user.props["id"] = entry["new_id"]
    user.props["_ts"] = entry["ts"]
    user.props["_etag"] = f'"{user.rid}-{entry["ts"]}"'
    users[user.id] = user
    return user


def apply_delete_user(databases: dict[str, Database], entry: dict[str, Any]) -> None:
    del databases[entry["db"]].users[entry["id"]]


def apply_put_permission(databases: dict[str, Database], entry: dict[str, Any]) -> Permission:
    user = databases[entry["db"]].users[entry["user"]]
    user.permissions.pop(entry.get("old_id") or entry["id"], None)
    rid = entry["rid"]
    props: dict[str, Any] = {
        "id": entry["id"],
        "permissionMode": entry["mode"],
        "resource": entry["resource"],
    }
    if entry["key"] is not None:
        props["resourcePartitionKey"] = entry["key"]
    props |= {
        "_rid": rid,
        "_ts": entry["ts"],
        "_self": f"{user.props['_self']}permissions/{rid}/",
        "_etag": f'"{rid}-{entry["ts"]}"',
    }
    permission = user.permissions[entry["id"]] = Permission(entry["id"], rid, props, entry["coll_rid"], entry["key"])
    return permission


def apply_delete_permission(databases: dict[str, Database], entry: dict[str, Any]) -> None:
    del databases[entry["db"]].users[entry["user"]].permissions[entry["id"]]


APPLIERS: dict[str, Applier] = {
    "create_user": apply_create_user,
    "replace_user": apply_replace_user,
    "delete_user": apply_delete_user,
    "put_permission": apply_put_permission,
    "delete_permission": apply_delete_permission,
}


def user_entries(db: Database) -> Iterator[dict[str, Any]]:
    """A database's users and their permissions as entries (for compaction): replaying them rebuilds both."""
    for user in db.users.values():
        yield {"op": "create_user", "db": db.id, "id": user.id, "rid": user.rid, "ts": user.props["_ts"]}
        for permission in user.permissions.values():
            yield {
                "op": "put_permission",
                "db": db.id,
                "user": user.id,
                "id": permission.id,
                "rid": permission.rid,
                "ts": permission.props["_ts"],
                "mode": permission.props["permissionMode"],
                "resource": permission.props["resource"],
                "coll_rid": permission.coll_rid,
                "key": permission.key,
            }
