"""Behaviours that used to differ from the service, through the unmodified azure-cosmos SDK (issue 25,
part 2; cosmos-wire-protocol.md W80 onwards)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from azure.cosmos import CosmosClient, PartitionKey, ThroughputProperties, exceptions
from azure.cosmos.partition_key import NonePartitionKeyValue

from emulator.rest.server import RunningEmulator, open_engine
from tests import rawhttp
from tests.conftest import sdk_client


@pytest.fixture
def db(client: CosmosClient):
    return client.create_database("app")


# -- W80: an autoscale offer keeps its auto-upgrade policy ----------------------------------------------


def test_an_autoscale_offer_keeps_its_increment_percent_on_create_and_replace(db) -> None:
    created = db.create_container(
        "auto",
        PartitionKey("/k"),
        offer_throughput=ThroughputProperties(auto_scale_max_throughput=5000, auto_scale_increment_percent=0),
    )
    offer = created.get_throughput()
    assert (offer.auto_scale_max_throughput, offer.auto_scale_increment_percent) == (5000, 0)
    assert offer.offer_throughput is None
    created.replace_throughput(ThroughputProperties(auto_scale_max_throughput=7000, auto_scale_increment_percent=20))
    offer = created.get_throughput()
    assert (offer.auto_scale_max_throughput, offer.auto_scale_increment_percent) == (7000, 20)


def test_a_database_autoscale_offer_keeps_its_increment_percent(client: CosmosClient) -> None:
    shared = client.create_database(
        "shared", offer_throughput=ThroughputProperties(auto_scale_max_throughput=5000, auto_scale_increment_percent=2)
    )
    assert shared.get_throughput().auto_scale_increment_percent == 2
    shared.replace_throughput(ThroughputProperties(auto_scale_max_throughput=9000, auto_scale_increment_percent=11))
    offer = shared.get_throughput()
    assert (offer.auto_scale_max_throughput, offer.auto_scale_increment_percent) == (9000, 11)


def test_an_autoscale_offer_without_a_policy_reads_back_without_one(db) -> None:
    created = db.create_container(
        "plain", PartitionKey("/k"), offer_throughput=ThroughputProperties(auto_scale_max_throughput=4000)
    )
    created.replace_throughput(ThroughputProperties(auto_scale_max_throughput=6000))
    offer = created.get_throughput()
    assert (offer.auto_scale_max_throughput, offer.auto_scale_increment_percent) == (6000, None)


def test_the_increment_percent_survives_restarts(tmp_path, make_emulator: Callable[..., RunningEmulator]) -> None:
    data = tmp_path / "data"
    first = make_emulator(open_engine(data))
    offer = ThroughputProperties(auto_scale_max_throughput=5000, auto_scale_increment_percent=3)
    container = (
        sdk_client(first).create_database("app").create_container("c", PartitionKey("/k"), offer_throughput=offer)
    )
    container.replace_throughput(ThroughputProperties(auto_scale_max_throughput=6000, auto_scale_increment_percent=7))
    first.stop()
    for _ in range(2):  # the journal replayed, then the snapshot it was compacted into
        again = make_emulator(open_engine(data))
        read = sdk_client(again).get_database_client("app").get_container_client("c").get_throughput()
        assert (read.auto_scale_max_throughput, read.auto_scale_increment_percent) == (6000, 7)
        again.stop()


# -- W81: a partial indexing policy is completed as the service stores it ----------------------------------

ETAG = {"path": '/"_etag"/?'}


@pytest.mark.parametrize(
    "sent",
    [
        {"indexingMode": "consistent", "automatic": True},
        {},
        {"includedPaths": [{"path": "/*"}]},
        {"includedPaths": [{"path": "/*", "indexes": [{"kind": "Hash", "dataType": "String"}]}]},
    ],
)
def test_a_partial_indexing_policy_reads_back_as_the_default(db, sent: dict) -> None:
    policy = db.create_container("c", PartitionKey("/k"), indexing_policy=sent).read()["indexingPolicy"]
    assert policy == {
        "indexingMode": "consistent",
        "automatic": True,
        "includedPaths": [{"path": "/*"}],
        "excludedPaths": [ETAG],
    }


def test_the_etag_exclusion_is_added_to_the_paths_given(db) -> None:
    sent = {"excludedPaths": [{"path": '/"systemMetadata"/*'}]}
    policy = db.create_container("c", PartitionKey("/k"), indexing_policy=sent).read()["indexingPolicy"]
    assert policy["indexingMode"] == "consistent" and policy["automatic"] is True
    assert policy["includedPaths"] == [{"path": "/*"}]
    assert policy["excludedPaths"] == [{"path": '/"systemMetadata"/*'}, ETAG]
    explicit = {"includedPaths": [{"path": "/a/?"}], "excludedPaths": [{"path": "/*"}, ETAG]}
    policy = db.create_container("d", PartitionKey("/k"), indexing_policy=explicit).read()["indexingPolicy"]
    assert policy["includedPaths"] == [{"path": "/a/?"}]  # paths given: no root added
    assert policy["excludedPaths"] == [{"path": "/*"}, ETAG]  # not twice


def test_a_replaced_policy_is_completed_too(db) -> None:
    container = db.create_container("c", PartitionKey("/k"))
    db.replace_container(container, PartitionKey("/k"), indexing_policy={"excludedPaths": [{"path": "/big/*"}]})
    policy = container.read()["indexingPolicy"]
    assert policy["includedPaths"] == [{"path": "/*"}]
    assert policy["excludedPaths"] == [{"path": "/big/*"}, ETAG]
    assert policy["indexingMode"] == "consistent" and policy["automatic"] is True


# -- W82: the partition key is extracted as the service does ------------------------------------------------


def _ids(items) -> list[str]:
    return sorted(d["id"] for d in items)


def test_a_missing_key_or_one_that_is_an_object_is_the_undefined_key(db) -> None:
    container = db.create_container("c", PartitionKey("/k"), offer_throughput=12000)  # 2 partitions
    container.create_item({"id": "missing"})
    container.create_item({"id": "object", "k": {"nested": 1}})
    container.upsert_item({"id": "nested-object", "k": {"a": {"b": 2}}})
    container.create_item({"id": "valued", "k": "x"})
    for item_id in ("missing", "object", "nested-object"):
        assert container.read_item(item_id, partition_key=NonePartitionKeyValue)["id"] == item_id
        with pytest.raises(exceptions.CosmosResourceNotFoundError):
            container.read_item(item_id, partition_key="x")
    undefined = container.query_items("SELECT * FROM c", partition_key=NonePartitionKeyValue)
    assert _ids(undefined) == ["missing", "nested-object", "object"]
    assert _ids(container.query_items("SELECT * FROM c", partition_key="x")) == ["valued"]
    everything = container.query_items("SELECT * FROM c", enable_cross_partition_query=True)
    assert _ids(everything) == ["missing", "nested-object", "object", "valued"]
    container.replace_item("object", {"id": "object", "k": {"nested": 2}})  # still the undefined key
    assert container.read_item("object", partition_key=NonePartitionKeyValue)["k"] == {"nested": 2}
    container.delete_item("missing", partition_key=NonePartitionKeyValue)
    assert _ids(container.query_items("SELECT * FROM c", partition_key=NonePartitionKeyValue)) == [
        "nested-object",
        "object",
    ]


def test_a_nested_path_through_a_scalar_or_to_an_object_is_undefined(db) -> None:
    container = db.create_container("c", PartitionKey("/a/b"))
    container.create_item({"id": "scalar", "a": 5})
    container.create_item({"id": "object", "a": {"b": {"c": 1}}})
    container.create_item({"id": "valued", "a": {"b": "v"}})
    assert _ids(container.query_items("SELECT * FROM c", partition_key=NonePartitionKeyValue)) == ["object", "scalar"]
    assert container.read_item("valued", partition_key="v")["a"] == {"b": "v"}


@pytest.mark.parametrize("path", ['/"a/b"', "/'a/b'"])
def test_a_quoted_path_segment_is_one_property_name(db, path: str) -> None:
    container = db.create_container("c", PartitionKey(path), offer_throughput=12000)
    assert container.read()["partitionKey"]["paths"] == [path]
    container.create_item({"id": "1", "a/b": "x"})
    container.create_item({"id": "2", "a": {"b": "x"}})  # not the property "a/b": undefined
    assert container.read_item("1", partition_key="x")["a/b"] == "x"
    assert _ids(container.query_items("SELECT * FROM c", partition_key="x")) == ["1"]
    assert _ids(container.query_items("SELECT * FROM c", partition_key=NonePartitionKeyValue)) == ["2"]
    routed = container.query_items('SELECT * FROM c WHERE c["a/b"] = "x"', enable_cross_partition_query=True)
    assert _ids(routed) == ["1"]


def test_a_partition_key_path_with_an_open_quote_is_400(client: CosmosClient) -> None:
    created = client.create_database("app")
    definition = {"id": "c", "partitionKey": {"paths": ['/"a'], "kind": "Hash", "version": 2}}
    # the SDK parses paths only when it extracts a key, so the bad definition reaches the server
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        created.client_connection.CreateContainer(created.database_link, definition)
    assert refused.value.status_code == 400


# -- W83: the initial pkrange boundaries are multiples of the range width ------------------------------------

SPACE_TOP = 0x40 << 120  # the occupied V2 EPK space 00..3F (cosmos-wire-protocol.md §5)


@pytest.mark.parametrize(
    ("offer", "count"),
    [(30_000, 5), (42_000, 7), (ThroughputProperties(auto_scale_max_throughput=250_000), 25)],
)
def test_initial_pkrange_boundaries_are_exact_multiples_of_the_range_width(db, offer, count: int) -> None:
    container = db.create_container("c", PartitionKey("/k"), offer_throughput=offer)
    ranges = [r["Range"] for r in container.read_feed_ranges()]
    assert len(ranges) == count
    width = SPACE_TOP // count  # truncated: the last range takes the remainder
    cuts = [r["min"] for r in ranges[1:]]
    assert cuts == [format(width * i, "032X") for i in range(1, count)]
    assert [r["max"] for r in ranges[:-1]] == cuts and ranges[0]["min"] == "" and ranges[-1]["max"] == "FF"


# -- W84: a point operation with part of a hierarchical key is 400/1001 ---------------------------------------

MISMATCH = "Partition key provided either doesn't correspond to definition in the collection"


@pytest.mark.parametrize(
    ("paths", "doc", "partial"),
    [
        (["/t", "/u"], {"id": "1", "t": "a", "u": "b"}, ["a"]),
        (["/t", "/u", "/s"], {"id": "1", "t": "a", "u": "b", "s": "c"}, ["a", "b"]),
    ],
)
def test_a_point_operation_with_a_partial_hierarchical_key_is_400_1001(db, paths, doc, partial) -> None:
    container = db.create_container("h", PartitionKey(path=paths, kind="MultiHash"))
    container.create_item(doc)
    calls = [
        lambda: container.read_item("1", partition_key=partial),
        lambda: container.delete_item("1", partition_key=partial),
        lambda: container.patch_item("1", partial, [{"op": "set", "path": "/x", "value": 1}]),
        lambda: container.execute_item_batch([("read", ("1",))], partition_key=partial),
    ]
    for call in calls:
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            call()
        assert (refused.value.status_code, refused.value.sub_status) == (400, 1001)
        assert MISMATCH in refused.value.message
    assert container.read_item("1", partition_key=[doc[p[1:]] for p in paths])["id"] == "1"  # untouched


# -- W85: a container create body is checked before its id -------------------------------------------------

BAD_BODIES = [
    {"indexing_policy": {"includedPaths": [{"path": "/no-terminal"}]}},
    {"unique_key_policy": {"uniqueKeys": [{"paths": ["relative"]}]}},
    {"computed_properties": [{"name": "id", "query": "SELECT VALUE 1 FROM c"}]},
    {"offer_throughput": 100},
    {"partition_key": PartitionKey('/"open')},
]


@pytest.mark.parametrize("bad", BAD_BODIES, ids=["policy", "unique", "computed", "throughput", "key"])
def test_a_bad_container_body_is_400_even_when_the_id_exists(db, bad: dict) -> None:
    db.create_container("c", PartitionKey("/k"))
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        db.create_container("c", **({"partition_key": PartitionKey("/k")} | bad))
    assert refused.value.status_code == 400
    with pytest.raises(exceptions.CosmosResourceExistsError):  # a good body with that id: 409
        db.create_container("c", PartitionKey("/k"))


# -- W86: a replace whose body carries another id renames the item -------------------------------------------


def test_a_replace_with_another_id_renames_the_item(db) -> None:
    container = db.create_container("c", PartitionKey("/k"), unique_key_policy={"uniqueKeys": [{"paths": ["/e"]}]})
    created = container.create_item({"id": "old", "k": "p", "e": "a@x"})
    renamed = container.replace_item("old", {"id": "new", "k": "p", "e": "a@x", "v": 2})  # its own unique value
    assert renamed["id"] == "new" and renamed["_rid"] == created["_rid"]
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("old", partition_key="p")
    assert container.read_item("new", partition_key="p")["v"] == 2
    everything = container.query_items("SELECT VALUE c.id FROM c", enable_cross_partition_query=True)
    assert sorted(everything) == ["new"]
    feed = [d["id"] for d in container.query_items_change_feed(start_time="Beginning")]
    assert feed == ["new"]


def test_a_rename_onto_an_existing_id_is_409_and_changes_nothing(db) -> None:
    container = db.create_container("c", PartitionKey("/k"))
    container.create_item({"id": "a", "k": "p", "n": 1})
    container.create_item({"id": "b", "k": "p", "n": 2})
    container.create_item({"id": "c", "k": "other"})
    with pytest.raises(exceptions.CosmosResourceExistsError):
        container.replace_item("a", {"id": "b", "k": "p", "n": 3})
    assert [container.read_item(i, partition_key="p")["n"] for i in ("a", "b")] == [1, 2]
    container.replace_item("a", {"id": "c", "k": "p"})  # "c" lives in another logical partition: no conflict
    assert container.read_item("c", partition_key="p")["k"] == "p"
    assert container.read_item("c", partition_key="other")["k"] == "other"


def test_a_rename_survives_a_restart_and_works_in_a_batch(tmp_path, make_emulator) -> None:
    data = tmp_path / "data"
    first = make_emulator(open_engine(data))
    container = sdk_client(first).create_database("app").create_container("c", PartitionKey("/k"))
    container.create_item({"id": "a", "k": "p"})
    container.create_item({"id": "b", "k": "p"})
    container.replace_item("a", {"id": "a2", "k": "p"})
    container.execute_item_batch([("replace", ("b", {"id": "b2", "k": "p"}))], partition_key="p")
    first.stop()
    again = sdk_client(make_emulator(open_engine(data))).get_database_client("app").get_container_client("c")
    assert sorted(d["id"] for d in again.read_all_items()) == ["a2", "b2"]


# -- W87, W88: ids and time-to-live values the service refuses -------------------------------------------


def _status(call) -> int:
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        call()
    return refused.value.status_code


def test_database_and_container_ids_over_255_characters_are_400(client: CosmosClient) -> None:
    assert _status(lambda: client.create_database("d" * 256)) == 400
    db = client.create_database("é" * 255)  # characters, not bytes
    assert _status(lambda: db.create_container("c" * 256, PartitionKey("/k"))) == 400
    container = db.create_container("c" * 255, PartitionKey("/k"))
    assert _status(lambda: container.create_item({"id": "x" * 1024, "k": "p"})) == 400  # item ids: 1,023 bytes
    assert container.create_item({"id": "x" * 1023, "k": "p"})["id"] == "x" * 1023


@pytest.mark.parametrize("char", ["/", "\\", "?", "#"])
def test_database_and_container_ids_with_reserved_characters_are_400(emulator, char: str) -> None:
    # the SDK refuses these ids before sending (_base._validate_resource): raw requests reach the server
    status, _, _ = rawhttp.request(emulator.url, emulator.key, "POST", "/dbs", json.dumps({"id": f"a{char}b"}))
    assert status == 400
    assert rawhttp.request(emulator.url, emulator.key, "POST", "/dbs", json.dumps({"id": "db"}))[0] == 201
    body = json.dumps({"id": f"c{char}", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}})
    assert rawhttp.request(emulator.url, emulator.key, "POST", "/dbs/db/colls", body)[0] == 400


TTL_TEXT = "is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1'"


@pytest.mark.parametrize("ttl", [0, -5, "x", 1.5, None, True, 2_147_483_648])
def test_an_item_ttl_that_is_not_minus_one_or_positive_is_400_when_the_container_has_ttl(db, ttl) -> None:
    container = db.create_container("c", PartitionKey("/k"), default_ttl=60)
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        container.create_item({"id": "1", "k": "p", "ttl": ttl})
    assert refused.value.status_code == 400
    assert "The input ttl" in refused.value.message and TTL_TEXT in refused.value.message
    container.create_item({"id": "1", "k": "p", "ttl": 5})
    for write in (
        lambda: container.upsert_item({"id": "1", "k": "p", "ttl": ttl}),
        lambda: container.replace_item("1", {"id": "1", "k": "p", "ttl": ttl}),
        lambda: container.patch_item("1", "p", [{"op": "set", "path": "/ttl", "value": ttl}]),
    ):
        assert _status(write) == 400
    assert container.read_item("1", "p")["ttl"] == 5
    plain = db.create_container("plain", PartitionKey("/k"))  # no defaultTtl: an item ttl is ignored (W55)
    assert plain.create_item({"id": "1", "k": "p", "ttl": ttl})["id"] == "1"


@pytest.mark.parametrize("default_ttl", [0, -2, 2_147_483_648])
def test_a_container_default_ttl_other_than_minus_one_or_positive_is_400(db, default_ttl: int) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        db.create_container("c", PartitionKey("/k"), default_ttl=default_ttl)
    assert refused.value.status_code == 400
    assert f"The input defaultTtl '{default_ttl}' {TTL_TEXT}" in refused.value.message
    container = db.create_container("c", PartitionKey("/k"), default_ttl=-1)
    assert _status(lambda: db.replace_container(container, PartitionKey("/k"), default_ttl=default_ttl)) == 400
    assert container.read()["defaultTtl"] == -1
