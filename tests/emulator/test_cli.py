"""`ruscope emulator` as a user runs it: HTTPS with the local CA through the SDK, the key from the environment,
warnings before it listens where it would be unsafe."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.documents import SSLConfiguration

from emulator.cli import engine_settings, safety_warnings
from emulator.rest.auth import WELL_KNOWN_KEY
from tests import rawhttp
from tests.emulator.child import free_port, read_until

ROOT = Path(__file__).resolve().parents[2]
OWN_KEY = base64.b64encode(b"a key of our own, 32 bytes long!").decode()


def _start(*args: str, key: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "RUSCOPE_EMULATOR_KEY"}
    env |= {"RUSCOPE_EMULATOR_KEY": key} if key else {}
    command = [sys.executable, "-m", "emulator", "--monitor-port", "0", *args]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    return err.decode()


@pytest.mark.filterwarnings("error::urllib3.exceptions.InsecureRequestWarning")
def test_tls_serves_the_sdk_with_the_shared_ca_and_the_key_from_the_environment(tmp_path: Path) -> None:
    port = free_port()
    proc = _start("--port", str(port), "--tls", "--data-dir", str(tmp_path), key=OWN_KEY)
    try:
        banner = read_until(proc, "COSMOS_KEY")
        ca = tmp_path / "monitor-tls" / "ca.pem"
        assert f"listening on https://127.0.0.1:{port}/" in banner and str(ca) in banner, banner
        assert OWN_KEY not in banner  # a key of the user's own is never echoed
        # azure-cosmos skips verification on 127.0.0.1/localhost unless an ssl_config is given: give one, so the
        # certificate is really checked against the CA (an unverified request would fail the test: filterwarnings)
        url, verify = f"https://127.0.0.1:{port}/", {"ssl_config": SSLConfiguration(), "connection_verify": str(ca)}
        client = CosmosClient(url, credential=OWN_KEY, **verify)
        container = client.create_database("d").create_container("c", PartitionKey("/k"))
        container.create_item({"id": "1", "k": "a"})
        assert container.read_item("1", "a")["k"] == "a"
        assert list(container.query_items("SELECT VALUE COUNT(1) FROM c", partition_key="a")) == [1]
    finally:
        err = _stop(proc)
        print(err)  # the emulator's log, shown when the test fails
    assert "warning" not in err, err


def test_listening_beyond_loopback_with_the_well_known_key_warns() -> None:
    port = free_port()
    proc = _start("--host", "0.0.0.0", "--port", str(port))
    try:
        read_until(proc, "Ctrl+C stops it")
        status, _, _ = rawhttp.request(f"http://127.0.0.1:{port}/", WELL_KNOWN_KEY, "GET", "/")
        assert status == 200
    finally:
        err = _stop(proc)
    assert "warning: listening on 0.0.0.0 with the well-known emulator key" in err
    assert "RUSCOPE_EMULATOR_KEY" in err


def test_safety_warnings() -> None:
    assert safety_warnings("127.0.0.1", None, False) == []
    assert safety_warnings("::1", None, False) == safety_warnings("localhost", None, False) == []
    assert safety_warnings("0.0.0.0", OWN_KEY, False) == []
    [public] = safety_warnings("192.168.1.5", None, False)
    assert "well-known emulator key" in public
    [visible] = safety_warnings("127.0.0.1", OWN_KEY, True)
    assert "--key on the command line is visible" in visible and "RUSCOPE_EMULATOR_KEY" in visible


def test_repair_needs_a_data_directory() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "--repair"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "--repair needs --data-dir" in done.stderr


def test_repair_of_a_missing_directory_exits_2(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "emulator", "--repair", "--data-dir", str(tmp_path / "absent")]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("ruscope: ") and "absent" in done.stderr


def _pages_of_a_sparse_query(port: int) -> int:
    pages: list[int] = []

    def count(response) -> None:
        if response.http_request.headers.get("x-ms-documentdb-isquery"):
            pages.append(1)

    client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY, raw_response_hook=count)
    container = client.create_database("d").create_container("c", PartitionKey("/k"))
    for i in range(300):
        container.create_item({"id": str(i), "k": "a", "n": i})
    rows = list(container.query_items("SELECT VALUE c.n FROM c WHERE c.n % 100 = 0", partition_key="a"))
    assert rows == [0, 100, 200]
    return len(pages)


@pytest.mark.parametrize(("args", "paged"), [((), False), (("--page-budget-ms", "0"), True)])
def test_the_query_page_budget_is_an_option(args: tuple[str, ...], paged: bool) -> None:
    port = free_port()
    proc = _start("--port", str(port), *args)
    try:
        read_until(proc, "COSMOS_KEY")
        pages = _pages_of_a_sparse_query(port)
    finally:
        _stop(proc)
    assert (pages > 1) is paged, pages  # no budget: each page stops after one step and continues


def test_a_negative_page_budget_is_refused() -> None:
    proc = _start("--page-budget-ms", "-1")
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "--page-budget-ms" in err.decode()


def test_a_key_on_the_command_line_warns_and_one_from_the_environment_does_not() -> None:
    """The option's source is read by name: typer's own click has its own `ParameterSource` enum."""
    warnings = []
    cases: list[tuple[tuple[str, ...], str | None]] = [(("--key", OWN_KEY), None), ((), OWN_KEY)]
    for args, key in cases:
        proc = _start("--port", str(free_port()), *args, key=key)
        try:
            read_until(proc, "Ctrl+C stops it")
        finally:
            warnings.append("--key on the command line is visible" in _stop(proc))
    assert warnings == [True, False]


def test_the_served_request_log_keeps_what_request_log_mb_allows() -> None:
    """The served engine's request log is bounded by `--request-log-mb`: records past it drop oldest first
    (under a steady load they were the server's whole growth; log queries naming ActivityId read them)."""
    from emulator.engine.accounting import RequestRecord
    from emulator.engine.facade import Engine

    engine = Engine(**engine_settings("Session", True, 0.01, None))
    record = RequestRecord(
        time=0.0, database="d", container="c", operation="Read", resource_type="docs", status=200, substatus=0,
        request_charge=1.0, pkrange_id="0", partition_key='["k"]', activity_id="a" * 36,
        correlated_activity_id="", duration_ms=0.1, retry_after_ms=0,
    )  # fmt: skip
    for _ in range(1_000):
        engine.accounting.add(record)
    assert engine.accounting.held_bytes <= 0.01 * 1024 * 1024
    assert 0 < len(engine.accounting.records()) < 1_000


def test_regions_are_an_option_of_the_monitor_stand_in(tmp_path: Path) -> None:
    """`--region` twice: the account's throughput is reserved in each region (its metrics split by Region)."""
    import datetime as dt

    from azure.monitor.querymetrics import MetricsClient

    from tests.emulator.monitor.test_metrics import NAMESPACE, RESOURCE, FixedToken

    port, monitor = free_port(), free_port()
    regions = ("West Europe", "North Europe")
    command = [sys.executable, "-m", "emulator", "--port", str(port), "--monitor-port", str(monitor)]
    command += ["--data-dir", str(tmp_path / "d"), "--region", regions[0], "--region", regions[1]]
    env = {k: v for k, v in os.environ.items() if k != "RUSCOPE_EMULATOR_KEY"}  # the well-known key, as `_start`
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        read_until(proc, "Azure Monitor stand-in")
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
        client.create_database("d").create_container("c", PartitionKey("/k"), offer_throughput=500)
        ca = tmp_path / "d" / "monitor-tls" / "ca.pem"
        metrics = MetricsClient(f"https://127.0.0.1:{monitor}", FixedToken(), connection_verify=str(ca), retry_total=0)
        now = dt.datetime.now(dt.UTC)
        (result,) = metrics.query_resources(
            resource_ids=[RESOURCE],
            metric_namespace=NAMESPACE,
            metric_names=["ProvisionedThroughput"],
            timespan=(now - dt.timedelta(minutes=10), now + dt.timedelta(minutes=5)),
            granularity=dt.timedelta(minutes=5),
            filter="Region eq '*'",
            max_results=10,
        )
        got = {
            ts.metadata_values["region"]: max(v.maximum or 0 for v in ts.data) for ts in result.metrics[0].timeseries
        }
    finally:
        _stop(proc)
    assert got == {regions[0]: 500, regions[1]: 500}
    done = subprocess.run(
        [sys.executable, "-m", "emulator", "--region", "a", "--region", "a"], cwd=ROOT, capture_output=True, timeout=60
    )
    assert done.returncode == 2 and b"--region" in done.stderr
