"""The verdict on measured designs: the guides' three criteria in plain words, a ranking, and a fix for
every query that fans out.

The criteria (partition-key guides, seeds 000/002; the limits cite docs/reference/ru-cost-model.md):
- cardinality: many distinct keys. Fewer than `KEYS_PER_PARTITION` per physical partition is flagged (a
  heuristic of ours: a split divides keys, never a key), and so is a logical partition that reaches the
  20 GB limit (P1; H2: for a hierarchical key the limit is per full path);
- write distribution: a logical partition lives in one physical partition and is never split (P1, P2), so
  the share of the current writes its hottest key takes is a floor for the hottest partition's share. Above
  an even share (1/P) the design is flagged for write skew, whatever the throughput;
- alignment with the dominant queries: the most frequent query, and most executions, reach one partition
  (or a hierarchical prefix's few), not all of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.designs import HIERARCHICAL, SYNTHETIC, Design, property_value
from advisor.measure import DesignMeasure, QueryMeasure, Workload, measure_designs
from cosmoscore.routing import FAN_OUT
from cosmoscore.sql import ast as a
from cosmoscore.sql import parse_query, partition_key_filter
from cosmoscore.sql.checks import is_aggregate

CARDINALITY, WRITES, STORAGE, ALIGNMENT = "cardinality", "write distribution", "20 GB limit", "query alignment"
KEYS_PER_PARTITION = 10  # heuristic: below this many distinct keys per physical partition, splits go lumpy
_LISTED = 6  # key values shown in a "list them" fix


@dataclass(frozen=True)
class Finding:
    criterion: str
    ok: bool
    text: str


@dataclass(frozen=True)
class QueryFix:
    query: str
    routing: str
    fix: str


@dataclass(frozen=True)
class Verdict:
    measure: DesignMeasure
    findings: tuple[Finding, ...]
    fixes: tuple[QueryFix, ...]
    rank: int = 0

    @property
    def design(self) -> Design:
        return self.measure.design

    @property
    def flags(self) -> tuple[str, ...]:
        """The criteria the design fails, in the order `judge` checks them (cardinality, writes, 20 GB, queries)."""
        return tuple(f.criterion for f in self.findings if not f.ok)

    @property
    def summary(self) -> str:
        head = f"{self.design.name}: " + ("meets all criteria" if not self.flags else "fails " + ", ".join(self.flags))
        return head + ". " + " ".join(f.text for f in self.findings)


def judge_cardinality(m: DesignMeasure) -> Finding:
    keys, needed = m.cardinality[-1], KEYS_PER_PARTITION * m.partitions
    per_level = " / ".join(str(c) for c in m.cardinality)
    levels = f" (per level: {per_level})" if len(m.cardinality) > 1 else ""
    if keys < needed:
        text = (
            f"only {keys} distinct key values{levels}: at most {keys} logical partitions, fewer than "
            f"{KEYS_PER_PARTITION} per physical partition ({m.partitions})."
        )
        return Finding(CARDINALITY, False, text)
    return Finding(CARDINALITY, True, f"{keys} distinct key values{levels}.")


def judge_writes(m: DesignMeasure) -> Finding:
    share, even = m.recent_hottest_logical_share, m.even_share
    spread = (
        f"hottest physical partition {m.hottest_share:.0%} of the sample's writes against an even "
        f"{even:.0%} (Gini {m.gini:.2f}; the first partition throttles at {m.throttle_multiplier:.0%} of the "
        "provisioned RU/s)"
    )
    if share > even:
        text = (
            f"write skew: one logical partition takes {share:.0%} of the current writes "
            f"({m.hottest_logical_share:.0%} of the whole sample's); it can never be split, so its partition "
            f"gets at least that against an even {even:.0%}; {spread}."
        )
        if m.design.key_life_days():
            text += " The time bucket moves the hot key to a new partition each period, but within one the key is hot."
        return Finding(WRITES, False, text)
    text = f"writes spread over keys: the hottest key takes {share:.0%} of the current writes; {spread}."
    if m.hottest_share > 1.5 * even:
        text += " Many keys share the hottest partition: a split can divide them (a single key it never could)."
    return Finding(WRITES, True, text)


def judge_storage(m: DesignMeasure, workload: Workload) -> Finding:
    largest_gb = m.largest_logical_bytes / 1024**3
    limit_gb = m.logical_limit_bytes / 1024**3
    unit = "full key path" if m.design.kind == HIERARCHICAL else "logical partition"
    if m.largest_logical_bytes >= m.logical_limit_bytes:
        return Finding(STORAGE, False, f"the largest {unit} ({largest_gb:.1f} GB) is already past {limit_gb:.0f} GB.")
    if m.days_to_limit is not None:
        text = (
            f"the largest {unit} holds {largest_gb:.2f} GB and reaches {limit_gb:.0f} GB in "
            f"{m.days_to_limit:.0f} days at {workload.growth_gb_per_day:g} GB/day"
        )
        if m.days_to_limit > workload.horizon_days:
            return Finding(STORAGE, True, f"{text}, beyond the {workload.horizon_days:.0f}-day planning horizon.")
        return Finding(STORAGE, False, text + ".")
    growth = f" at {workload.growth_gb_per_day:g} GB/day" if workload.growth_gb_per_day else ""
    return Finding(
        STORAGE, True, f"the largest {unit} holds {largest_gb:.2f} GB and never reaches {limit_gb:.0f} GB{growth}."
    )


def judge_alignment(m: DesignMeasure) -> Finding:
    if not m.queries:
        return Finding(ALIGNMENT, True, "no workload queries to align with.")
    dominant = max(m.queries, key=lambda q: q.weight)
    total = sum(q.weight for q in m.queries) or 1.0
    fanned = sum(q.weight for q in m.queries if q.routing == FAN_OUT) / total
    where = f"{fanned:.0%} of executions fan out; workload {m.workload_ru:.1f} RU per query"
    if dominant.routing == FAN_OUT or fanned > 0.5:
        text = f"misaligned: the dominant query {dominant.name!r} is {dominant.routing}; {where}."
        return Finding(ALIGNMENT, False, text)
    return Finding(ALIGNMENT, True, f"the dominant query {dominant.name!r} is {dominant.routing}; {where}.")


def pinned_properties(design: Design, sql: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The design's properties a query fixes to one value by equality."""
    query = parse_query(sql)
    out = {}
    for prop in design.properties:
        keys = partition_key_filter(query, [prop.split(".")], parameters).keys
        if keys is not None and len(keys) == 1 and keys[0]:
            out[prop] = keys[0][0]
    return out


