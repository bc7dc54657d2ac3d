"""The Azure Monitor stand-in's metrics API, queried by the real `MetricsClient` over real HTTPS: its
values equal the engine's `History` (itself checked against the raw records in test_history)."""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.monitor.querymetrics import Metric, MetricsClient, MetricsQueryResult

from cosmoscore.monitor.metrics import LATENCY_DIRECT, NORMALIZED_RU, TOTAL_REQUEST_UNITS
from emulator.engine.facade import Engine
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.tls import Certificates, ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _by, _hot_workload, _setup

RESOURCE = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
NAMESPACE = "Microsoft.DocumentDB/databaseAccounts"
MINUTES = 2
CA: dict[str, Path] = {}  # each running stand-in's CA, by its URL


class FixedToken:
    """A TokenCredential that returns one fixed token (the stand-in accepts any)."""

    def __init__(self, token: str = "local-token") -> None:
        self.token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(self.token, 4_102_444_800)


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return ensure_certificates(tmp_path_factory.mktemp("monitor-tls"))


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningEmulator, Engine, str, list[str]]]:
    certificates = ensure_certificates(tmp_path_factory.mktemp("monitor-tls-module"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, cold, _ = _hot_workload(engine, clock, minutes=MINUTES)
    running = start_in_thread(engine, app=MetricsApp(engine), tls=certificates.server_context())
    CA[running.url] = certificates.ca
    yield running, engine, hot, cold
    running.stop()


def _client(emu: RunningEmulator, token: str = "local-token") -> MetricsClient:
    return MetricsClient(emu.url.rstrip("/"), FixedToken(token), connection_verify=str(CA[emu.url]), retry_total=0)


def _metric(result: MetricsQueryResult, name: str) -> Metric:
    return next(m for m in result.metrics if m.name == name)


def _span() -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    return start, start + dt.timedelta(minutes=MINUTES + 1)


def test_certificates_are_private_and_kept(certs: Certificates) -> None:
    for path in (certs.ca, certs.cert, certs.key):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    before = certs.ca.read_bytes()
    assert ensure_certificates(certs.ca.parent).ca.read_bytes() == before  # made once, then reused


def test_normalized_ru_by_pkrange_equals_the_history(stand_in: tuple[RunningEmulator, Engine, str, list[str]]) -> None:
    emu, engine, hot, cold = stand_in
    results = _client(emu).query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[NORMALIZED_RU],
        timespan=_span(),
        granularity=dt.timedelta(minutes=1),
        aggregations=["Maximum"],
        filter="DatabaseName eq 't' and CollectionName eq 'c' and PartitionKeyRangeId eq '*'",
        max_results=100,
    )
    (result,) = results
    metric = _metric(result, NORMALIZED_RU)
    assert metric.unit == "Percent" and metric.id == f"{RESOURCE}/providers/Microsoft.Insights/metrics/{NORMALIZED_RU}"
    got = {
        (mv.timestamp.timestamp(), ts.metadata_values["partitionkeyrangeid"]): mv.maximum
        for ts in metric.timeseries
        for mv in ts.data
        if mv.maximum is not None
    }
    start, end = _span()
    expected = _by(engine.history.series("t", "c", NORMALIZED_RU, START, end.timestamp()), "PartitionKeyRangeId")
    assert got == pytest.approx(expected) and got
    assert all(v >= 99 for (_, pk), v in got.items() if pk == hot)
    assert all(v <= 10 for (_, pk), v in got.items() if pk in cold)
    assert {ts.metadata_values["partitionkeyrangeid"] for ts in metric.timeseries} == {hot, *cold}


def test_total_request_units_by_status_code(stand_in: tuple[RunningEmulator, Engine, str, list[str]]) -> None:
    emu, engine, _, _ = stand_in
    start, end = _span()
    (result,) = _client(emu).query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[TOTAL_REQUEST_UNITS],
        timespan=(start, end),
        granularity=dt.timedelta(minutes=5),
        aggregations=["Total"],
        filter="StatusCode eq '*'",
        max_results=50,
    )
    got = {
        ts.metadata_values["statuscode"]: sum(mv.total or 0 for mv in ts.data)
        for ts in _metric(result, TOTAL_REQUEST_UNITS).timeseries
    }
    expected: dict[str, float] = {}
    for p in engine.history.series("t", "c", TOTAL_REQUEST_UNITS, START, end.timestamp()):
        expected[p.dimensions["StatusCode"]] = expected.get(p.dimensions["StatusCode"], 0.0) + p.value
    assert got == pytest.approx(expected)
    assert set(got) >= {"200", "429"}


def test_without_a_token_the_client_raises_401(stand_in: tuple[RunningEmulator, Engine, str, list[str]]) -> None:
    with pytest.raises(ClientAuthenticationError) as caught:
        _client(stand_in[0], token="").query_resources(
            resource_ids=[RESOURCE], metric_namespace=NAMESPACE, metric_names=[NORMALIZED_RU], timespan=_span()
        )
    assert caught.value.status_code == 401


def test_unknown_metric_and_bad_interval_are_400(stand_in: tuple[RunningEmulator, Engine, str, list[str]]) -> None:
    client = _client(stand_in[0])
    with pytest.raises(HttpResponseError) as caught:
        client.query_resources(
            resource_ids=[RESOURCE], metric_namespace=NAMESPACE, metric_names=["NoSuchMetric"], timespan=_span()
        )
    assert caught.value.status_code == 400
    assert "Failed to find metric configuration for provider: Microsoft.DocumentDB" in str(caught.value.message)
    with pytest.raises(HttpResponseError) as caught:
        client.query_resources(
            resource_ids=[RESOURCE],
            metric_namespace=NAMESPACE,
            metric_names=[NORMALIZED_RU],
            timespan=_span(),
            granularity=dt.timedelta(minutes=2),
        )
    assert caught.value.status_code == 400 and "Invalid interval" in str(caught.value.message)


def test_a_metric_it_cannot_compute_fails_inside_a_200(
    stand_in: tuple[RunningEmulator, Engine, str, list[str]],
) -> None:
    """The answer reports the one metric failed (errorCode/errorMessage, no time series) and serves the
    other; the public SDK model keeps neither field, the raw body has both (azure-monitor.md §7b R4, R11)."""
    raw: list[Any] = []
    (result,) = _client(stand_in[0]).query_resources(
        resource_ids=[RESOURCE],
        metric_namespace=NAMESPACE,
        metric_names=[LATENCY_DIRECT, NORMALIZED_RU],
        timespan=_span(),
        aggregations=["Maximum"],
        raw_response_hook=raw.append,
    )
    latency, normalized = _metric(result, LATENCY_DIRECT), _metric(result, NORMALIZED_RU)
    assert latency.timeseries == [] and normalized.timeseries
    assert not hasattr(latency, "error_code")  # dropped by the public model
    body = raw[-1].http_response.json()
    by_name = {m["name"]["value"]: m for m in body["values"][0]["value"]}
    assert by_name[NORMALIZED_RU]["errorCode"] == "Success"
    assert by_name[LATENCY_DIRECT]["errorCode"] not in (None, "Success")
    assert LATENCY_DIRECT in by_name[LATENCY_DIRECT]["errorMessage"]
    with pytest.raises(HttpResponseError) as caught:  # still checked like any query: an aggregation it lacks
        _client(stand_in[0]).query_resources(
            resource_ids=[RESOURCE],
            metric_namespace=NAMESPACE,
            metric_names=[LATENCY_DIRECT],
            timespan=_span(),
            aggregations=["Count"],
        )
    assert caught.value.status_code == 400
