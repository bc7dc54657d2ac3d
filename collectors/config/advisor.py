"""`[advisor]`: what `ruscope advise` compares, and the container it compares the designs for.

Validated with the rest of the config (`collectors.config.Config.advisor`), so a mistake is a located line
(`advisor.throughput: Input should be greater than or equal to 400`) whichever command loads the file. The
collectors never read it: the advise command hands its values to the advisor (`advisor.pipeline`), which
knows nothing of the config. Documented with an example in README.md ("The partition-key advisor"):

    [advisor]
    container = "query-logs"      # the [[queries]] on this container are the workload (weight: rate_per_s)
    sample = "logs.jsonl"         # one document per line, relative to the config; --sample overrides it
    throughput = 18000            # RU/s of the container to be (sets the physical partitions)
    growth_gb_per_day = 1.0       # the container's growth, for the 20 GB projection
    scale = 1.0                   # projected container size / the sample's size
    max_load_copies = 1           # load the sample up to `scale` times for query RU (costs time)
    time_property = "createdAt"   # when a document was written (ISO 8601 or epoch seconds)
    recent_days = 1.0             # "now": the sample's last days, for the write skew
    entity_property = "tenantId"  # optional: write weights per value
    entity_rates = { contoso = 2.0 }
    horizon_days = 1095           # a key reaching 20 GB later than this is not flagged
    synthetic_property = "pk"     # where a synthetic key's computed value is stored (/pk)
    propose = 6                   # designs proposed from the sample and the queries (0: none)
    new_container = "logs-v2"     # optional: the new container's id (default: <container>-by-<properties>)

    [[advisor.candidates]]        # optional when propose > 0
    key = "/tenantId"             # a path, a template "{tenantId}-{createdAt:yyyy-MM}", or a list of paths
    name = "by tenant"            # optional
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# the advisor's own cap on proposals (advisor.propose.MAX_PROPOSALS; a test keeps the two equal): each
# proposal costs one in-process load of the sample
DEFAULT_PROPOSALS = 6


class CandidateSettings(BaseModel):
    """`[[advisor.candidates]]`: one design to measure, in the spelling `advisor.designs.parse_design` reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str | Annotated[list[str], Field(min_length=1)]
    name: str | None = None


class AdvisorSettings(BaseModel):
    """`[advisor]`, as the module docstring shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    container: str
    candidates: list[CandidateSettings] = []
    sample: str | None = None
    throughput: Annotated[int, Field(ge=400)] = 18_000  # docs/reference/ru-cost-model.md P9: the 400 RU/s minimum
    growth_gb_per_day: Annotated[float, Field(ge=0)] = 0.0
    scale: Annotated[float, Field(gt=0)] = 1.0
    max_load_copies: Annotated[int, Field(ge=1, le=1000)] = 1
    time_property: str = "createdAt"
    recent_days: Annotated[float, Field(gt=0)] = 1.0
    entity_property: str | None = None
    entity_rates: dict[str, Annotated[float, Field(ge=0)]] = {}
    horizon_days: Annotated[float, Field(gt=0)] = 3 * 365
    synthetic_property: Annotated[str, Field(pattern=r"^[A-Za-z_$][\w$]*$")] = "pk"
    propose: Annotated[int, Field(ge=0, le=20)] = DEFAULT_PROPOSALS
    new_container: str | None = None
