"""A shared-throughput database as Azure Monitor reports it, from the stand-in through the real
`MetricsClient` over HTTPS (docs/reference/azure-monitor.md §7b R2, R30-R32): its physical partitions'
metrics under `CollectionName` `<empty>`, its offer's throughput under `__Empty`, and every other metric
under the real container names; a container with its own throughput in that database keeps its name."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import orjson
import pytest
from azure.monitor.querymetrics import MetricsClient

from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    NORMALIZED_RU,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START
from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, FixedToken

CTX = Context()
MINUTES = 6
SHARED_RU = 800
BODY = {"partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
Series = dict[tuple[str, str], dict[float, float]]  # (collection name, split value) -> time -> value


def build_shared(clock: ManualClock) -> tuple[Engine, dict[str, int]]:
    """Database `shared` (800 RU/s shared by `a` and `b`; `own` has 400 of its own) and database `solo`
    (`c`, 400 RU/s), written to for MINUTES minutes from START; returns the bytes written per container."""
    engine = Engine(limits=LIMITS, clock=clock, throttling=False)
    engine.create_database(CTX, {"id": "shared"}, ThroughputSpec(SHARED_RU))
    engine.create_container(CTX, "shared", {**BODY, "id": "a"}, None)
    engine.create_container(CTX, "shared", {**BODY, "id": "b"}, None)
    engine.create_container(CTX, "shared", {**BODY, "id": "own"}, ThroughputSpec(400))
    engine.create_database(CTX, {"id": "solo"})
    engine.create_container(CTX, "solo", {**BODY, "id": "c"}, ThroughputSpec(400))
    written = {"a": 0, "b": 0, "own": 0, "c": 0}
    for minute in range(MINUTES):
        for db, coll, n in (("shared", "a", 3), ("shared", "b", 1), ("shared", "own", 2), ("solo", "c", 1)):
            for i in range(n):
                result = engine.create_item(CTX, db, coll, {"id": f"{minute}-{i}", "k": f"k{i}", "pad": "x" * 50})
                assert result.doc is not None
                written[coll] += len(orjson.dumps(result.doc))
        clock.advance(60)
    return engine, written


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, MetricsClient, dict[str, int]]]:
    engine, written = build_shared(ManualClock(START))
    certificates = ensure_certificates(tmp_path_factory.mktemp("monitor-shared-tls"))
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certificates.server_context())
    client = MetricsClient(running.url.rstrip("/"), FixedToken(), connection_verify=str(certificates.ca), retry_total=0)
    yield engine, client, written
    running.stop()


def _query(client: MetricsClient, metric: str, filt: str, grain: int, aggregation: str, split: str = "") -> Series:
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    (result,) = client.query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[metric],
        timespan=(start, start + dt.timedelta(minutes=MINUTES)),
        granularity=dt.timedelta(minutes=grain),
        aggregations=[aggregation],
        filter=filt + (f" and {split} eq '*'" if split else ""),
        max_results=100,
    )
    (found,) = result.metrics
    out: Series = {}
    for ts in found.timeseries:
        key = (ts.metadata_values.get("collectionname", ""), ts.metadata_values.get(split.lower(), "") if split else "")
        values = {p.timestamp.timestamp(): getattr(p, aggregation.lower()) for p in ts.data}
        out[key] = {t: v for t, v in values.items() if v is not None}
    return out


ALL = "DatabaseName eq 'shared' and CollectionName eq '*'"


def test_partition_metrics_of_a_shared_database_carry_empty(
    shared: tuple[Engine, MetricsClient, dict[str, int]],
) -> None:
    engine, client, written = shared
    sizes = _query(client, PARTITION_SIZE, ALL, 5, "Maximum", "PhysicalPartitionId")
    assert {name for name, _ in sizes} == {"<empty>", "own"}  # never "a" or "b"
    (last,) = {t for series in sizes.values() for t in series} - {START}
    shared_size = sum(series[last] for (name, _), series in sizes.items() if name == "<empty>")
    assert shared_size == written["a"] + written["b"]  # the database's partitions hold both containers
    assert sum(series[last] for (name, _), series in sizes.items() if name == "own") == written["own"]

    normalized = _query(client, NORMALIZED_RU, ALL, 1, "Maximum", "PartitionKeyRangeId")
    assert {name for name, _ in normalized} == {"<empty>", "own"}
    expected: dict[tuple[float, str], float] = {}
    for coll in ("a", "b"):
        for p in engine.history.series("shared", coll, NORMALIZED_RU, START, START + MINUTES * 60):
            slot = (p.time, p.dimensions["PartitionKeyRangeId"])
            expected[slot] = max(expected.get(slot, 0.0), p.value)
    got = {(t, pk): v for (name, pk), series in normalized.items() if name == "<empty>" for t, v in series.items()}
    assert got == expected and expected  # the hottest of the containers' ranges, minute by minute

    budgets = _query(client, PARTITION_THROUGHPUT, ALL, 5, "Maximum", "PhysicalPartitionId")
    assert {name for name, _ in budgets} == {"<empty>", "own"}
    # the Azure-Samples CosmosDBWatcher query of a shared database's partitions
    pinned = _query(client, NORMALIZED_RU, "DatabaseName eq 'shared' and CollectionName eq '<empty>'", 1, "Maximum")
    assert set(pinned) == {("<empty>", "")} and pinned[("<empty>", "")]
    by_name = _query(client, NORMALIZED_RU, "DatabaseName eq 'shared' and CollectionName eq 'a'", 1, "Maximum")
    assert all(not series for series in by_name.values())  # a sharing container has no series of its own


def test_the_shared_offer_carries_double_underscore_empty(shared: tuple[Engine, MetricsClient, dict[str, int]]) -> None:
    _, client, _ = shared
    provisioned = _query(client, PROVISIONED, ALL, 5, "Maximum")
    assert {name: set(series.values()) for (name, _), series in provisioned.items()} == {
        "__Empty": {float(SHARED_RU)},
        "own": {400.0},
    }
    watcher = _query(client, PROVISIONED, "DatabaseName eq 'shared' and CollectionName eq '__Empty'", 5, "Maximum")
    assert set(watcher) == {("__Empty", "")}
    assert _query(client, AUTOSCALE_MAX, ALL, 5, "Maximum") == {}  # manual offers: no autoscale series


def test_request_and_storage_totals_keep_the_container_names(
    shared: tuple[Engine, MetricsClient, dict[str, int]],
) -> None:
    _, client, written = shared
    for metric, aggregation, grain in ((TOTAL_REQUEST_UNITS, "Total", 1), (TOTAL_REQUESTS, "Count", 1)):
        assert {name for name, _ in _query(client, metric, ALL, grain, aggregation)} == {"a", "b", "own"}
    usage = _query(client, DATA_USAGE, ALL, 5, "Maximum")
    assert {name: max(series.values()) for (name, _), series in usage.items()} == {
        name: float(written[name]) for name in ("a", "b", "own")
    }
    assert {name for name, _ in _query(client, DOCUMENT_COUNT, ALL, 5, "Total")} == {"a", "b", "own"}


def test_a_database_without_shared_throughput_is_unchanged(
    shared: tuple[Engine, MetricsClient, dict[str, int]],
) -> None:
    _, client, _ = shared
    solo = "DatabaseName eq 'solo' and CollectionName eq '*'"
    for metric, aggregation, grain in ((NORMALIZED_RU, "Maximum", 1), (PARTITION_SIZE, "Maximum", 5)):
        assert {name for name, _ in _query(client, metric, solo, grain, aggregation)} == {"c"}
    assert {name for name, _ in _query(client, PROVISIONED, solo, 5, "Maximum")} == {"c"}
