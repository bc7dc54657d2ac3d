"""The shop's data access: what the application asks of its `orders` container (partition key /tenantId)."""

from __future__ import annotations

from typing import Any

from azure.cosmos import ContainerProxy

LATEST = "SELECT TOP 20 c.id, c.total, c.createdAt FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC"
OPEN_TOTAL = "SELECT VALUE SUM(c.total) FROM c WHERE c.tenantId = @t AND c.status = 'open'"


def get_order(orders: ContainerProxy, tenant: str, order_id: str) -> dict[str, Any]:
    """One order by its id: a point read in the tenant's logical partition."""
    return orders.read_item(order_id, partition_key=tenant)


def latest_orders(orders: ContainerProxy, tenant: str) -> list[dict[str, Any]]:
    """The tenant's 20 newest orders (served by the composite index (tenantId, createdAt DESC))."""
    return list(orders.query_items(LATEST, parameters=[{"name": "@t", "value": tenant}], partition_key=tenant))


def open_total(orders: ContainerProxy, tenant: str) -> float:
    """What the tenant's open orders add up to (an aggregate over one logical partition)."""
    rows = orders.query_items(OPEN_TOTAL, parameters=[{"name": "@t", "value": tenant}], partition_key=tenant)
    total: Any = next(iter(rows), 0)
    return float(total or 0)
