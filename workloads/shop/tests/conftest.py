"""The shop's suite talks to whatever COSMOS_ENDPOINT names, as a suite written for the official emulator does."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey

from workloads.shop import schema

WELL_KNOWN_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@pytest.fixture(scope="session")
def orders() -> Iterator[ContainerProxy]:
    client = CosmosClient(os.environ["COSMOS_ENDPOINT"], credential=os.environ.get("COSMOS_KEY", WELL_KNOWN_KEY))
    db = client.create_database(f"shop-{uuid.uuid4().hex[:8]}")
    container = db.create_container(
        schema.CONTAINER,
        PartitionKey(schema.PARTITION_KEY),
        offer_throughput=schema.THROUGHPUT,
        indexing_policy=schema.INDEXING_POLICY,
    )
    for doc in schema.documents():
        container.create_item(doc)
    yield container
    client.delete_database(db)
