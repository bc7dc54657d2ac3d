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
