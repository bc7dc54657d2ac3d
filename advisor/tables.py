"""The advice as store rows: every advice `ruscope advise` makes is kept in the store's `advice_*` tables
(declared in `store.records_advice`), so the dashboard's Advisor page shows the designs side by
side and a later advice can be compared with an earlier one.

`advice_frames` is pure (the advice in, one frame per table out); the command writes them under one run id.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pandas as pd

from advisor.pipeline import Advice
from advisor.verdict import Verdict, json_key
from cosmoscore.limits import GB


def advice_frames(advice: Advice, *, account: str, database: str, time: datetime) -> dict[str, pd.DataFrame]:
    """One frame per advisor table (`advice_designs`, `advice_queries`, `advice_partitions`), each row
    scoped to `account`, `database` and the advice's container, made at `time`."""
    base = {"time": time, "account": account, "database": database, "container": advice.container}
    why = {p.design.name: p.reason for p in advice.proposals}
    lint: dict[str, list[str]] = {}
    for finding in advice.lint:
        lint.setdefault(finding.query, []).append(f"{finding.severity} {finding.code}: {finding.message}")
    designs, queries, partitions = [], [], []
    for verdict in advice.verdicts:
        winner = verdict.rank == 1
        designs.append(base | _design_row(verdict, advice, why, winner=winner))
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


def _design_row(verdict: Verdict, advice: Advice, why: dict[str, str], *, winner: bool) -> dict[str, Any]:
    """A design's row; the winner's carries the container definition and the migration steps."""
    m = verdict.measure
    definition = advice.definition if winner else None
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
        "throughput": advice.workload.throughput,
        "partitions": m.partitions,
        "hottest_partition_share": float(m.hottest_share),
        "even_share": float(m.even_share),
        "gini": float(m.gini),
        "throttles_at_share_of_ru": float(m.throttle_multiplier),
        "hottest_key_share_now": float(m.recent_hottest_logical_share),
        "largest_logical_gb": m.largest_logical_bytes / GB,
        "logical_limit_gb": m.logical_limit_bytes / GB,
        "days_to_limit": None if m.days_to_limit is None else float(m.days_to_limit),
        "growth_gb_per_day": float(advice.workload.growth_gb_per_day),
        "cardinality": " / ".join(str(c) for c in m.cardinality),
        "definition": json.dumps(definition.body) if definition is not None else "",
        "migration": "\n".join(advice.migration) if winner else "",
        "sample": "\n".join(advice.sample),
    }
