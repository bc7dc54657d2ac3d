"""`ruscope check` as CI runs it: a real process, the embedded emulator loaded from a sample, the product's
replay through the real SDK, exit codes, the baseline file, JUnit and Markdown (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from azure.cosmos import PartitionKey

from emulator.rest.server import RunningEmulator
from tests.conftest import sdk_client

ROOT = Path(__file__).resolve().parents[2]
TENANT_QUERY = "SELECT TOP 20 c.id, c.total FROM c WHERE c.tenantId = @t ORDER BY c.total DESC"
COMPOSITE = {
    "compositeIndexes": [[{"path": "/tenantId", "order": "ascending"}, {"path": "/total", "order": "descending"}]]
}


def documents(count: int = 1200) -> list[dict]:
    return [
        {"id": str(n), "tenantId": f"t{n % 12}", "total": n % 97, "status": ("open", "paid")[n % 2]}
        for n in range(count)
    ]


def write_app(
    root: Path, *, query: str = TENANT_QUERY, key: str | None = '"t3"', policy: dict | None = COMPOSITE, extra: str = ""
) -> Path:
    """An application's ruscope.toml, its sample and (after a first run) its baseline, in `root`."""
    root.mkdir(exist_ok=True)
    (root / "orders.jsonl").write_text("".join(json.dumps(d) + "\n" for d in documents()), encoding="utf-8")
    key_line = f"partition_key = {key}\n" if key else ""
    policy_line = f"indexing_policy = {_toml(policy)}\n" if policy else ""
    (root / "ruscope.toml").write_text(
        f"""[cosmos]
endpoint = "http://127.0.0.1:1/"
database = "shop"

[[queries]]
name = "orders-of-tenant"
container = "orders"
sql = "{query}"
parameters = {{ "@t" = "t3" }}
{key_line}rate_per_s = 20
budget = {{ max_ru = 30, routing = "single" }}

[[queries]]
name = "open-count"
container = "orders"
sql = "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = 't1' AND c.status = 'open'"
partition_key = "t1"

[check]
baseline = "ruscope-baseline.json"
{extra}
[[check.containers]]
id = "orders"
partition_key = "/tenantId"
throughput = 12000
sample = "orders.jsonl"
{policy_line}""",
        encoding="utf-8",
    )
    return root / "ruscope.toml"


