"""A getBatch answer of 200 that reports one metric failed (`errorCode`/`errorMessage`, no time series):
the collector names the metric in one line, exits 1 and keeps the other metrics, through the real
`MetricsClient` against the stand-in over real HTTPS (and `ruscope metrics`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from collectors.getbatch import failure_line, metric_errors
from cosmoscore.monitor.metrics import LATENCY_DIRECT, NORMALIZED_RU
from store import read_table, store_location
from tests.collectors.test_metrics import RESOURCE, ROOT, StandIn, collect, config, stand_in
from tests.emulator.history.test_history import _hot_workload

__all__ = ["stand_in"]  # the shared fixture

# Transcribed (one metric, its first point) from azure-rest-api-specs
# specification/monitor/data-plane/Microsoft.Insights/stable/2024-02-01/examples/MetricBatchExample.json.
RECORDED: dict[str, Any] = {
    "values": [
        {
            "starttime": "2023-02-01T20:00:00.123Z",
            "endtime": "2023-02-01T23:00:00.345Z",
            "interval": "PT15M",
            "value": [
                {
                    "id": "/subscriptions/12345678-abcd-1234-abcd-123456789abc/resourceGroups/TestGroup/providers/"
                    "Microsoft.Storage/storageAccounts/TestStorage1/providers/Microsoft.Insights/metrics/Ingress",
                    "type": "Microsoft.Insights/metrics",
                    "name": {"value": "Ingress", "localizedValue": "Ingress"},
                    "unit": "Bytes",
                    "timeseries": [
                        {
                            "metadatavalues": [
                                {"name": {"value": "apiname", "localizedValue": "apiname"}, "value": "GetBlob"}
                            ],
                            "data": [{"timeStamp": "2023-02-01T20:00:00Z", "average": 437}],
                        }
                    ],
                    "errorCode": "Success",
                }
            ],
            "namespace": "microsoft.storage/storageaccounts",
            "resourceregion": "eastus",
        }
    ]
}


def test_a_recorded_success_reports_no_error_and_a_failed_metric_is_named() -> None:
    assert metric_errors(RECORDED) == []
    failed = {"errorCode": "SomeError", "errorMessage": "could not query\nsecond line", "timeseries": []}
    body = {"values": [{"value": [RECORDED["values"][0]["value"][0], {"name": {"value": "X"}, **failed}]}]}
    assert metric_errors(body) == [("X", "SomeError", "could not query\nsecond line")]
    assert (
        failure_line(metric_errors(body))
        == "Azure Monitor answered 200 but reported X failed: SomeError: could not query"
    )
    assert metric_errors({"values": None}) == [] and metric_errors("not a body") == []


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")


def test_a_metric_failed_inside_a_200_is_one_line_and_the_rest_is_kept(
    stand_in: StandIn, tmp_path: Path, token: None
) -> None:
    _hot_workload(stand_in.engine, stand_in.clock, minutes=2)
    code, out, err = collect(stand_in, tmp_path, config(stand_in, metrics=[LATENCY_DIRECT, NORMALIZED_RU]))
    assert code == 1 and len(err) == 1, (out, err)
    assert f"metric {LATENCY_DIRECT!r}" in err[0] and "MetricNotComputed" in err[0] and "200" in err[0]
    assert not any(LATENCY_DIRECT in line for line in out)  # never a success line with 0 points
    frame = read_table(store_location(tmp_path), "metrics")
    assert set(frame["metric"]) == {NORMALIZED_RU} and len(frame) > 0


def test_cli_metrics_exits_1_naming_the_failed_metric(stand_in: StandIn, tmp_path: Path) -> None:
    path = tmp_path / "ruscope.toml"
    path.write_text(
        f'[[accounts]]\nname = "local"\nendpoint = "http://127.0.0.1:1/"\ndatabase = "t"\n'
        f'monitor_resource = "{RESOURCE}"\n\n[monitor]\nendpoint = "{stand_in.url}"\n'
        f'ca_bundle = "{stand_in.certs.ca}"\nmetrics = ["{LATENCY_DIRECT}", "{NORMALIZED_RU}"]\n',
        encoding="utf-8",
    )
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "local-token"}
    command = [sys.executable, "-m", "ruscope", "metrics", "--config", str(path), "--store", str(tmp_path / "s")]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert LATENCY_DIRECT in done.stderr and "MetricNotComputed" in done.stderr
    assert f"t {NORMALIZED_RU}: 0 new point(s)" in done.stdout
