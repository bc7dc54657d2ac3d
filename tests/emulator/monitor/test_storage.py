"""Storage and throughput metrics from the Azure Monitor stand-in, queried by the real `MetricsClient`
over real HTTPS, against what the test wrote (document sizes as the engine persists them: UTF-8 JSON
with system properties) and did (a throughput raise that splits the partitions, a quiet hour)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.querymetrics import MetricsClient

from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
)
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import Certificates, ensure_certificates
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START
from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, FixedToken

CTX = Context()
SPLIT_MINUTE = 7
QUIET_MINUTES = 70  # the clock's last position: an hour with no request after the split


@dataclass
class Scenario:
    engine: Engine
    clock: ManualClock
    data_dir: Path
    sizes: dict[str, int]  # pkrange -> bytes written there, before the split
    docs: dict[str, int]
    parents: set[str]
    children: set[str]
    throughput_after: int


def _build(data_dir: Path) -> Scenario:
    clock = ManualClock(START)
    engine = open_engine(data_dir, limits=LIMITS, clock=clock, throttling=False)
    engine.create_database(CTX, {"id": "s"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "s", body, ThroughputSpec(400))
    engine.create_container(CTX, "s", {**body, "id": "auto"}, ThroughputSpec(1000, autoscale=True))
    sizes: dict[str, int] = {}
    docs: dict[str, int] = {}
    for i in range(30):
        result = engine.create_item(CTX, "s", "c", {"id": f"d{i}", "k": f"k{i % 7}", "pad": "x" * (10 * i)})
        assert result.doc is not None
        sizes[result.pkrange_id] = sizes.get(result.pkrange_id, 0) + len(orjson.dumps(result.doc))
        docs[result.pkrange_id] = docs.get(result.pkrange_id, 0) + 1
    parents = {r.id for r in engine.container("s", "c").ranges}
    clock.advance(SPLIT_MINUTE * 60)
    offer = engine.offers[engine.container("s", "c").offer_rid or ""]
    after = 2 * LIMITS.max_ru_per_partition * len(parents)  # past P x max RU/s: every range splits (P7)
    engine.replace_offer(CTX, offer.rid, after)
    children = {r.id for r in engine.container("s", "c").ranges}
    assert children.isdisjoint(parents)
    clock.advance((QUIET_MINUTES - SPLIT_MINUTE) * 60)
    return Scenario(engine, clock, data_dir, sizes, docs, parents, children, after)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return ensure_certificates(tmp_path_factory.mktemp("monitor-storage-tls"))


@pytest.fixture(scope="module")
def scenario(
    tmp_path_factory: pytest.TempPathFactory, certificates: Certificates
) -> Iterator[tuple[Scenario, MetricsClient]]:
    built = _build(tmp_path_factory.mktemp("storage-data"))
    running = start_in_thread(built.engine, app=MetricsApp(built.engine), tls=certificates.server_context())
    yield built, _client(running, certificates)
    running.stop()


def _client(running: RunningEmulator, certificates: Certificates) -> MetricsClient:
    return MetricsClient(running.url.rstrip("/"), FixedToken(), connection_verify=str(certificates.ca), retry_total=0)


def _query(
    client: MetricsClient, metric: str, minutes: int, grain: int, aggregation: str, split: str = "", coll: str = "c"
) -> dict[tuple[float, str], float]:
    """(interval start, split value) -> value, for container `coll`, over [START, START + minutes)."""
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    filt = f"DatabaseName eq 's' and CollectionName eq '{coll}'" + (f" and {split} eq '*'" if split else "")
    (result,) = client.query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[metric],
        timespan=(start, start + dt.timedelta(minutes=minutes)),
        granularity=dt.timedelta(minutes=grain),
        aggregations=[aggregation],
        filter=filt,
        max_results=100,
    )
    (found,) = result.metrics
    out = {}
    for ts in found.timeseries:
        label = ts.metadata_values.get(split.lower(), "") if split else ""
        for point in ts.data:
            value = getattr(point, aggregation.lower())
            if value is not None:
                out[(point.timestamp.timestamp(), label)] = value
    return out


def _minute(m: int) -> float:
    return START + 60.0 * m


def test_partition_sizes_equal_what_was_written_and_the_split_ends_the_parents(
    scenario: tuple[Scenario, MetricsClient],
) -> None:
    s, client = scenario
    got = _query(client, PARTITION_SIZE, 10, 1, "Maximum", "PhysicalPartitionId")
    for m in range(SPLIT_MINUTE):
        assert {pk: v for (t, pk), v in got.items() if t == _minute(m)} == s.sizes
    after = {pk: v for (t, pk), v in got.items() if t == _minute(SPLIT_MINUTE)}
    assert set(after) == s.children  # the parents' series ended at the split, the children's began
    assert sum(after.values()) == sum(s.sizes.values())
    assert {pk for (t, pk) in got if t >= _minute(SPLIT_MINUTE)} == s.children
    coll = s.engine.container("s", "c")
    assert after == {r.id: r.size for r in coll.ranges}


def test_data_usage_and_document_count_forward_fill_across_a_quiet_hour(
    scenario: tuple[Scenario, MetricsClient],
) -> None:
    s, client = scenario
    usage = _query(client, DATA_USAGE, 65, 5, "Total")
    assert sorted(t for t, _ in usage) == [_minute(m) for m in range(0, 65, 5)]  # one sample per PT5M
    assert set(usage.values()) == {float(sum(s.sizes.values()))}
    hourly = _query(client, DATA_USAGE, 60, 60, "Average")
    assert hourly == {(_minute(0), ""): float(sum(s.sizes.values()))}
    count = _query(client, DOCUMENT_COUNT, 65, 5, "Total")
    assert set(count.values()) == {float(sum(s.docs.values()))}
    assert set(_query(client, INDEX_USAGE, 10, 5, "Maximum").values()) == {0.0}


def test_offer_replace_changes_throughput_at_that_minute(scenario: tuple[Scenario, MetricsClient]) -> None:
    s, client = scenario
    provisioned = _query(client, PROVISIONED, 15, 5, "Maximum")
    assert provisioned == {
        (_minute(0), ""): 400.0,
        (_minute(5), ""): s.throughput_after,
        (_minute(10), ""): s.throughput_after,
    }
    budgets = _query(client, PARTITION_THROUGHPUT, 10, 5, "Maximum", "PhysicalPartitionId")
    assert {pk: v for (t, pk), v in budgets.items() if t == _minute(0)} == {
        pk: 400.0 / len(s.parents) for pk in s.parents
    }
    per_child = min(s.throughput_after / len(s.children), LIMITS.max_ru_per_partition)
    assert {pk: v for (t, pk), v in budgets.items() if t == _minute(5)} == {pk: per_child for pk in s.children}
    assert _query(client, AUTOSCALE_MAX, 10, 5, "Maximum") == {}  # a manual container has no series
    assert set(_query(client, AUTOSCALE_MAX, 10, 5, "Maximum", coll="auto").values()) == {1000.0}


def test_a_grain_finer_than_emitted_is_refused(scenario: tuple[Scenario, MetricsClient]) -> None:
    _, client = scenario
    with pytest.raises(HttpResponseError) as caught:
        _query(client, DATA_USAGE, 10, 1, "Total")
    assert caught.value.status_code == 400
    message = str(caught.value.message)
    assert "PT1M" in message and "PT5M" in message and DATA_USAGE in message


def test_point_reads_take_no_snapshot(scenario: tuple[Scenario, MetricsClient]) -> None:
    s, _ = scenario
    calls: list[float] = []
    sampler = s.engine.metering.sampler
    assert sampler is not None

    def counting(now: float, meter: object) -> None:
        calls.append(now)
        sampler(now, meter)  # type: ignore[arg-type]

    s.engine.metering.sampler = counting
    try:
        before = s.engine.history.series("s", "c", PARTITION_SIZE, START, s.clock.now + 60)
        for i in range(5):
            s.engine.read_item(CTX, "s", "c", f"d{i}", [f"k{i % 7}"])
        assert calls == []
        assert s.engine.history.series("s", "c", PARTITION_SIZE, START, s.clock.now + 60) == before
    finally:
        s.engine.metering.sampler = sampler


def test_a_restarted_stand_in_serves_the_same_storage_history(tmp_path: Path, certificates: Certificates) -> None:
    s = _build(tmp_path / "data")
    metrics = [
        (PARTITION_SIZE, 1, "Maximum", "PhysicalPartitionId"),
        (DATA_USAGE, 5, "Total", ""),
        (PROVISIONED, 5, "Maximum", ""),
    ]
    answers = []
    for attempt in range(2):
        running = start_in_thread(s.engine, app=MetricsApp(s.engine), tls=certificates.server_context())
        try:
            client = _client(running, certificates)
            answers.append([_query(client, m, 75, g, a, split) for m, g, a, split in metrics])
        finally:
            running.stop()
        s.engine.close()
        if attempt == 0:
            s.engine = open_engine(s.data_dir, limits=LIMITS, clock=s.clock, throttling=False)
    assert answers[0] == answers[1] and all(answers[0])
