"""The container to create for the winning design, and how to move the data into it.

A partition key cannot be changed once the container exists (seeds 000/002: the only way out is a new
container and a migration), so the advisor's last word is the new container's definition, as the JSON the
SDK and the REST API accept (`create_container` / `POST dbs/{db}/colls`; ARM takes the same object as
`properties.resource`), and the migration as plain steps.

The indexing policy is the default one (everything indexed) plus the composite indexes the workload's
ORDER BY queries need: an ORDER BY on two or more properties without a matching composite index is
refused by the service, in one partition or across all (cosmos-sql-semantics.md §1.5, §8.3;
ru-cost-model.md Q11).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from advisor.designs import HIERARCHICAL, SYNTHETIC, Design
from advisor.lint import Path, alias_paths, composite_index, doc_path, parse_with_brackets
from cosmoscore.indexing import DEFAULT_POLICY, IndexPolicy

MAX_CONTAINER_ID = 255  # a resource id holds at most 255 characters
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")  # `/ \ # ?` are refused in ids; keep to a safe alphabet


class NamedQuery(Protocol):
    """A workload query (`advisor.measure.WorkloadQuery`): only its name and text are read here, so
    `measure` may use `composite_indexes` too without an import cycle."""

    @property
    def name(self) -> str: ...

    @property
    def sql(self) -> str: ...


@dataclass(frozen=True)
class ContainerDefinition:
    """`body` is the container resource; `notes` say what the application must do for it."""

    body: dict[str, Any]
    notes: tuple[str, ...]

    def json(self) -> str:
        return json.dumps(self.body, indent=2)


def order_by_keys(sql: str) -> tuple[tuple[Path, bool], ...] | None:
    """The document paths and directions of a query's ORDER BY; None when it has none on two or more
    document paths (one path is served by the default range index) or does not parse (lint says why)."""
    query, _ = parse_with_brackets(sql)
    if query is None or len(query.order_by) < 2:
        return None
    aliases = alias_paths(query)
    keys = tuple((doc_path(item.expr, aliases), item.descending) for item in query.order_by)
    if any(path is None or "[]" in path for path, _ in keys):
        return None  # not a plain document path: no composite index can serve it
    return tuple((path, descending) for path, descending in keys if path is not None)


def composite_indexes(queries: Sequence[NamedQuery]) -> tuple[list[list[dict[str, str]]], list[str]]:
    """The `compositeIndexes` the queries' ORDER BY clauses need (one per distinct need: an index also
    serves its inverted directions) and the names of the queries that need them."""
    entries: list[list[dict[str, str]]] = []
    names: list[str] = []
    for q in queries:
        keys = order_by_keys(q.sql)
        if keys is None:
            continue
        names.append(q.name)
        if not IndexPolicy.from_json({**DEFAULT_POLICY, "compositeIndexes": entries}).serves_order_by(keys):
            entries.append(composite_index(keys))
    return entries, names


def indexing_policy(queries: Sequence[NamedQuery]) -> tuple[dict[str, Any], list[str]]:
    """The default policy with the composite indexes the workload needs (and who needs them)."""
    entries, names = composite_indexes(queries)
    return {**copy.deepcopy(DEFAULT_POLICY), "compositeIndexes": entries}, names


def new_container_id(source: str, design: Design) -> str:
    """A name for the new container that says its key: `query-logs-by-tenantId-sessionId`."""
    tail = "-".join(_ID_UNSAFE.sub("-", p) for p in design.properties)
    return f"{source}-by-{tail}"[:MAX_CONTAINER_ID]


def container_definition(design: Design, queries: Sequence[NamedQuery], container_id: str) -> ContainerDefinition:
    """The container resource for `design` (partition key kind and version 2, the indexing policy)."""
    policy, ordered = indexing_policy(queries)
    body = {"id": container_id, "partitionKey": design.definition(), "indexingPolicy": policy}
    notes = list(key_notes(design))
    if policy["compositeIndexes"]:
        names = ", ".join(repr(n) for n in ordered)
        notes.append(f"compositeIndexes: for the ORDER BY of {names}; without them the service refuses those queries.")
    return ContainerDefinition(body, tuple(notes))


def key_notes(design: Design) -> tuple[str, ...]:
    """What writers and readers must do for this kind of key."""
    if design.kind == SYNTHETIC:
        return (
            f"{design.paths[0]} is a synthetic key: Cosmos DB does not compute it. The application computes "
            f"{design.template!r} from each document and writes it into the document as {design.synthetic_property!r} "
            "(and passes it as the partition key of every write).",
            f"Queries pass the key (or filter on c.{design.synthetic_property}, or list the values with "
            f"c.{design.synthetic_property} IN (...)); a filter on one of "
            f"the template's properties alone ({', '.join(design.properties)}) fans out.",
        )
    if design.kind == HIERARCHICAL:
        levels = ", ".join(design.paths)
        return (
            f"A hierarchical key ({levels}): every write gives all {design.levels} levels, in that order "
            "(.NET: PartitionKeyBuilder().Add(...).Add(...); Python: a list of values).",
            f"A query that filters on {design.paths[0]} alone is routed to the partitions holding that prefix; the "
            "20 GB limit applies to each full key (H2, docs/reference/ru-cost-model.md).",
        )
    return (
        f"Every document carries {design.paths[0]}; queries pass it as the partition key (or filter on it) to stay "
        "in one partition.",
    )


def migration_steps(design: Design, source: str, target: str) -> list[str]:
    """The migration in plain words, in order: a container's partition key cannot be changed."""
    prop = design.synthetic_property if design.kind == SYNTHETIC else ""
    computed = f" computing {prop} = {design.template!r} for each," if design.kind == SYNTHETIC else ""
    copy_job = (
        f"a container copy job copies documents as they are, so use it only once every document carries {prop}"
        if design.kind == SYNTHETIC
        else "or run an Azure Cosmos DB container copy job (az cosmosdb copy create, online mode, finished "
        "with az cosmosdb copy complete)"
    )
    return [
        f"Create the container {target!r} with the definition above. {source!r} stays as it is: its partition "
        "key cannot be changed. Give the new container enough RU/s for the copy as well as the traffic.",
        f"Copy {source!r} into {target!r} through the change feed: a change feed processor reads {source!r} from "
        f"the beginning and upserts each document into {target!r},{computed} then keeps following new writes; "
        f"{copy_job}.",
        "Deletes: the change feed (latest-version mode) does not carry them. Until the switch, delete in both "
        "containers, or mark documents deleted (a flag, then a TTL) so the copy sees it.",
        f"Writers write the new key: {_writer_change(design)} Deploy it while they still write to {source!r}.",
        f"Switch the readers to {target!r} once the copy has caught up (the change feed's lag near zero and "
        "SELECT VALUE COUNT(1) FROM c equal in both), with the key in their queries (the fixes above).",
        f"Switch the writers to {target!r}; let the copy drain the last writes to {source!r}, then stop it.",
        f"Retire {source!r}: lower its RU/s, keep it (or a backup) until the new container has served a full "
        "business cycle, then delete it.",
    ]


def _writer_change(design: Design) -> str:
    if design.kind == SYNTHETIC:
        return f"every document gets {design.synthetic_property} = {design.template!r}, passed as the write's partition key."
    if design.kind == HIERARCHICAL:
        return f"every write passes all levels ({', '.join(design.paths)}) as its partition key."
    return f"every write passes {design.paths[0]} as its partition key (and no document lacks it)."


def definition_rows(
    winner: str, kind: str, definition: ContainerDefinition, steps: Sequence[str]
) -> list[dict[str, Any]]:
    """Rows for the advice CSV: the definition (its JSON, then one row per note), then the migration."""
    base = {"rank": 1, "design": winner, "kind": kind}
    rows = [base | {"section": "definition", "step": 0, "text": json.dumps(definition.body)}]
    rows += [base | {"section": "definition", "step": i, "text": n} for i, n in enumerate(definition.notes, 1)]
    rows += [base | {"section": "migration", "step": i, "text": s} for i, s in enumerate(steps, 1)]
    return rows
