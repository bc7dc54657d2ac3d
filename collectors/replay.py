"""The replay collector: run the configured read-only queries with the real azure-cosmos SDK and record
the RU of every HTTP request and of every execution, per physical partition.

Every request is captured with a *client-level* `raw_response_hook` (cosmos-wire-protocol.md §3: the
per-call hooks and `last_response_headers` miss the refused 400/1004, the query plan and `/pkranges`).
Every captured row goes to disk at once (collectors.pending) and becomes Parquet at the end of the run
(and every SEAL_SECONDS in long runs), so a kill -9 loses nothing captured: the next run recovers what
the killed one left, and writes its own rows under a new run id, so no row is ever written twice.

Layers: `fetch_*` talk to the service, `*_row` / `*_frame` are pure, `replay()` orchestrates.
To add a per-request field: add the column to collectors/schema.py and fill it in `request_row`.
"""

from __future__ import annotations

import binascii
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from azure.core.exceptions import AzureError, ServiceRequestError
from azure.cosmos import CosmosClient
from azure.cosmos.documents import ConnectionPolicy, RetryOptions
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceNotFoundError
from tqdm import tqdm

from collectors import routing
from collectors.config import Config, CosmosSettings, QuerySpec
from collectors.store import ExecutionRecord, RequestRecord, Segment, recover
from cosmoscore import routing as rules
from cosmoscore.epk import EpkRange

REQUEST_KINDS = ("page", "refused", "query_plan", "pkranges", "metadata")
OK, ERROR, BUDGET, STOPPED = "ok", "error", "budget", "stopped"
SEAL_SECONDS = 30.0  # how often a long run turns its captured rows into Parquet (the dashboard sees them)


# -- capturing requests ---------------------------------------------------------------------------


def request_kind(method: str, path: str, request_headers: Mapping[str, str], status: int, substatus: int) -> str:
    """What a request was for, from its method, path and headers (cosmos-wire-protocol.md §1.6-1.9)."""
    if request_headers.get("x-ms-cosmos-is-query-plan-request", "").lower() == "true":
        return "query_plan"
    if method == "POST" and request_headers.get("x-ms-documentdb-isquery", "").lower() == "true":
        return "refused" if status == 400 and substatus == 1004 else "page"
    if path.rstrip("/").endswith("/pkranges"):
        return "pkranges"
    return "metadata"


def _number(value: str | None, kind: type = float) -> Any:
    try:
        return kind(value) if value not in (None, "") else None
    except ValueError:
        return None


def parse_query_metrics(raw: str | None) -> dict[str, str]:
    """`x-ms-documentdb-query-metrics` (`name=value;...`) as a dict."""
    if not raw:
        return {}
    return dict(part.split("=", 1) for part in raw.split(";") if "=" in part)


def request_row(
    method: str,
    url: str,
    request_headers: Mapping[str, str],
    status: int,
    response_headers: Mapping[str, str],
    duration_ms: float,
    at: float,
) -> dict[str, Any]:
    """A `requests` record's fields from an HTTP exchange (no run or query context yet)."""
    substatus = _number(response_headers.get("x-ms-substatus"), int) or 0
    path = unquote(urlparse(url).path).strip("/")
    metrics = parse_query_metrics(response_headers.get("x-ms-documentdb-query-metrics"))
    index_use = response_headers.get("x-ms-cosmos-index-utilization")
    return {
        "time": datetime.fromtimestamp(at, UTC),
        "request_kind": request_kind(method, path, request_headers, status, substatus),
        "method": method,
        "resource": path,
        "pkrange_id": response_headers.get("x-ms-documentdb-partitionkeyrangeid")
        or request_headers.get("x-ms-documentdb-partitionkeyrangeid")
        or "",
        "status": status,
        "substatus": substatus,
        "request_charge": _number(response_headers.get("x-ms-request-charge")) or 0.0,
        "item_count": _number(response_headers.get("x-ms-item-count"), int),
        "duration_ms": duration_ms,
        "activity_id": response_headers.get("x-ms-activity-id", ""),
        "correlated_activity_id": request_headers.get("x-ms-cosmos-correlated-activityid", ""),
        "retry_after_ms": _number(response_headers.get("x-ms-retry-after-ms")),
        "retrieved_document_count": _number(metrics.get("retrievedDocumentCount"), int),
        "retrieved_document_size": _number(metrics.get("retrievedDocumentSize"), int),
        "output_document_count": _number(metrics.get("outputDocumentCount"), int),
        "output_document_size": _number(metrics.get("outputDocumentSize"), int),
        "index_hit_ratio": _number(metrics.get("indexUtilizationRatio")),
        "index_utilization": _index_json(index_use),
    }


