"""The stand-in's aggregated tables (CDBDataPlaneRequests5M / 15M, azure-monitor.md §6.6, §7b R60-R63), queried
by the real `LogsQueryClient` over real HTTPS: their sums equal the per-request table's counts and the engine's
raw records over the same whole intervals; an interval is served once it has ended; what History cannot back
is refused with the reason."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.query import LogsQueryClient

from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _hot_workload, _key_on, _reads, _setup
from tests.emulator.monitor.test_logs import WORKSPACE, _rows, _table
from tests.emulator.monitor.test_metrics import FixedToken

MINUTES = 2
LATE = 16 * 60  # a minute into the fourth 5-minute interval and the second 15-minute one: both still open

Fixture = tuple[RunningEmulator, MonitorApp, Engine, Path]


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fixture]:
    certificates = ensure_certificates(tmp_path_factory.mktemp("aggregated-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, _, _ = _hot_workload(engine, clock, minutes=MINUTES)  # 429s on the hot range in the first interval
    clock.advance(START + LATE - clock.now)
    _reads(engine, _key_on(engine, hot), 5)  # requests in the open intervals: not in an aggregated row yet
    app = MonitorApp(engine)
    running = start_in_thread(engine, app=app, tls=certificates.server_context())
    yield running, app, engine, certificates.ca
    running.stop()


def _query(fixture: Fixture, kql: str) -> list[dict[str, object]]:
    emu, _, _, ca = fixture
    client = LogsQueryClient(FixedToken("local-token"), endpoint=emu.url.rstrip("/"), connection_verify=str(ca))
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    return _rows(_table(client.query_workspace(WORKSPACE, kql, timespan=(start, start + dt.timedelta(hours=1)))))


def _by_cell(rows: list[dict[str, object]]) -> dict[tuple[object, ...], tuple[float, float, float]]:
    return {
        (r["PartitionId"], r["OperationName"], r["TimeGenerated"]): (
            float(r["n"]),  # type: ignore[arg-type]
            float(r["throttled"]),  # type: ignore[arg-type]
            float(r["ru"]),  # type: ignore[arg-type]
        )
        for r in rows
    }


@pytest.mark.parametrize(("table", "grain"), [("CDBDataPlaneRequests5M", 5), ("CDBDataPlaneRequests15M", 15)])
def test_the_aggregated_sums_equal_the_per_request_counts(stand_in: Fixture, table: str, grain: int) -> None:
    """sum(RequestCount) / sumif(RequestCount, StatusCode == 429) / sum(TotalRequestCharge) per partition,
    operation and interval = CDBDataPlaneRequests' count() / countif(StatusCode == 429) / sum(RequestCharge)
    over the ended intervals, and = the engine's raw records."""
    by = f"by PartitionId, OperationName, bin(TimeGenerated, {grain}m)"
    aggregated = _by_cell(
        _query(
            stand_in,
            f"{table} | where DatabaseName == 't' and CollectionName == 'c' | summarize n = sum(RequestCount), "
            f"throttled = sumif(RequestCount, StatusCode == 429), ru = sum(TotalRequestCharge) {by}",
        )
    )
    ended = dt.datetime.fromtimestamp(START + LATE // (grain * 60) * grain * 60, dt.UTC)
    per_request = _by_cell(
        _query(
            stand_in,
            f"CDBDataPlaneRequests | where DatabaseName == 't' and CollectionName == 'c' "
            f"and TimeGenerated < datetime({ended:%Y-%m-%dT%H:%M:%SZ}) | summarize n = count(), "
            f"throttled = countif(StatusCode == 429), ru = sum(RequestCharge) {by}",
        )
    )
    assert set(aggregated) == set(per_request)
    for cell, (n, throttled, ru) in aggregated.items():
        assert (n, throttled) == per_request[cell][:2] and ru == pytest.approx(per_request[cell][2])
    raw: dict[tuple[object, ...], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    _, _, engine, _ = stand_in
    for r in engine.accounting.records():
        start = dt.datetime.fromtimestamp(r.time // (grain * 60) * grain * 60, dt.UTC)
        if r.container == "c" and start < ended:
            cell = raw[(r.pkrange_id, r.operation, start)]
            cell[0] += 1
            cell[1] += r.status == 429
            cell[2] += r.request_charge
    assert {k: v[:2] for k, v in aggregated.items()} == {k: (float(v[0]), float(v[1])) for k, v in raw.items()}
    assert sum(t for _, t, _ in aggregated.values()) > 0  # the hot range was throttled


def test_an_interval_is_written_once_it_has_ended(stand_in: Fixture) -> None:
    """Rows stamp their interval's start; the open interval (the late reads) has no row yet, while the
    per-request table already holds those requests."""
    five = _query(stand_in, "CDBDataPlaneRequests5M | summarize n = sum(RequestCount) by TimeGenerated")
    fifteen = _query(stand_in, "CDBDataPlaneRequests15M | summarize n = sum(RequestCount) by TimeGenerated")
    late = _query(
        stand_in, "CDBDataPlaneRequests | where TimeGenerated >= ago(1m) | summarize n = count() by TimeGenerated"
    )
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    assert {r["TimeGenerated"] for r in five} == {start} == {r["TimeGenerated"] for r in fifteen}
    assert [r["n"] for r in five] == [r["n"] for r in fifteen]
    assert [(r["TimeGenerated"], r["n"]) for r in late] == [(start + dt.timedelta(seconds=LATE), 5)]


def test_microsofts_throttling_query_runs_with_the_documented_count_column(stand_in: Fixture) -> None:
    """The how-to's query 4 (monitor-aggregated-logs.md) names SampleCount; the table reference names the
    column RequestCount (§7b R61): the stand-in serves the reference's schema."""
    kql = (
        "CDBDataPlaneRequests5M | where DatabaseName == 't' and CollectionName == 'c' | summarize "
        "throttledOperations = sumif(RequestCount, StatusCode == 429), totalOperations = sum(RequestCount) "
        "by TimeGenerated, OperationName"
    )
    rows = {r["OperationName"]: r for r in _query(stand_in, kql)}
    _, _, engine, _ = stand_in
    reads = [r for r in engine.accounting.records() if r.operation == "Read" and r.time < START + 300]
    assert rows["Read"]["totalOperations"] == len(reads)
    assert rows["Read"]["throttledOperations"] == sum(r.status == 429 for r in reads) > 0
    with pytest.raises(HttpResponseError, match="Failed to resolve scalar expression named 'SampleCount'"):
        _query(stand_in, "CDBDataPlaneRequests5M | summarize sum(SampleCount)")


@pytest.mark.parametrize(
    ("column", "reason"),
    [("MaxRequestCharge", "the largest one is not determined"), ("AvgDurationMs", "no server-side durations")],
)
def test_a_column_history_cannot_back_is_refused_with_the_reason(stand_in: Fixture, column: str, reason: str) -> None:
    with pytest.raises(HttpResponseError, match=f"(?s)NotSupportedByStandIn.*{column}.*{reason}"):
        _query(stand_in, f"CDBDataPlaneRequests5M | summarize max({column}) by OperationName")


def test_rows_only_where_the_setting_sends_the_category_and_never_in_azure_diagnostics(stand_in: Fixture) -> None:
    _, app, _, _ = stand_in
    assert _query(stand_in, "AzureDiagnostics | where Category == 'DataPlaneRequests5M' | count") == [{"Count": 0}]
    sent = app.logs.categories
    app.logs.categories = sent - {"DataPlaneRequests5M"}
    try:
        assert _query(stand_in, "CDBDataPlaneRequests5M | count") == [{"Count": 0}]
        assert _query(stand_in, "CDBDataPlaneRequests15M | count") != [{"Count": 0}]
    finally:
        app.logs.categories = sent


def test_sumif_on_the_per_request_table_is_exact_or_refused(stand_in: Fixture) -> None:
    """sumif() on CDBDataPlaneRequests' per-minute rows: a dimension predicate is exact (the minutes' sums
    of the 429 cells); a predicate on RequestCharge would be about minutes, not requests: refused."""
    kql = (
        "CDBDataPlaneRequests | summarize ru = sumif(RequestCharge, StatusCode == 429), n = sumif(1, StatusCode == 429)"
    )
    (row,) = _query(stand_in, kql)
    _, _, engine, _ = stand_in
    throttled = [r for r in engine.accounting.records() if r.status == 429]
    assert row["ru"] == pytest.approx(sum(r.request_charge for r in throttled)) and row["n"] == len(throttled) > 0
    with pytest.raises(HttpResponseError, match="NotSupportedByStandIn"):
        _query(stand_in, "CDBDataPlaneRequests | summarize sumif(RequestCharge, RequestCharge > 1.0)")
