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
    horizon_days = 1095           # a key reaching 20 GB later than this is not flagged
    synthetic_property = "pk"     # where a synthetic key's computed value is stored (/pk)

    propose = 6                   # designs proposed from the sample and the queries (0: none)
    new_container = "logs-v2"     # optional: the new container's id (default: <container>-by-<properties>)

    [[advisor.candidates]]       # optional when propose > 0
    key = "/tenantId"             # a path, a template "{tenantId}-{createdAt:yyyy-MM}", or a list of paths
    name = "by tenant"            # optional

Besides the ranking, the advice holds the winner's container definition (the JSON to create), the lint of
the workload's queries against that definition, and the migration outline: `advice_text` prints them and
`Advice.frame` holds them as rows (`section` design, query, definition, migration, lint: one CSV table).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.definition import (
    ContainerDefinition,
    container_definition,
    definition_rows,
    migration_steps,
    new_container_id,
)
from advisor.designs import Design, DesignError, parse_design
from advisor.lint import Finding, QueryToLint, lint_queries
from advisor.measure import Workload, WorkloadQuery
from advisor.propose import MAX_PROPOSALS, Proposal, propose
from advisor.verdict import Verdict, advise, verdict_rows
from collectors.config import Config, ConfigError, parse_config
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
    candidates: list[Candidate] = []
    sample: str | None = None
    throughput: Annotated[int, Field(ge=400)] = 18_000  # P9, docs/reference/ru-cost-model.md: 400 RU/s minimum
    growth_gb_per_day: Annotated[float, Field(ge=0)] = 0.0
    scale: Annotated[float, Field(gt=0)] = 1.0
    max_load_copies: Annotated[int, Field(ge=1, le=1000)] = 1
    time_property: str = "createdAt"
    recent_days: Annotated[float, Field(gt=0)] = 1.0
    entity_property: str | None = None
    entity_rates: dict[str, Annotated[float, Field(ge=0)]] = {}
    horizon_days: Annotated[float, Field(gt=0)] = 3 * 365
    synthetic_property: Annotated[str, Field(pattern=r"^[A-Za-z_$][\w$]*$")] = "pk"
    propose: Annotated[int, Field(ge=0, le=20)] = MAX_PROPOSALS
    new_container: str | None = None


@dataclass(frozen=True)
class Advice:
    verdicts: list[Verdict]
    frame: pd.DataFrame  # rows by `section`: design, query (verdict_rows), definition, migration, lint
    proposals: list[Proposal] = field(default_factory=list)
    definition: ContainerDefinition | None = None  # the winner's container to create
    migration: list[str] = field(default_factory=list)
    lint: list[Finding] = field(default_factory=list)  # the workload's queries on the winner's definition
    settings: AdvisorSettings | None = None  # the [advisor] section it was made with


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
    if not settings.candidates and not settings.propose:
        raise AdviseError(f"{path}: advisor: nothing to compare: add [[advisor.candidates]] or set propose above 0")
    return settings, workload_of(settings, workload_queries(config, settings.container))


def workload_queries(config: Config, container: str) -> tuple[WorkloadQuery, ...]:
    """The config's `[[queries]]` on `container`, weighted by their `rate_per_s` (1 when unset)."""
    return tuple(
        WorkloadQuery(q.name, q.sql, dict(q.parameters), q.rate_per_s if q.rate_per_s else 1.0)
        for q in config.queries
        if q.container == container
    )


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
        horizon_days=settings.horizon_days,
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
    """Measure every `[[advisor.candidates]]` and the proposed designs on the sample (`--sample`, else
    `advisor.sample`, relative to the config's folder) and the workload; raises `AdviseError` with one
    located message."""
    settings, workload = read_advisor_config(config_path)
    source = sample or (config_path.parent / settings.sample if settings.sample else None)
    if source is None:
        raise AdviseError(f"{config_path}: no sample: pass --sample docs.jsonl or set advisor.sample")
    docs = read_sample(source)
    if not docs:
        raise AdviseError(f"{source}: the document sample is empty: nothing to measure a design on")
    try:
        return advise_documents(settings, workload, docs)
    except SqlError as exc:
        raise AdviseError(f"{config_path}: a query of the workload: {exc}") from None