def _index_json(raw: Any) -> str | None:
    """The SDK replaces the base64 header with a decoded dict in some paths; keep JSON text either way."""
    if raw is None or raw == "":
        return None
    return json.dumps(raw) if isinstance(raw, dict) else str(raw)


@dataclass
class Capture:
    """The client-level request/response hooks. Rows go to the execution in progress (or to setup)."""

    clock: Callable[[], float] = time.time
    common: dict[str, str] = field(default_factory=dict)  # run_id, account, database
    rows: list[RequestRecord] = field(default_factory=list)
    total_ru: float = 0.0
    count: int = 0  # requests seen in the whole run: the `seq` of the next one
    # the query and execution in progress; requests before the first one (the account read) have none
    context: dict[str, Any] = field(default_factory=lambda: {"query_name": None, "execution_id": None, "container": ""})
    _started: dict[int, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_request(self, pipeline_request: Any) -> None:
        self._started[id(pipeline_request.http_request)] = time.perf_counter()

    def on_response(self, pipeline_response: Any) -> None:
        request, response = pipeline_response.http_request, pipeline_response.http_response
        started = self._started.pop(id(request), None)
        duration = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        row = request_row(
            request.method, request.url, request.headers, response.status_code, response.headers, duration, self.clock()
        )
        with self._lock:
            record = RequestRecord(**row, **self.common, **self.context, seq=self.count)
            self.count += 1
            self.rows.append(record)
            self.total_ru += record.request_charge

    def take(self) -> list[RequestRecord]:
        """The rows captured since the last call."""
        with self._lock:
            rows, self.rows = self.rows, []
        return rows


# -- the client -------------------------------------------------------------------------------------


def credential_from_environment() -> Any:
    """COSMOS_KEY, else azure-identity's DefaultAzureCredential (never from the config file)."""
    key = os.environ.get("COSMOS_KEY")
    if key:
        return key
    from azure.identity import DefaultAzureCredential  # only when needed: it probes the environment

    return DefaultAzureCredential()


def fetch_client(settings: CosmosSettings, capture: Capture, credential: Any) -> CosmosClient:
    """A CosmosClient whose every HTTP exchange passes through `capture` (this reads the account)."""
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(
        max_retry_attempt_count=settings.max_retry_attempts, max_wait_time_in_seconds=settings.max_retry_wait_s
    )
    return CosmosClient(
        settings.endpoint,
        credential=credential,
        connection_policy=policy,
        connection_timeout=settings.connection_timeout_s,
        retry_connect=2,
        retry_read=2,
        raw_request_hook=capture.on_request,
        raw_response_hook=capture.on_response,
    )


# -- errors, one line each ------------------------------------------------------------------------------


def _json_in(text: str, marker: str) -> Any:
    """The JSON value that starts at `marker` in `text`, or None."""
    start = text.find(marker)
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError:
        return None


def _service_message(exc: CosmosHttpResponseError) -> str:
    """The useful part of a service error body: the SQL error with its location, or the message's first line."""
    text = str(exc.message or exc)
    body = _json_in(text, '{"code"')
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        text = body["message"]
    for marker in ('{"errors":', '{"Errors":'):
        found = _json_in(text, marker)
        if isinstance(found, dict):
            first = (found.get("errors") or found.get("Errors") or [""])[0]
            if isinstance(first, str):
                return first
            where = first.get("location")
            at = f" (at {where['start']}-{where['end']})" if isinstance(where, dict) else ""
            return f"{first.get('code', '')} {first.get('message', '')}{at}".strip()
    return text.removeprefix("Message: ").splitlines()[0].strip() if text else ""


def describe_error(exc: BaseException, endpoint: str) -> str:
    """One line naming the cause; never a stack trace, never a key."""
    if isinstance(exc, CosmosHttpResponseError):
        status = exc.status_code or 0
        if status == 401:
            return "401 unauthorized: the credential was rejected (check COSMOS_KEY or the identity's access)"
        if status == 403:
            return f"403 forbidden: {_service_message(exc)}"
        if status == 429:
            return "429 throttled: still throttled after the SDK's retries (raise RU/s or slow the replay)"
        return f"{status} {_service_message(exc)}"
    if isinstance(exc, binascii.Error):
        return "COSMOS_KEY is not a valid account key (it must be the base64 key from the portal)"
    if isinstance(exc, ServiceRequestError):
        return f"cannot reach {endpoint}: {str(exc).splitlines()[0]}"
    if isinstance(exc, AzureError):
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return f"{type(exc).__name__}: {exc}"


# -- one query ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What a query runs against: the container and, in per-feed-range mode, one feed range."""

    container: Any  # ContainerProxy
    key_definition: Mapping[str, Any]
    ranges: list[EpkRange]
    feed_range: Mapping[str, Any] | None = None
    label: str = ""


class BudgetReached(Exception):
    pass


class Stopped(Exception):
    pass


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
    items = 0
    pages = target.container.query_items(spec.sql, **_query_kwargs(spec, target.feed_range)).by_page()
    for page in pages:
        items += sum(1 for _ in page)
        check()
    return items


# -- execution rows ---------------------------------------------------------------------------------


def _sum_or_none(values: Iterable[Any]) -> int | None:
    present = [int(v) for v in values if v is not None]
    return sum(present) if present else None


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
) -> dict[str, Any]:
    """One `executions` record from the requests an execution sent (pure); `ids` names the run, the
    account, database and container, the execution and its repeat."""
    pages = [r for r in requests if r.request_kind == "page" and r.status == 200]
    hit = sorted({r.pkrange_id for r in pages if r.pkrange_id}, key=lambda p: (len(p), p))
    total = len(target.ranges)
    if target.feed_range is not None:
        predicted = rules.SINGLE
    else:
        predicted = rules.predicted_class(
            rules.predict_partitions(
                spec.sql, spec.parameters, spec.partition_key, target.key_definition, target.ranges
            ),
            total,
        )
    observed = rules.routing_class(len(hit), total) if status == OK else rules.UNKNOWN
    known = rules.UNKNOWN not in (predicted, observed)
    return ExecutionRecord(
        **ids,
        time=datetime.fromtimestamp(started, UTC),
        query_name=spec.name,
        mode=spec.mode,
        feed_range=target.label,
        sql=spec.sql,
        partition_key="" if spec.partition_key is None else json.dumps(spec.partition_key),
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
        routing_mismatch=known and predicted != observed,
        retrieved_documents=_sum_or_none(r.retrieved_document_count for r in pages),
        output_documents=_sum_or_none(r.output_document_count for r in pages),
        throttled=sum(1 for r in requests if r.status == 429),
        retry_after_ms_total=float(sum(r.retry_after_ms or 0 for r in requests if r.status == 429)),
        duration_ms=duration_ms,
    )


