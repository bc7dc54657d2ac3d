"""Cross-check: rewritten per-partition results, combined by azure-cosmos' own client-side operators
(private SDK classes; allowed in tests only), equal the single-partition answer."""

from __future__ import annotations

import functools
import heapq

import pytest
from azure.cosmos._execution_context.document_producer import _OrderByHelper
from azure.cosmos._execution_context.endpoint_component import _QueryExecutionAggregateEndpointComponent

from cosmoscore.sql import describe, execute, parse_query, rewrite_for_cross_partition
from tests.conformance.dataset import MAIN

FILTER = "{documentdb-formattableorderbyquery-filter}"
PARTITIONS = [[d for d in MAIN if d["pk"] in group] for group in (("p1", "p2", "p3"), ("p4", "p5"), ("p6", "p7", "p8"))]


def per_partition(text: str) -> tuple[list[list], list[str]]:
    query = parse_query(text)
    shape = describe(query)
    rewritten = parse_query(rewrite_for_cross_partition(query, shape).replace(FILTER, "true"))
    return [execute(rewritten, part).rows for part in PARTITIONS], shape.aggregates


@pytest.mark.parametrize(
    "text",
    [
        "SELECT VALUE COUNT(1) FROM c",
        "SELECT VALUE COUNT(c.flag) FROM c WHERE c.tenant = 't2'",
        "SELECT VALUE SUM(c.price) FROM c",
        "SELECT VALUE AVG(c.price) FROM c WHERE c.price > 10",
        "SELECT VALUE MIN(c.price) FROM c",
        "SELECT VALUE MAX(c.name) FROM c",
    ],
)
def test_value_aggregates_combine_in_the_sdk(text: str) -> None:
    partials, operators = per_partition(text)
    rows = [row for part in partials for row in part]
    combined = list(_QueryExecutionAggregateEndpointComponent(iter(rows), operators))
    assert combined == execute(parse_query(text), MAIN).rows


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM c ORDER BY c.price",
        "SELECT VALUE c.id FROM c ORDER BY c.name DESC",
        "SELECT c.id, c.price FROM c WHERE c.tenant != 't1' ORDER BY c.user, c.price DESC",
        "SELECT TOP 7 VALUE c.id FROM c ORDER BY c.price DESC",
    ],
)
def test_order_by_rows_merge_in_the_sdk(text: str) -> None:
    query = parse_query(text)
    shape = describe(query)
    partials, _ = per_partition(text)

    def compare(x: dict, y: dict) -> int:
        for i, (a, b) in enumerate(zip(x["orderByItems"], y["orderByItems"], strict=True)):
            res = _OrderByHelper.compare(a, b)
            if res:
                return res if shape.order_by[i] == "Ascending" else -res
        return 0

    merged = [row["payload"] for row in heapq.merge(*partials, key=functools.cmp_to_key(compare))]
    if shape.top is not None:
        merged = merged[: shape.top]
    assert merged == execute(query, MAIN).rows
