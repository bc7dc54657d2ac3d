"""One check: the replay of the checked queries against a target, into a store of the check's own, read back
as the frames `analysis.gate` judges, with the advisor's lint of each query.

The replay is the product's own (`collectors.replay`): every request and execution is captured as a
scheduled replay captures it, so a query's RU in a check is the figure the Query costs page would show for
the same run. Against the embedded emulator it runs unpaced (nothing else shares that account); against an
account, at the config's `[replay] max_ru_per_s`, as a replay would.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from advisor.lint import INFO, QueryToLint, lint_queries
from analysis.gate.measure import Measured, measured_queries
from analysis.gate.verdicts import Budget, Check
from collectors.config import Config, QuerySpec
from collectors.replay import replay
from ruscope.check.target import EMULATOR, CheckError, Target, container_definition
from store import store_location
from store.reader import read_table


@dataclass(frozen=True)
class Measurement:
    measured: dict[str, Measured]
    lint: dict[str, list[Check]]
    run_id: str
    failed: int


def selected_queries(config: Config) -> list[QuerySpec]:
    """The queries `[check] queries` names (all of the account's when it names none)."""
    wanted = config.check.queries
    return [q for q in config.account().queries if wanted is None or q.name in wanted]


def checked_queries(config: Config) -> list[QuerySpec]:
    """The selected queries, each asking for index metrics: a regression's message names the composite
    index the service says is missing."""
    chosen = selected_queries(config)
    if not chosen:
        raise CheckError("queries: nothing to check: add [[queries]] to the config")
    return [q.model_copy(update={"index_metrics": True, "query_metrics": True}) for q in chosen]


def budgets_of(queries: list[QuerySpec]) -> dict[str, Budget]:
    return {
        q.name: Budget(
            q.budget.max_ru, q.budget.max_partitions, q.budget.routing, q.budget.max_ru_per_s, q.budget.tolerance
        )
        for q in queries
        if q.budget is not None
    }


def _config_for(config: Config, target: Target, queries: list[QuerySpec]) -> Config:
    """The config the replay runs: the checked queries only; against the embedded emulator, its endpoint,
    unpaced (`inf`: the emulator serves this check alone)."""
    update: dict[str, object] = {"queries": queries}
    if target.kind == EMULATOR:
        if config.cosmos is None:
            raise CheckError("cosmos: the embedded emulator stands in for the [cosmos] account; give one")
        update["cosmos"] = config.cosmos.model_copy(update={"endpoint": target.endpoint})
        update["replay"] = config.replay.model_copy(update={"max_ru_per_s": math.inf, "budget_ru": None})
    return config.model_copy(update=update)


def measure(
    config: Config,
    target: Target,
    store_dir: Path,
    *,
    out: Callable[[str], None],
    err: Callable[[str], None],
) -> Measurement:
    """Replay the checked queries once against `target` into `store_dir`; what each measured and its lint."""
    queries = checked_queries(config)
    store = store_location(store_dir)
    summary = replay(
        _config_for(config, target, queries),
        store=store,
        credential=target.credential,
        progress=False,
        out=out,
        err=err,
        query_lines=False,  # the verdicts read the executions back from the store
    )
    executions = read_table(store, "executions", run_ids=[summary.run_id])
    requests = read_table(store, "requests", run_ids=[summary.run_id])
    measured = measured_queries(executions, requests, {q.name: q.rate_per_s for q in queries})
    return Measurement(measured, lint_checks(config, queries), summary.run_id, summary.failed)


def lint_checks(config: Config, queries: list[QuerySpec]) -> dict[str, list[Check]]:
    """The advisor's lint of each query, on its container's definition where `[[check.containers]]` gives it
    (else routing and indexes are judged on defaults): warnings and errors are "warn", info a note."""
    definitions = {c.id: container_definition(c) for c in config.check.containers}
    to_lint = []
    for q in queries:
        definition: Mapping[str, object] = definitions.get(q.container, {})
        key = definition.get("partitionKey")
        to_lint.append(
            QueryToLint(
                q.name,
                q.sql,
                q.parameters,
                partition_key_paths=list(key["paths"]) if isinstance(key, dict) else [],
                indexing_policy=definition.get("indexingPolicy"),  # type: ignore[arg-type]
                partition_key=q.partition_key,
            )
        )
    out: dict[str, list[Check]] = {}
    for finding in lint_queries(to_lint):
        message = f"{finding.message} {finding.fix}".strip()
        check = Check(f"lint.{finding.code}", "note" if finding.severity == INFO else "warn", message)
        out.setdefault(finding.query, []).append(check)
    return out
