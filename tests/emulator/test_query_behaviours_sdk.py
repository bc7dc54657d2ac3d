"""Query behaviours through the unmodified azure-cosmos SDK on a container of three physical partitions:
an aggregate with ORDER BY gets the plan the service gives it, index metrics name the indexes a query uses
and the ones it lacks, unpinned queries need the cross-partition flag, a query that can match no partition
is still charged, and continuation tokens in the service's format round-trip while malformed ones are a
400 (cosmos-wire-protocol.md §1.7-1.8, §2, W70-W79)."""

from __future__ import annotations

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey

KEYS = [1, 2, 3, 4, 5, "abc", "xyz", None, True]  # numbers, strings, null and a boolean, as the SDK's own tests


@pytest.fixture
def orders(client: CosmosClient) -> ContainerProxy:
    """Three physical partitions (18,000 RU/s), one item per key and a few per tenant."""
    container = client.create_database("shop").create_container(
        "orders", PartitionKey("/tenant"), offer_throughput=18000
    )
    for i, key in enumerate(KEYS):
        container.create_item({"id": str(i), "tenant": f"t{i % 4}", "key": key, "n": i})
    return container


def _cross(container: ContainerProxy, sql: str, **kwargs: object) -> list[object]:
    return list(container.query_items(sql, enable_cross_partition_query=True, **kwargs))


# -- 1. an aggregate with ORDER BY (W70) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", 3),
        ("SELECT VALUE SUM(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", 15),
        ("SELECT VALUE COUNT(r.key) FROM r ORDER BY r.key", len(KEYS)),
        ("SELECT VALUE MAX(r.key) FROM r ORDER BY r.key", "xyz"),
        ("SELECT VALUE MIN(r.key) FROM r ORDER BY r.key DESC", None),
    ],
)
def test_an_aggregate_with_order_by_is_merged_by_the_sdk(orders: ContainerProxy, sql: str, expected: object) -> None:
    assert _cross(orders, sql) == [expected]


def test_the_plan_of_an_aggregate_with_order_by_has_no_order_by_and_keeps_it_in_the_rewrite(
    orders: ContainerProxy,
) -> None:
    plan = orders.client_connection._GetQueryPlanThroughGateway(  # the SDK's own plan request
        "SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", orders.container_link
    )
    info = plan["queryInfo"]
    assert (info["orderBy"], info["orderByExpressions"], info["aggregates"]) == ([], [], ["Average"])
    assert info["rewrittenQuery"] == (
        'SELECT VALUE [{"item": {"sum": SUM(r.key), "count": COUNT(r.key)}}]\n'
        "FROM r\nWHERE IS_NUMBER(r.key)\nORDER BY r.key"
    )
