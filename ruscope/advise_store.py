"""The advice as store rows: `ruscope advise` keeps every advice it makes (the `advice_*` tables of
`store.records_advice`), so the dashboard's Advisor page shows the designs side by side and a
later advice can be compared with an earlier one.

`advice_frames` is pure (the advice in, one frame per table out); `store_advice` is the I/O edge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import pandas as pd

from advisor.verdict import Verdict, json_key
from collectors.config import Account
from collectors.run import new_run_id
from ruscope.advise import Advice, AdvisorSettings
from store import StoreLocation, write_frame

PART = "advice"
GB = 1024**3


@dataclass(frozen=True)
class AdviceScope:
    """Where the advice belongs and how it was measured: the store rows' scope columns and settings."""

    account: str
    database: str
    container: str
    throughput: int
    growth_gb_per_day: float

    @classmethod
    def of(cls, account: Account, settings: AdvisorSettings) -> AdviceScope:
        """The `[advisor] container` of `account` (its first database), at the section's throughput."""
        return cls(
            account.name, account.databases[0], settings.container, settings.throughput, settings.growth_gb_per_day
        )


def advice_frames(advice: Advice, scope: AdviceScope, time: datetime) -> dict[str, pd.DataFrame]:
    """One frame per advisor table (`advice_designs`, `advice_queries`, `advice_partitions`)."""
    base = {"time": time, "account": scope.account, "database": scope.database, "container": scope.container}
    why = {p.design.name: p.reason for p in advice.proposals}
    lint: dict[str, list[str]] = {}
    for finding in advice.lint:
        lint.setdefault(finding.query, []).append(f"{finding.severity} {finding.code}: {finding.message}")
    designs, queries, partitions = [], [], []
    for verdict in advice.verdicts:
        winner = verdict.rank == 1
        designs.append(base | _design_row(verdict, scope, why, advice if winner else None))
        fixes = {f.query: f.fix for f in verdict.fixes}
        for q in verdict.measure.queries:
            queries.append(
                base
                | {
                    "design": verdict.design.name,
                    "query": q.name,
                    "weight": float(q.weight),
                    "request_charge": float(q.request_charge),
                    "partitions": q.partitions,
                    "total_partitions": q.total_partitions,
                    "routing": q.routing,
                    "fix": fixes.get(q.name, ""),
                    "lint": "; ".join(lint.get(q.name, [])) if winner else "",
                }
            )
        partitions += [
            base | {"design": verdict.design.name, "partition": i, "write_share": float(share)}
            for i, share in enumerate(verdict.measure.write_shares)
        ]
    return {
        "advice_designs": pd.DataFrame(designs),
        "advice_queries": pd.DataFrame(queries),
        "advice_partitions": pd.DataFrame(partitions),
    }


def _design_row(verdict: Verdict, scope: AdviceScope, why: dict[str, str], advice: Advice | None) -> dict:
    m = verdict.measure
    definition = advice.definition if advice is not None else None
    return {
        "design": verdict.design.name,
        "kind": verdict.design.kind,
        "origin": "proposed" if verdict.design.name in why else "configured",
        "why": why.get(verdict.design.name, ""),
        "rank": verdict.rank,
        "partition_key": json_key(verdict.design),
        "flags": "; ".join(verdict.flags),
        "verdict": verdict.summary,
        "workload_ru": float(m.workload_ru),
        "throughput": scope.throughput,
        "partitions": m.partitions,
        "hottest_partition_share": float(m.hottest_share),
        "even_share": float(m.even_share),
        "gini": float(m.gini),
        "throttles_at_share_of_ru": float(m.throttle_multiplier),
        "hottest_key_share_now": float(m.recent_hottest_logical_share),
        "largest_logical_gb": m.largest_logical_bytes / GB,
        "logical_limit_gb": m.logical_limit_bytes / GB,
        "days_to_limit": None if m.days_to_limit is None else float(m.days_to_limit),
        "growth_gb_per_day": float(scope.growth_gb_per_day),
        "cardinality": " / ".join(str(c) for c in m.cardinality),
        "definition": json.dumps(definition.body) if definition is not None else "",
        "migration": "\n".join(advice.migration) if advice is not None else "",
    }


def store_advice(store: StoreLocation, frames: dict[str, pd.DataFrame], *, time: datetime) -> str:
    """Write the advice's frames under one new run id; that run id."""
    run_id = new_run_id(time.timestamp())
    for table, frame in frames.items():
        write_frame(store, table, frame, run_id=run_id, part=PART)
    return run_id
