"""The collectors' flattening fed with bodies the real service is documented to send, not the stand-in's.

The stand-in and the collectors were written together, so where both share a misreading of the wire format
a test of one against the other passes anyway. Here the bodies are transcribed (shortened, values kept) from
Microsoft's own material, served as they are by a canned HTTPS server, read by the real `MetricsClient` /
`LogsQueryClient`, and flattened by the collectors' own functions:

- METRICS_BATCH: Azure/azure-rest-api-specs,
  specification/monitor/data-plane/Microsoft.Insights/stable/2024-02-01/examples/MetricBatchExample.json
  (commit 6eefb0a5): dimension names lower-cased in `metadatavalues`, `timeStamp` with a capital S, points
  with no samples carrying only `timeStamp`, `errorCode` per metric, one `values[]` entry per resource.
- LOGS_PARTIAL: the Azure SDK for Python's recording
  `test_logs_client.pyTestLogsClienttest_logs_single_query_with_partial_success.json` (Azure/azure-sdk-assets),
  as /work/shared/reference/azure-monitor.md §3.1 transcribes it: HTTP 200 with both `tables` and `error`.
"""

from __future__ import annotations

import datetime as dt
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from azure.monitor.query import LogsQueryClient, LogsQueryPartialResult
from azure.monitor.querymetrics import MetricsClient

from collectors.logs import table_frame
from collectors.metrics import points_table
from emulator.monitor.tls import ensure_certificates
from store.records import METRICS
from tests.emulator.monitor.test_metrics import FixedToken

SUB = "12345678-abcd-1234-abcd-123456789abc"
STORAGE1 = f"/subscriptions/{SUB}/resourceGroups/TestGroup/providers/Microsoft.Storage/storageAccounts/TestStorage1"


def _series(apiname: str, authentication: str, data: list[dict[str, Any]]) -> dict[str, Any]:
    names = (("apiname", apiname), ("authentication", authentication))
    meta = [{"name": {"value": n, "localizedValue": n}, "value": v} for n, v in names]
    return {"metadatavalues": meta, "data": data}


METRICS_BATCH: dict[str, Any] = {
    "values": [
        {
            "starttime": "2023-02-01T20:00:00.123Z",
            "endtime": "2023-02-01T23:00:00.345Z",
            "interval": "PT15M",
            "value": [
                {
                    "id": f"{STORAGE1}/providers/Microsoft.Insights/metrics/Ingress",
                    "type": "Microsoft.Insights/metrics",
                    "name": {"value": "Ingress", "localizedValue": "Ingress"},
                    "displayDescription": "The amount of ingress data, in bytes.",
                    "unit": "Bytes",
                    "timeseries": [
                        _series(
                            "GetBlob",
                            "SAS",
                            [
                                {"timeStamp": "2023-02-01T20:00:00Z", "average": 437, "minimum": 437, "maximum": 437},
                                {
                                    "timeStamp": "2023-02-01T20:15:00Z",
                                    "average": 438.0735294117647,
                                    "minimum": 437,
                                    "maximum": 583,
                                },
                            ],
                        ),
                        _series(
                            "GetBlobServiceProperties",
                            "AccountKey",
                            [
                                {"timeStamp": "2023-02-01T20:00:00Z"},
                                {"timeStamp": "2023-02-01T20:15:00Z"},
                                {"timeStamp": "2023-02-01T22:00:00Z", "average": 342, "minimum": 342, "maximum": 342},
                            ],
                        ),
                    ],
                    "errorCode": "Success",
                }
            ],
            "namespace": "microsoft.storage/storageaccounts",
            "resourceregion": "eastus",
            "resourceid": STORAGE1,
        }
    ]
}

LOGS_PARTIAL: dict[str, Any] = {
    "tables": [
        {
            "name": "PrimaryResult",
            "columns": [{"name": "TimeGenerated", "type": "datetime"}, {"name": "RequestCharge", "type": "real"}],
            "rows": [["2026-11-29T19:02:25.422Z", 6.81]],
        }
    ],
    "error": {
        "code": "PartialError",
        "message": "There were some errors when processing your query.",
        "details": [
            {
                "code": "EngineError",
                "message": "Something went wrong processing your query on the server.",
                "innererror": {
                    "code": "-2133196788",
                    "message": "(E_OVERFLOW)",
                    "severity": 2,
                    "severityName": "Error",
                },
            }
        ],
    },
}


class _Canned(http.server.BaseHTTPRequestHandler):
    body: bytes = b""

    def do_POST(self) -> None:  # noqa: N802 - the http.server spelling
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return


@pytest.fixture
def canned(tmp_path: Path) -> Iterator[tuple[type[_Canned], str, str]]:
    """An HTTPS server on a free port answering every POST with `handler.body`; (handler, url, CA path)."""
    certificates = ensure_certificates(tmp_path / "tls")
    handler = type("Handler", (_Canned,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.socket = certificates.server_context().wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, f"https://127.0.0.1:{server.server_address[1]}", str(certificates.ca)
    finally:
        server.shutdown()
        server.server_close()


def test_the_rest_specifications_batch_example_flattens_to_metrics_rows(canned: Any) -> None:
    handler, url, ca = canned
    handler.body = orjson.dumps(METRICS_BATCH)
    client = MetricsClient(url, FixedToken(), connection_verify=ca, retry_total=0)
    start = dt.datetime(2023, 2, 1, 20, tzinfo=dt.UTC)
    results = client.query_resources(
        resource_ids=[STORAGE1],
        metric_names=["Ingress"],
        metric_namespace="Microsoft.Storage/storageAccounts",
        timespan=(start, dt.timedelta(hours=3)),
        granularity=dt.timedelta(minutes=15),
        aggregations=["Average"],
    )
    ids = {"account": "TestStorage1", "database": "", "aggregation": "Average"}
    data = points_table(results, ids, "PT15M", start, start + dt.timedelta(hours=3))
    assert data.schema.names == METRICS.schema.names
    rows = sorted(data.to_pylist(), key=lambda r: (r["time"], r["value"]))
    # the points with only a timeStamp are empty intervals, not zeros; the rest keep their exact averages
    assert [(r["time"].strftime("%H:%M"), r["value"]) for r in rows] == [
        ("20:00", 437.0),
        ("20:15", 438.0735294117647),
        ("22:00", 342.0),
    ]
    assert {(r["metric"], r["unit"], r["grain"], r["aggregation"]) for r in rows} == {
        ("Ingress", "Bytes", "PT15M", "Average")
    }


def test_a_partial_result_recorded_from_the_service_keeps_its_rows_typed(canned: Any) -> None:
    handler, url, ca = canned
    handler.body = orjson.dumps(LOGS_PARTIAL)
    client = LogsQueryClient(FixedToken(), endpoint=url + "/v1", connection_verify=ca, retry_total=0)
    result = client.query_workspace("w", "CDBDataPlaneRequests | take 1", timespan=None)
    assert isinstance(result, LogsQueryPartialResult) and result.partial_error is not None
    (table,) = result.partial_data
    frame = table_frame(list(table.columns), list(table.columns_types), list(table.rows), {})
    assert isinstance(frame["TimeGenerated"].dtype, pd.DatetimeTZDtype) and str(frame["TimeGenerated"].dt.tz) == "UTC"
    assert frame["TimeGenerated"][0] == dt.datetime(2026, 11, 29, 19, 2, 25, 422000, tzinfo=dt.UTC)
    assert frame["RequestCharge"].tolist() == [6.81]
