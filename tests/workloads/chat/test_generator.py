"""The AI-chat generator: the guides' skew (one large tenant, a long tail) and deterministic output."""

from __future__ import annotations

from workloads.chat import generator as gen


def test_the_large_tenant_asks_about_half_the_questions() -> None:
    tenants = gen.build_tenants(40)
    turns = [t for m in range(600) for t in gen.turns_in_minute(7, tenants, 1_767_225_600 + m * 60, 10.0)]
    share = sum(t.tenant_id == gen.LARGE_TENANT for t in turns) / len(turns)
    assert 0.45 < share < 0.55
    assert len({t.tenant_id for t in turns}) > 30  # and a long tail of small tenants


def test_the_generator_is_deterministic_and_sized_like_a_chat() -> None:
    tenants = gen.build_tenants(8)
    first = gen.turns_in_minute(3, tenants, 1_767_225_600, 5.0)
    assert first == gen.turns_in_minute(3, tenants, 1_767_225_600, 5.0)
    assert first != gen.turns_in_minute(4, tenants, 1_767_225_600, 5.0)
    question, answer = gen.message_docs(first[0])
    log = gen.query_log_doc(first[0])
    assert len(answer["content"]) > len(question["content"])  # type: ignore[arg-type]
    assert log["partitionKey"] == f"{log['tenantId']}-2026-01"
    assert question["order"] == answer["order"]
