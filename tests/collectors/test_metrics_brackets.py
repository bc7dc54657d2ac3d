"""Round brackets in a database or container name: the filter spells them `%2528` / `%2529` (azure-monitor.md
§7b R5), the stand-in decodes them and refuses a bracket written as is, and the names round-trip into the
store, through the real `MetricsClient` over real HTTPS (also where a capped answer is asked per container)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.querymetrics import MetricsClient

from collectors.getbatch import pin
from collectors.metrics import metric_filter
from cosmoscore.monitor.metrics import NAMESPACE, TOTAL_REQUEST_UNITS
from emulator.engine.facade import Engine, ThroughputSpec
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_metrics import RESOURCE, StandIn, collect
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, START
from tests.emulator.monitor.test_metrics import FixedToken

DATABASE = "shop (eu)"
CONTAINERS = ["orders(v2)", "carts)("]
OPERATIONS = ["Read", "Query", "Upsert"]


@pytest.fixture
def bracketed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    certs = ensure_certificates(tmp_path_factory.mktemp("metrics-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    engine.create_database(CTX, {"id": DATABASE})
    for name in CONTAINERS:
        body = {"id": name, "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
        engine.create_container(CTX, DATABASE, body, ThroughputSpec(400))
        for operation in OPERATIONS:  # the accounting's own recording call, one metered request each
            engine.history.record(START + 1, DATABASE, name, "0", operation, 200, 2.0)
    clock.advance(3 * 60)
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certs.server_context())
    yield StandIn(running, engine, clock, certs)
    running.stop()


def _operations(engine: Engine, container: str) -> set[str]:
    """The operations metered on `container` (its creation's included)."""
    series = engine.history.series(DATABASE, container, TOTAL_REQUEST_UNITS, START, START + 120)
    return {p.dimensions["OperationType"] for p in series}


def test_the_filter_spells_brackets_as_the_sdk_documents() -> None:
    text = metric_filter(DATABASE, TOTAL_REQUEST_UNITS)
    assert text.startswith("DatabaseName eq 'shop %2528eu%2529' and ")
    assert "CollectionName eq 'orders%2528v2%2529'" in pin(text, "CollectionName", "orders(v2)")


def test_the_stand_in_decodes_brackets_and_refuses_them_as_is(bracketed: StandIn) -> None:
    client = MetricsClient(bracketed.url, FixedToken(), connection_verify=str(bracketed.certs.ca), retry_total=0)
    span = (dt.datetime.fromtimestamp(START, dt.UTC), dt.datetime.fromtimestamp(START + 120, dt.UTC))
    ask = {"resource_ids": [RESOURCE], "metric_namespace": NAMESPACE, "metric_names": [TOTAL_REQUEST_UNITS]}
    (result,) = client.query_resources(
        **ask, timespan=span, filter="CollectionName eq 'orders%2528v2%2529' and OperationType eq '*'", max_results=10
    )
    got = {tuple(ts.metadata_values.values()) for ts in result.metrics[0].timeseries}
    assert got == {("orders(v2)", op) for op in _operations(bracketed.engine, "orders(v2)")}
    assert set(OPERATIONS) < {op for _, op in got}
    with pytest.raises(HttpResponseError) as caught:
        client.query_resources(**ask, timespan=span, filter="CollectionName eq 'orders(v2)'", max_results=10)
    assert caught.value.status_code == 400 and "%2528" in str(caught.value.message)


@pytest.mark.parametrize("cap", [1000, 5])  # 5: the 8 series are asked again per container, by name
def test_bracketed_names_round_trip_into_the_store(
    bracketed: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    monkeypatch.setattr("collectors.metrics.MAX_RESULTS", cap)
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": DATABASE, "monitor_resource": RESOURCE}
    monitor = {"endpoint": bracketed.url, "ca_bundle": str(bracketed.certs.ca), "metrics": [TOTAL_REQUEST_UNITS]}
    from collectors.config import parse_config

    cfg = parse_config({"accounts": [account], "monitor": {**monitor, "backfill_hours": 1}}, Path("m.toml"))
    code, out, err = collect(bracketed, tmp_path, cfg)
    assert (code, err) == (0, []), err
    frame = read_table(store_location(tmp_path), "metrics")
    assert set(frame["database"]) == {DATABASE}
    assert set(zip(frame["container"], frame["operation_type"], strict=True)) == {
        (c, op) for c in CONTAINERS for op in _operations(bracketed.engine, c)
    }
