"""`ruscope check --from-emulator`: a test run of another SDK judged from the emulator's request log. The run
is a JavaScript suite through the official @azure/cosmos SDK (tests/ruscope/js/orders_suite.js); the check
is a real `ruscope` process reading the log of an emulator this test starts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from azure.cosmos import PartitionKey

from emulator.rest.server import RunningEmulator
from tests.conftest import sdk_client

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "ruscope" / "js" / "orders_suite.js"
OPEN_ORDERS = "SELECT c.id, c.total FROM c WHERE c.status = @s"


def node_sdk() -> str | None:
    """Why the JavaScript SDK cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (ROOT / "node_modules" / "@azure" / "cosmos").is_dir():
        return "@azure/cosmos is not installed (make install runs npm ci)"
    return None


@pytest.fixture
def js_sdk() -> None:
    missing = node_sdk()
    if missing:
        if os.environ.get("RUSCOPE_REQUIRE_NODE"):
            pytest.fail(f"RUSCOPE_REQUIRE_NODE is set but {missing}")
        pytest.skip(missing)


def run_js(emu: RunningEmulator, tag: str, variant: str) -> None:
    result = subprocess.run(
        ["node", str(SUITE), emu.url, emu.key, tag, variant], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def ruscope_check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ruscope", "check", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def write_config(root: Path) -> Path:
    """The application's budget for its open-orders query (named by its SQL) and its baseline file."""
    root.mkdir(exist_ok=True)
    config = root / "ruscope.toml"
    config.write_text(
        f"""[cosmos]
endpoint = "http://127.0.0.1:1/"
database = "jsshop"

[check]
baseline = "ruscope-baseline.json"

[[queries]]
name = "open-orders"
container = "orders"
sql = "{OPEN_ORDERS}"
parameters = {{ "@s" = "open" }}
budget = {{ routing = "single", max_partitions = 1 }}
""",
        encoding="utf-8",
    )
    return config


def test_a_javascript_run_is_judged_by_its_budget_and_baseline(
    js_sdk: None, emulator: RunningEmulator, tmp_path: Path
) -> None:
    app = tmp_path / "app"
    config = write_config(app)
    since = time.time()
    run_js(emulator, "run-1", "pinned")
    common = ["--from-emulator", emulator.url, "--config", str(config)]
    first = ruscope_check(app, *common, "--since", str(since), "--tag", "run-1", "--update-baseline")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "NEW  open-orders:" in first.stdout and ", single, 1 partition" in first.stdout
    assert (app / "ruscope-baseline.json").exists()

    run_js(emulator, "run-2", "unpinned")  # the change under review: the partition key is no longer passed
    summary = tmp_path / "check.md"
    second = ruscope_check(app, *common, "--tag", "run-2", "--summary", str(summary))
    assert second.returncode == 1, second.stdout + second.stderr
    assert "FAIL open-orders:" in second.stdout and "fan-out, 2 partitions" in second.stdout
    assert "routing" in second.stdout and "why:" in second.stdout
    table = summary.read_text(encoding="utf-8")
    assert "| open-orders |" in table and "| fan-out | 2 | **FAIL** |" in table


def test_without_a_config_every_query_of_the_run_is_reported_by_its_sql(
    js_sdk: None, emulator: RunningEmulator, tmp_path: Path
) -> None:
    run_js(emulator, "run-1", "pinned")
    result = ruscope_check(tmp_path, "--from-emulator", emulator.url, "--tag", "run-1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{OPEN_ORDERS}: " in result.stdout  # a query without a name is shown by its SQL
    assert "check: 2 of 2 queries passed on the request log of" in result.stdout  # and the suite's COUNT


def test_a_python_run_is_read_the_same_way(emulator: RunningEmulator, tmp_path: Path) -> None:
    container = (
        sdk_client(emulator)
        .create_database("jsshop")
        .create_container("orders", PartitionKey("/tenantId"), offer_throughput=12000)
    )
    for n in range(20):
        container.create_item({"id": f"o{n}", "tenantId": f"t{n % 4}", "total": n, "status": "open"})
    since = time.time()
    list(container.query_items(OPEN_ORDERS, parameters=[{"name": "@s", "value": "open"}], partition_key="t1"))
    for _ in range(2):  # a fan-out the SDK plans first: its plan request is no execution of its own
        list(container.query_items("SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True))
    result = ruscope_check(
        tmp_path, "--from-emulator", emulator.url, "--since", str(since), "--config", str(write_config(tmp_path))
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "NEW  open-orders:" in result.stdout and "single, 1 partition" in result.stdout
    counted = next(line for line in result.stdout.splitlines() if "SELECT VALUE COUNT(1) FROM c:" in line)
    charged = [r.request_charge for r in emulator.engine.accounting.records() if "COUNT(1)" in r.query_text]
    assert f"{sum(charged) / 2:.2f} RU, fan-out" in counted  # the mean of the two executions


def test_bad_input_is_exit_2_with_what_was_wrong(emulator: RunningEmulator, tmp_path: Path) -> None:
    bad_since = ruscope_check(tmp_path, "--from-emulator", emulator.url, "--since", "yesterday")
    assert bad_since.returncode == 2 and "--since: 'yesterday' is neither an ISO 8601 time" in bad_since.stderr
    nothing = ruscope_check(tmp_path, "--from-emulator", emulator.url, "--tag", "no-such-run")
    assert nothing.returncode == 2 and "no query in its request log (tagged 'no-such-run')" in nothing.stderr
    down = ruscope_check(tmp_path, "--from-emulator", "http://127.0.0.1:9/")
    assert down.returncode == 2 and "cannot read the request log" in down.stderr
    orphan = ruscope_check(tmp_path, "--since", "2026-12-03T10:00:00Z")
    assert orphan.returncode == 2 and "--since and --tag select requests of --from-emulator's log" in orphan.stderr
    for result in (bad_since, nothing, down, orphan):
        assert "Traceback" not in result.stderr
