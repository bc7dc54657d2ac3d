"""The stand-in's Log Analytics API, queried by the real `LogsQueryClient` over real HTTPS: its answers
equal the engine's raw accounting records, computed independently here."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.query import LogsBatchQuery, LogsQueryClient, LogsQueryError, LogsQueryResult, LogsTable
from azure.monitor.querymetrics import MetricsClient

from emulator.engine.accounting import executed_query
from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, START, _hot_workload, _setup
from tests.emulator.monitor.test_kql import HOT_KEY_QUERIES
from tests.emulator.monitor.test_metrics import RESOURCE, FixedToken

WORKSPACE = "11111111-2222-3333-4444-555555555555"
MINUTES = 2
QUERY = "SELECT * FROM c WHERE c.k = @k"

Fixture = tuple[RunningEmulator, Engine, str, list[str], Path]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    certificates = ensure_certificates(tmp_path_factory.mktemp("logs-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, cold, _ = _hot_workload(engine, clock, minutes=MINUTES)
    for _ in range(3):
        engine.run_query("t", "c", QUERY, {"@k": "k1"}, ["k1"], ctx=CTX)
    clock.advance(60)
    running = start_in_thread(engine, app=MonitorApp(engine), tls=certificates.server_context())
    yield running, engine, hot, cold, certificates.ca
    running.stop()


def _client(fixture: Fixture, token: str = "local-token") -> LogsQueryClient:
    emu, *_, ca = fixture
    return LogsQueryClient(FixedToken(token), endpoint=emu.url.rstrip("/"), connection_verify=str(ca), retry_total=0)


def _span() -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    return start, start + dt.timedelta(minutes=MINUTES + 2)


def _table(result: object) -> LogsTable:
    assert isinstance(result, LogsQueryResult), result
    (table,) = result.tables
    return table


def _rows(table: LogsTable) -> list[dict[str, object]]:
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _records(engine: Engine) -> list[object]:
    return [r for r in engine.accounting.records() if r.container == "c"]


def test_hot_key_first_by_ru_with_the_records_sums(stand_in: Fixture) -> None:
    _, engine, hot, _, _ = stand_in
    kql = (
        "CDBPartitionKeyRUConsumption\n| where DatabaseName == 't' and CollectionName == 'c'\n"
        "| summarize RU = sum(todouble(RequestCharge)) by PartitionKey, PartitionKeyRangeId\n"
        "| top 10 by RU desc"
    )
    table = _table(_client(stand_in).query_workspace(WORKSPACE, kql, timespan=_span()))
    assert table.columns_types == ["string", "string", "real"]
    rows = _rows(table)
    assert rows[0]["PartitionKeyRangeId"] == hot
    ru: dict[str, float] = defaultdict(float)
    for r in engine.accounting.records():
        if r.container == "c" and r.partition_key:
            ru[r.partition_key] += r.request_charge
    assert {r["PartitionKey"]: r["RU"] for r in rows} == pytest.approx(dict(ru))


def test_429s_on_the_hot_range_only_and_counts_by_status(stand_in: Fixture) -> None:
    _, engine, hot, _, _ = stand_in
    client = _client(stand_in)
    kql = "CDBDataPlaneRequests | where StatusCode == 429 | summarize Throttled = count() by PartitionId, bin(TimeGenerated, 1m)"
    rows = _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=_span())))
    records = [r for r in engine.accounting.records() if r.container == "c"]
    assert {r["PartitionId"] for r in rows} == {hot}
    per_minute = Counter(dt.datetime.fromtimestamp(r.time // 60 * 60, dt.UTC) for r in records if r.status == 429)
    assert {r["TimeGenerated"]: r["Throttled"] for r in rows} == dict(per_minute)
    kql = "CDBDataPlaneRequests | summarize n = count(), ru = sum(RequestCharge) by StatusCode, OperationName"
    got = {
        (r["StatusCode"], r["OperationName"]): (r["n"], r["ru"])
        for r in _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=None)))
    }
    expected: dict[tuple[object, ...], list[float]] = defaultdict(lambda: [0, 0.0])
    for r in records:
        expected[(r.status, r.operation)][0] += 1
        expected[(r.status, r.operation)][1] += r.request_charge
    assert set(got) == set(expected)
    for key, (n, ru) in got.items():
        assert n == expected[key][0] and ru == pytest.approx(expected[key][1])


def test_datetime_columns_are_datetimes_and_legacy_mode_agrees(stand_in: Fixture) -> None:
    _, engine, hot, _, _ = stand_in
    client = _client(stand_in)
    kql = (
        "AzureDiagnostics | where Category == 'DataPlaneRequests' and statusCode_s == '429'"
        " | summarize n = count(), last = max(TimeGenerated) by partitionId_g"
    )
    table = _table(client.query_workspace(WORKSPACE, kql, timespan=_span()))
    (row,) = _rows(table)
    assert table.columns_types == ["string", "long", "datetime"]
    assert isinstance(row["last"], dt.datetime) and row["last"].utcoffset() == dt.timedelta(0)
    assert row["partitionId_g"] == hot
    assert row["n"] == sum(1 for r in engine.accounting.records() if r.status == 429)


def test_query_runtime_statistics_count_the_executions(stand_in: Fixture) -> None:
    _, engine, *_ = stand_in
    kql = "CDBQueryRuntimeStatistics | summarize Queries = count() by QueryText, PartitionKeyRangeId"
    rows = _rows(_table(_client(stand_in).query_workspace(WORKSPACE, kql, timespan=None)))
    queries = [r for r in engine.accounting.records() if executed_query(r) and r.container == "c"]  # R53
    assert {r["QueryText"] for r in rows} == {QUERY}
    assert sum(int(str(r["Queries"])) for r in rows) == len(queries) > 0


def test_resource_centric_query_and_statistics(stand_in: Fixture) -> None:
    client = _client(stand_in)
    result = client.query_resource(
        RESOURCE,
        "CDBDataPlaneRequests | summarize count() by Type, _ResourceId",
        timespan=None,
        include_statistics=True,
    )
    assert isinstance(result, LogsQueryResult)
    (row,) = _rows(result.tables[0])
    assert row == {
        "Type": "CDBDataPlaneRequests",
        "_ResourceId": RESOURCE.lower(),
        "count_": len(_records(stand_in[1])),
    }
    assert result.statistics is not None and "executionTime" in result.statistics["query"]


def test_batch_answers_each_query_in_order(stand_in: Fixture) -> None:
    good = LogsBatchQuery(WORKSPACE, "CDBDataPlaneRequests | count", timespan=_span())
    bad = LogsBatchQuery(WORKSPACE, "NoSuchTable | count", timespan=_span())
    first, second, third = _client(stand_in).query_batch([good, bad, good])
    assert _rows(_table(first)) == _rows(_table(third)) == [{"Count": len(_records(stand_in[1]))}]
    assert isinstance(second, LogsQueryError)
    assert second.message == "Failed to resolve table or column expression named 'NoSuchTable'"


def test_unknown_table_is_the_services_400(stand_in: Fixture) -> None:
    with pytest.raises(HttpResponseError) as caught:
        _client(stand_in).query_workspace(WORKSPACE, "AppInsights | where x == 1", timespan=None)
    assert caught.value.status_code == 400
    assert "Failed to resolve table or column expression named 'AppInsights'" in str(caught.value)


def test_refusal_on_per_minute_rows_is_a_400_that_says_why(stand_in: Fixture) -> None:
    with pytest.raises(HttpResponseError) as caught:
        _client(stand_in).query_workspace(
            WORKSPACE, "CDBDataPlaneRequests | summarize max(RequestCharge) by OperationName", timespan=None
        )
    assert caught.value.status_code == 400 and "per-minute aggregates" in str(caught.value)


def test_without_a_token_401(stand_in: Fixture) -> None:
    with pytest.raises(HttpResponseError) as caught:
        _client(stand_in, token="").query_workspace(WORKSPACE, "CDBDataPlaneRequests | count", timespan=None)
    assert caught.value.status_code == 401


def test_the_same_port_still_serves_metrics(stand_in: Fixture) -> None:
    emu, *_, ca = stand_in
    client = MetricsClient(emu.url.rstrip("/"), FixedToken(), connection_verify=str(ca), retry_total=0)
    (result,) = client.query_resources(
        resource_ids=[RESOURCE],
        metric_namespace="Microsoft.DocumentDB/databaseAccounts",
        metric_names=["TotalRequests"],
        timespan=_span(),
    )
    assert result.metrics[0].name == "TotalRequests"


def test_every_collector_query_is_understood(stand_in: Fixture) -> None:
    from collectors.logs.queries import all_queries  # the collector's own KQL, both modes

    client = _client(stand_in)
    for name, kql in all_queries():
        result = client.query_workspace(WORKSPACE, kql, timespan=_span())
        assert isinstance(result, LogsQueryResult), (name, kql, result)


def test_legacy_query_statistics_spell_their_columns_in_lower_case(stand_in: Fixture) -> None:
    """QueryRuntimeStatistics rows of AzureDiagnostics carry databasename_s, not databaseName_s, unlike the
    other categories (azure-monitor.md §6.5, §7b R6: KQL identifiers are case-sensitive)."""
    client = _client(stand_in)
    by = "by databasename_s, databaseName_s, collectionname_s, partitionkeyrangeid_s, querytext_s"
    kql = f"AzureDiagnostics | where Category == 'QueryRuntimeStatistics' | summarize n = count() {by}"
    rows = _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=None)))
    assert rows and {r["querytext_s"] for r in rows} == {QUERY} and {r["collectionname_s"] for r in rows} == {"c"}
    assert all(r["databasename_s"] == "t" and r["databaseName_s"] is None for r in rows)
    kql = "AzureDiagnostics | where Category == 'PartitionKeyRUConsumption' | summarize sum(todouble(requestCharge_s)) by databaseName_s"
    assert [r["databaseName_s"] for r in _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=None)))] == ["t"]


@pytest.mark.parametrize("mode", ["resource-specific", "azure-diagnostics"])
def test_microsofts_per_second_hot_key_query_through_the_client(stand_in: Fixture, mode: str) -> None:
    """The troubleshooting page's hot-key query, as published (1 s bins, by key and operation), through the
    real `LogsQueryClient`: the stand-in's CDBPartitionKeyRUConsumption rows are a key's second per
    operation (azure-monitor.md §7b R7, R24), so its answer equals the raw records summed per second."""
    _, engine, hot, _, _ = stand_in
    kql, (key, operation, ru) = HOT_KEY_QUERIES[mode]
    table = _table(_client(stand_in).query_workspace(WORKSPACE, kql, timespan=None))
    rows = _rows(table)
    expected: dict[tuple[str, str, dt.datetime], float] = defaultdict(float)
    for r in engine.accounting.records():
        if r.container == "c" and r.pkrange_id and r.partition_key:
            expected[(r.partition_key, r.operation, dt.datetime.fromtimestamp(r.time // 1, dt.UTC))] += r.request_charge
    assert {(r[key], r[operation], r["TimeGenerated"]): r[ru] for r in rows} == pytest.approx(dict(expected))
    assert rows[0][ru] == pytest.approx(max(expected.values())) and rows[0][operation] == "Read"
