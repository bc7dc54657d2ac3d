"""The conflicts feed through the unmodified azure-cosmos SDK: an account with one write region has no
conflicts, so the feed is empty and a conflict by id is a 404 (cosmos-wire-protocol.md W28)."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from tests import rawhttp


@pytest.fixture
def container(client: CosmosClient):
    c = client.create_database("shop").create_container("orders", PartitionKey("/tenant"))
    c.create_item({"id": "1", "tenant": "t1"})
    return c


def test_the_conflicts_feed_is_empty(container) -> None:
    assert list(container.list_conflicts()) == []
    assert (
        list(
            container.query_conflicts(
                "SELECT * FROM root r WHERE r.id = @id", parameters=[{"name": "@id", "value": "1"}]
            )
        )
        == []
    )
    assert list(container.query_conflicts("SELECT * FROM c", partition_key="t1")) == []


def test_a_conflict_by_id_is_404(container) -> None:
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.get_conflict("any", "t1")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.delete_conflict("any", "t1")


def test_the_conflicts_of_a_missing_container_are_404(client: CosmosClient) -> None:
    missing = client.create_database("d").get_container_client("absent")
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        list(missing.list_conflicts())


def test_the_feed_has_the_services_shape(emulator, container) -> None:
    status, _, body = rawhttp.request(emulator.url, emulator.key, "GET", "/dbs/shop/colls/orders/conflicts")
    assert status == 200 and body == {"_rid": container.read()["_rid"], "Conflicts": [], "_count": 0}
