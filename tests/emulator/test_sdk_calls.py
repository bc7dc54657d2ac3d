"""What the SDK's own calls expect (issue 14 §7), each through the unmodified azure-cosmos SDK."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey


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
