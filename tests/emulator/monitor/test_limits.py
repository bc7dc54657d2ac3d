"""The stand-in's query limits, as Azure Monitor enforces them (cosmoscore.monitor.metrics, emulator.monitor.app):
asked through the real `MetricsClient` over HTTPS, a call past a limit is refused with the service's 400 (or 413
for a body too large to read) at once, without the work or the memory an answer would take."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator

import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.querymetrics import MetricsClient

from cosmoscore.monitor.metrics import MAX_METRIC_NAMES, MAX_RESOURCE_IDS, NORMALIZED_RU, TOTAL_REQUESTS
from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp, transport_limits
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _hot_workload, _setup
from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, FixedToken

Served = tuple[RunningEmulator, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    certificates = ensure_certificates(tmp_path_factory.mktemp("monitor-tls-limits"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    _hot_workload(engine, clock, minutes=2)
    running = start_in_thread(
        engine, app=MonitorApp(engine), tls=certificates.server_context(), limits=transport_limits()
    )
    yield running, str(certificates.ca)
    running.stop()


def _client(served: Served) -> MetricsClient:
    return MetricsClient(served[0].url.rstrip("/"), FixedToken(), connection_verify=served[1], retry_total=0)


def _ids(n: int) -> list[str]:
    return [RESOURCE.replace("localhost", f"account{i:05d}") for i in range(n)]


def _refused(served: Served, **query: object) -> HttpResponseError:
    base: dict[str, object] = {
        "resource_ids": [RESOURCE],
        "metric_namespace": NAMESPACE,
        "metric_names": [TOTAL_REQUESTS],
        "timespan": (dt.datetime.fromtimestamp(START, dt.UTC), dt.timedelta(minutes=3)),
    }
    started = time.monotonic()
    with pytest.raises(HttpResponseError) as caught:
        _client(served).query_resources(**{**base, **query})  # type: ignore[arg-type]
    assert time.monotonic() - started < 5, "refused without doing the work"
    return caught.value


def test_more_resource_ids_than_a_batch_takes_are_400(served: Served) -> None:
    _client(served).query_resources(
        resource_ids=_ids(MAX_RESOURCE_IDS),
        metric_namespace=NAMESPACE,
        metric_names=[TOTAL_REQUESTS],
        timespan=(dt.datetime.fromtimestamp(START, dt.UTC), dt.timedelta(minutes=3)),
    )
    error = _refused(served, resource_ids=_ids(MAX_RESOURCE_IDS + 1))
    assert error.status_code == 400 and "at most 50" in str(error.message)
    error = _refused(served, resource_ids=_ids(1_000))
    assert error.status_code == 400


def test_a_body_past_the_stand_ins_cap_is_413(served: Served) -> None:
    error = _refused(served, resource_ids=_ids(20_000))  # 2.7 MB
    assert error.status_code == 413


def test_more_metric_names_than_a_query_takes_are_400(served: Served) -> None:
    error = _refused(served, metric_names=[TOTAL_REQUESTS] * (MAX_METRIC_NAMES + 1))
    assert error.status_code == 400 and f"at most {MAX_METRIC_NAMES}" in str(error.message)
    error = _refused(served, metric_names=[TOTAL_REQUESTS] * 1_000)
    assert error.status_code == 400


def test_a_range_longer_than_the_retention_is_400(served: Served) -> None:
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    error = _refused(served, timespan=(start - dt.timedelta(days=94), start))
    assert error.status_code == 400 and "93 days" in str(error.message)
    ancient = dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC)
    error = _refused(served, timespan=ancient, granularity=dt.timedelta(days=1), metric_names=[NORMALIZED_RU])
    assert error.status_code == 400


def test_an_answer_past_the_point_cap_is_400_before_any_work(served: Served) -> None:
    start = dt.datetime.fromtimestamp(START, dt.UTC)
    error = _refused(
        served,
        resource_ids=_ids(MAX_RESOURCE_IDS),
        metric_names=[TOTAL_REQUESTS] * MAX_METRIC_NAMES,
        timespan=(start - dt.timedelta(days=1), start),
    )
    assert error.status_code == 400 and "data points" in str(error.message)
