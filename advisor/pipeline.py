"""The advice on a document sample: candidate designs (configured and proposed) measured, judged and
ranked, the winner's container definition, the lint of the workload's queries on it, the migration outline.

`advise_documents` takes plain values (the documents, the `Workload`, the container and the candidates in
their config spelling), so the advisor knows nothing of the config file: the `ruscope advise` command
reads `[advisor]` (`collectors.config.advisor`) and hands its values here. `advice_text` prints the advice
and `Advice.frame` holds it as rows (`section` design, query, definition, migration, lint: one CSV table);
`advisor.tables` turns it into the store's `advice_*` rows. `read_sample` reads the documents of a JSONL
file (one JSON object a line, as `collectors.sample` writes them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from advisor.definition import (
    ContainerDefinition,
    container_definition,
    definition_rows,
    migration_steps,
    new_container_id,
)
from advisor.designs import Design, DesignError, parse_design
from advisor.lint import Finding, QueryToLint, lint_queries
from advisor.measure import Workload
from advisor.propose import MAX_PROPOSALS, Proposal, propose
from advisor.verdict import Verdict, advise, verdict_rows
from cosmoscore.limits import Limits, nesting_depth
from cosmoscore.sql import SqlError

CandidateKey = str | Sequence[str]  # a path, a template "{tenantId}-{createdAt:yyyy-MM}", or a list of paths


MAX_DEPTH = Limits().max_document_depth  # the service refuses deeper documents (cosmoscore.limits cites it)
TOO_DEEP = f"the document nests objects or arrays deeper than {MAX_DEPTH} levels, which Cosmos DB does not store"


class AdviseError(Exception):
    """A candidate, a sample or a query the advisor cannot measure: one message for the user (`ruscope advise`
    raises it for an unusable config or sample too: exit 2)."""


@dataclass(frozen=True)
class Advice:
    container: str  # the container the designs are for
    workload: Workload  # what they were measured against
    verdicts: list[Verdict]
    frame: pd.DataFrame  # rows by `section`: design, query (verdict_rows), definition, migration, lint
    proposals: list[Proposal] = field(default_factory=list)
    definition: ContainerDefinition | None = None  # the winner's container to create
    migration: list[str] = field(default_factory=list)
    lint: list[Finding] = field(default_factory=list)  # the workload's queries on the winner's definition
    sample: tuple[str, ...] = ()  # the sample's bias as its reader measured it (`collectors.sample`)


def read_sample(path: Path) -> list[dict[str, Any]]:
    """Documents from a JSONL file (blank lines skipped); a line that is not a JSON object, or one nesting
    deeper than Cosmos DB stores (`Limits.max_document_depth`), is an error naming the line."""
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
        except RecursionError:  # the parser recurses per level: far deeper than any document may be
            raise AdviseError(f"{path}:{number}: {TOO_DEEP}") from None
        if not isinstance(doc, Mapping):
            raise AdviseError(f"{path}:{number}: a document is a JSON object, not {type(doc).__name__}")
        if nesting_depth(doc, MAX_DEPTH + 1) - 1 > MAX_DEPTH:  # the document object itself is not a level
            raise AdviseError(f"{path}:{number}: {TOO_DEEP}")
        docs.append(dict(doc))
    return docs


def advise_documents(
    docs: list[dict[str, Any]],
    workload: Workload,
    *,
    container: str,
    candidates: Sequence[tuple[CandidateKey, str | None]] = (),
    synthetic_property: str = "pk",
    proposals: int = MAX_PROPOSALS,
    new_container: str | None = None,
) -> Advice:
    """The advice on documents already read (a JSONL file or a live container's sample): every candidate
    `(key, name)` and up to `proposals` designs proposed from the documents and the queries. A synthetic
    key's value is stored at `/synthetic_property`; the new container is `new_container`, else named after
    the winner. Raises `AdviseError` with one message."""
    try:
        return _advise(docs, workload, container, candidates, synthetic_property, proposals, new_container)
    except DesignError as exc:
        raise AdviseError(str(exc)) from None
    except SqlError as exc:
        raise AdviseError(f"a query of the workload: {exc}") from None


def _advise(
    docs: list[dict[str, Any]],
    workload: Workload,
    container: str,
    candidates: Sequence[tuple[CandidateKey, str | None]],
    synthetic_property: str,
    proposals: int,
    new_container: str | None,
) -> Advice:
    path = f"/{synthetic_property}"
    configured = [parse_design(key, name, synthetic_path=path) for key, name in candidates]
    proposed = propose(docs, workload.queries, configured, proposals)
    verdicts = advise([*configured, *(p.design for p in proposed)], docs, workload)
    winner = verdicts[0].design
    target = new_container or new_container_id(container, winner)
    definition = container_definition(winner, workload.queries, target)
    steps = migration_steps(winner, container, target)
    findings = lint_on(verdicts[0], workload, definition)
    frame = pd.DataFrame(
        [
            *design_origins(verdict_rows(verdicts), proposed),
            *definition_rows(winner.name, winner.kind, definition, steps),
            *lint_rows(winner, findings),
        ]
    )
    counts = {c: "Int64" for c in ("rank", "partitions", "step") if c in frame}  # 3, not 3.0, beside blank cells
    frame = frame.astype(counts)
    return Advice(container, workload, verdicts, frame, proposed, definition, steps, findings)


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
    """The plain-words report the command prints: the sample's bias (as its reader stated it), the
    ranking, each verdict and fix, then the winner's container definition, the lint of the queries on it
    and the migration outline."""
    why = {p.design.name: p.reason for p in advice.proposals}
    lines = ["The sample:", *(f"  {line}" for line in advice.sample), ""] if advice.sample else []
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
