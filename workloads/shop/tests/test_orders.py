"""The shop's own tests: behaviour first, and what each may cost."""

from __future__ import annotations

import pytest
from azure.cosmos import ContainerProxy

from workloads.shop import orders as shop


@pytest.mark.ru_budget(max_ru=1.5, max_partitions=1)
def test_an_order_is_read_by_its_id(orders: ContainerProxy) -> None:
    assert shop.get_order(orders, "t3", "o3")["total"] == 11.1


@pytest.mark.ru_budget(max_ru=10, max_partitions=1)
def test_the_latest_orders_of_a_tenant_come_newest_first(orders: ContainerProxy) -> None:
    latest = shop.latest_orders(orders, "t3")
    assert len(latest) == 20
    assert [o["createdAt"] for o in latest] == sorted((o["createdAt"] for o in latest), reverse=True)


@pytest.mark.ru_budget(max_ru=15, max_partitions=1)
def test_the_open_total_of_a_tenant(orders: ContainerProxy) -> None:
    assert shop.open_total(orders, "t3") > 0