# -- a run ------------------------------------------------------------------------------------------


@dataclass
class RunSummary:
    run_id: str
    executions: int = 0
    failed: int = 0
    total_ru: float = 0.0
    ended_by: str = ""  # "" (all done), "budget" or "signal"

    @property
    def exit_code(self) -> int:
        """DESIGN.md: 0 all good, 1 ran but some items failed or were not run."""
        return 1 if self.failed or self.ended_by == BUDGET else 0


def new_run_id(now: float) -> str:
    """Sortable and unique: UTC time plus a random suffix (also a safe file-name token)."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


@dataclass
class Replay:
    """One run over the selected queries. `replay()` is the entry point; this holds the run's state."""

    config: Config
    store: Path
    capture: Capture
    run_id: str
    stop: threading.Event
    out: Callable[[str], None]
    err: Callable[[str], None]
    summary: RunSummary = field(init=False)
    segment: Segment = field(init=False)  # captured rows, on disk, not yet Parquet
    parts: int = 0
    sealed_at: float = field(default_factory=time.monotonic)
    last_ru: dict[str, float] = field(default_factory=dict)
    done: list[ExecutionRecord] = field(default_factory=list)  # executions of the query in progress

    def __post_init__(self) -> None:
        self.summary = RunSummary(self.run_id)
        self.segment = Segment(self.store, self.run_id, "p000")
        self.capture.common = {
            "run_id": self.run_id,
            "account": urlparse(self.config.cosmos.endpoint).hostname or "",
            "database": self.config.cosmos.database,
        }

    def seal(self, *, every: float = 0.0) -> None:
        """Turn the captured rows into Parquet parts, at most every `every` seconds (0: now)."""
        if self.segment.rows == 0 or time.monotonic() - self.sealed_at < every:
            return
        self.segment.seal()
        self.parts += 1
        self.sealed_at = time.monotonic()
        self.segment = Segment(self.store, self.run_id, f"p{self.parts:03d}")

    @property
    def budget(self) -> float | None:
        return self.config.replay.budget_ru

    def check(self) -> None:
        """After every page: stop on a signal, or once the run has spent its budget."""
        if self.stop.is_set():
            raise Stopped
        if self.budget is not None and self.capture.total_ru > self.budget:
            raise BudgetReached

    def fetch_targets(self, client: CosmosClient, spec: QuerySpec) -> list[Target]:
        """The container's key definition and feed ranges; one target per feed range in that mode."""
        container = client.get_database_client(self.config.cosmos.database).get_container_client(spec.container)
        try:
            key_definition = container.read()["partitionKey"]
        except CosmosResourceNotFoundError:
            raise LookupError(
                f"container {spec.container!r} not found in database {self.config.cosmos.database!r}"
            ) from None
        raw_ranges = list(container.read_feed_ranges())
        ranges = routing.feed_ranges_of(raw_ranges)
        if spec.mode == "as-is":
            return [Target(container, key_definition, ranges)]
        return [
            Target(container, key_definition, ranges, raw, routing.label(routing.feed_ranges_of([raw])[0]))
            for raw in raw_ranges
        ]

    def execute(self, spec: QuerySpec, target: Target, execution_id: str, repeat: int) -> str:
        """One execution: run it, then turn its captured requests into an executions row."""
        self.capture.context = {"query_name": spec.name, "execution_id": execution_id, "container": spec.container}
        started, t0 = self.capture.clock(), time.perf_counter()
        status, error, items = OK, "", 0
        try:
            items = fetch_query(spec, target, self.check)
        except BudgetReached:
            status, error = BUDGET, f"stopped: the run reached its budget of {self.budget:g} RU"
            self.summary.ended_by = BUDGET
        except Stopped:
            status, error = STOPPED, "stopped by a signal before the last page"
        except Exception as exc:  # every failure of one query is recorded, and the run goes on
            status, error = ERROR, describe_error(exc, self.config.cosmos.endpoint)
        duration = (time.perf_counter() - t0) * 1000
        self.conclude(
            spec,
            target,
            execution_id,
            repeat,
            items=items,
            status=status,
            error=error,
            started=started,
            duration_ms=duration,
        )
        return status

    def record_failure(self, spec: QuerySpec, execution_id: str, error: str) -> None:
        """A query that could not start (unknown container, no client): an error row, no requests of its own."""
        self.conclude(
            spec,
            Target(None, {}, []),
            execution_id,
            0,
            items=0,
            status=ERROR,
            error=error,
            started=self.capture.clock(),
            duration_ms=0.0,
        )

    def conclude(self, spec: QuerySpec, target: Target, execution_id: str, repeat: int, **outcome: Any) -> None:
        """Record the requests captured since the last execution and this execution's row."""
        rows = self.capture.take()
        for request in rows:
            self.segment.append(request)
        mine = [r for r in rows if r.execution_id == execution_id]
        ids = {**self.capture.common, "container": spec.container, "execution_id": execution_id, "repeat": repeat}
        record = execution_record(spec, target, mine, ids=ids, **outcome)
        self.segment.append(record)
        self.done.append(record)
        self.last_ru[spec.name] = record.total_ru
        self.summary.executions += 1
        self.summary.failed += record.status == ERROR

    def run_query(
        self,
        index: int,
        spec: QuerySpec,
        client: CosmosClient | None,
        client_error: str,
        advance: Callable[[int], None],
    ) -> None:
        """Every execution of one query; failures are recorded and reported in one line."""
        self.capture.context = {"query_name": spec.name, "execution_id": "", "container": spec.container}
        try:
            if client is None:
                raise LookupError(client_error)
            targets = self.fetch_targets(client, spec)
        except Exception as exc:  # one line, an error row, and the run goes on
            error = str(exc) if isinstance(exc, LookupError) else describe_error(exc, self.config.cosmos.endpoint)
            self.record_failure(spec, f"{index:03d}-0-0", error)
            self.err(f"query {spec.name!r}: {error}")
            self.done.clear()
            advance(spec.repeat)
            return
        for repeat in range(spec.repeat):
            for n, target in enumerate(targets):
                if self.stop.is_set() or self.over_budget(spec):
                    break
                self.execute(spec, target, f"{index:03d}-{repeat}-{n}", repeat)
                advance(1 if n == len(targets) - 1 else 0)
        self.report(spec, [e for e in self.done if e.query_name == spec.name])
        self.done.clear()
        self.seal(every=SEAL_SECONDS)

    def over_budget(self, spec: QuerySpec) -> bool:
        """Stop before a run spends more than its budget: the next execution is expected to cost what
        this query's last one did."""
        if self.budget is None:
            return False
        if self.capture.total_ru + self.last_ru.get(spec.name, 0.0) > self.budget:
            self.summary.ended_by = BUDGET
        return self.summary.ended_by == BUDGET

    def report(self, spec: QuerySpec, executions: list[ExecutionRecord]) -> None:
        """One line per query: its cost and routing, or each distinct error once."""
        for error in dict.fromkeys(e.error for e in executions if e.status == ERROR):
            self.err(f"query {spec.name!r}: {error}")
        done = [e for e in executions if e.status == OK]
        if done:
            ru = sum(e.total_ru for e in done) / len(done)
            ranges = sorted({p for e in done for p in e.pkranges.split(",") if p})
            routes = "/".join(dict.fromkeys(e.routing_observed for e in done))
            flag = "  (routing differs from the prediction)" if any(e.routing_mismatch for e in done) else ""
            self.out(
                f"{spec.name}: {len(done)} execution(s), {ru:.2f} RU each, {routes} over {len(ranges)} pkrange(s){flag}"
            )


