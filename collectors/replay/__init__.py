"""The replay collector: run the configured read-only queries with the real azure-cosmos SDK and record
the RU of every HTTP request and of every execution, per physical partition.

Every request is captured by `collectors.replay.capture` (client-level hooks) and paced by
`collectors.replay.pacing` (an RU/s ceiling per account, `[replay] max_ru_per_s`); every execution becomes an
`ExecutionRecord` built here from the requests it sent. The run (run id, journaling to the pending
segment, sealing, budget, stop signal, how it waits, summary) is `collectors.run`'s. A run ends with what
the replay spent per account and container and the pacing in force (`collectors.replay.summary`).

Layers: `fetch_*` talk to the service, `execution_record` is pure, `Replay` walks the queries.
To add a per-request field: add it to `RequestRecord` (store/records.py) and fill it in
`collectors.replay.capture.request_fields`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from azure.cosmos import ContainerProxy, CosmosClient
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from collectors.client import fetch_client
from collectors.config import Account, Config, QuerySpec
from collectors.credentials import account_credential
from collectors.errors import describe_error
from collectors.registry import Options, run_collector
from collectors.replay import routing
from collectors.replay.capture import Capture
from collectors.replay.pacing import Pacer
from collectors.replay.summary import Spend, spend_lines, summary_line
from collectors.run import BUDGET, SEAL_SECONDS, BudgetReached, Run, RunSummary, Stopped, Wait
from cosmoscore import routing as rules
from cosmoscore.epk import EpkRange
from cosmoscore.keys import key_text
from store import ExecutionRecord, RequestRecord, StoreLocation

OK, ERROR, STOPPED = "ok", "error", "stopped"
TOO_MANY_REQUESTS = 429  # cosmos-errors-and-stats.md §1.4: the SDK retries it, then raises it with this status
Advance = Callable[[int], object]


@dataclass(frozen=True)
class Target:
    """What a query runs against: the container and, in per-feed-range mode, one feed range."""

    container: ContainerProxy | None
    key_definition: Mapping[str, Any]
    ranges: list[EpkRange]
    feed_range: Mapping[str, Any] | None = None
    label: str = ""


def _query_kwargs(spec: QuerySpec, feed_range: Mapping[str, Any] | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "populate_query_metrics": spec.query_metrics,
        "populate_index_metrics": spec.index_metrics,
    }
    if spec.parameters:
        kwargs["parameters"] = spec.parameter_list
    if spec.max_item_count is not None:
        kwargs["max_item_count"] = spec.max_item_count
    if spec.partition_key is not None:
        kwargs["partition_key"] = spec.partition_key
    elif feed_range is not None:
        kwargs["feed_range"] = feed_range
    else:
        kwargs["enable_cross_partition_query"] = True
    return kwargs


def fetch_query(spec: QuerySpec, target: Target, check: Callable[[], None]) -> int:
    """Run the query to its last page; returns the rows it produced. `check` runs after every page
    (budget, stop signal) and may raise to end the execution early."""
    if target.container is None:
        raise LookupError("no container")
    items = 0
    pages = target.container.query_items(spec.sql, **_query_kwargs(spec, target.feed_range)).by_page()
    for page in pages:
        items += sum(1 for _ in page)
        check()
    return items


def fetch_targets(client: CosmosClient, database: str, spec: QuerySpec) -> list[Target]:
    """The container's key definition and feed ranges; one target per feed range in that mode."""
    container = client.get_database_client(database).get_container_client(spec.container)
    try:
        key_definition = container.read()["partitionKey"]
    except CosmosResourceNotFoundError:
        raise LookupError(_not_found(client, database, spec.container)) from None
    raw_ranges = list(container.read_feed_ranges())
    ranges = routing.feed_ranges_of(raw_ranges)
    if spec.mode == "as-is":
        return [Target(container, key_definition, ranges)]
    return [
        Target(container, key_definition, ranges, raw, routing.label(routing.feed_ranges_of([raw])[0]))
        for raw in raw_ranges
    ]


def _not_found(client: CosmosClient, database: str, container: str) -> str:
    """Which of the two is missing: the database (every container of it is), or the container."""
    try:
        client.get_database_client(database).read()
    except CosmosResourceNotFoundError:
        return f"database {database!r} not found"
    return f"container {container!r} not found in database {database!r}"


def _sum_or_none(values: Iterable[int | None]) -> int | None:
    present = [int(v) for v in values if v is not None]
    return sum(present) if present else None


def _predicted(spec: QuerySpec, target: Target) -> str:
    """The routing class the key definition and the SQL filter predict (one feed range: single)."""
    if target.feed_range is not None:
        return rules.SINGLE
    reached = rules.predict_partitions(
        spec.sql, spec.parameters, spec.partition_key, target.key_definition, target.ranges
    )
    return rules.predicted_class(reached, len(target.ranges))


