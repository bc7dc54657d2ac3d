"""The winner's container definition and migration outline; the in-process engine accepts the definition
and serves the workload's ORDER BY query from its composite index (and refuses it without)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.definition import (
    composite_indexes,
    container_definition,
    definition_rows,
    migration_steps,
    new_container_id,
    order_by_keys,
)
from advisor.designs import parse_design
from advisor.lint import lint_query
from advisor.measure import WorkloadQuery
from emulator.engine.errors import CosmosError
from emulator.engine.facade import Context, Engine, ThroughputSpec

LATEST = WorkloadQuery(
    "latest-errors",
    "SELECT TOP 50 c.tenantId, c.createdAt FROM c WHERE c.status = 'error' ORDER BY c.tenantId ASC, c.createdAt DESC",
)
INVERTED = WorkloadQuery("oldest", "SELECT * FROM c ORDER BY c.tenantId DESC, c.createdAt ASC")
CONVERSATION = WorkloadQuery("conversation", 'SELECT * FROM c WHERE c.sessionId = @s ORDER BY c["order"]', {"@s": "s1"})
TENANT_ORDER = [{"path": "/tenantId", "order": "ascending"}, {"path": "/createdAt", "order": "descending"}]


def _docs() -> list[dict[str, Any]]:
    return [
        {
            "id": f"log-{i}",
            "tenantId": f"t{i % 3}",
            "sessionId": f"s{i % 7}",
            "status": "error" if i % 2 else "ok",
            "createdAt": f"2026-{11 + i % 2:02d}-{1 + i:02d}T10:00:00Z",
        }
        for i in range(20)
    ]


def test_a_single_key_with_the_composite_index_its_order_by_needs() -> None:
    definition = container_definition(parse_design("/tenantId"), [CONVERSATION, LATEST, INVERTED], "logs-v2")
    assert definition.body == {
        "id": "logs-v2",
        "partitionKey": {"paths": ["/tenantId"], "kind": "Hash", "version": 2},
        "indexingPolicy": {
            "indexingMode": "consistent",
            "automatic": True,
            "includedPaths": [{"path": "/*"}],
            "excludedPaths": [{"path": '/"_etag"/?'}],
            "compositeIndexes": [TENANT_ORDER],  # one entry: it serves the inverted ORDER BY too
        },
    }
    assert "'latest-errors', 'oldest'" in definition.notes[-1]
    assert order_by_keys(CONVERSATION.sql) is None  # one property: the range index serves it


def test_hierarchical_and_synthetic_definitions() -> None:
    hier = container_definition(parse_design(["/tenantId", "/sessionId"]), [], "chat-data")
    assert hier.body["partitionKey"] == {"paths": ["/tenantId", "/sessionId"], "kind": "MultiHash", "version": 2}
    assert hier.body["indexingPolicy"]["compositeIndexes"] == []
    assert "all 2 levels" in hier.notes[0] and "/tenantId alone" in hier.notes[1]
    synthetic = container_definition(parse_design("{tenantId}-{createdAt:yyyy-MM}"), [LATEST], "logs-by-month")
    assert synthetic.body["partitionKey"] == {"paths": ["/pk"], "kind": "Hash", "version": 2}
    assert synthetic.body["indexingPolicy"]["compositeIndexes"] == [TENANT_ORDER]
    assert (
        "Cosmos DB does not compute it" in synthetic.notes[0] and "{tenantId}-{createdAt:yyyy-MM}" in synthetic.notes[0]
    )


def test_the_indexes_of_several_order_by_shapes() -> None:
    three = WorkloadQuery("three", "SELECT * FROM c ORDER BY c.a.b, c.c DESC, c.d")
    joined = WorkloadQuery("joined", "SELECT * FROM c JOIN t IN c.tags ORDER BY t.name, c.x")
    broken = WorkloadQuery("broken", "SELECT * FROM c ORDER BY")
    entries, names = composite_indexes([three, joined, broken, LATEST, LATEST])
    assert names == ["three", "latest-errors", "latest-errors"]
    assert entries == [
        [
            {"path": "/a/b", "order": "ascending"},
            {"path": "/c", "order": "descending"},
            {"path": "/d", "order": "ascending"},
        ],
        TENANT_ORDER,
    ]


def _engine_with(definition: dict[str, Any], docs: list[dict[str, Any]]) -> Engine:
    engine, ctx = Engine(throttling=False), Context()
    engine.create_database(ctx, {"id": "db"})
    engine.create_container(ctx, "db", definition, ThroughputSpec(18_000))
    for doc in docs:
        engine.create_item(ctx, "db", definition["id"], doc)
    return engine


@pytest.mark.parametrize("spec", [["/tenantId", "/sessionId"], "{tenantId}-{createdAt:yyyy-MM}", "/sessionId"])
def test_the_engine_accepts_the_definition_and_serves_the_order_by_from_it(spec: Any) -> None:
    design = parse_design(spec)
    docs = [design.stored(d) for d in _docs()]
    definition = container_definition(design, [LATEST], "new").body
    engine = _engine_with(definition, docs)
    result = engine.run_query("db", "new", LATEST.sql)
    rows = result.rows
    expected = sorted((d for d in docs if d["status"] == "error"), key=lambda d: d["createdAt"], reverse=True)
    expected = sorted(expected, key=lambda d: d["tenantId"])
    assert [(r["tenantId"], r["createdAt"]) for r in rows] == [(d["tenantId"], d["createdAt"]) for d in expected]
    assert engine.container("db", "new").props["partitionKey"] == definition["partitionKey"]
    assert len(result.pkranges) == 3  # a cross-partition ORDER BY, merged over the three physical partitions
    assert lint_query(LATEST.sql, indexing_policy=definition["indexingPolicy"]) == []
    bare = {**definition, "id": "bare", "indexingPolicy": {**definition["indexingPolicy"], "compositeIndexes": []}}
    engine = _engine_with(bare, docs)
    with pytest.raises(CosmosError, match="composite index"):
        engine.run_query("db", "bare", LATEST.sql)
    assert [f.code for f in lint_query(LATEST.sql, indexing_policy=bare["indexingPolicy"])] == [
        "composite-index-missing"
    ]


def test_the_migration_outline_in_order() -> None:
    design = parse_design(["/tenantId", "/sessionId"])
    target = new_container_id("query-logs", design)
    assert target == "query-logs-by-tenantId-sessionId"
    steps = migration_steps(design, "query-logs", target)
    marks = ["Create the container", "change feed", "Deletes", "Writers write the new key", "Switch the readers",
             "Switch the writers", "Retire 'query-logs'"]  # fmt: skip
    assert [next(i for i, s in enumerate(steps) if m in s) for m in marks] == list(range(len(marks)))
    assert "az cosmosdb copy create" in steps[1] and "all levels (/tenantId, /sessionId)" in steps[3]
    synthetic = parse_design("{tenantId}-{createdAt:yyyy-MM}")
    steps = migration_steps(synthetic, "query-logs", new_container_id("query-logs", synthetic))
    assert "computing pk = '{tenantId}-{createdAt:yyyy-MM}'" in steps[1]
    assert "only once every document carries pk" in steps[1]  # a copy job copies as is: no computed key


def test_definition_rows_hold_the_json_the_notes_and_the_steps() -> None:
    design = parse_design("/sessionId")
    definition = container_definition(design, [], "m")
    rows = definition_rows(design.name, design.kind, definition, ["one", "two"])
    assert [(r["section"], r["step"]) for r in rows] == [
        ("definition", 0),
        ("definition", 1),
        ("migration", 1),
        ("migration", 2),
    ]
    assert rows[0]["text"].startswith('{"id": "m", "partitionKey"') and rows[-1]["text"] == "two"
