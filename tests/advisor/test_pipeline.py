"""The advice pipeline on plain values (no config file): candidates in their config spelling, the
proposals, the winner's definition and the store rows; and its defaults agree with the `[advisor]` ones."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from advisor.measure import Workload, WorkloadQuery
from advisor.pipeline import AdviseError, advise_documents
from advisor.propose import MAX_PROPOSALS
from advisor.tables import advice_frames
from collectors.config.advisor import DEFAULT_PROPOSALS, AdvisorSettings
from workloads.chat import generator as g

UNTIL = dt.datetime(2026, 12, 10, tzinfo=dt.UTC).timestamp()
WORKLOAD = Workload(
    queries=(WorkloadQuery("tenant", "SELECT * FROM c WHERE c.tenantId = @t", {"@t": "contoso"}, 2.0),),
    throughput=12_000,
    growth_gb_per_day=0.5,
)


@pytest.fixture(scope="module")
def logs() -> list[dict[str, Any]]:
    size = g.Size("pipeline", 20, 0, 0.0, backfill_days=10, backfill_turns_per_hour=2.0)
    return [g.query_log_doc(t) for t in list(g.backfill_turns(g.DEFAULT_SEED, g.build_tenants(20), size, UNTIL))[:300]]


def test_the_config_default_is_the_advisors_cap_on_proposals() -> None:
    assert DEFAULT_PROPOSALS == MAX_PROPOSALS == AdvisorSettings(container="c").propose


def test_candidates_in_their_config_spelling_are_ranked_and_become_store_rows(logs: list[dict[str, Any]]) -> None:
    advice = advise_documents(
        logs,
        WORKLOAD,
        container="query-logs",
        candidates=[("/tenantId", None), (["/tenantId", "/sessionId"], "pair")],
        proposals=0,
        new_container="logs-v2",
    )
    assert {v.design.name for v in advice.verdicts} == {"/tenantId", "pair"} and not advice.proposals
    assert advice.container == "query-logs" and advice.definition is not None
    assert advice.definition.body["id"] == "logs-v2"
    when = dt.datetime(2026, 12, 10, tzinfo=dt.UTC)
    frames = advice_frames(advice, account="local", database="chat", time=when)
    designs = frames["advice_designs"]
    assert set(designs.container) == {"query-logs"} and set(designs.throughput) == {12_000}
    assert set(designs.growth_gb_per_day) == {0.5} and (designs.definition != "").sum() == 1
    assert len(frames["advice_queries"]) == 2 and set(frames["advice_queries"].account) == {"local"}


def test_a_candidate_the_sample_cannot_key_is_one_message(logs: list[dict[str, Any]]) -> None:
    with pytest.raises(AdviseError, match="'nowhere' is absent from every sample document"):
        advise_documents(logs, WORKLOAD, container="query-logs", candidates=[("/nowhere", None)], proposals=0)
