"""Charges of bounded queries through the real SDK (issue 25 §3; ru-cost-model.md §3.3 bounded queries, T34-T38):
an index-served TOP / OFFSET-LIMIT is charged for the documents it loads up to its bound, so its charge does not
grow with the partition; one that cannot stop early still does; a missing composite index costs Q11's x5."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.facade import Context
from tests.emulator.engine.query.test_queries_sdk import Recorder

N = 300
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
COMPOSITE = {
    "indexingMode": "consistent",
    "includedPaths": [{"path": "/*"}],
    "compositeIndexes": [[{"path": "/tenantId"}, {"path": "/createdAt", "order": "descending"}]],
}
ISSUE = "SELECT TOP 20 c.id, c.total, c.createdAt FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC"
BOUNDED = {
    "top-order-by": ISSUE,
    "offset-limit": "SELECT c.id, c.total FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC OFFSET 40 LIMIT 20",
    "top": "SELECT TOP 20 c.id FROM c WHERE c.tenantId = @t",
    "top-order-by-only": "SELECT TOP 10 c.id FROM c ORDER BY c.createdAt DESC",
}
UNBOUNDED = {  # cannot stop early: a filter that needs a scan, an aggregate
    "scan": "SELECT TOP 20 c.id FROM c WHERE c.tenantId = @t AND UPPER(c.status) = 'OPEN' ORDER BY c.createdAt DESC",
    "count": "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = @t",
}


class Orders:
    """A /tenantId container whose tenant `t1` grows; its items loaded through the engine (unthrottled)."""

    def __init__(self, emulator, name: str, policy: dict | None = None) -> None:
        self.emulator, self.name, self.rec, self.count = emulator, name, Recorder(), 0
        client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=self.rec)
        kwargs = {"indexing_policy": policy} if policy else {}
        db = client.create_database_if_not_exists("shop")
        self.c = db.create_container(name, PartitionKey("/tenantId"), offer_throughput=10_000, **kwargs)

    def grow_to(self, total: int) -> None:
        engine = self.emulator.engine
        engine.throttle.enabled = False
        try:
            for n in range(self.count, total):
                created = (START + dt.timedelta(minutes=n)).isoformat()
                doc = {"id": f"o{n}", "tenantId": "t1", "total": n / 2, "status": "open", "createdAt": created}
                engine.create_item(Context(), "shop", self.name, doc | {"note": "x" * 300}, ["t1"])
        finally:
            engine.throttle.enabled = True
        self.count = total

    def charge(self, sql: str, **kwargs) -> float:
        self.rec.clear()
        params = [{"name": "@t", "value": "t1"}] if "@t" in sql else []
        list(self.c.query_items(sql, parameters=params, partition_key="t1", **kwargs))
        return self.rec.charge


@pytest.mark.parametrize("policy", [None, COMPOSITE], ids=["default-policy", "composite-index"])
def test_an_index_served_bounded_query_costs_the_same_at_n_and_10n_items(emulator, policy) -> None:  # T36
    orders = Orders(emulator, "orders", policy)
    orders.grow_to(N)
    small = {name: orders.charge(sql) for name, sql in BOUNDED.items()}
    orders.grow_to(10 * N)
    large = {name: orders.charge(sql) for name, sql in BOUNDED.items()}
    assert large == pytest.approx(small, abs=0.05), (small, large)
    assert max(large.values()) < 30  # single or low double digits, not hundreds (Q8, Q11)


def test_a_query_that_cannot_stop_early_still_grows_with_the_partition(emulator) -> None:  # T38
    orders = Orders(emulator, "orders", COMPOSITE)
    orders.grow_to(N)
    small = {name: orders.charge(sql) for name, sql in UNBOUNDED.items()}
    orders.grow_to(10 * N)
    large = {name: orders.charge(sql) for name, sql in UNBOUNDED.items()}
    assert all(large[name] > 5 * small[name] for name in UNBOUNDED), (small, large)


def test_offset_loads_the_skipped_items(emulator) -> None:  # T37, Q20
    orders = Orders(emulator, "orders", COMPOSITE)
    orders.grow_to(10 * N)
    sql = "SELECT c.id FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC OFFSET {} LIMIT 20"
    charges = [orders.charge(sql.format(offset)) for offset in (0, 200, 2_000)]
    assert charges == sorted(charges) and charges[0] < charges[1] < charges[2]
    assert orders.charge(sql.format(0)) == pytest.approx(orders.charge(ISSUE), abs=0.05)


def test_a_missing_composite_index_costs_q11s_factor_and_is_named(emulator) -> None:  # T35
    plain, indexed = Orders(emulator, "plain"), Orders(emulator, "indexed", COMPOSITE)
    for orders in (plain, indexed):
        orders.grow_to(2 * N)
    assert plain.charge(ISSUE) / indexed.charge(ISSUE) == pytest.approx(5.0, abs=0.02)  # 44.28 / 8.86
    unbounded = "SELECT c.id FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC"  # Q11's own shape
    assert plain.charge(unbounded) / indexed.charge(unbounded) == pytest.approx(5.0, abs=0.02)
    plain.charge(ISSUE, populate_index_metrics=True)
    header = plain.rec.data_pages[-1][3]["x-ms-cosmos-index-utilization"]
    potential = json.loads(base64.b64decode(header))["PotentialCompositeIndexes"]
    assert [entry["IndexSpecs"] for entry in potential] == [["/tenantId ASC", "/createdAt DESC"]]
    indexed.charge(ISSUE, populate_index_metrics=True)
    header = indexed.rec.data_pages[-1][3]["x-ms-cosmos-index-utilization"]
    assert json.loads(base64.b64decode(header))["PotentialCompositeIndexes"] == []


def test_a_bounded_cross_partition_order_by_is_charged_per_partition_up_to_its_bound(emulator) -> None:
    orders = Orders(emulator, "orders")
    client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=orders.rec)
    wide = client.get_database_client("shop").create_container(
        "wide", PartitionKey("/tenantId"), offer_throughput=24_000
    )
    charges = []
    for total in (N, 10 * N):
        engine = emulator.engine
        engine.throttle.enabled = False
        for n in range(len(charges) and N, total):
            created = (START + dt.timedelta(minutes=n)).isoformat()
            engine.create_item(
                Context(),
                "shop",
                "wide",
                {"id": f"o{n}", "tenantId": f"t{n % 40}", "createdAt": created},
                [f"t{n % 40}"],
            )
        engine.throttle.enabled = True
        orders.rec.clear()
        rows = list(wide.query_items(BOUNDED["top-order-by-only"], enable_cross_partition_query=True))
        assert len(rows) == 10 and len(orders.rec.ranges) == 4
        charges.append(orders.rec.charge)
    assert charges[1] == pytest.approx(charges[0], abs=0.1)
