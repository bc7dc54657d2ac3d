"""`Engine.run_query` against the real SDK: the same rows, the same total RU and the same pkranges.

Every conformance case (tests/conformance/cases.py) that the SDK itself answers correctly runs twice on
the harness's 4-partition `/pk` containers and on the hierarchical (`/tenant`, `/user`) one: through
azure-cosmos 4.17.1 (`query_items`, its RU summed over every request it sent, refused first attempt,
query plan and routing-map reads included, from a client-level raw_response_hook), and in-process with
`run_query`. Cross-partition cases run without a partition key; the cases the SDK cannot run
cross-partition (GROUP BY, non-VALUE aggregates) run with the one key their WHERE clause pins, as
test_sdk_replay's rule R1 does; queries without FROM run with the first document's key. Left out:
error cases, and SDK_LIMITS (the SDK's client-side merge gets those wrong; see test_sdk_replay.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from emulator.engine.facade import Context
from tests.conformance.cases import CASES, Case
from tests.conformance.sdk_harness import Harness, Target, assert_rows, needs_single_partition
from tests.conformance.test_sdk_replay import SDK_LIMITS, expected_rows, single_partition_keys


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    h = Harness.start()
    yield h
    h.stop()


def _runs() -> list[tuple[Case, str]]:
    runs = []
    for case in CASES:
        if case.error is not None or case.name in SDK_LIMITS:
            continue
        runs += [(case, f"{case.dataset}_pk")] + ([(case, "main_hier")] if case.dataset == "main" else [])
    return runs


RUNS = _runs()


def _partition_key(harness: Harness, target: Target, case: Case) -> tuple[bool, Any]:
    """(run it at all, the SDK's partition_key or None for a cross-partition run)."""
    if not re.search(r"\bFROM\b", case.sql, re.I):
        return True, target.key_of(target.docs[0])
    if needs_single_partition(case.sql):
        plan = single_partition_keys(target, case)
        if plan is None or plan[0] != "each":
            return False, None
        return True, plan[1][0]
    return True, None


def _as_tuple(target: Target, key: Any) -> tuple | None:
    if key is None:
        return None
    return tuple(key) if target.hierarchical else (key,)


def test_the_sample_is_broad() -> None:
    """Over 40 cases, covering the operators the SDK merges client-side."""
    sqls = " ".join(c.sql.upper() for c, _ in RUNS)
    assert len({c.name for c, _ in RUNS}) > 40
    for word in ("ORDER BY", "COUNT(", "DISTINCT", "TOP ", "OFFSET", "GROUP BY", " IN (", "AVG("):
        assert word in sqls, word


@pytest.mark.parametrize(("case", "target_name"), RUNS, ids=[f"{t}-{c.name}" for c, t in RUNS])
def test_run_query_equals_the_sdk(harness: Harness, case: Case, target_name: str) -> None:
    target = harness.targets[target_name]
    runs, key = _partition_key(harness, target, case)
    if not runs:
        pytest.skip("the SDK cannot run it cross-partition and no single key covers it")
    kwargs = {} if key is None else {"partition_key": key}
    sdk_rows = harness.query(target, case.sql, case.params, **kwargs)
    calls = harness.recorder.for_container(target.name)
    sdk_ru = round(sum(c.charge for c in calls), 2)
    sdk_ranges = harness.recorder.ranges_called(target.name)
    assert_rows(sdk_rows, expected_rows(case), case.ordered, "the SDK's own answer")

    result = harness.emu.engine.run_query("conformance", target.name, case.sql, case.params, _as_tuple(target, key))
    assert_rows(result.rows, sdk_rows, case.ordered, "run_query vs the SDK")
    assert result.request_charge == pytest.approx(sdk_ru, abs=0.011)
    assert result.pkranges == sdk_ranges
    assert sum(result.ru_by_pkrange.values()) == pytest.approx(result.request_charge, abs=0.011)


def test_run_query_is_metered_like_the_sdk_requests(harness: Harness) -> None:
    """A fan-out COUNT records what the SDK's requests record: the refused first attempt, the plan, one
    page per partition; SELECT * across partitions records one page per partition."""
    engine = harness.emu.engine
    accounting = engine.accounting
    before = len(accounting.records())
    result = engine.run_query(
        "conformance", "main_pk", "SELECT VALUE COUNT(1) FROM c", ctx=Context(activity_id="count")
    )
    records = accounting.records()[before:]
    assert [(r.operation, r.status, r.substatus) for r in records[:2]] == [("Query", 400, 1004), ("QueryPlan", 200, 0)]
    pages = records[2:]
    assert {r.pkrange_id for r in pages} == result.pkranges == {r["id"] for r in harness.targets["main_pk"].ranges}
    assert all(r.operation == "Query" and r.status == 200 and r.activity_id == "count" for r in pages)
    assert result.rows == [len(harness.targets["main_pk"].docs)]
    assert sum(r.request_charge for r in records) == pytest.approx(result.request_charge)