def execution_record(
    spec: QuerySpec,
    target: Target,
    requests: list[RequestRecord],
    *,
    ids: Mapping[str, Any],
    items: int,
    status: str,
    error: str,
    started: float,
    duration_ms: float,
) -> ExecutionRecord:
    """One `executions` record from the requests an execution sent (pure); `ids` names the run, the
    account, database and container, the execution and its repeat."""
    pages = [r for r in requests if r.request_kind == "page" and r.status == 200]
    hit = sorted({r.pkrange_id for r in pages if r.pkrange_id}, key=lambda p: (len(p), p))
    predicted = _predicted(spec, target)
    observed = rules.routing_class(len(hit), len(target.ranges)) if status == OK else rules.UNKNOWN
    throttled = [r for r in requests if r.status == 429]
    return ExecutionRecord(
        **ids,
        time=datetime.fromtimestamp(started, UTC),
        query_name=spec.name,
        mode=spec.mode,
        feed_range=target.label,
        sql=spec.sql,
        partition_key="" if spec.partition_key is None else key_text(json.dumps(spec.partition_key)),
        status=status,
        error=error,
        total_ru=round(sum(r.request_charge for r in requests), 2),
        pages=len(pages),
        round_trips=len(requests),
        items=items,
        pkranges=",".join(hit),
        pkrange_count=len(hit),
        routing_predicted=predicted,
        routing_observed=observed,
        routing_mismatch=rules.UNKNOWN not in (predicted, observed) and predicted != observed,
        retrieved_documents=_sum_or_none(r.retrieved_document_count for r in pages),
        output_documents=_sum_or_none(r.output_document_count for r in pages),
        throttled=len(throttled),
        retry_after_ms_total=float(sum(r.retry_after_ms or 0 for r in throttled)),
        duration_ms=duration_ms,
        rate_per_s=spec.rate_per_s,
    )


@dataclass
class Replay:
    """One replay of one account's selected queries, inside a `Run`."""

    account: Account
    run: Run
    capture: Capture
    last_ru: dict[str, float] = field(default_factory=dict)  # per query: what the next execution may cost
    done: list[ExecutionRecord] = field(default_factory=list)  # executions of the query in progress
    spend: Spend = field(default_factory=Spend)  # what the run's requests charged, per container
    item_lines: bool = True  # `Options.item_lines`: each query's closing line (computed only when shown)

    def store(self, requests: Iterable[RequestRecord]) -> None:
        """Journal the captured requests, and count what they charged."""
        for request in requests:
            self.run.record(request)
            self.spend.add(request)

    def execute(self, spec: QuerySpec, target: Target, execution_id: str, repeat: int) -> None:
        """One execution: run it, then turn its captured requests into an executions record."""
        self.capture.context = {"query_name": spec.name, "execution_id": execution_id, "container": spec.container}
        started, t0 = self.run.clock(), time.perf_counter()
        status, error, items, throttled_out = OK, "", 0, False
        try:
            items = fetch_query(spec, target, self.run.check)
        except BudgetReached:
            status, error = BUDGET, f"stopped: the run reached its budget of {self.run.budget:g} RU"
            self.run.summary.ended_by = BUDGET
        except Stopped:
            status, error = STOPPED, "stopped by a signal before the last page"
        except Exception as exc:  # every failure of one query is recorded, and the run goes on
            status, error = ERROR, self.describe(exc)
            throttled_out = getattr(exc, "status_code", None) == TOO_MANY_REQUESTS
        outcome = {"items": items, "status": status, "error": error, "started": started}
        duration_ms = (time.perf_counter() - t0) * 1000
        self.conclude(
            spec, target, execution_id, repeat, duration_ms=duration_ms, throttled_out=throttled_out, **outcome
        )

    def conclude(
        self,
        spec: QuerySpec,
        target: Target,
        execution_id: str,
        repeat: int,
        *,
        throttled_out: bool = False,
        **outcome: Any,
    ) -> None:
        """Record the requests captured since the last execution and this execution's record."""
        requests = self.capture.take()
        self.store(requests)
        mine = [r for r in requests if r.execution_id == execution_id]
        ids = {**self.capture.common, "container": spec.container, "execution_id": execution_id, "repeat": repeat}
        record = execution_record(spec, target, mine, ids=ids, **outcome)
        self.run.record(record)
        self.done.append(record)
        self.last_ru[spec.name] = record.total_ru
        self.run.count(failed=record.status == ERROR, throttled_out=throttled_out)

    def describe(self, exc: BaseException) -> str:
        return describe_error(exc, self.account.endpoint, key_env=self.account.key_env)

    def replay_query(
        self, index: int, spec: QuerySpec, client: CosmosClient | None, client_error: str, advance: Advance
    ) -> None:
        """Every execution of one query (`advance` counts repeats); a failure is an error record and a line
        (no line when the account itself failed: `collect` said so once)."""
        database = self.account.database_of(spec)
        self.capture.common = {**self.capture.common, "database": database}
        self.capture.context = {"query_name": spec.name, "execution_id": "", "container": spec.container}
        try:
            if client is None:
                raise LookupError(client_error)
            targets = fetch_targets(client, database, spec)
        except Exception as exc:  # one line, an error record, and the run goes on
            error = str(exc) if isinstance(exc, LookupError) else self.describe(exc)
            outcome: dict[str, Any] = {
                "items": 0,
                "status": ERROR,
                "error": error,
                "started": self.run.clock(),
                "duration_ms": 0.0,
            }
            self.conclude(spec, Target(None, {}, []), f"{index:03d}-0-0", 0, **outcome)
            if client is not None:
                self.run.err(f"query {spec.name!r}: {error}")
            self.done.clear()
            advance(spec.repeat)
            return
        for repeat in range(spec.repeat):
            for n, target in enumerate(targets):
                if self.run.stop.is_set() or self.run.over_budget(self.last_ru.get(spec.name, 0.0)):
                    break
                self.execute(spec, target, f"{index:03d}-{repeat}-{n}", repeat)
                advance(1 if n == len(targets) - 1 else 0)
        self.report(spec, [e for e in self.done if e.query_name == spec.name])
        self.done.clear()
        self.run.seal(every=SEAL_SECONDS)

    def report(self, spec: QuerySpec, executions: list[ExecutionRecord]) -> None:
        """One line per query: its cost and routing, or each distinct error once."""
        for error in dict.fromkeys(e.error for e in executions if e.status == ERROR):
            self.run.err(f"query {spec.name!r}: {error}")
        line = summary_line(spec, executions) if self.item_lines else None
        if line:
            self.run.out(line)


