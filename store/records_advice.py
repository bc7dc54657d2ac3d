"""The store's advisor tables: what `ruscope advise` measured, one run per advice, so the dashboard's
Advisor page (and Spark, Fabric, DuckDB) can show the candidate designs side by side.

Three tables, all keyed by the advice's run and the container it was about (account, database, the
`[advisor] container`); `time` is when the advice was made:

- `advice_designs`: one row per candidate design: its rank, the verdict on the three criteria, the write
  spread, the 20 GB projection, and for the winner the container definition (JSON) and migration steps;
  `sample` is the sample's bias as measured when it was read (the same on every design of the advice);
- `advice_queries`: one row per design and workload query: RU, partitions reached, routing class, the fix
  when it fans out, and for the winner the lint findings;
- `advice_partitions`: one row per design and physical partition (in EPK order): its share of the writes,
  the skew heatmap's cells.

Registered by importing this module (`store` does), like `records`.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.records import TABLES, Int32, Scoped, table

_SCOPE_KEY = ("run_id", "account", "database", "container")


@table("advice_designs", key=(*_SCOPE_KEY, "design"))
@dataclass(frozen=True, slots=True, kw_only=True)
class AdviceDesignRecord(Scoped):
    """One candidate partition-key design as the advisor measured and judged it."""

    design: str  # its name: "/tenantId", "{tenantId}-{createdAt:yyyy-MM}", "/tenantId, /sessionId"
    kind: str  # advisor.designs: single, synthetic, hierarchical
    origin: str  # configured or proposed
    why: str  # why it was proposed ("" when configured)
    rank: Int32  # 1 is the advice
    partition_key: str  # the definition as the SDK and ARM spell it (JSON), plus a synthetic key's template
    flags: str  # the criteria it fails, "; "-separated ("" when none)
    verdict: str  # the plain-words summary
    workload_ru: float  # RU per query of the mix, weighted by frequency
    throughput: int  # RU/s measured at
    partitions: Int32  # physical partitions at that throughput
    hottest_partition_share: float  # of the sample's writes
    even_share: float  # 1 / partitions
    gini: float
    throttles_at_share_of_ru: float  # container demand / provisioned RU/s at which the hottest throttles
    hottest_key_share_now: float  # of the current writes (the last `recent_days`)
    largest_logical_gb: float  # projected
    logical_limit_gb: float
    days_to_limit: float | None  # None: never at the stated growth
    growth_gb_per_day: float
    cardinality: str  # distinct values per level, " / "-separated
    definition: str  # the container to create (JSON), the winner's only
    migration: str  # the migration steps, one per line, the winner's only
    sample: str | None = None  # the sample's measured bias, one statement per line (None: older advice)


@table("advice_queries", key=(*_SCOPE_KEY, "design", "query"))
@dataclass(frozen=True, slots=True, kw_only=True)
class AdviceQueryRecord(Scoped):
    """One workload query under one design."""

    design: str
    query: str  # the query's name in the config
    weight: float  # its relative frequency (rate_per_s)
    request_charge: float  # RU of one execution
    partitions: Int32  # physical partitions it reached
    total_partitions: Int32
    routing: str  # cosmoscore.routing class: single, targeted, fan-out
    fix: str  # what keeps it off most partitions when it fans out ("" otherwise)
    lint: str  # the lint findings on the winner's container, "; "-separated ("" otherwise)


@table("advice_partitions", key=(*_SCOPE_KEY, "design", "partition"))
@dataclass(frozen=True, slots=True, kw_only=True)
class AdvicePartitionRecord(Scoped):
    """One physical partition's share of the writes under one design (in EPK order)."""

    design: str
    partition: Int32  # 0 .. partitions-1, in EPK order
    write_share: float


ADVICE_DESIGNS = TABLES[AdviceDesignRecord.TABLE]
ADVICE_QUERIES = TABLES[AdviceQueryRecord.TABLE]
ADVICE_PARTITIONS = TABLES[AdvicePartitionRecord.TABLE]
