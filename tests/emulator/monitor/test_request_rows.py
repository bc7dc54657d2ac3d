"""Per-request rows: a log query naming ActivityId is answered from the engine's request log, one row per
request (azure-monitor.md §7b R52-R55), through the real `LogsQueryClient`, with the azure-cosmos SDK's own
view (the ids and charges of its responses) as the expected answer; and refused, never answered short, when
the bounded log dropped requests the scanned minutes hold."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from azure.core.exceptions import HttpResponseError
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from azure.cosmos.documents import ConnectionPolicy, RetryOptions
from azure.monitor.query import LogsQueryClient

from emulator.engine.accounting import Accounting
from emulator.engine.facade import Context, Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.engine.test_throttling import SMALL, _keys_on_two_ranges
from tests.emulator.history.test_history import CTX, LIMITS, START, _setup
from tests.emulator.monitor.test_kql import THROTTLE_QUERIES
from tests.emulator.monitor.test_logs import WORKSPACE, _rows, _table
from tests.emulator.monitor.test_metrics import FixedToken

QUERY = "SELECT * FROM c WHERE c.k = @k"


@dataclass
class Seen:
    """What the SDK saw: per operation its response's activity id and charge (x-ms-request-charge)."""

    creates: dict[str, float] = field(default_factory=dict)
    queries: dict[str, float] = field(default_factory=dict)
    throttled_query: str = ""
    hot_range: str = ""


Fixture = tuple[RunningEmulator, RunningEmulator, Engine, Path, Seen]


def _last(container: object) -> tuple[str, float]:
    headers = container.client_connection.last_response_headers  # type: ignore[attr-defined]
    return headers["x-ms-activity-id"], float(headers["x-ms-request-charge"])


def _no_retries() -> ConnectionPolicy:
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(max_retry_attempt_count=0)  # see the 429 (errors ref. §1.5)
    return policy


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    """A 200 RU/s partition driven by the SDK: creates until the SDK has retried a 429 (one id for both
    attempts, R46), then queries without retries until one is refused. The engine's clock moves only when
    the writer's SDK sees a 429 (so its retry lands in a fresh second): the same requests on any machine."""
    certificates = ensure_certificates(tmp_path_factory.mktemp("request-rows-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=SMALL, clock=clock)
    cosmos = start_in_thread(engine)
    monitor = start_in_thread(engine, app=MonitorApp(engine), tls=certificates.server_context())
    seen = Seen()

    def next_second_after_a_429(response: Any) -> None:
        if response.http_response.status_code == 429:
            clock.advance(1.0)

    writer = CosmosClient(cosmos.url, credential=cosmos.key, raw_response_hook=next_second_after_a_429)
    c = writer.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=400)
    seen.creates.update([_last(c)])  # the container's own Create (CollectionName c)
    hot, _ = _keys_on_two_ranges(engine)
    seen.hot_range = engine.container("t", "c").range_for(engine.container("t", "c").epk((hot,))).id

    def throttled() -> bool:
        return any(r.status == 429 and r.operation == "Create" for r in engine.accounting.records())

    while len(seen.creates) < 40 or not throttled():
        c.create_item({"id": str(len(seen.creates)), "k": hot})
        seen.creates.update([_last(c)])
    q = CosmosClient(cosmos.url, credential=cosmos.key, connection_policy=_no_retries())
    qc = q.get_database_client("t").get_container_client("c")
    for _ in range(1000):
        try:
            list(qc.query_items(QUERY, parameters=[{"name": "@k", "value": hot}], partition_key=hot))
        except exceptions.CosmosHttpResponseError as exc:
            assert exc.status_code == 429
            seen.throttled_query = exc.headers["x-ms-activity-id"]
            break
        seen.queries.update([_last(qc)])
    assert seen.throttled_query and seen.queries
    yield cosmos, monitor, engine, certificates.ca, seen
    monitor.stop()
    cosmos.stop()


def _ask(fixture: Fixture, kql: str) -> list[dict[str, object]]:
    _, monitor, _, ca, _ = fixture
    client = LogsQueryClient(FixedToken(), endpoint=monitor.url.rstrip("/"), connection_verify=str(ca), retry_total=0)
    return _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=None)))


