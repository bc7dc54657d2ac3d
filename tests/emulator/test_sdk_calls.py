"""What the SDK's own calls expect, each through the unmodified azure-cosmos SDK."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from azure.core import MatchConditions
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator, open_engine
from tests import rawhttp
from tests.conftest import sdk_client


@pytest.fixture
def container(client: CosmosClient):
    db = client.create_database_if_not_exists("shop")
    return db.create_container_if_not_exists("orders", PartitionKey("/tenant"))


def test_query_databases_answers_the_query(client: CosmosClient) -> None:
    for name in ("a", "b"):
        client.create_database(name)
    by_id = "SELECT * FROM root r WHERE r.id=@id"
    assert [d["id"] for d in client.query_databases(by_id, parameters=[{"name": "@id", "value": "b"}])] == ["b"]
    assert sorted(d["id"] for d in client.query_databases("SELECT * FROM root r")) == ["a", "b"]
    assert list(client.query_databases(by_id, parameters=[{"name": "@id", "value": "zz"}])) == []
    assert sorted(d["id"] for d in client.list_databases()) == ["a", "b"]  # a query creates nothing


def test_query_containers_answers_the_query(client: CosmosClient) -> None:
    db = client.create_database("a")
    for name in ("c1", "c2"):
        db.create_container(name, PartitionKey("/k"))
    by_id = "SELECT * FROM root r WHERE r.id=@id"
    found = list(db.query_containers(by_id, parameters=[{"name": "@id", "value": "c2"}]))
    assert [c["id"] for c in found] == ["c2"] and found[0]["partitionKey"]["paths"] == ["/k"]
    assert sorted(c["id"] for c in db.query_containers("SELECT * FROM root r")) == ["c1", "c2"]
    assert sorted(c["id"] for c in db.list_containers()) == ["c1", "c2"]


def test_delete_all_items_by_partition_key_deletes_the_logical_partition_durably(
    tmp_path: Path, make_emulator: Callable[..., RunningEmulator]
) -> None:
    emu = make_emulator(data_dir=tmp_path)
    container = sdk_client(emu).create_database("shop").create_container("orders", PartitionKey("/tenant"))
    for i, tenant in enumerate(["t1", "t1", "t1", "t2"]):
        container.create_item({"id": str(i), "tenant": tenant})
    container.delete_all_items_by_partition_key("t1")
    assert [d["id"] for d in container.read_all_items()] == ["3"]
    container.delete_all_items_by_partition_key("absent")  # nothing to delete is still a 200
    record = next(r for r in emu.engine.accounting.records() if r.resource_type == "partitionkey")
    assert (record.status, record.operation) == (200, "Delete") and record.request_charge > 3 * 5
    emu.engine.close()  # the journal folded into a snapshot, as at shutdown
    restarted = open_engine(tmp_path).container("shop", "orders")
    assert [i for r in restarted.ranges for lp in r.logical.values() for i in lp.items] == ["3"]


def _charge_of(call: Callable[[], object], error: type[exceptions.CosmosHttpResponseError]) -> float:
    with pytest.raises(error) as caught:
        call()
    return float(caught.value.headers["x-ms-request-charge"])


def test_error_answers_carry_the_charge(emulator: RunningEmulator, container) -> None:
    container.create_item({"id": "1", "tenant": "t1", "body": "x" * 3000})
    read_404 = _charge_of(lambda: container.read_item("absent", "t1"), exceptions.CosmosResourceNotFoundError)
    create_409 = _charge_of(
        lambda: container.create_item({"id": "1", "tenant": "t1"}), exceptions.CosmosResourceExistsError
    )
    stale = {"id": "1", "tenant": "t1"}
    replace_412 = _charge_of(
        lambda: container.replace_item("1", stale, etag='"stale"', match_condition=MatchConditions.IfNotModified),
        exceptions.CosmosAccessConditionFailedError,
    )
    replace_404 = _charge_of(
        lambda: container.replace_item("absent", {"id": "absent", "tenant": "t1"}),
        exceptions.CosmosResourceNotFoundError,
    )
    cost = emulator.engine.cost
    assert read_404 == replace_404 == cost.read_size_ru(0) == 1.0  # a 404 point read was captured at 1 RU
    assert create_409 == replace_412 == round(cost.read_size_ru(emulator.engine.container("shop", "orders").size), 2)
    records = emulator.engine.accounting.records()
    charged = [r.request_charge for r in records if r.resource_type == "docs" and r.status in (404, 409, 412)]
    assert charged == [read_404, create_409, replace_412, replace_404]  # the log counts what the header says


def test_metadata_errors_carry_the_charge(client: CosmosClient) -> None:
    client.create_database("a")
    assert _charge_of(lambda: client.create_database("a"), exceptions.CosmosResourceExistsError) == 1.0
    assert _charge_of(lambda: client.get_database_client("zz").read(), exceptions.CosmosResourceNotFoundError) == 1.0
    absent = client.get_database_client("a").get_container_client("zz")
    assert _charge_of(absent.read, exceptions.CosmosResourceNotFoundError) == 1.0


def _last_raw(emu: RunningEmulator, **kwargs: object) -> tuple[CosmosClient, list[object]]:
    seen: list[object] = []
    hook = lambda response: seen.append(response.http_response)  # noqa: E731
    return sdk_client(emu, raw_response_hook=hook, **kwargs), seen


def test_no_response_writes_answer_no_body(emulator: RunningEmulator) -> None:
    client, seen = _last_raw(emulator)
    c = client.create_database("shop").create_container("orders", PartitionKey("/tenant"))
    created = c.create_item({"id": "1", "tenant": "t1", "n": 1}, no_response=True)
    assert (seen[-1].status_code, seen[-1].body()) == (201, b"") and dict(created) == {}
    assert created.get_response_headers()["etag"] and float(created.get_response_headers()["x-ms-request-charge"]) > 0
    c.upsert_item({"id": "1", "tenant": "t1", "n": 2}, no_response=True)
    assert (seen[-1].status_code, seen[-1].body()) == (200, b"")
    c.replace_item("1", {"id": "1", "tenant": "t1", "n": 3}, no_response=True)
    c.patch_item("1", "t1", [{"op": "incr", "path": "/n", "value": 1}], no_response=True)
    assert seen[-1].body() == b"" and c.read_item("1", "t1")["n"] == 4
    assert c.create_item({"id": "2", "tenant": "t1"})["id"] == "2"  # without it, the body as before


def test_client_wide_no_response_on_write_keeps_query_and_read_bodies(emulator: RunningEmulator) -> None:
    client, seen = _last_raw(emulator, no_response_on_write=True)
    c = client.create_database("shop").create_container("orders", PartitionKey("/tenant"))
    c.create_item({"id": "1", "tenant": "t1"})
    assert seen[-1].body() == b""
    assert [d["id"] for d in c.query_items("SELECT * FROM c", partition_key="t1")] == ["1"]
    assert c.read_item("1", "t1")["id"] == "1"


LEGACY_POLICY = {
    "indexingMode": "consistent",
    "includedPaths": [
        {
            "path": "/",
            "indexes": [
                {"kind": "Range", "dataType": "Number", "precision": -1},
                {"kind": "Hash", "dataType": "String", "precision": 3},
            ],
        }
    ],
}


def test_legacy_root_path_with_explicit_indexes_is_accepted_and_normalised(client: CosmosClient) -> None:
    db = client.create_database("a")
    c = db.create_container("c", PartitionKey("/k"), indexing_policy=LEGACY_POLICY)
    assert c.read()["indexingPolicy"]["includedPaths"] == [{"path": "/*"}]
    c.create_item({"id": "1", "k": "x", "n": 2})
    c.create_item({"id": "2", "k": "x", "n": 1})
    assert [d["id"] for d in c.query_items("SELECT * FROM c ORDER BY c.n", partition_key="x")] == ["2", "1"]
    db.replace_container(c, PartitionKey("/k"), indexing_policy=LEGACY_POLICY)
    assert c.read()["indexingPolicy"]["includedPaths"] == [{"path": "/*"}]
    bad = {"includedPaths": [{"path": "/", "indexes": [{"kind": "Fulltext"}]}]}
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        db.create_container("d", PartitionKey("/k"), indexing_policy=bad)
    assert caught.value.status_code == 400


def test_items_passed_as_dicts_go_through_their_self_links(container) -> None:
    first = container.create_item({"id": "1", "tenant": "t1", "n": 1})
    assert first["_self"].startswith("dbs/") and "/docs/" in first["_self"]  # rid links, not names
    assert container.read_item(first, "t1")["n"] == 1
    replaced = container.replace_item(first, {"id": "1", "tenant": "t1", "n": 2})
    assert replaced["n"] == 2 and container.read_item("1", "t1")["n"] == 2
    container.delete_item(replaced, partition_key="t1")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("1", "t1")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):  # a rid that names nothing: 404
        container.delete_item(replaced, partition_key="t1")


def test_an_item_keeps_its_rid_and_self_link_for_life(container) -> None:
    """Issue 25: the service keeps an item's `_rid` and `_self` across replaces, upserts and patches, so a
    `_self` kept from the create's response still reads, replaces and deletes it."""
    first = container.create_item({"id": "1", "tenant": "t1", "n": 1})
    replaced = container.replace_item("1", {"id": "1", "tenant": "t1", "n": 2})
    upserted = container.upsert_item({"id": "1", "tenant": "t1", "n": 3})
    patched = container.patch_item("1", "t1", [{"op": "set", "path": "/n", "value": 4}])
    assert {d["_rid"] for d in (first, replaced, upserted, patched)} == {first["_rid"]}
    assert {d["_self"] for d in (first, replaced, upserted, patched)} == {first["_self"]}
    assert container.read_item(first, "t1")["n"] == 4  # the create's own dict: its _self link
    container.replace_item(first, {"id": "1", "tenant": "t1", "n": 5})
    assert container.read_item("1", "t1")["n"] == 5
    container.delete_item(first, partition_key="t1")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("1", "t1")


