"""Every item and resource operation through the unmodified azure-cosmos SDK."""

from __future__ import annotations

import base64
import json

import pytest
from azure.core import MatchConditions
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from cosmoscore.epk import epk_multihash
from tests import rawhttp
from tests.conftest import sdk_client


@pytest.fixture
def container(client: CosmosClient):
    db = client.create_database_if_not_exists("shop")
    return db.create_container_if_not_exists("orders", PartitionKey("/tenant"))


def test_database_and_container_lifecycle(client: CosmosClient) -> None:
    db = client.create_database("a")
    with pytest.raises(exceptions.CosmosResourceExistsError):
        client.create_database("a")
    assert db.read()["id"] == "a"
    assert [d["id"] for d in client.list_databases()] == ["a"]
    c = db.create_container("c", PartitionKey("/k"))
    props = c.read()
    assert props["partitionKey"] == {"paths": ["/k"], "kind": "Hash", "version": 2}
    assert [x["id"] for x in db.list_containers()] == ["c"]
    db.replace_container(c, PartitionKey("/k"), indexing_policy={"indexingMode": "none", "automatic": False})
    assert c.read()["indexingPolicy"]["indexingMode"] == "none"
    db.delete_container("c")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        db.get_container_client("c").read()
    client.delete_database("a")
    assert list(client.list_databases()) == []


def test_create_upsert_read_replace_patch_delete(container) -> None:
    created = container.create_item({"id": "1", "tenant": "t1", "total": 10, "lines": [1, 2]})
    assert created["_etag"] and created["_rid"] and created["_ts"]
    with pytest.raises(exceptions.CosmosResourceExistsError):
        container.create_item({"id": "1", "tenant": "t1"})
    container.create_item({"id": "1", "tenant": "t2"})  # same id, other logical partition: fine
    container.upsert_item({"id": "1", "tenant": "t1", "total": 11})
    assert container.read_item("1", "t1")["total"] == 11
    replaced = container.replace_item("1", {"id": "1", "tenant": "t1", "total": 12, "note": "x"})
    assert replaced["note"] == "x"
    patched = container.patch_item(
        "1",
        "t1",
        [
            {"op": "incr", "path": "/total", "value": 3},
            {"op": "add", "path": "/tags", "value": ["a"]},
            {"op": "set", "path": "/address/city", "value": "Oslo"},
            {"op": "remove", "path": "/note"},
        ],
    )
    assert patched["total"] == 15 and patched["tags"] == ["a"] and patched["address"] == {"city": "Oslo"}
    assert "note" not in patched
    container.delete_item("1", "t1")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("1", "t1")
    assert container.read_item("1", "t2")["tenant"] == "t2"


def test_etag_preconditions(container) -> None:
    first = container.create_item({"id": "e", "tenant": "t"})
    second = container.replace_item("e", {"id": "e", "tenant": "t", "v": 2})
    with pytest.raises(exceptions.CosmosAccessConditionFailedError):
        container.replace_item(
            "e", {"id": "e", "tenant": "t", "v": 3}, etag=first["_etag"], match_condition=MatchConditions.IfNotModified
        )
    container.replace_item(
        "e", {"id": "e", "tenant": "t", "v": 3}, etag=second["_etag"], match_condition=MatchConditions.IfNotModified
    )
    assert container.read_item("e", "t")["v"] == 3


def test_read_feed_pages_with_continuation(client: CosmosClient) -> None:
    db = client.create_database("feed")
    c = db.create_container("c", PartitionKey("/pk"), offer_throughput=24_000)  # 4 physical partitions
    for i in range(57):
        c.create_item({"id": f"i{i:02}", "pk": f"p{i % 13}"})
    pages = list(c.read_all_items(max_item_count=5).by_page())
    ids = [doc["id"] for page in pages for doc in page]
    assert sorted(ids) == sorted(f"i{i:02}" for i in range(57))
    assert len(pages) >= 57 // 5
    assert all(len(list(p)) <= 5 for p in c.read_all_items(max_item_count=5).by_page())


def test_feed_ranges(client: CosmosClient) -> None:
    c = client.create_database("fr").create_container("c", PartitionKey("/pk"), offer_throughput=18_000)
    ranges = list(c.read_feed_ranges())
    assert len(ranges) == 3


def test_hierarchical_keys(client: CosmosClient) -> None:
    db = client.create_database("hpk")
    c = db.create_container("c", PartitionKey(path=["/tenant", "/user", "/session"], kind="MultiHash"))
    c.create_item({"id": "1", "tenant": "t1", "user": "u1", "session": "s1"})
    c.upsert_item({"id": "2", "tenant": "t1", "user": "u2", "session": "s1"})
    assert c.read_item("1", ["t1", "u1", "s1"])["user"] == "u1"
    with pytest.raises(exceptions.CosmosHttpResponseError) as err:
        c.read_item("1", ["t1", "u1"])  # a prefix is not a point-read key
    assert err.value.status_code == 400
    c.delete_item("2", ["t1", "u2", "s1"])
    engine_coll = c.read()
    assert engine_coll["partitionKey"]["kind"] == "MultiHash"


