"""analysis.gate.verdicts: each rule fails, warns or notes when it should, says by how much, and says why."""

from __future__ import annotations

import pytest

from analysis.gate.baseline import Accepted
from analysis.gate.measure import Measured
from analysis.gate.verdicts import Budget, Check, judge


def measured(name: str = "q", ru: float | None = 10.0, partitions: int = 1, routing: str = "single", **kw) -> Measured:
    return Measured(name, "orders", kw.pop("sql", "SELECT * FROM c"), ru, partitions, routing, **kw)


def accepted(ru: float = 10.0, partitions: int = 1, routing: str = "single", sql: str = "SELECT * FROM c") -> Accepted:
    return Accepted("orders", sql, ru, partitions, routing)


def one(m: Measured, budget: Budget | None = None, before: Accepted | None = None, **kw):
    verdicts = judge(
        {m.name: m}, {m.name: budget} if budget else {}, {m.name: before} if before else {}, tolerance=0.1, **kw
    )
    return verdicts[0]


def rules(verdict) -> dict[str, str]:
    return {c.rule: c.severity for c in verdict.checks}


def test_a_query_within_its_budget_and_baseline_passes() -> None:
    v = one(measured(ru=10.5), Budget(max_ru=11, max_partitions=1, routing="single"), accepted(10.0))
    assert v.status == "pass" and rules(v) == {} and v.change_pct == 5.0


@pytest.mark.parametrize(
    ("m", "budget", "rule", "says"),
    [
        (
            measured(ru=12.5),
            Budget(max_ru=10),
            "budget.max_ru",
            "12.50 RU per execution, over its budget of 10 (+25.0%)",
        ),
        (measured(partitions=3, routing="targeted"), Budget(max_partitions=2), "budget.max_partitions", "reached 3"),
        (measured(partitions=3, routing="targeted"), Budget(routing="single"), "budget.routing", "routed targeted"),
        (
            measured(ru=10, rate_per_s=30),
            Budget(max_ru_per_s=200),
            "budget.max_ru_per_s",
            "300 RU/s at 30 executions/s",
        ),
    ],
)
def test_each_budget_limit_fails_and_says_by_how_much(m: Measured, budget: Budget, rule: str, says: str) -> None:
    v = one(m, budget, accepted(m.ru or 0, m.partitions, m.routing))
    assert v.status == "fail" and rules(v) == {rule: "fail"}
    assert says in next(c.message for c in v.checks if c.rule == rule)


def test_a_targeted_query_is_within_a_fan_out_budget_and_a_single_one_within_targeted() -> None:
    assert one(measured(partitions=2, routing="targeted"), Budget(routing="fan-out")).status == "new"
    assert one(measured(), Budget(routing="targeted")).status == "new"


def test_the_baseline_fails_a_rise_past_the_tolerance_only() -> None:
    assert one(measured(ru=11.0), before=accepted(10.0)).status == "pass"  # +10%: at the tolerance
    v = one(measured(ru=11.02), before=accepted(10.0))
    assert rules(v) == {"baseline.ru": "fail"}
    assert "rose from 10.00 to 11.02 (+10.2%, tolerance 10%)" in v.checks[0].message


def test_a_query_own_tolerance_overrides_the_check_one() -> None:
    assert one(measured(ru=14.0), Budget(tolerance=0.5), accepted(10.0)).status == "pass"
    assert one(measured(ru=10.6), Budget(tolerance=0.05), accepted(10.0)).status == "fail"


def test_losing_the_partition_key_fails_on_routing_and_partitions_and_says_why() -> None:
    v = one(measured(ru=40.7, partitions=4, routing="fan-out"), before=accepted(20.16))
    assert rules(v) == {"baseline.ru": "fail", "baseline.routing": "fail", "baseline.partitions": "fail"}
    assert any(w.startswith("routing: fan-out over 4 partitions") for w in v.why)


def test_more_partitions_at_the_same_routing_fail_and_explain_the_minimum_charge() -> None:
    v = one(measured(ru=10.0, partitions=3, routing="targeted"), before=accepted(10.0, 2, "targeted"))
    assert rules(v) == {"baseline.partitions": "fail"}
    assert v.why == ("partitions: 2 -> 3; every partition probed charges at least ~2.5 RU",)


def test_a_new_query_and_an_improvement_are_notes() -> None:
    assert rules(one(measured())) == {"baseline.new": "note"}
    v = one(measured(ru=5.0), before=accepted(10.0))
    assert v.status == "pass" and rules(v) == {"baseline.improved": "note"} and v.change_pct == -50.0


def test_a_query_that_did_not_run_fails_with_its_error() -> None:
    v = one(measured(ru=None, partitions=0, routing="unknown", error="container 'x' not found"), before=accepted())
    assert v.status == "fail" and rules(v) == {"error": "fail"}
    assert v.checks[0].message == "did not run: container 'x' not found"


def test_a_missing_composite_index_warns_and_explains() -> None:
    v = one(measured(missing_composites=("/tenantId ASC, /createdAt DESC",)), before=accepted())
    assert v.status == "warn" and rules(v) == {"index.composite": "warn"}
    assert "add (/tenantId ASC, /createdAt DESC) to compositeIndexes" in v.why[0]


def test_lint_warnings_warn_and_under_strict_fail() -> None:
    lint = {"q": [Check("lint.cross-partition-unbounded", "warn", "fans out"), Check("lint.x", "note", "fyi")]}
    assert one(measured(), before=accepted(), lint=lint).status == "warn"
    strict = one(measured(), before=accepted(), lint=lint, strict=True)
    assert strict.status == "fail" and rules(strict)["lint.x"] == "note"


def test_a_changed_sql_is_said_when_the_query_regressed() -> None:
    v = one(measured(ru=20, sql="SELECT * FROM c WHERE c.a = 1"), before=accepted(10))
    assert "sql: the query's text changed since the baseline" in v.why


def test_verdicts_come_in_name_order() -> None:
    verdicts = judge({n: measured(n) for n in ("b", "a", "c")}, {}, {}, tolerance=0.1)
    assert [v.measured.name for v in verdicts] == ["a", "b", "c"]
