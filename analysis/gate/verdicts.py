"""Each query measured by a check run, held against its budget, the baseline and the advisor's lint.

A `Check` is one rule's outcome: "fail" fails the gate (exit 1), "warn" is shown (and fails it only under
`--strict`, which the caller applies by turning warnings into failures), "note" is information (a new
query, an improvement worth accepting). `Verdict.why` says what changed in the query's shape: its routing,
the partitions it reaches, the composite index the service names as missing, so the message a developer
reads says which query, by how much, and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from analysis.gate.baseline import Accepted
from analysis.gate.measure import Measured
from cosmoscore.routing import ROUTING_CLASSES

Severity = Literal["fail", "warn", "note"]
EPSILON_RU = 0.005  # RU are compared at the baseline's rounding (0.01)


@dataclass(frozen=True)
class Budget:
    """A query's limits (`[[queries]] budget` in the config); None: no limit."""

    max_ru: float | None = None
    max_partitions: int | None = None
    routing: str | None = None
    max_ru_per_s: float | None = None
    tolerance: float | None = None  # over the baseline; None: the check's


@dataclass(frozen=True)
class Check:
    rule: str  # "budget.max_ru", "baseline.ru", "lint.<id>", "error", ...
    severity: Severity
    message: str


@dataclass(frozen=True)
class Verdict:
    measured: Measured
    before: Accepted | None
    checks: tuple[Check, ...] = ()
    why: tuple[str, ...] = field(default=())

    @property
    def status(self) -> str:
        """fail, warn, new (no baseline entry) or pass."""
        severities = {c.severity for c in self.checks}
        if "fail" in severities:
            return "fail"
        if "warn" in severities:
            return "warn"
        return "new" if self.before is None else "pass"

    @property
    def change_pct(self) -> float | None:
        """RU now against the baseline's, in percent."""
        if self.before is None or self.measured.ru is None or self.before.ru <= 0:
            return None
        return round((self.measured.ru / self.before.ru - 1) * 100, 1)


def judge(
    measured: Mapping[str, Measured],
    budgets: Mapping[str, Budget],
    baseline: Mapping[str, Accepted],
    *,
    tolerance: float,
    lint: Mapping[str, Iterable[Check]] | None = None,
    strict: bool = False,
) -> list[Verdict]:
    """One verdict per measured query, in name order; `strict` makes lint warnings failures."""
    verdicts = []
    for name, m in sorted(measured.items()):
        budget = budgets.get(name, Budget())
        before = baseline.get(name)
        own = budget.tolerance if budget.tolerance is not None else tolerance
        checks = [*ran(m), *within_budget(m, budget), *against_baseline(m, before, own), *index_advice(m)]
        checks += [_strict(c) if strict else c for c in (lint or {}).get(name, ())]
        verdicts.append(Verdict(m, before, tuple(checks), tuple(explain(m, before, budget))))
    return verdicts


def ran(m: Measured) -> list[Check]:
    if m.ru is None:
        return [Check("error", "fail", f"did not run: {m.error}")]
    return []


def within_budget(m: Measured, budget: Budget) -> list[Check]:
    """The budget's limits, each broken one a failure that says by how much."""
    if m.ru is None:
        return []
    out = []
    if budget.max_ru is not None and m.ru > budget.max_ru + EPSILON_RU:
        over = (m.ru / budget.max_ru - 1) * 100
        out.append(
            Check(
                "budget.max_ru",
                "fail",
                f"{m.ru:.2f} RU per execution, over its budget of {budget.max_ru:g} (+{over:.1f}%)",
            )
        )
    if budget.max_partitions is not None and m.partitions > budget.max_partitions:
        out.append(
            Check(
                "budget.max_partitions",
                "fail",
                f"reached {m.partitions} physical partitions, over its budget of {budget.max_partitions}",
            )
        )
    if budget.routing is not None and _wider(m.routing, budget.routing):
        out.append(Check("budget.routing", "fail", f"routed {m.routing}, wider than its budget's {budget.routing}"))
    rate = m.ru_per_s
    if budget.max_ru_per_s is not None and rate is not None and rate > budget.max_ru_per_s + EPSILON_RU:
        out.append(
            Check(
                "budget.max_ru_per_s",
                "fail",
                f"{rate:g} RU/s at {m.rate_per_s:g} executions/s, over its budget of {budget.max_ru_per_s:g} RU/s",
            )
        )
    return out


def against_baseline(m: Measured, before: Accepted | None, tolerance: float) -> list[Check]:
    """A rise past the tolerance, a wider routing or more partitions than the baseline's fail; a new query
    and an improvement are notes."""
    if m.ru is None:
        return []
    if before is None:
        return [Check("baseline.new", "note", "not in the baseline: --update-baseline accepts it")]
    out = []
    limit = before.ru * (1 + tolerance)
    if m.ru > limit + EPSILON_RU:
        rise = (m.ru / before.ru - 1) * 100 if before.ru > 0 else float("inf")
        out.append(
            Check(
                "baseline.ru",
                "fail",
                f"RU per execution rose from {before.ru:.2f} to {m.ru:.2f} (+{rise:.1f}%, tolerance {tolerance:.0%})",
            )
        )
    if _wider(m.routing, before.routing):
        out.append(Check("baseline.routing", "fail", f"routing went from {before.routing} to {m.routing}"))
    if m.partitions > before.partitions:
        out.append(
            Check(
                "baseline.partitions", "fail", f"reaches {m.partitions} physical partitions, {before.partitions} before"
            )
        )
    if not out and m.ru < before.ru * (1 - tolerance) - EPSILON_RU:
        out.append(
            Check(
                "baseline.improved", "note", f"RU fell from {before.ru:.2f} to {m.ru:.2f}: --update-baseline accepts it"
            )
        )
    return out


def index_advice(m: Measured) -> list[Check]:
    """The composite indexes the index metrics name as missing for this query: a warning (the
    query runs, at several times the RU it would cost with the index; ru-cost-model.md Q11)."""
    return [
        Check("index.composite", "warn", f"the index metrics name a missing composite index: ({spec})")
        for spec in m.missing_composites
    ]


def explain(m: Measured, before: Accepted | None, budget: Budget) -> list[str]:
    """What the query's shape says about its cost: routing, partitions, a missing composite index."""
    why = []
    wider_than_before = before is not None and _wider(m.routing, before.routing)
    if wider_than_before or (budget.routing is not None and _wider(m.routing, budget.routing)):
        why.append(
            f"routing: {m.routing} over {m.partitions} partitions; a query that names its full partition key "
            "(partition_key= or an equality on the key path) reaches one"
        )
    elif before is not None and m.partitions > before.partitions:
        why.append(
            f"partitions: {before.partitions} -> {m.partitions}; every partition probed charges at least ~2.5 RU"
        )
    if before is not None and m.sql != before.sql:
        why.append("sql: the query's text changed since the baseline")
    for spec in m.missing_composites:
        why.append(f"index: add ({spec}) to compositeIndexes; a filter with ORDER BY costs ~5x without it")
    return why


def _wider(now: str, allowed: str) -> bool:
    """Whether routing class `now` is wider than `allowed` (single < targeted < fan-out)."""
    if now not in ROUTING_CLASSES or allowed not in ROUTING_CLASSES:
        return False
    return ROUTING_CLASSES.index(now) > ROUTING_CLASSES.index(allowed)


def _strict(check: Check) -> Check:
    return replace(check, severity="fail") if check.severity == "warn" else check
