"""Risky KQL (deep nesting, values past a long or a datetime, arguments of the wrong type) is answered
with a result or the service's 400 (`BadArgumentError` over a Syntax/Semantic error), never a 500: the
known cases through the real `LogsQueryClient`, and a Hypothesis generator of risky queries in-process."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from azure.core.exceptions import HttpResponseError
from azure.monitor.query import LogsQueryClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.logs import LogsApp
from emulator.monitor.metrics import MetricsApp
from emulator.monitor.query import MonitorRequest
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, FixedToken

BASE = "CDBDataPlaneRequests | summarize n=count() | extend x = "
KNOWN = [
    BASE + "-" * 600 + "1",  # unary minus 600 deep
    "CDBDataPlaneRequests | where " + "not(" * 500 + "true" + ")" * 500 + " | count",
    BASE + "9223372036854775807 + 1",  # past a long
    BASE + "99999999999999999999",
    BASE + "toint(1e30)",
    BASE + "tolong(1e30)",
    BASE + "round(1.5, 'a')",
    BASE + "datetime(9999-12-31) + 1d",  # past a datetime
    BASE + "datetime(0001-01-01) - 1d",
    BASE + "ago(10000000d)",
    BASE + "1d * 1e20",
    "CDBDataPlaneRequests | where TimeGenerated > ago(99999999d) | count",
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    engine = Engine()
    engine.history.record(engine.clock(), "d", "c", "0", "Read", 200, 1.0, partition_key="k", budget=400.0)
    return engine


@pytest.fixture(scope="module")
def served(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningEmulator, str]]:
    certificates = ensure_certificates(tmp_path_factory.mktemp("monitor-tls-risky"))
    running = start_in_thread(engine, app=MonitorApp(engine), tls=certificates.server_context())
    yield running, str(certificates.ca)
    running.stop()


@pytest.mark.parametrize("query", KNOWN, ids=range(len(KNOWN)))
def test_a_known_risky_query_is_400(served: tuple[RunningEmulator, str], query: str) -> None:
    client = LogsQueryClient(FixedToken(), endpoint=served[0].url + "v1", connection_verify=served[1], retry_total=0)
    with pytest.raises(HttpResponseError) as caught:
        client.query_workspace("w", query, timespan=None)
    assert caught.value.status_code == 400
    body = orjson.loads(caught.value.response.text())
    assert body["error"]["code"] == "BadArgumentError"
    assert body["error"]["innererror"]["code"] in ("SyntaxError", "SemanticError")


def _status(app: LogsApp | MetricsApp, path: str, body: object) -> int:
    request = MonitorRequest("POST", path, {b"authorization": b"Bearer t"}, orjson.dumps(body))
    return app.handle(request)[0]


_EXTREMES = st.sampled_from(
    [
        "9223372036854775807",
        "-9223372036854775808",
        "99999999999999999999",
        "1e308",
        "1e999",
        "0",
        "-1",
        "0.5",
        "'a'",
        "''",
        "true",
        "datetime(9999-12-31)",
        "datetime(0001-01-01)",
        "now()",
        "1d",
        "100000000d",
        "0s",
        "n",
        "TimeGenerated",
    ]
)
_FUNCTIONS = st.sampled_from(
    ["round", "bin", "floor", "ago", "todouble", "toint", "tolong", "tostring", "not", "isempty", "iff", "now"]
)
_OPS = st.sampled_from(["+", "-", "*", "/", "%", "==", "<", ">", "and", "or"])


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        call = st.tuples(_FUNCTIONS, st.lists(inner, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})")
        binary = st.tuples(inner, _OPS, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
        return call | binary

    nested = st.tuples(st.integers(300, 1200), st.sampled_from(["(", "-", "not("])).map(
        lambda t: t[1] * t[0] + "1" + (")" * t[0] if t[1] != "-" else "")
    )
    return st.recursive(_EXTREMES, extend, max_leaves=8) | nested


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(expression=_expressions(), where=st.booleans())
def test_a_generated_risky_query_is_a_result_or_a_4xx(engine: Engine, expression: str, where: bool) -> None:
    text = (
        f"CDBDataPlaneRequests | where {expression} | count"
        if where
        else f"CDBDataPlaneRequests | summarize n=count() by bin(TimeGenerated, 1m) | extend x = {expression}"
    )
    assert _status(LogsApp(engine), "/v1/workspaces/w/query", {"query": text, "timespan": None}) in (200, 400)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(1, 3000))
def test_a_deeply_nested_metrics_filter_is_a_result_or_a_400(engine: Engine, depth: int) -> None:
    query = "metricnamespace=" + NAMESPACE + "&metricnames=TotalRequests&filter=" + "(" * depth
    query += "DatabaseName%20eq%20'd'" + ")" * depth
    path = f"/subscriptions/0000/metrics:getBatch?{query}"
    assert _status(MetricsApp(engine), path, {"resourceids": [RESOURCE]}) in (200, 400)
