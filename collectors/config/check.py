"""`[check]` and each query's `budget`: what `ruscope check` holds an application's queries to.

Validated with the rest of the config (`collectors.config.Config.check`, `QuerySpec.budget`), so a mistake is
a located line (`queries.0.budget.routing: Input should be 'single', 'targeted' or 'fan-out'`). The
collectors never read them: the check command (`ruscope.check`) runs the replay and hands the budgets to
`analysis.gate`. Documented with an example in README.md ("RU budgets in CI"):

    [[queries]]
    name = "orders-of-tenant"
    container = "orders"
    sql = "SELECT TOP 20 * FROM c WHERE c.tenantId = @t ORDER BY c.createdAt DESC"
    parameters = { "@t" = "contoso" }
    partition_key = "contoso"
    rate_per_s = 20
    budget = { max_ru = 10, max_partitions = 1, routing = "single", max_ru_per_s = 200, tolerance = 0.05 }

    [check]
    baseline = "ruscope-baseline.json"  # relative to the config; --baseline overrides it
    tolerance = 0.10                    # a query's RU may rise this much over the baseline
    queries = ["orders-of-tenant"]      # optional: the queries checked (default: all of them)
    strict = false                      # true: the advisor's lint warnings fail the check too

    [[check.containers]]                # the embedded emulator's containers (--target emulator)
    id = "orders"
    partition_key = "/tenantId"         # or a list of 2 or 3 paths: a hierarchical key
    throughput = 18000                  # RU/s: sets the physical partitions, as on the service
    sample = "orders.jsonl"             # one document per line, relative to the config
    indexing_policy = { ... }           # optional: the container's policy, as the service takes it
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_TOLERANCE = 0.10  # the default: a regression beyond 10% over the baseline fails
MAX_ROUTING = Literal["single", "targeted", "fan-out"]  # cosmoscore.routing's classes, narrowest first


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QueryBudget(_Model):
    """`budget = {...}` on a `[[queries]]` entry: limits one execution of the query must stay within."""

    max_ru: Annotated[float | None, Field(gt=0)] = None  # RU of one execution, every page and partition
    max_partitions: Annotated[int | None, Field(ge=1)] = None  # physical partitions it reached
    routing: MAX_ROUTING | None = None  # the widest routing allowed: "single" fails a targeted query
    max_ru_per_s: Annotated[float | None, Field(gt=0)] = None  # RU per execution x the query's rate_per_s
    tolerance: Annotated[float | None, Field(ge=0, le=100)] = None  # this query's, over [check]'s


class CheckContainer(_Model):
    """`[[check.containers]]`: a container the embedded emulator creates and loads for the check."""

    id: Annotated[str, Field(min_length=1)]
    partition_key: str | Annotated[list[str], Field(min_length=1, max_length=3)]
    throughput: Annotated[int, Field(ge=400)] = 400  # docs/reference/ru-cost-model.md P9: the 400 RU/s minimum
    autoscale: bool = False  # throughput is then the autoscale maximum
    sample: str | None = None  # JSON Lines, relative to the config; --sample overrides the first container's
    indexing_policy: dict[str, Any] | None = None
    unique_key_policy: dict[str, Any] | None = None
    default_ttl: int | None = None

    @field_validator("partition_key")
    @classmethod
    def _rooted(cls, value: str | list[str]) -> str | list[str]:
        paths = [value] if isinstance(value, str) else value
        bad = [p for p in paths if not p.startswith("/") or len(p) < 2]
        if bad:
            raise ValueError(f"a partition key path starts with '/' and names a property (got {bad[0]!r})")
        return value

    @property
    def key_paths(self) -> list[str]:
        return [self.partition_key] if isinstance(self.partition_key, str) else list(self.partition_key)


class CheckSettings(_Model):
    """`[check]`, as the module docstring shows it."""

    baseline: str | None = None
    tolerance: Annotated[float, Field(ge=0, le=100)] = DEFAULT_TOLERANCE
    queries: list[str] | None = None
    strict: bool = False
    containers: list[CheckContainer] = []