def advise_documents(settings: AdvisorSettings, workload: Workload, docs: list[dict[str, Any]]) -> Advice:
    """The advice on documents already read (a JSONL file or a live container's sample)."""
    try:
        path = f"/{settings.synthetic_property}"
        configured = [parse_design(c.key, c.name, synthetic_path=path) for c in settings.candidates]
        proposals = propose(docs, workload.queries, configured, settings.propose)
        verdicts = advise([*configured, *(p.design for p in proposals)], docs, workload)
    except DesignError as exc:
        raise AdviseError(str(exc)) from None
    winner = verdicts[0].design
    target = settings.new_container or new_container_id(settings.container, winner)
    definition = container_definition(winner, workload.queries, target)
    steps = migration_steps(winner, settings.container, target)
    findings = lint_on(verdicts[0], workload, definition)
    frame = pd.DataFrame(
        [
            *design_origins(verdict_rows(verdicts), proposals),
            *definition_rows(winner.name, winner.kind, definition, steps),
            *lint_rows(winner, findings),
        ]
    )
    counts = {c: "Int64" for c in ("rank", "partitions", "step") if c in frame}  # 3, not 3.0, beside blank cells
    frame = frame.astype(counts)
    return Advice(verdicts, frame, proposals, definition, steps, findings, settings)


def lint_on(winner: Verdict, workload: Workload, definition: ContainerDefinition) -> list[Finding]:
    """The workload's queries linted against the new container (its key paths and indexing policy); a
    query the design pins by its own key (a synthetic key derived from the filters) is taken as passing it."""
    pinned = {q.name: q.partition_key for q in winner.measure.queries}
    return lint_queries(
        QueryToLint(
            q.name,
            q.sql,
            q.parameters,
            partition_key_paths=winner.design.paths,
            indexing_policy=definition.body["indexingPolicy"],
            partition_key=pinned.get(q.name),
        )
        for q in workload.queries
    )


def design_origins(rows: list[dict[str, Any]], proposals: list[Proposal]) -> list[dict[str, Any]]:
    """Tag each design's rows `configured` or `proposed` (with why)."""
    why = {p.design.name: p.reason for p in proposals}
    return [
        row | {"origin": "proposed" if row["design"] in why else "configured", "why": why.get(row["design"], "")}
        for row in rows
    ]


def lint_rows(winner: Design, findings: list[Finding]) -> list[dict[str, Any]]:
    base = {"rank": 1, "design": winner.name, "kind": winner.kind, "section": "lint"}
    return [
        base | {"query": f.query, "code": f.code, "severity": f.severity, "text": f.message, "fix": f.fix}
        for f in findings
    ]


def advice_text(advice: Advice) -> str:
    """The plain-words report the command prints: the ranking, each verdict and fix, then the winner's
    container definition, the lint of the queries on it and the migration outline."""
    why = {p.design.name: p.reason for p in advice.proposals}
    lines = []
    for v in advice.verdicts:
        lines.append(f"{v.rank}. {v.summary}")
        if v.design.name in why:
            lines.append(f"   proposed: {why[v.design.name]}")
        lines += [f"   fix {f.query!r} ({f.routing}): {f.fix}" for f in v.fixes]
    if advice.definition is not None and advice.verdicts:
        lines += ["", f"Container to create for {advice.verdicts[0].design.name}:", advice.definition.json()]
        lines += [f"  note: {n}" for n in advice.definition.notes]
        lines += ["", "Lint of the workload's queries on that container:"]
        lines += [f"  {f.query!r} {f.severity} {f.code}: {f.message} Fix: {f.fix}" for f in advice.lint] or ["  none"]
    if advice.migration:
        lines += ["", "Migration (a partition key cannot be changed):"]
        lines += [f"  {i}. {step}" for i, step in enumerate(advice.migration, 1)]
    return "\n".join(lines)