def test_hierarchical_documents_land_by_multihash(make_emulator) -> None:
    emu = make_emulator()
    c = (
        sdk_client(emu)
        .create_database("h")
        .create_container("c", PartitionKey(path=["/t", "/u"], kind="MultiHash"), offer_throughput=30_000)
    )
    for i in range(20):
        c.create_item({"id": str(i), "t": f"t{i % 4}", "u": f"u{i}"})
    coll = emu.engine.container("h", "c")
    for rng in coll.ranges:
        for lp in rng.logical.values():
            assert lp.epk == epk_multihash(list(lp.key))
            assert rng.min <= lp.epk and (rng.max == "FF" or lp.epk < rng.max)


def test_bad_input_gets_service_errors(container) -> None:
    def status(call) -> tuple[int, int | None]:
        with pytest.raises(exceptions.CosmosHttpResponseError) as err:
            call()
        return err.value.status_code, err.value.sub_status

    assert status(lambda: container.create_item({"tenant": "t"}))[0] == 400  # missing id
    # an array is no key value (an object is the undefined key: cosmos-wire-protocol.md W82)
    assert status(lambda: container.create_item({"id": "x", "tenant": ["not", "scalar"]}))[0] == 400
    assert status(lambda: container.read_item("x", ["a", "b"]))[0] == 400  # wrong key shape
    assert (
        status(lambda: container.create_item({"id": "big", "tenant": "t", "blob": "x" * (2 * 1024 * 1024)}))[0] == 413
    )
    assert status(lambda: container.read_item("nope", "t"))[0] == 404
    assert status(lambda: container.replace_item("nope", {"id": "nope", "tenant": "t"}))[0] == 404
    assert status(lambda: container.patch_item("nope", "t", [{"op": "set", "path": "/a", "value": 1}]))[0] == 404
    container.create_item({"id": "p", "tenant": "t"})
    assert status(lambda: container.patch_item("p", "t", [{"op": "set", "path": "/tenant", "value": "u"}]))[0] == 400
    assert status(lambda: container.patch_item("p", "t", [{"op": "incr", "path": "/tenant", "value": 1}]))[0] == 400


def test_partition_key_mismatch_is_1001(emulator, container) -> None:
    status, headers, body = rawhttp.request(
        emulator.url,
        emulator.key,
        "POST",
        "/dbs/shop/colls/orders/docs/",
        json.dumps({"id": "m", "tenant": "t2"}),
        {"x-ms-documentdb-partitionkey": '["t1"]', "content-type": "application/json"},
    )
    assert (status, headers["x-ms-substatus"]) == (400, "1001")
    assert "doesn't match the one specified in the header" in body["message"]


def test_malformed_json_is_400_and_stores_nothing(emulator, container) -> None:
    status, headers, body = rawhttp.request(
        emulator.url,
        emulator.key,
        "POST",
        "/dbs/shop/colls/orders/docs/",
        '{"id": "x", "tenant": ',
        {"x-ms-documentdb-partitionkey": '["t"]', "content-type": "application/json"},
    )
    assert status == 400 and body["code"] == "BadRequest" and "not valid JSON" in body["message"]
    assert "Traceback" not in body["message"]
    assert list(container.read_all_items()) == []


def test_missing_partition_key_header_is_400(emulator, container) -> None:
    status, _, body = rawhttp.request(emulator.url, emulator.key, "GET", "/dbs/shop/colls/orders/docs/x/")
    assert status == 400 and "PartitionKey value must be supplied" in body["message"]


def test_wrong_key_is_401_and_changes_nothing(emulator, container) -> None:
    wrong = base64.b64encode(b"not the key at all, not at all!!").decode()
    status, _, body = rawhttp.request(
        emulator.url,
        wrong,
        "POST",
        "/dbs/shop/colls/orders/docs/",
        json.dumps({"id": "w", "tenant": "t"}),
        {"x-ms-documentdb-partitionkey": '["t"]'},
    )
    assert status == 401 and body["code"] == "Unauthorized"
    assert wrong not in body["message"]
    with pytest.raises(exceptions.CosmosHttpResponseError) as err:
        CosmosClient(emulator.url, credential=wrong).get_database_client("shop").read()
    assert err.value.status_code == 401
    assert list(container.read_all_items()) == []
    status, _, body = rawhttp.request(emulator.url, emulator.key, "GET", "/dbs/", headers={"authorization": ""})
    assert status == 401