def _toml(value: object) -> str:
    """A JSON value as a TOML inline value (the policy's keys are plain words)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def check(config: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruscope", "check", "--config", str(config), *args]
    return subprocess.run(
        command, cwd=config.parent, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120
    )


def test_a_first_run_passes_and_writes_a_baseline_a_rerun_rewrites_byte_for_byte(tmp_path: Path) -> None:
    config = write_app(tmp_path / "app")
    first = check(config, "--update-baseline")
    assert first.returncode == 0, first.stderr
    assert "NEW  orders-of-tenant:" in first.stdout and "baseline written" in first.stdout
    baseline = (tmp_path / "app" / "ruscope-baseline.json").read_bytes()
    entry = json.loads(baseline)["queries"]["orders-of-tenant"]
    assert entry["routing"] == "single" and entry["partitions"] == 1 and 0 < entry["ru"] < 30
    again = check(config, "--update-baseline")
    assert again.returncode == 0 and "PASS orders-of-tenant:" in again.stdout and "(+0.0% vs baseline)" in again.stdout
    assert (tmp_path / "app" / "ruscope-baseline.json").read_bytes() == baseline  # the same RU on every run


def test_dropping_the_partition_key_fails_the_gate_naming_query_change_and_routing(tmp_path: Path) -> None:
    config = write_app(tmp_path / "app")
    assert check(config, "--update-baseline").returncode == 0
    changed = "SELECT TOP 20 c.id, c.total FROM c WHERE c.total > 50 ORDER BY c.total DESC"
    write_app(tmp_path / "app", query=changed, key=None)
    junit, summary = tmp_path / "check.xml", tmp_path / "check.md"
    failed = check(config, "--junit", str(junit), "--summary", str(summary))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    lines = failed.stdout.splitlines()
    head = next(line for line in lines if line.startswith("FAIL orders-of-tenant:"))
    assert "fan-out, 2 partitions" in head and "vs baseline" in head
    assert "     fail: routing went from single to fan-out" in lines
    assert any(line.startswith("     fail: RU per execution rose from") for line in lines)
    assert any(line.startswith("     why: routing: fan-out over 2 partitions") for line in lines)
    assert "check: 1 of 2 queries passed" in failed.stdout
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["orders-of-tenant"].find("failure") is not None and cases["open-count"].find("failure") is None
    table = summary.read_text(encoding="utf-8")
    assert table.startswith(
        "### ruscope check: failed (1 of 2 queries failed, on the embedded emulator (1,200 documents))"
    )
    assert "| fan-out | 2 | **FAIL** |" in table


def test_an_order_by_without_its_composite_index_warns_then_fails_its_baseline(tmp_path: Path) -> None:
    config = write_app(tmp_path / "app")
    assert check(config, "--update-baseline").returncode == 0
    write_app(tmp_path / "app", policy=None)  # the same query, the composite index gone
    result = check(config)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "     warn: the index metrics name a missing composite index: (/tenantId ASC, /total DESC)" in lines
    assert (
        "     why: index: add (/tenantId ASC, /total DESC) to compositeIndexes; a filter with ORDER BY costs ~5x without it"
        in lines
    )
    rise = next(line for line in lines if "RU per execution rose" in line)
    before, now = (float(part.split()[0]) for part in rise.split("from ")[1].split(" to "))
    assert now == pytest.approx(before * 5, rel=0.05)  # ru-cost-model.md Q11: x5 without the composite index


def test_lint_warnings_fail_only_under_strict(tmp_path: Path) -> None:
    fan_out = "SELECT c.id FROM c WHERE c.total > 90"
    config = write_app(tmp_path / "app", query=fan_out, key=None, extra='queries = ["orders-of-tenant"]\n')
    lenient = check(config)
    assert lenient.returncode == 1  # its budget says single, and it fans out
    config = write_app(tmp_path / "app2", query=fan_out, key=None, extra='queries = ["orders-of-tenant"]\n')
    text = config.read_text().replace('budget = { max_ru = 30, routing = "single" }', "")
    config.write_text(text)
    assert check(config).returncode == 0
    strict = check(config, "--strict")
    assert strict.returncode == 1 and "fail: No filter pins the partition key (/tenantId)" in strict.stdout


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda t: t.replace('routing = "single"', 'routing = "one"'),
            "queries.0 (orders-of-tenant).budget.routing: Input should be",
        ),
        (
            lambda t: t.replace("rate_per_s = 20\n", "").replace("max_ru = 30", "max_ru_per_s = 30"),
            "give the query its rate_per_s",
        ),
        (lambda t: t.replace('sample = "orders.jsonl"', 'sample = "missing.jsonl"'), "check.containers.0.sample"),
        (
            lambda t: t.replace('partition_key = "/tenantId"', 'partition_key = "tenantId"'),
            "check.containers.0.partition_key",
        ),
    ],
)
def test_a_bad_config_or_sample_is_exit_2_naming_where(tmp_path: Path, change: Callable[[str], str], says: str) -> None:
    config = write_app(tmp_path / "app")
    config.write_text(change(config.read_text()))
    result = check(config)
    assert result.returncode == 2 and says in result.stderr and "Traceback" not in result.stderr


def test_a_damaged_baseline_is_exit_2_and_is_left_as_it_was(tmp_path: Path) -> None:
    config = write_app(tmp_path / "app")
    baseline = tmp_path / "app" / "ruscope-baseline.json"
    baseline.write_text('{"format": "something else"}')
    result = check(config, "--update-baseline")
    assert result.returncode == 2 and "ruscope-baseline.json: not a ruscope baseline" in result.stderr
    assert baseline.read_text() == '{"format": "something else"}'


def test_an_account_target_measures_what_the_embedded_emulator_does(
    tmp_path: Path, make_emulator: Callable[..., RunningEmulator]
) -> None:
    """The same documents written through the SDK into a running emulator: the same RU, routing and
    partitions as the embedded one loaded in-process (the charges are a model of the data, not a clock)."""
    config = write_app(tmp_path / "app")
    assert check(config, "--update-baseline").returncode == 0
    emu = make_emulator(throttling=False)
    db = sdk_client(emu).create_database("shop")
    orders = db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=12000, indexing_policy=COMPOSITE)
    for doc in documents():
        orders.create_item(doc)
    config.write_text(config.read_text().replace("http://127.0.0.1:1/", emu.url))
    result = check(config, "--target", "account", env={"COSMOS_KEY": emu.key})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS orders-of-tenant:" in result.stdout and "(+0.0% vs baseline)" in result.stdout
    assert "PASS open-count:" in result.stdout and emu.url in result.stdout