def test_dcount_of_activity_ids_counts_the_sdks_operations_and_count_its_attempts(served: Fixture) -> None:
    """R46: an SDK's retry of a 429 resends the operation's id, so dcount(ActivityId) counts the operations
    the SDK performed and count() the requests, each attempt apart (R47)."""
    engine, seen = served[2], served[4]
    (row,) = _ask(
        served,
        "CDBDataPlaneRequests | where CollectionName == 'c' and OperationName == 'Create'"
        " | summarize attempts = count(), operations = dcount(ActivityId), throttled = dcountif(ActivityId,"
        " StatusCode == 429), last = max(TimeGenerated)",
    )
    records = [r for r in engine.accounting.records() if r.container == "c" and r.operation == "Create"]
    assert row["operations"] == len(seen.creates)
    assert row["attempts"] == len(records) > row["operations"]  # the retried ones were sent twice or more
    assert 1 <= int(str(row["throttled"])) == len({r.activity_id for r in records if r.status == 429})
    newest = max(r.time for r in records)  # a request's own time, not its minute's start
    assert abs(row["last"].timestamp() - newest) < 1e-3  # type: ignore[attr-defined]


def test_each_request_row_carries_its_own_charge(served: Fixture) -> None:
    """`project ActivityId, RequestCharge`: each answered request's charge, as its response header said."""
    seen = served[4]
    rows = _ask(
        served,
        "CDBDataPlaneRequests | where CollectionName == 'c' and OperationName == 'Create' and StatusCode == 201"
        " | project ActivityId, RequestCharge",
    )
    assert {r["ActivityId"]: r["RequestCharge"] for r in rows} == pytest.approx(seen.creates)
    kql = (
        "CDBDataPlaneRequests | where StatusCode == 429 | summarize top = max(RequestCharge), ids = dcount(ActivityId)"
    )
    (throttled,) = _ask(served, kql)  # max() is exact on per-request rows
    assert throttled["top"] == 0.0 and int(str(throttled["ids"])) >= 2  # a 429 costs nothing here (throttled_ru)


def test_query_runtime_statistics_rows_are_the_queries_that_ran(served: Fixture) -> None:
    """One CDBQueryRuntimeStatistics row per query the engine executed, with its text and id; the throttled
    attempt never ran (R53): it has a CDBDataPlaneRequests row, none here, and History counts the same."""
    seen = served[4]
    rows = _ask(
        served,
        "CDBQueryRuntimeStatistics | where CollectionName == 'c' | project ActivityId, QueryText, PartitionKeyRangeId",
    )
    assert sorted(str(r["ActivityId"]) for r in rows) == sorted(seen.queries)
    assert {(r["QueryText"], r["PartitionKeyRangeId"]) for r in rows} == {(QUERY, seen.hot_range)}
    refused = _ask(served, f"CDBDataPlaneRequests | where ActivityId == '{seen.throttled_query}' | project StatusCode")
    assert refused == [{"StatusCode": 429}]
    per_minute = _ask(served, "CDBQueryRuntimeStatistics | where CollectionName == 'c' | count")  # History's rows
    assert per_minute == [{"Count": len(seen.queries)}]
    charges = _ask(
        served,
        "CDBDataPlaneRequests | where OperationName == 'Query' and StatusCode == 200 | project ActivityId, RequestCharge",
    )
    assert {r["ActivityId"]: r["RequestCharge"] for r in charges} == pytest.approx(seen.queries)


def test_the_legacy_spellings_read_the_same_requests(served: Fixture) -> None:
    seen = served[4]
    (row,) = _ask(
        served,
        "AzureDiagnostics | where Category == 'DataPlaneRequests' and collectionName_s == 'c'"
        " and OperationName == 'Create' | summarize operations = dcount(activityId_g),"
        " throttled = dcountif(activityId_g, statusCode_s == '429')",
    )
    assert row["operations"] == len(seen.creates) and int(str(row["throttled"])) >= 1
    rows = _ask(
        served, "AzureDiagnostics | where Category == 'QueryRuntimeStatistics' | project activityId_g, querytext_s"
    )
    assert sorted(str(r["activityId_g"]) for r in rows) == sorted(seen.queries)
    assert {r["querytext_s"] for r in rows} == {QUERY}