class ReplayCollector:
    """`ruscope replay` and the replay part of `ruscope collect`."""

    name = "replay"
    item = "execution"

    def budget(self, config: Config) -> float | None:
        return config.replay.budget_ru

    def collect(self, config: Config, run: Run, options: Options) -> None:
        """Replay the account's queries (or only the one named) once. An account that cannot be reached
        (or whose key is missing) is one line naming it; every query still gets its error record."""
        account = config.account(options.account)
        specs = [q for q in account.queries if options.only is None or q.name == options.only]
        common = {"run_id": run.run_id, "account": account.name, "database": account.databases[0]}
        pacer = Pacer(account.replay_max_ru_per_s, run.clock, run.pause)
        capture = Capture(common, clock=run.clock, charge=_charges(run, pacer), waiting=run.waiting)
        replay = Replay(account, run, capture, item_lines=options.item_lines)
        client, client_error = None, ""
        try:
            client = fetch_client(
                account.connection,
                options.credential or account_credential(account),
                on_request=_paced(pacer, capture.on_request),
                on_response=capture.on_response,
            )
        except Exception as exc:  # no client: every query gets the same error record, and one line
            client_error = replay.describe(exc)
            run.err(f"account {account.name!r}: {client_error}")
        with run.progress(sum(q.repeat for q in specs)) as advance:
            for index, spec in enumerate(specs):
                if run.stop.is_set() or run.over_budget(replay.last_ru.get(spec.name, 0.0)):
                    break
                replay.replay_query(index, spec, client, client_error, advance)
        replay.store(capture.take())
        for line in spend_lines(account.name, replay.spend, pacer.rate, pacer.waited_s):
            run.out(line)


def _charges(run: Run, pacer: Pacer) -> Callable[[float], None]:
    """A response's RU goes to the run's meter (its budget) and to the pacing bucket."""

    def charge(ru: float) -> None:
        run.charge(ru)
        pacer.charge(ru)

    return charge


def _paced(pacer: Pacer, hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """The request hook, after the pacing's wait (so a request's duration does not include it)."""

    def on_request(pipeline_request: Any) -> None:
        pacer.before_request()
        hook(pipeline_request)

    return on_request


COLLECTOR = ReplayCollector()


def replay(
    config: Config,
    *,
    store: StoreLocation,
    only: str | None = None,
    account: str | None = None,
    credential: Any = None,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
    progress: bool = True,
    out: Callable[[str], None] = print,
    err: Callable[[str], None] = print,
    sleep: Wait | None = None,
    waited: Wait | None = None,
    query_lines: bool = True,
) -> RunSummary:
    """Replay one account's queries once (`account`: its name; None: the first or only one); every request
    and execution lands in the store. `collectors.fleet` runs many accounts. `sleep`/`waited`: how to wait
    on a simulated `clock` (`collectors.run`). `query_lines` False leaves out each query's closing line (a
    caller that reads the executions back from the store, `ruscope check`, skips computing them)."""
    return run_collector(
        COLLECTOR,
        config,
        store=store,
        stop=stop,
        clock=clock,
        progress=progress,
        out=out,
        err=err,
        options=Options(only=only, account=account, credential=credential, item_lines=query_lines),
        sleep=sleep,
        waited=waited,
    )
