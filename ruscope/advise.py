"""`ruscope advise`: candidate partition keys measured on a JSONL sample and the config's queries.

The command is thin: read the `[advisor]` section and the `[[queries]]` of the config, read the sample,
let `advisor.verdict.advise` measure and judge every candidate, hand back the rows for a CSV. The
`[advisor]` section (validated here, so the rest of the config loads as it always has):

    [advisor]
    container = "query-logs"      # the [[queries]] on this container are the workload (weight: rate_per_s)
    sample = "logs.jsonl"         # one document per line; --sample overrides it
    throughput = 18000            # RU/s of the container to be (sets the physical partitions)
    growth_gb_per_day = 1.0       # the container's growth, for the 20 GB projection
    scale = 1.0                   # projected container size / the sample's size
    max_load_copies = 1           # load the sample up to `scale` times for query RU (costs time)
    time_property = "createdAt"   # when a document was written (ISO 8601 or epoch seconds)
    recent_days = 1.0             # "now": the sample's last days, for the write skew
    entity_property = "tenantId"  # optional: write weights per value
    entity_rates = { contoso = 2.0 }

    [[advisor.candidates]]
    key = "/tenantId"             # a path, a template "{tenantId}-{createdAt:yyyy-MM}", or a list of paths
    name = "by tenant"            # optional
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.designs import DesignError, parse_design
from advisor.measure import Workload, WorkloadQuery
from advisor.verdict import Verdict, advise, verdict_rows
from collectors.config import ConfigError, parse_config
from collectors.config_errors import format_validation_error
from cosmoscore.sql import SqlError


class AdviseError(Exception):
    """Bad config, sample or candidate: one message, exit code 2."""


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str | Annotated[list[str], Field(min_length=1)]
    name: str | None = None


class AdvisorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    container: str
    candidates: Annotated[list[Candidate], Field(min_length=1)]
    sample: str | None = None
    throughput: Annotated[int, Field(ge=400)] = 18_000  # P9, docs/reference/ru-cost-model.md: 400 RU/s minimum
    growth_gb_per_day: Annotated[float, Field(ge=0)] = 0.0
    scale: Annotated[float, Field(gt=0)] = 1.0
    max_load_copies: Annotated[int, Field(ge=1, le=1000)] = 1
    time_property: str = "createdAt"
    recent_days: Annotated[float, Field(gt=0)] = 1.0
    entity_property: str | None = None
    entity_rates: dict[str, Annotated[float, Field(ge=0)]] = {}


@dataclass(frozen=True)
class Advice:
    verdicts: list[Verdict]
    frame: pd.DataFrame  # verdict_rows: a `design` row per candidate, a `query` row per query under it


def read_advisor_config(path: Path) -> tuple[AdvisorSettings, Workload]:
    """The `[advisor]` section and the workload its container's `[[queries]]` make."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AdviseError(f"{path}: cannot read it ({exc})") from None
    section = data.pop("advisor", None)
    if section is None:
        raise AdviseError(f"{path}: no [advisor] section (container and [[advisor.candidates]] to compare)")
    try:
        settings = AdvisorSettings.model_validate(section)
        config = parse_config(data, path)
    except ValidationError as exc:
        message = format_validation_error(path, exc, section, root=AdvisorSettings)
        raise AdviseError(message.replace(f"{path}: ", f"{path}: advisor.")) from None
    except ConfigError as exc:
        raise AdviseError(str(exc)) from None
    queries = tuple(
        WorkloadQuery(q.name, q.sql, dict(q.parameters), q.rate_per_s if q.rate_per_s else 1.0)
        for q in config.queries
        if q.container == settings.container
    )
    return settings, workload_of(settings, queries)


def workload_of(settings: AdvisorSettings, queries: tuple[WorkloadQuery, ...]) -> Workload:
    return Workload(
        queries=queries,
        throughput=settings.throughput,
        growth_gb_per_day=settings.growth_gb_per_day,
        scale=settings.scale,
        max_load_copies=settings.max_load_copies,
        time_property=settings.time_property,
        recent_days=settings.recent_days,
        entity_property=settings.entity_property,
        entity_rates=settings.entity_rates,
    )


def read_sample(path: Path) -> list[dict[str, Any]]:
    """Documents from a JSONL file (blank lines skipped); a line that is not a JSON object is an error."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise AdviseError(f"{path}: cannot read the sample ({exc})") from None
    docs = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AdviseError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(doc, Mapping):
            raise AdviseError(f"{path}:{number}: a document is a JSON object, not {type(doc).__name__}")
        docs.append(dict(doc))
    return docs


def advise_from_config(config_path: Path, sample: Path | None = None) -> Advice:
    """Measure every `[[advisor.candidates]]` on the sample (`--sample`, else `advisor.sample`, relative
    to the config's folder) and the workload; raises `AdviseError` with one located message."""
    settings, workload = read_advisor_config(config_path)
    source = sample or (config_path.parent / settings.sample if settings.sample else None)
    if source is None:
        raise AdviseError(f"{config_path}: no sample: pass --sample docs.jsonl or set advisor.sample")
    docs = read_sample(source)
    try:
        designs = [parse_design(c.key, c.name) for c in settings.candidates]
        verdicts = advise(designs, docs, workload)
    except DesignError as exc:
        raise AdviseError(f"{source}: {exc}" if not docs else str(exc)) from None
    except SqlError as exc:
        raise AdviseError(f"{config_path}: a query of the workload: {exc}") from None
    return Advice(verdicts, pd.DataFrame(verdict_rows(verdicts)))


def advice_text(advice: Advice) -> str:
    """The plain-words report the command prints: the ranking, each verdict, each fix."""
    lines = []
    for v in advice.verdicts:
        lines.append(f"{v.rank}. {v.summary}")
        lines += [f"   fix {f.query!r} ({f.routing}): {f.fix}" for f in v.fixes]
    return "\n".join(lines)
