"""Queries a hostile or careless client sends are 400s, never 500s, through the real SDK and raw HTTP
(issue 14 §1, §5, §7)."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError


@pytest.fixture
def items(emulator):
    client = CosmosClient(emulator.url, credential=emulator.key)
    db = client.create_database_if_not_exists("safety")
    coll = db.create_container("c", PartitionKey("/pk"), offer_throughput=400)
    for i in range(5):
        coll.create_item({"id": f"d{i}", "pk": f"p{i % 2}", "s": "a" * 26 + "!", "n": i})
    return coll


def query_error(coll, sql: str, **kwargs) -> CosmosHttpResponseError:
    with pytest.raises(CosmosHttpResponseError) as info:
        list(coll.query_items(sql, enable_cross_partition_query=True, **kwargs))
    return info.value


def test_an_invalid_like_set_is_a_400(items) -> None:
    err = query_error(items, "SELECT * FROM c WHERE c.s LIKE '[z-a]'")
    assert err.status_code == 400
    assert "LIKE pattern '[z-a]' is invalid" in err.message


def test_an_exponential_regex_is_a_400(items) -> None:
    err = query_error(items, "SELECT * FROM c WHERE RegexMatch(c.s, '(a+)+$')")
    assert err.status_code == 400
    assert "RegexMatch pattern" in err.message


def test_like_with_many_wildcards_answers(items) -> None:
    rows = list(
        items.query_items("SELECT VALUE c.id FROM c WHERE c.s LIKE '%a%a%!'", enable_cross_partition_query=True)
    )
    assert sorted(rows) == [f"d{i}" for i in range(5)]


def test_replicate_beyond_the_limit_is_undefined(items) -> None:
    rows = list(items.query_items("SELECT VALUE REPLICATE('a', 1e15)", enable_cross_partition_query=True))
    assert rows == []


def test_read_items_with_500_items(emulator) -> None:
    """The SDK sends one (id AND pk) OR term per item: 400 terms used to recurse into a 500."""
    client = CosmosClient(emulator.url, credential=emulator.key)
    coll = client.create_database_if_not_exists("safety").create_container("many", PartitionKey("/pk"))
    for i in range(500):
        coll.create_item({"id": f"i{i}", "pk": f"p{i % 9}"})
    wanted = [(f"i{i}", f"p{i % 9}") for i in range(500)]
    found = coll.read_items(wanted + [("absent", "p0")])
    assert sorted(d["id"] for d in found) == sorted(i for i, _ in wanted)


def test_a_deeply_nested_query_is_a_400(items) -> None:
    err = query_error(items, "SELECT VALUE " + "[" * 1000 + "1" + "]" * 1000 + " FROM c")
    assert err.status_code == 400
    assert "nested deeper" in err.message


def test_a_result_nested_beyond_serialisation_is_a_400(items) -> None:
    deep: object = 1
    for _ in range(120):
        deep = [deep]
    items.create_item({"id": "deep", "pk": "p0", "deep": deep})
    inner = "(SELECT VALUE " + "[" * 60 + "c.deep" + "]" * 60 + ")"  # each part within the nesting limit
    sql = "SELECT VALUE " + "[" * 100 + "d" + "]" * 100 + f" FROM c JOIN d IN {inner} WHERE c.id = 'deep'"
    err = query_error(items, sql, partition_key="p0")
    assert err.status_code == 400
    assert "cannot be serialized" in err.message
    assert items.read_item("deep", "p0")["id"] == "deep"  # the server still answers


def test_a_query_text_over_512_kb_is_a_400(items) -> None:
    sql = "SELECT * FROM c WHERE " + " OR ".join(f"c.n = {i}" for i in range(60000))
    err = query_error(items, sql)
    assert err.status_code == 400
    assert "SC3020" in err.message


def test_patch_incr_overflowing_to_infinity_is_a_400(items) -> None:
    items.create_item({"id": "big", "pk": "p0", "x": 1.7e308})
    with pytest.raises(CosmosHttpResponseError) as info:
        items.patch_item("big", "p0", [{"op": "incr", "path": "/x", "value": 1.7e308}])
    assert info.value.status_code == 400
    assert items.read_item("big", "p0")["x"] == 1.7e308
    items.patch_item("big", "p0", [{"op": "incr", "path": "/x", "value": -1.7e308}])
    assert items.read_item("big", "p0")["x"] == 0.0