def _bounded(sql: str) -> bool:
    query = parse_query(sql)
    aggregate = any(is_aggregate(node) for node in a.walk(query.select))
    return query.select.top is not None or query.limit is not None or aggregate


def fix_for(q: QueryMeasure, design: Design, sql: str, parameters: Mapping[str, Any], docs: Sequence[Any]) -> str:
    """What would keep a fan-out query off most partitions under this design, in words."""
    pinned = pinned_properties(design, sql, parameters)
    props = design.properties
    if design.kind == SYNTHETIC and pinned:
        values = sorted(
            {design.key_of(d)[0] for d in docs if all(property_value(d, p) == v for p, v in pinned.items())}
        )
        shown = ", ".join(f"'{v}'" for v in values[:_LISTED]) + (", ..." if len(values) > _LISTED else "")
        fix = f"list the key values: add `c.{design.synthetic_property} IN ({shown})` ({len(values)} in the sample)"
    elif design.kind == HIERARCHICAL:
        fix = f"query a hierarchical prefix: add `c.{props[0]} = @{props[0].split('.')[-1]}` to the filter"
    elif design.kind == SYNTHETIC:
        prop = design.synthetic_property
        fix = f"put the key in the filter: `c.{prop} = @{prop}` (the template {design.template!r}) or pass the key"
    else:
        fix = f"put the key in the filter: `c.{props[0]} = @{props[0].split('.')[-1]}`"
    if not _bounded(sql):
        fix += "; add TOP n (or a page limit) so a fan-out stops early"
    return fix


def judge(m: DesignMeasure, docs: Sequence[Mapping[str, Any]], workload: Workload) -> Verdict:
    findings = (judge_cardinality(m), judge_writes(m), judge_storage(m, workload), judge_alignment(m))
    by_name = {q.name: q for q in workload.queries}
    fixes = tuple(
        QueryFix(q.name, q.routing, fix_for(q, m.design, by_name[q.name].sql, by_name[q.name].parameters, docs))
        for q in m.queries
        if q.routing == FAN_OUT
    )
    return Verdict(m, findings, fixes)


def rank_verdicts(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Fewest failed criteria first, then the cheapest workload (RU per query of the mix), then the name."""
    ordered = sorted(verdicts, key=lambda v: (len(v.flags), v.measure.workload_ru, v.design.name))
    return [Verdict(v.measure, v.findings, v.fixes, rank) for rank, v in enumerate(ordered, start=1)]


def advise(designs: Sequence[Design], docs: Sequence[Mapping[str, Any]], workload: Workload) -> list[Verdict]:
    """Measure, judge and rank every candidate design on the same sample and workload."""
    measures = measure_designs(designs, docs, workload)  # one process per CPU; the same results as one by one
    return rank_verdicts([judge(measure, docs, workload) for measure in measures])


def verdict_rows(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """Flat rows for a CSV (or a sheet per `section`): one `design` row per verdict, then one `query` row
    per workload query under that design with its fix when it fans out."""
    rows: list[dict[str, Any]] = []
    for v in verdicts:
        m = v.measure
        base = {"rank": v.rank, "design": v.design.name, "kind": v.design.kind}
        rows.append(
            base
            | {
                "section": "design",
                "partition_key": json_key(v.design),
                "flags": "; ".join(v.flags),
                "workload_ru": round(m.workload_ru, 2),
                "partitions": m.partitions,
                "hottest_partition_share": round(m.hottest_share, 4),
                "even_share": round(m.even_share, 4),
                "gini": round(m.gini, 4),
                "throttles_at_share_of_ru": round(m.throttle_multiplier, 4),
                "hottest_key_share_now": round(m.recent_hottest_logical_share, 4),
                "largest_logical_gb": round(m.largest_logical_bytes / 1024**3, 4),
                "days_to_20gb": None if m.days_to_limit is None else round(m.days_to_limit, 1),
                "cardinality": " / ".join(str(c) for c in m.cardinality),
                "verdict": v.summary,
            }
        )
        fixes = {f.query: f.fix for f in v.fixes}
        rows += [
            base
            | {
                "section": "query",
                "query": q.name,
                "weight": q.weight,
                "request_charge": round(q.request_charge, 2),
                "partitions": q.partitions,
                "routing": q.routing,
                "fix": fixes.get(q.name, ""),
            }
            for q in m.queries
        ]
    return rows


def json_key(design: Design) -> str:
    """The design's partition key as the SDK and ARM spell it (plus the template of a synthetic one)."""
    text = json.dumps(design.definition())
    return f"{text} pk = {design.template}" if design.kind == SYNTHETIC else text
