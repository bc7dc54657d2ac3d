"""The logs collector with the real `LogsQueryClient` over real HTTPS against a small Log Analytics server:
rows of diagnostic logs (the §6 columns, filtered by the request's `timespan`) answered in the service's wire
shapes (azure-monitor.md §3.1: success, PartialError, 400/401/404/429 error bodies). The SDK parses every
answer itself; nothing of it is mocked. End-to-end tests against the emulator's stand-in are in
test_logs_standin.py."""

from __future__ import annotations

import datetime as dt
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from azure.monitor.query import LogsQueryClient

from collectors.config import Config, ConfigError, parse_config
from collectors.config.monitor import LOGS_ENDPOINT
from collectors.fleet import collect_fleet
from collectors.logs import table_frame, window
from collectors.registry import collector, run_collector
from emulator.monitor.tls import Certificates, ensure_certificates
from store import read_table, store_location
from tests.emulator.monitor.test_metrics import FixedToken

WORKSPACE = "11111111-2222-3333-4444-555555555555"
START = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
Answer = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any], dict[str, str]]]


def _span(timespan: str) -> tuple[dt.datetime, dt.datetime]:
    first, last = timespan.split("/")
    return dt.datetime.fromisoformat(first), dt.datetime.fromisoformat(last)


class Workspace:
    """Raw log rows per table, and answers computed from them as the queries ask (time, bins, keys)."""

    def __init__(self) -> None:
        self.ru: list[tuple[dt.datetime, str, str, float]] = []  # (time, pkrange, key, RU) in db t, container c
        self.requests: list[dict[str, Any]] = []
        self.override: Answer | None = None

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        self.requests.append({"path": path, **body})
        return self.override(path, body) if self.override is not None else self.logs(path, body)

    def logs(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if f"/v1/workspaces/{WORKSPACE}/query" != path:
            return 404, {"error": {"code": "WorkspaceNotFoundError", "message": "The workspace could not be found"}}, {}
        start, end = _span(body["timespan"])
        query = body["query"]
        if "PartitionKeyRUConsumption" in query:
            legacy = query.startswith("AzureDiagnostics")
            return 200, {"tables": [self._ru_table(start, end, legacy)]}, {}
        if "PartitionKeyStatistics" in query:
            return 200, {"tables": [_table(SIZE_COLUMNS, [[_iso(START), "t", "c", '["hot"]', 4096]])]}, {}
        return 200, {"tables": [_table([("TimeGenerated", "datetime")], [])]}, {}

    def _ru_table(self, start: dt.datetime, end: dt.datetime, legacy: bool) -> dict[str, Any]:
        sums: dict[tuple[dt.datetime, str, str], list[float]] = {}
        for time, pkrange, key, ru in self.ru:
            if start <= time < end:
                slot = time - dt.timedelta(minutes=time.minute % 5, seconds=time.second)
                sums.setdefault((slot, pkrange, key), []).append(ru)
        names = RU_LEGACY if legacy else RU_COLUMNS
        rows = [[_iso(t), "t", "c", pk, key, sum(v)] for (t, pk, key), v in sorted(sums.items())]
        return _table(names, rows)


RU_COLUMNS = [
    ("TimeGenerated", "datetime"),
    ("DatabaseName", "string"),
    ("CollectionName", "string"),
    ("PartitionKeyRangeId", "string"),
    ("PartitionKey", "string"),
    ("RequestCharge", "real"),
]
RU_LEGACY = [
    ("TimeGenerated", "datetime"),
    ("databaseName_s", "string"),
    ("collectionName_s", "string"),
    ("partitionKeyRangeId_s", "string"),
    ("partitionKey_s", "string"),
    ("RequestCharge", "real"),
]
SIZE_COLUMNS = [
    ("TimeGenerated", "datetime"),
    ("DatabaseName", "string"),
    ("CollectionName", "string"),
    ("PartitionKey", "string"),
    ("SizeKb", "int"),
]


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _table(columns: list[tuple[str, str]], rows: list[list[Any]]) -> dict[str, Any]:
    return {"name": "PrimaryResult", "columns": [{"name": n, "type": t} for n, t in columns], "rows": rows}


class Server:
    def __init__(self, workspace: Workspace, certs: Certificates) -> None:
        handler = _handler(workspace)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.socket = certs.server_context().wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler(workspace: Workspace) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if not self.headers.get("Authorization", "").removeprefix("Bearer ").strip():
                status, payload, headers = 401, {"error": {"code": "AuthorizationRequiredError", "message": "x"}}, {}
            else:
                status, payload, headers = workspace.answer(self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return ensure_certificates(tmp_path_factory.mktemp("logs-tls"))


@pytest.fixture
def workspace() -> Workspace:
    return Workspace()


@pytest.fixture
def server(workspace: Workspace, certs: Certificates) -> Iterator[Server]:
    running = Server(workspace, certs)
    yield running
    running.stop()


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")


class Clock:
    def __init__(self, now: dt.datetime) -> None:
        self.now = now.timestamp()

    def __call__(self) -> float:
        return self.now


def config(server: Server, certs: Certificates, **monitor: Any) -> Config:
    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    section = {
        "endpoint": server.url,
        "logs_endpoint": server.url,
        "workspace_id": WORKSPACE,
        "ca_bundle": str(certs.ca),
        "backfill_hours": 1,
        "overlap_minutes": 10,
        "logs_lag_minutes": 0,
        **monitor,
    }
    return parse_config({"accounts": [account], "monitor": section}, Path("logs.toml"))


def collect(cfg: Config, store: Path, clock: Clock) -> tuple[int, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    summary = run_collector(
        collector("logs"), cfg, store=store_location(store), clock=clock, out=out.append, err=err.append
    )
    return summary.exit_code, out, err


def test_kusto_types_become_pandas_dtypes_through_the_real_sdk(
    server: Server, certs: Certificates, workspace: Workspace
) -> None:
    columns = [("T", "datetime"), ("L", "long"), ("I", "int"), ("R", "real"), ("S", "string"), ("B", "bool")]
    rows = [["2026-11-30T12:00:00Z", 5, 7, 1.5, "a", True], [None, None, None, None, None, None]]
    workspace.override = lambda path, body: (200, {"tables": [_table(columns, rows)]}, {})
    client = LogsQueryClient(
        FixedToken(), endpoint=server.url, audience=LOGS_ENDPOINT, connection_verify=str(certs.ca), retry_total=0
    )
    table = client.query_workspace(WORKSPACE, "T | take 2", timespan=dt.timedelta(hours=1)).tables[0]
    frame = table_frame(table.columns, table.columns_types, table.rows, {"S": "Renamed"})
    assert [str(t) for t in frame.dtypes] == ["datetime64[us, UTC]", "Int64", "Int64", "float64", "string", "boolean"]
    assert list(frame.columns) == ["T", "L", "I", "R", "Renamed", "B"]
    assert frame["T"][0] == pd.Timestamp("2026-11-30T12:00:00Z") and frame["L"][0] == 5
    assert frame.iloc[1].isna().all()


def _hot_and_cold(workspace: Workspace, start: dt.datetime, minutes: int) -> None:
    for minute in range(minutes):
        moment = start + dt.timedelta(minutes=minute, seconds=10)
        workspace.ru += [(moment, "0", '["hot"]', 50.0), (moment, "0", '["hot"]', 40.0), (moment, "1", '["cold"]', 1.0)]


@pytest.mark.parametrize("mode", ["resource-specific", "azure-diagnostics"])
def test_rows_are_stored_once_with_no_gap(
    server: Server, certs: Certificates, workspace: Workspace, tmp_path: Path, token: None, mode: str
) -> None:
    clock = Clock(START + dt.timedelta(minutes=20, seconds=30))
    _hot_and_cold(workspace, START - dt.timedelta(minutes=30), 60)
    cfg = config(server, certs, logs_mode=mode)
    code, out, err = collect(cfg, tmp_path, clock)
    assert (code, err) == (0, []), err
    sent = [r for r in workspace.requests if "PartitionKeyRUConsumption" in r["query"]]
    assert sent[0]["timespan"] == "2026-11-30T11:20:00.000Z/2026-11-30T12:20:00.000Z"  # backfill .. last full bin
    assert sent[0]["query"].startswith("AzureDiagnostics" if mode == "azure-diagnostics" else "CDBPartition")
    frame = read_table(store_location(tmp_path), "log_key_ru")
    by_key = frame.groupby("partition_key")["request_charge"].sum().sort_values(ascending=False)
    assert list(by_key.index) == ['["hot"]', '["cold"]'] and by_key.iloc[0] == 90.0 * 50
    assert set(frame["pkrange_id"]) == {"0", "1"} and not frame["partial"].any()
    assert str(frame["request_charge"].dtype).lower() == "float64" and str(frame["time"].dtype) == "datetime64[us, UTC]"

    code, out, err = collect(cfg, tmp_path, clock)  # nothing new: nothing written
    assert (code, err) == (0, [])
    assert len(read_table(store_location(tmp_path), "log_key_ru")) == len(frame)
    assert any("logs key_ru: 0 new row(s)" in line for line in out), out

    clock.now += 600  # ten more minutes of logs: the next run adds them, no repeat, no gap
    code, out, err = collect(cfg, tmp_path, clock)
    assert (code, err) == (0, [])
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert not frame.duplicated(["time", "pkrange_id", "partition_key"]).any()
    times = sorted(set(frame["time"]))
    assert times[-1] == pd.Timestamp("2026-11-30T12:25:00Z") and len(times) == 12  # 11:20 .. 12:25 every 5 min
    assert all(b - a == pd.Timedelta(minutes=5) for a, b in zip(times, times[1:]))

    sizes = read_table(store_location(tmp_path), "log_key_sizes")
    assert list(sizes["size_kb"]) == [4096] * 3 and sizes["generated"].iloc[0] == pd.Timestamp(START)


PARTIAL_ERROR = {
    "code": "PartialError",
    "message": "There were some errors when processing your query.",
    "details": [
        {
            "code": "EngineError",
            "message": "Something went wrong processing your query on the server.",
            "innererror": {"code": "-2133196788", "message": "E_OVERFLOW", "severity": 2, "severityName": "Error"},
        }
    ],
}


def test_a_partial_result_is_stored_flagged_and_said(
    server: Server, certs: Certificates, workspace: Workspace, tmp_path: Path, token: None
) -> None:
    clock = Clock(START + dt.timedelta(minutes=20))
    _hot_and_cold(workspace, START, 20)

    def partial(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        status, payload, headers = workspace.logs(path, body)
        return status, {**payload, "error": PARTIAL_ERROR} if "RUConsumption" in body["query"] else payload, headers

    workspace.override = partial
    code, out, err = collect(config(server, certs), tmp_path, clock)
    assert code == 1 and len(err) == 2 and "'key_ru': partial result (PartialError" in err[0], err
    assert "'key_operations': partial result (PartialError" in err[1], err  # the same table, per operation
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert len(frame) == 8 and frame["partial"].all()

    workspace.override = None  # the partial window is asked again; the rows it lacked are added
    workspace.ru.append((START + dt.timedelta(minutes=3), "2", '["late"]', 7.0))
    code, out, err = collect(config(server, certs), tmp_path, clock)
    assert (code, err) == (0, [])
    frame = read_table(store_location(tmp_path), "log_key_ru")
    assert len(frame) == 9 and not frame[frame["partition_key"] == '["late"]']["partial"].any()


SEMANTIC_400 = {
    "error": {
        "message": "The request had some invalid properties",
        "code": "BadArgumentError",
        "innererror": {
            "code": "SemanticError",
            "message": "A semantic error occurred.",
            "innererror": {
                "code": "SEM0100",
                "message": "Failed to resolve table expression named 'CDBDataPlaneRequests'",
            },
        },
    }
}


def test_a_refused_query_and_throttling_fail_that_query_only(
    server: Server, certs: Certificates, workspace: Workspace, tmp_path: Path, token: None
) -> None:
    clock = Clock(START + dt.timedelta(minutes=20))
    _hot_and_cold(workspace, START, 20)

    def answer(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if "DataPlaneRequests" in body["query"]:
            return 400, SEMANTIC_400, {}
        if "QueryRuntimeStatistics" in body["query"]:
            return 429, {"error": {"code": "ThrottledError", "message": "Too many requests"}}, {"Retry-After": "0.01"}
        return workspace.logs(path, body)

    workspace.override = answer
    code, out, err = collect(config(server, certs), tmp_path, clock)
    assert code == 1 and len(err) == 3, err
    assert "'throttles': 400 BadArgumentError: Failed to resolve table expression named" in err[0]
    assert "'query_stats': 429 throttled by Log Analytics after 3 retries" in err[1]
    assert "'query_ru': 400 BadArgumentError" in err[2]  # it joins CDBDataPlaneRequests: refused as throttles
    queried = [r["query"] for r in workspace.requests if "QueryRuntimeStatistics" in r["query"]]
    assert sum("DataPlaneRequests" not in q for q in queried) == 4  # query_stats retried, as advised
    assert len(read_table(store_location(tmp_path), "log_key_ru")) == 8  # what was collected is kept


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_faults_are_one_line_each_and_other_collectors_still_run(
    server: Server, certs: Certificates, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(START + dt.timedelta(minutes=20))
    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "")
    code, _, err = collect(config(server, certs), tmp_path, clock)
    assert code == 1 and len(err) == 1 and "401" in err[0] and "Log Analytics Reader" in err[0], err

    monkeypatch.setenv("RUSCOPE_MONITOR_TOKEN", "local-token")
    other = "00000000-0000-0000-0000-000000000000"
    code, _, err = collect(config(server, certs, workspace_id=other), tmp_path, clock)
    assert code == 1 and len(err) == 1 and f"no workspace {other}" in err[0] and "404" in err[0], err

    down = f"https://127.0.0.1:{_free_port()}"
    cfg = config(server, certs, logs_endpoint=down)
    out: list[str] = []
    errors: list[str] = []
    outcome = collect_fleet(
        [collector("logs"), collector("storage")],
        cfg,
        store=store_location(tmp_path),
        out=out.append,
        err=errors.append,
    )
    assert outcome.exit_code == 1
    assert [line for line in errors if "Log Analytics" in line] == [
        f"Log Analytics: cannot reach {down}: " + errors[0].split(": ", 2)[2]
    ]
    # the fleet went on: the account (nothing listens there) is checked before storage, one line of its own
    assert errors[1:] == [line for line in errors if line.startswith("account 'local': ")], errors
    assert len(errors) == 2 and "http://127.0.0.1:1/" in errors[1]
    assert all("local-token" not in line for line in [*out, *errors])


def test_nothing_to_do_without_a_workspace(server: Server, certs: Certificates, tmp_path: Path, token: None) -> None:
    cfg = config(server, certs, workspace_id=None)
    code, out, err = collect(cfg, tmp_path, Clock(START))
    assert (code, err) == (0, [])
    assert out[0] == "local: no Log Analytics workspace (monitor.workspace_id): no logs to collect"
    assert read_table(store_location(tmp_path), "log_key_ru").empty


def test_logs_settings_errors_are_located() -> None:
    account = {"name": "a", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    section = {
        "endpoint": "https://m.example",
        "workspace_id": "not-a-guid",
        "logs_endpoint": "http://api.loganalytics.io",
        "logs_mode": "legacy",
        "logs_bin_minutes": 0,
    }
    with pytest.raises(ConfigError) as caught:
        parse_config({"accounts": [account], "monitor": section}, Path("m.toml"))
    lines = str(caught.value).splitlines()
    for field in ("workspace_id", "logs_endpoint", "logs_mode", "logs_bin_minutes"):
        assert any(line.startswith(f"m.toml: monitor.{field}: ") for line in lines), lines
    defaults = parse_config({"accounts": [account], "monitor": {"endpoint": "https://m.example"}}, Path("m.toml"))
    assert defaults.monitor is not None and defaults.monitor.logs_endpoint == "https://api.loganalytics.io"
    assert (defaults.monitor.logs_mode, defaults.monitor.logs_bin_minutes) == ("resource-specific", 5)


def test_the_window_ends_on_the_last_bin_complete_a_lag_ago() -> None:
    account = {"name": "a", "endpoint": "http://127.0.0.1:1/", "database": "t"}
    monitor = {"endpoint": "https://m.example", "backfill_hours": 1, "overlap_minutes": 10, "logs_bin_minutes": 5}
    settings = parse_config({"accounts": [account], "monitor": monitor}, Path("m.toml")).monitor
    assert settings is not None and settings.logs_lag_minutes == 5
    now = START + dt.timedelta(minutes=23, seconds=30)
    assert window(now, None, settings) == (START - dt.timedelta(minutes=40), START + dt.timedelta(minutes=15))
    mark = START + dt.timedelta(minutes=10)
    assert window(now, mark, settings)[0] == START  # the watermark less the overlap, on the bin
