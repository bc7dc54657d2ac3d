"""Users, permissions and resource tokens, each through the unmodified azure-cosmos SDK."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, DatabaseProxy, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator, open_engine
from tests.conftest import sdk_client


@pytest.fixture
def database(client: CosmosClient) -> DatabaseProxy:
    db = client.create_database("shop")
    orders = db.create_container("orders", PartitionKey("/tenant"))
    for i, tenant in enumerate(["t1", "t1", "t2"]):
        orders.create_item({"id": str(i), "tenant": tenant})
    db.create_container("invoices", PartitionKey("/tenant")).create_item({"id": "x", "tenant": "t1"})
    return db


def _status(calls: list[int]) -> dict[str, Any]:
    return {"raw_response_hook": lambda response: calls.append(response.http_response.status_code)}


def _token_client(emu: RunningEmulator, link: str, token: str) -> CosmosClient:
    return CosmosClient(emu.url, credential={link: token})


def _orders(client: CosmosClient) -> ContainerProxy:
    return client.get_database_client("shop").get_container_client("orders")


def _refused(call: Callable[[], object]) -> int:
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        call()
    return int(caught.value.status_code or 0)


def test_users_are_created_read_replaced_listed_queried_and_deleted(database: DatabaseProxy) -> None:
    statuses: list[int] = []
    alice = database.create_user({"id": "alice"}, **_status(statuses))
    database.create_user({"id": "bob"})
    assert statuses == [201]
    read = database.get_user_client("alice").read()
    assert read["id"] == "alice" and read["_self"].endswith(f"/users/{read['_rid']}/")
    assert read["_permissions"] == "permissions/" and alice.id == "alice"
    with pytest.raises(exceptions.CosmosResourceExistsError):
        database.create_user({"id": "alice"})
    assert sorted(u["id"] for u in database.list_users()) == ["alice", "bob"]
    by_id = "SELECT * FROM root r WHERE r.id = @id"
    assert [u["id"] for u in database.query_users(by_id, parameters=[{"name": "@id", "value": "bob"}])] == ["bob"]
    renamed = database.replace_user("bob", {"id": "robert"})
    assert renamed.id == "robert" and renamed.read()["_rid"] != read["_rid"]
    assert database.upsert_user({"id": "carol"}).read()["id"] == "carol"
    database.delete_user("alice")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        database.get_user_client("alice").read()
    assert sorted(u["id"] for u in database.list_users()) == ["carol", "robert"]


def test_permissions_carry_a_token_and_are_read_listed_replaced_upserted_and_deleted(database: DatabaseProxy) -> None:
    orders = database.get_container_client("orders")
    user = database.create_user({"id": "alice"})
    statuses: list[int] = []
    created = user.create_permission(
        {"id": "read-orders", "permissionMode": "Read", "resource": orders.container_link}, **_status(statuses)
    )
    assert statuses == [201]
    props = created.properties
    assert (props["permissionMode"], props["resource"]) == ("Read", "dbs/shop/colls/orders")
    assert props["_token"].startswith("type=resource&ver=1&sig=") and props["_self"].endswith(f"/{props['_rid']}/")
    read = user.get_permission("read-orders")
    assert read.permission_mode == "Read" and read.properties["_token"].startswith("type=resource&")
    assert [p["id"] for p in user.list_permissions()] == ["read-orders"]
    assert all(p["_token"] for p in user.list_permissions())
    found = user.query_permissions("SELECT * FROM r WHERE r.permissionMode = 'Read'")
    assert [p["id"] for p in found] == ["read-orders"]
    replaced = user.replace_permission(
        "read-orders", {"id": "read-orders", "permissionMode": "All", "resource": orders.container_link}
    )
    assert replaced.permission_mode == "All" and replaced.properties["_rid"] == props["_rid"]
    invoices = database.get_container_client("invoices").container_link
    upserted = user.upsert_permission({"id": "invoices", "permissionMode": "Read", "resource": invoices})
    assert upserted.properties["_token"]
    assert sorted(p["id"] for p in user.list_permissions()) == ["invoices", "read-orders"]
    user.delete_permission("invoices")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        user.get_permission("invoices")


def test_a_permission_is_refused_as_the_service_refuses_it(database: DatabaseProxy) -> None:
    orders = database.get_container_client("orders").container_link
    user = database.create_user({"id": "alice"})
    user.create_permission({"id": "p", "permissionMode": "Read", "resource": orders})
    with pytest.raises(exceptions.CosmosResourceExistsError):  # one permission per resource and user
        user.create_permission({"id": "q", "permissionMode": "All", "resource": orders})
    with pytest.raises(exceptions.CosmosResourceExistsError):
        user.create_permission({"id": "p", "permissionMode": "Read", "resource": orders})
    assert _refused(lambda: user.create_permission({"id": "r", "permissionMode": "Write", "resource": orders})) == 400
    assert _refused(lambda: user.create_permission({"id": "r", "permissionMode": "Read"})) == 400
    absent = "dbs/shop/colls/absent"
    assert _refused(lambda: user.create_permission({"id": "r", "permissionMode": "Read", "resource": absent})) == 400
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        database.get_user_client("nobody").create_permission({"id": "r", "permissionMode": "Read", "resource": orders})


def test_a_read_token_reads_queries_and_feeds_its_container_and_nothing_else(
    emulator: RunningEmulator, database: DatabaseProxy
) -> None:
    link = database.get_container_client("orders").container_link
    user = database.create_user({"id": "alice"})
    token = user.create_permission({"id": "p", "permissionMode": "Read", "resource": link}).properties["_token"]
    reader = _token_client(emulator, link, token)
    orders = _orders(reader)
    assert orders.read_item("0", "t1")["id"] == "0"
    assert sorted(d["id"] for d in orders.query_items("SELECT * FROM c", enable_cross_partition_query=True)) == [
        "0",
        "1",
        "2",
    ]
    assert [d["id"] for d in orders.query_items("SELECT * FROM c WHERE c.id = '2'", partition_key="t2")] == ["2"]
    assert sorted(d["id"] for d in orders.read_all_items()) == ["0", "1", "2"]
    assert orders.read()["id"] == "orders"
    assert _refused(lambda: orders.create_item({"id": "9", "tenant": "t1"})) == 403
    assert _refused(lambda: orders.upsert_item({"id": "0", "tenant": "t1"})) == 403
    assert _refused(lambda: orders.delete_item("0", "t1")) == 403
    shop = reader.get_database_client("shop")
    assert _refused(lambda: shop.get_container_client("invoices").read_item("x", "t1")) == 403
    assert _refused(lambda: shop.read()) == 403
    assert _refused(lambda: shop.create_container("other", PartitionKey("/k"))) == 403
    assert _refused(lambda: list(shop.list_containers())) == 403
    assert _refused(lambda: list(shop.list_users())) == 403
    # an account-level call (create_database, list_databases) finds no token for its path in the SDK
    # (auth.py), so it goes without one: 401, as for any request with no authorization
    assert _refused(lambda: reader.create_database("other")) == 401


def test_an_all_token_writes_too(emulator: RunningEmulator, database: DatabaseProxy) -> None:
    link = database.get_container_client("orders").container_link
    token = (
        database.create_user({"id": "alice"})
        .create_permission({"id": "p", "permissionMode": "All", "resource": link})
        .properties["_token"]
    )
    orders = _orders(_token_client(emulator, link, token))
    orders.create_item({"id": "9", "tenant": "t3"})
    orders.upsert_item({"id": "9", "tenant": "t3", "n": 1})
    orders.replace_item("9", {"id": "9", "tenant": "t3", "n": 2})
    orders.patch_item("9", "t3", [{"op": "set", "path": "/n", "value": 3}])
    assert orders.read_item("9", "t3")["n"] == 3
    orders.delete_item("9", "t3")
    assert sorted(d["id"] for d in database.get_container_client("orders").read_all_items()) == ["0", "1", "2"]


def test_a_partition_token_reaches_only_its_logical_partition(
    emulator: RunningEmulator, database: DatabaseProxy
) -> None:
    link = database.get_container_client("orders").container_link
    definition = {"id": "p", "permissionMode": "All", "resource": link, "resourcePartitionKey": ["t1"]}
    permission = database.create_user({"id": "alice"}).create_permission(definition)
    assert permission.properties["resourcePartitionKey"] == ["t1"]
    orders = _orders(_token_client(emulator, link, permission.properties["_token"]))
    assert orders.read_item("0", "t1")["id"] == "0"
    assert sorted(d["id"] for d in orders.query_items("SELECT * FROM c", partition_key="t1")) == ["0", "1"]
    orders.create_item({"id": "5", "tenant": "t1"})
    assert _refused(lambda: orders.read_item("2", "t2")) == 403
    assert _refused(lambda: orders.create_item({"id": "6", "tenant": "t2"})) == 403
    assert _refused(lambda: list(orders.query_items("SELECT * FROM c", enable_cross_partition_query=True))) == 403
    assert _refused(lambda: orders.delete_all_items_by_partition_key("t2")) == 403


def test_every_credential_form_of_the_sdk_carries_the_token(emulator: RunningEmulator, database: DatabaseProxy) -> None:
    """The dict by name link, the dict by `_self` (addressed by rids), and the backwards-compatible
    `{"resourceTokens": ...}`; the permission list builds a client (the account read takes any token), but
    azure-cosmos 4.17.1 keys its tokens by the resource's last segment, which its own lookup never finds
    for a data call (cosmos_client_connection.py `permissionFeed`, auth.py), so none is made with it here."""
    orders = database.get_container_client("orders")
    self_link = orders.read()["_self"]
    user = database.create_user({"id": "alice"})
    token = user.create_permission({"id": "p", "permissionMode": "Read", "resource": self_link}).properties["_token"]
    _, db_rid, _, coll_rid = self_link.strip("/").split("/")
    by_rid = CosmosClient(emulator.url, credential={self_link: token})
    assert by_rid.get_database_client(db_rid).get_container_client(coll_rid).read_item("0", "t1")["id"] == "0"
    legacy = CosmosClient(emulator.url, credential={"resourceTokens": {orders.container_link: token}})
    assert _orders(legacy).read_item("1", "t1")["id"] == "1"
    assert _orders(_token_client(emulator, orders.container_link, token)).read_item("2", "t2")["id"] == "2"
    CosmosClient(emulator.url, credential=list(user.list_permissions()))  # its account read is answered


def test_a_deleted_or_replaced_permission_and_a_deleted_user_revoke_their_tokens(
    emulator: RunningEmulator, database: DatabaseProxy
) -> None:
    link = database.get_container_client("orders").container_link
    user = database.create_user({"id": "alice"})
    first = user.create_permission({"id": "p", "permissionMode": "All", "resource": link}).properties["_token"]
    user.replace_permission("p", {"id": "p", "permissionMode": "Read", "resource": link})
    assert _refused(lambda: _orders(_token_client(emulator, link, first)).read_item("0", "t1")) == 401
    second = user.get_permission("p").properties["_token"]
    assert _orders(_token_client(emulator, link, second)).read_item("0", "t1")["id"] == "0"
    user.delete_permission("p")
    assert _refused(lambda: _orders(_token_client(emulator, link, second)).read_item("0", "t1")) == 401
    third = user.create_permission({"id": "q", "permissionMode": "Read", "resource": link}).properties["_token"]
    database.delete_user("alice")  # its permissions go with it
    assert _refused(lambda: _orders(_token_client(emulator, link, third)).read_item("0", "t1")) == 401
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        database.create_user({"id": "alice"}).get_permission("q")


def test_a_token_not_signed_with_the_account_key_is_refused(emulator: RunningEmulator, database: DatabaseProxy) -> None:
    link = database.get_container_client("orders").container_link
    token = (
        database.create_user({"id": "alice"})
        .create_permission({"id": "p", "permissionMode": "Read", "resource": link})
        .properties["_token"]
    )
    claims, mac = token.removeprefix("type=resource&ver=1&sig=").split(";")[:2]
    forged = f"type=resource&ver=1&sig={claims[:-2]}AA;{mac};"
    assert _refused(lambda: _orders(_token_client(emulator, link, forged)).read_item("0", "t1")) == 401
    garbled = "type=resource&ver=1&sig=x"
    assert _refused(lambda: _token_client(emulator, link, garbled)) == 401  # its account read already


class _Clock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clocked() -> Iterator[tuple[RunningEmulator, _Clock]]:
    """An emulator whose REST layer dates tokens by a clock the test moves."""
    from emulator.rest.app import CosmosApp
    from emulator.rest.server import start_in_thread

    clock = _Clock()
    engine = open_engine()
    emu = start_in_thread(engine, app=CosmosApp(engine, now=clock))
    yield emu, clock
    emu.stop()


def test_tokens_expire_after_an_hour_or_the_lifetime_the_permission_read_asks_for(
    clocked: tuple[RunningEmulator, _Clock],
) -> None:
    emu, clock = clocked
    db = sdk_client(emu).create_database("shop")
    link = db.create_container("orders", PartitionKey("/tenant")).container_link
    db.get_container_client("orders").create_item({"id": "0", "tenant": "t1"})
    user = db.create_user({"id": "alice"})
    hourly = user.create_permission({"id": "p", "permissionMode": "Read", "resource": link}).properties["_token"]
    short = user.get_permission("p", resource_token_expiry_seconds=600).properties["_token"]
    assert _refused(lambda: user.get_permission("p", resource_token_expiry_seconds=18001)) == 400
    assert _refused(lambda: user.get_permission("p", resource_token_expiry_seconds=5)) == 400
    refused = {"id": "q", "permissionMode": "Read", "resource": link, "resourcePartitionKey": ["t9"]}
    assert _refused(lambda: user.create_permission(refused, resource_token_expiry_seconds=5)) == 400
    assert [p["id"] for p in user.list_permissions()] == ["p"]  # the refused lifetime created nothing
    clock.now += 601
    assert _orders(_token_client(emu, link, hourly)).read_item("0", "t1")["id"] == "0"
    with pytest.raises(exceptions.CosmosHttpResponseError) as expired:
        _orders(_token_client(emu, link, short)).read_item("0", "t1")
    assert expired.value.status_code == 403 and "not valid at the current time" in expired.value.message
    clock.now += 3000
    assert _refused(lambda: _orders(_token_client(emu, link, hourly)).read_item("0", "t1")) == 403


def test_users_permissions_and_their_tokens_survive_a_restart(
    tmp_path: Path, make_emulator: Callable[..., RunningEmulator]
) -> None:
    emu = make_emulator(data_dir=tmp_path)
    db = sdk_client(emu).create_database("shop")
    orders = db.create_container("orders", PartitionKey("/tenant"))
    orders.create_item({"id": "0", "tenant": "t1"})
    user = db.create_user({"id": "alice"})
    definition = {"id": "p", "permissionMode": "All", "resource": orders.container_link, "resourcePartitionKey": ["t1"]}
    token = user.create_permission(definition).properties["_token"]
    db.replace_user("alice", {"id": "alicia"})
    db.create_user({"id": "gone"})
    db.delete_user("gone")
    emu.engine.close()  # the journal folded into a snapshot, as at shutdown
    again = make_emulator(open_engine(tmp_path))
    restarted = sdk_client(again).get_database_client("shop")
    assert [u["id"] for u in restarted.list_users()] == ["alicia"]
    permission = restarted.get_user_client("alicia").get_permission("p").properties
    assert (permission["permissionMode"], permission["resourcePartitionKey"]) == ("All", ["t1"])
    survivor = _orders(_token_client(again, orders.container_link, token))  # issued before the restart
    assert survivor.read_item("0", "t1")["id"] == "0"
    assert _refused(lambda: survivor.read_item("0", "t2")) == 403