def test_self_links_of_a_recreated_container_name_nothing(client: CosmosClient) -> None:
    db = client.create_database("a")
    old = db.create_container("c", PartitionKey("/k")).create_item({"id": "1", "k": "x"})
    db.delete_container("c")
    fresh = db.create_container("c", PartitionKey("/k"))
    fresh.create_item({"id": "1", "k": "x"})
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        fresh.read_item(old, "x")  # the old _self names the deleted container
    assert fresh.read_item("1", "x")["id"] == "1"


def test_the_account_advertises_the_endpoint_it_listens_on(emulator, client: CosmosClient) -> None:
    """Issue 25: the account read names the host the emulator listens on (`http://127.0.0.1:PORT/`, as the
    official emulator does), whatever Host the client sent; the SDK's view of the account agrees."""
    from urllib.parse import urlparse

    port = urlparse(emulator.url).port
    status, _, body = rawhttp.request(emulator.url, emulator.key, "GET", "/", headers={"Host": f"localhost:{port}"})
    assert status == 200 and body is not None
    endpoints = {loc["databaseAccountEndpoint"] for loc in body["writableLocations"] + body["readableLocations"]}
    assert endpoints == {f"http://127.0.0.1:{port}/"}
    account = client.get_database_account()
    assert [loc["databaseAccountEndpoint"] for loc in account.WritableLocations] == [f"http://127.0.0.1:{port}/"]


def test_a_point_read_names_its_container_and_a_quota_read_its_index_progress(container) -> None:
    """Issue 25: `Content-Location` on point reads (W20) and, with populate_quota_info, the index
    transformation progress (W21: the emulator re-indexes at once, 100), as the SDK receives them."""
    container.create_item({"id": "1", "tenant": "t1"})
    seen: list[dict[str, str]] = []
    container.read_item("1", "t1", raw_response_hook=lambda r: seen.append(dict(r.http_response.headers)))
    assert {k.lower(): v for k, v in seen[-1].items()}["content-location"] == "dbs/shop/colls/orders"
    container.read(populate_quota_info=True, raw_response_hook=lambda r: seen.append(dict(r.http_response.headers)))
    headers = {k.lower(): v for k, v in seen[-1].items()}
    assert headers["x-ms-documentdb-collection-index-transformation-progress"] == "100"
    assert "x-ms-resource-usage" in headers
