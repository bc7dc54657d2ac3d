"""Designs proposed from the chat generator's query logs and a workload: the filter properties, the
high-cardinality ones and their hierarchical pairs; what is never proposed, and why."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from advisor.designs import HIERARCHICAL, parse_design
from advisor.measure import WorkloadQuery
from advisor.propose import CARDINALITY, FILTER, PAIR, pinned_paths, propose
from workloads.chat import generator as g

UNTIL = dt.datetime(2026, 12, 10, tzinfo=dt.UTC).timestamp()


@pytest.fixture(scope="module")
def turns() -> list[g.Turn]:
    size = g.Size("propose", 40, 0, 0.0, backfill_days=40, backfill_turns_per_hour=2.0)
    return list(g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(40), size, UNTIL))


@pytest.fixture(scope="module")
def logs(turns: list[g.Turn]) -> list[dict[str, Any]]:
    return [g.query_log_doc(t) for t in turns]


def _workload(turns: list[g.Turn]) -> tuple[WorkloadQuery, ...]:
    last = turns[-1]
    return (
        WorkloadQuery(
            "tenant-day",
            "SELECT * FROM c WHERE c.tenantId = @t AND c.date = @d",
            {"@t": "contoso", "@d": "2026-12-09"},
            6,
        ),
        WorkloadQuery(
            "session",
            "SELECT * FROM c WHERE c.tenantId = @t AND c.sessionId = @s",
            {"@t": last.tenant_id, "@s": last.session_id},
            3,
        ),
        WorkloadQuery("errors", "SELECT * FROM c WHERE c.status = 'error'", {}, 1),
    )


def _names(proposals: list[Any]) -> list[str]:
    return [p.design.name for p in proposals]


def test_the_chat_logs_give_the_tenant_the_session_and_the_pair(
    logs: list[dict[str, Any]], turns: list[g.Turn]
) -> None:
    proposals = propose(logs, _workload(turns))
    names = _names(proposals)
    assert {"/tenantId", "/sessionId", "/tenantId,/sessionId"} <= set(names) and len(names) == 6
    by_name = {p.design.name: p for p in proposals}
    assert by_name["/tenantId"].source == FILTER and "'tenant-day', 'session' (90%" in by_name["/tenantId"].reason
    pair = by_name["/tenantId,/sessionId"]
    assert pair.source == PAIR and pair.design.kind == HIERARCHICAL and "30% of the executions pin both" in pair.reason
    assert "high cardinality" in by_name["/sessionId"].reason and "'session'" in by_name["/sessionId"].reason
    # never: 3 values (/status, /model), unique and unfiltered (/id, /createdAt, free text), numbers (measures),
    # a date as the first level of a pair (today's writes share one prefix)
    never = {"/status", "/model", "/month", "/id", "/createdAt", "/query", "/latencyMs", "/promptTokens"}
    assert not never & set(names) and not any(n.startswith("/date,") for n in names)
    assert [p.source for p in proposals[:3]] == [FILTER, PAIR, CARDINALITY]  # each kind in turn


def test_a_configured_design_is_not_proposed_again(logs: list[dict[str, Any]], turns: list[g.Turn]) -> None:
    configured = [
        parse_design("/tenantId"),
        parse_design(["/tenantId", "/sessionId"]),
        parse_design("/date", "/userId"),
    ]
    names = _names(propose(logs, _workload(turns), configured))
    assert "/tenantId" not in names and "/tenantId,/sessionId" not in names
    assert "/date" not in names  # same kind and paths as the one configured under another name
    assert "/userId (proposed)" in names  # its name was taken by that configured design


def test_the_pair_for_a_tenant_only_workload_takes_its_finer_level_from_the_cardinality(
    logs: list[dict[str, Any]],
) -> None:
    queries = (WorkloadQuery("tenant", "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = @t", {"@t": "contoso"}),)
    proposals = propose(logs, queries, limit=3)
    assert _names(proposals) == ["/tenantId", "/tenantId,/sessionId", "/sessionId"]


def test_an_id_like_property_is_proposed_only_when_a_query_filters_on_it(logs: list[dict[str, Any]]) -> None:
    assert "/id" not in _names(propose(logs, ()))
    by_id = (WorkloadQuery("by-id", "SELECT * FROM c WHERE c.id = @id", {"@id": logs[0]["id"]}),)
    assert _names(propose(logs, by_id))[0] == "/id"


def test_limits_and_empty_inputs(logs: list[dict[str, Any]], turns: list[g.Turn]) -> None:
    assert len(propose(logs, _workload(turns), limit=2)) == 2
    assert propose(logs, _workload(turns), limit=0) == [] and propose([], _workload(turns)) == []
    sparse = [{"id": str(i), "tenantId": f"t{i}"} if i < 5 else {"id": str(i)} for i in range(100)]
    assert propose(sparse, ()) == []  # a property 95% of the documents lack keys them all as undefined


@pytest.mark.parametrize(
    ("sql", "parameters", "paths"),
    [
        ("SELECT * FROM c WHERE c.a IN (1, 2) AND c.b > 3", {}, ["/a"]),
        ("SELECT * FROM c WHERE c.a = 1 OR c.b = 2", {}, []),
        ("SELECT * FROM c WHERE c.user.region = @r AND NOT (c.x = 1)", {"@r": "eu"}, ["/user/region"]),
        ("SELECT * FROM c WHERE c.a = @missing", {}, []),
        ("SELECT * FROM c JOIN t IN c.tags WHERE t = 'x'", {}, []),
        ("SELECT * FROM c WHERE", {}, []),
    ],
)
def test_the_properties_a_query_pins(sql: str, parameters: dict[str, Any], paths: list[str]) -> None:
    assert pinned_paths(WorkloadQuery("q", sql, parameters)) == paths