@pytest.mark.parametrize("mode", THROTTLE_QUERIES)
def test_microsofts_429_query_counts_operations_from_the_request_log(served: Fixture, mode: str) -> None:
    """R45 less its RequestResourceType (R54): dcount(ActivityId) and dcountif() per operation and minute
    equal the distinct ids of the raw records, the RU their charges."""
    kql = THROTTLE_QUERIES[mode].replace(", RequestResourceType", "").replace(", requestResourceType_s", "")
    kql = kql.replace("statusCode_s == 429", "statusCode_s == '429'")  # a string column (§6.5; Kusto: SEM0025)
    expected: dict[tuple[str, float], tuple[set[str], set[str], float]] = {}
    for r in served[2].accounting.records():
        if r.container:
            ids, throttled, ru = expected.get((r.operation, r.time // 60 * 60), (set(), set(), 0.0))
            throttled = throttled | {r.activity_id} if r.status == 429 else throttled
            expected[(r.operation, r.time // 60 * 60)] = (ids | {r.activity_id}, throttled, ru + r.request_charge)
    names = ("totalOperations", "throttledOperations", "totalConsumedRUPerMinute")
    got = {(r["OperationName"], r["TimeGenerated"].timestamp()): [r[n] for n in names] for r in _ask(served, kql)}  # type: ignore[attr-defined]
    assert {k: v[:2] for k, v in got.items()} == {k: [len(v[0]), len(v[1])] for k, v in expected.items()}
    assert {k: v[2] for k, v in got.items()} == pytest.approx({k: v[2] for k, v in expected.items()})
    assert any(v[1] for v in got.values())


@pytest.fixture
def short_log(tmp_path: Path) -> Iterator[tuple[RunningEmulator, Engine, Path]]:
    """Two minutes of 20 reads each, a log that holds 20 records: the first minute's ids are gone, while
    History still counts its requests."""
    certificates = ensure_certificates(tmp_path)
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock, accounting=Accounting(max_records=20))
    _setup(engine)
    engine.create_item(CTX, "t", "c", {"id": "doc", "k": "a"})
    for minute in range(2):
        for i in range(20):
            engine.read_item(Context(activity_id=f"m{minute}-{i}"), "t", "c", "doc", ["a"])
        clock.advance(60)
    monitor = start_in_thread(engine, app=MonitorApp(engine), tls=certificates.server_context())
    yield monitor, engine, certificates.ca
    monitor.stop()


def test_a_query_reaching_before_the_logs_coverage_is_refused_with_the_reason(
    short_log: tuple[RunningEmulator, Engine, Path],
) -> None:
    monitor, engine, ca = short_log
    client = LogsQueryClient(FixedToken(), endpoint=monitor.url.rstrip("/"), connection_verify=str(ca), retry_total=0)
    kql = "CDBDataPlaneRequests | summarize operations = dcount(ActivityId)"
    with pytest.raises(HttpResponseError) as caught:
        client.query_workspace(WORKSPACE, kql, timespan=None)
    assert engine.accounting.missing_until == START  # the first minute's reads were dropped
    message = str(caught.value)
    assert caught.value.status_code == 400 and "NotSupportedByStandIn" in message
    assert "knows every request's id only after 2027-01-15T08:00:00Z" in message and "--request-log-mb" in message
    assert "22 requests of t/c in the minute of 2027-01-15T08:00:00Z" in message  # the container, the item, 20 reads
    since = "| where TimeGenerated >= datetime(2027-01-15T08:01:00Z) "  # as the message advises
    assert f"({since[2:-1]})" in message
    answered = client.query_workspace(WORKSPACE, kql.replace("| summarize", since + "| summarize"), timespan=None)
    assert _rows(_table(answered)) == [{"operations": 20}]  # the second minute's ids, all kept
    whole = _rows(_table(client.query_workspace(WORKSPACE, "CDBDataPlaneRequests | count", timespan=None)))
    assert whole[0]["Count"] == 2 + 2 * 20  # History's rows still count every request: the container, the item, reads
