"""Conditional patch (`patch_item(..., filter_predicate=...)`) through the unmodified azure-cosmos SDK: the
patch applies when the predicate holds over the stored item, 412 when it does not, 400 with the SQL error
when it is not a predicate (cosmos-wire-protocol.md W27); also as a batch's patch operation."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator

SET_COLOR = [{"op": "set", "path": "/color", "value": "red"}]


@pytest.fixture
def container(client: CosmosClient):
    c = client.create_database("shop").create_container("orders", PartitionKey("/tenant"))
    c.create_item({"id": "1", "tenant": "t1", "x": 1, "tags": ["a", "b"]})
    return c


def test_the_patch_applies_when_the_predicate_holds(container) -> None:
    patched = container.patch_item("1", "t1", SET_COLOR, filter_predicate="from c where c.x = 1")
    assert patched["color"] == "red"
    again = container.patch_item("1", "t1", SET_COLOR, filter_predicate="FROM root r WHERE ARRAY_CONTAINS(r.tags, 'b')")
    assert again["_etag"] != patched["_etag"]


def test_a_predicate_that_does_not_hold_is_412_and_changes_nothing(emulator: RunningEmulator, container) -> None:
    before = container.read_item("1", "t1")
    with pytest.raises(exceptions.CosmosAccessConditionFailedError) as caught:
        container.patch_item("1", "t1", SET_COLOR, filter_predicate="from c where c.x = 2")
    assert caught.value.status_code == 412
    assert float(caught.value.headers["x-ms-request-charge"]) > 0  # the read it did is charged (M2)
    assert container.read_item("1", "t1")["_etag"] == before["_etag"]
    record = next(r for r in reversed(emulator.engine.accounting.records()) if r.operation == "Patch")
    assert record.status == 412


def test_a_malformed_predicate_is_400_with_the_sql_error(container) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        container.patch_item("1", "t1", SET_COLOR, filter_predicate="from c wher c.x = 1")
    assert caught.value.status_code == 400 and "Syntax error" in caught.value.message
    assert "color" not in container.read_item("1", "t1")


def test_a_batch_patch_heeds_its_predicate(container) -> None:
    with pytest.raises(exceptions.CosmosBatchOperationError) as caught:
        container.execute_item_batch(
            [
                ("upsert", ({"id": "2", "tenant": "t1", "x": 5},)),
                ("patch", ("2", SET_COLOR), {"filter_predicate": "from c where c.x = 1"}),  # sees the upsert
            ],
            partition_key="t1",
        )
    assert (caught.value.status_code, caught.value.error_index) == (412, 1)
    assert [d["id"] for d in container.read_all_items()] == ["1"]
    done = container.execute_item_batch(
        [("patch", ("1", SET_COLOR), {"filter_predicate": "from c where c.x = 1"})], partition_key="t1"
    )
    assert done[0]["statusCode"] == 200 and done[0]["resourceBody"]["color"] == "red"