def replay(
    config: Config,
    *,
    store: Path,
    only: str | None = None,
    credential: Any = None,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.time,
    progress: bool = True,
    out: Callable[[str], None] = print,
    err: Callable[[str], None] = print,
) -> RunSummary:
    """Replay the configured queries once; every request and execution lands in the store."""
    specs = [q for q in config.queries if only is None or q.name == only]
    recovered = recover(store)
    if recovered:
        out(f"recovered {recovered} unwritten part(s) of an interrupted earlier run into {store}")
    capture = Capture(clock)
    run = Replay(config, store, capture, new_run_id(clock()), stop or threading.Event(), out, err)
    client, client_error = None, ""
    try:
        client = fetch_client(config.cosmos, capture, credential or credential_from_environment())
    except Exception as exc:  # no client: every query gets the same one-line error row
        client_error = describe_error(exc, config.cosmos.endpoint)
    with tqdm(
        total=sum(q.repeat for q in specs), unit="exec", delay=3, disable=not progress, file=sys.stderr, leave=False
    ) as bar:
        for index, spec in enumerate(specs):
            if run.stop.is_set() or run.over_budget(spec):
                break
            run.run_query(index, spec, client, client_error, bar.update)
    for request in capture.take():
        run.segment.append(request)
    run.seal()
    run.segment.close()  # the segment opened last holds nothing
    run.summary.total_ru = round(capture.total_ru, 2)
    if run.stop.is_set():
        run.summary.ended_by = "signal"
    return run.summary
