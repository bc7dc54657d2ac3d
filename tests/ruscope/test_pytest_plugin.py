"""ruscope's pytest plugin as an application's CI runs it: the sample application `workloads/shop` and its
own suite (copied, then changed the way a pull request would change it), run by a real pytest process that
loads the plugin from its entry point, against an emulator this test starts, through the real SDK."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.rest.server import RunningEmulator

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "workloads" / "shop"


def copy_shop(root: Path) -> Path:
    """The application beside its own `workloads` package, so its imports find this copy."""
    (root / "workloads").mkdir(parents=True)
    (root / "workloads" / "__init__.py").write_text("", encoding="utf-8")
    shutil.copytree(SHOP, root / "workloads" / "shop", ignore=shutil.ignore_patterns("__pycache__"))
    return root / "workloads" / "shop"


def change(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path.name} no longer holds {old!r}: update this test's change"
    path.write_text(text.replace(old, new), encoding="utf-8")


def run_suite(
    root: Path, emu: RunningEmulator, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "COSMOS_ENDPOINT": emu.url,
        "COSMOS_KEY": emu.key,
        "RUSCOPE_EMULATOR_KEY": emu.key,
        "COLUMNS": "1000",  # the short summary keeps each failure's whole message
        **(extra_env or {}),
    }
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfE", "workloads/shop/tests", *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=240)


def report(result: subprocess.CompletedProcess[str]) -> dict[str, float]:
    """RU per test from `--ruscope-report`'s section."""
    found = re.findall(r"^\s*([\d.]+) RU\s+\d+ requests\s+\d+ partitions?\s+(\S+)$", result.stdout, re.M)
    return {nodeid.rsplit("::", 1)[-1]: float(ru) for ru, nodeid in found}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return copy_shop(tmp_path / "app")


def test_the_unchanged_application_passes_and_reports_ru_per_test(shop: Path, emulator: RunningEmulator) -> None:
    result = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url, "--ruscope-report")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ruscope: RU per test" in result.stdout
    ru = report(result)
    assert set(ru) == {
        "test_an_order_is_read_by_its_id",
        "test_the_latest_orders_of_a_tenant_come_newest_first",
        "test_the_open_total_of_a_tenant",
    }
    assert ru["test_an_order_is_read_by_its_id"] == 1.0  # a 1 KB point read (ru-cost-model.md R1)
    assert 1.0 < ru["test_the_latest_orders_of_a_tenant_come_newest_first"] <= 10
    assert re.search(r"Read 1\.00 RU \(1 request\)", result.stdout)
    again = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url, "--ruscope-report")
    assert report(again) == ru  # the same figures on every run: a model, not a clock


def test_a_query_that_loses_its_partition_key_fails_its_budget(shop: Path, emulator: RunningEmulator) -> None:
    """A tenant matched case-insensitively: the filter no longer pins the partition key, so the query fans
    out (with the key still in an equality, the SDK's query plan would keep it on one partition)."""
    change(shop / "orders.py", "WHERE c.tenantId = @t ORDER BY", "WHERE LOWER(c.tenantId) = LOWER(@t) ORDER BY")
    change(
        shop / "orders.py",
        'LATEST, parameters=[{"name": "@t", "value": tenant}], partition_key=tenant',
        'LATEST, parameters=[{"name": "@t", "value": tenant}], enable_cross_partition_query=True',
    )
    result = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url)
    assert result.returncode == 1, result.stdout
    assert "1 failed, 2 passed" in result.stdout
    assert re.search(
        r"test_the_latest_orders_of_a_tenant_come_newest_first - (?:Failed: )?RU budget exceeded: [\d.]+ RU, over its budget "
        r"of 10 RU; reached 2 physical partitions, over its budget of 1",
        result.stdout,
    ), result.stdout


def test_an_order_by_without_its_composite_index_fails_its_budget(shop: Path, emulator: RunningEmulator) -> None:
    change(shop / "orders.py", "ORDER BY c.createdAt DESC", "ORDER BY c.total DESC")
    change(shop / "tests" / "test_orders.py", 'o["createdAt"] for o in latest', 'o["total"] for o in latest')
    result = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url)
    assert result.returncode == 1, result.stdout
    failed = re.search(
        r"FAILED \S+::(\S+) - (?:Failed: )?RU budget exceeded: ([\d.]+) RU, over its budget of 10 RU", result.stdout
    )
    assert failed, result.stdout
    assert failed.group(1) == "test_the_latest_orders_of_a_tenant_come_newest_first"
    assert float(failed.group(2)) > 10  # the ×5 of an ORDER BY the composite index does not serve (Q11)


def test_a_point_read_grown_into_a_query_fails_its_budget(shop: Path, emulator: RunningEmulator) -> None:
    change(
        shop / "orders.py",
        "    return orders.read_item(order_id, partition_key=tenant)",
        "    query = 'SELECT * FROM c WHERE c.id = @id'\n"
        "    rows = orders.query_items(query, parameters=[{'name': '@id', 'value': order_id}], enable_cross_partition_query=True)\n"
        "    return next(iter(rows))",
    )
    result = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url)
    assert result.returncode == 1, result.stdout
    line = next(
        ln for ln in result.stdout.splitlines() if "test_an_order_is_read_by_its_id - Failed: RU budget exceeded" in ln
    )
    assert "over its budget of 1.5 RU" in line and "reached 2 physical partitions" in line
    assert "Spent: Query" in line


def test_a_budget_without_the_emulator_says_what_is_missing(shop: Path, emulator: RunningEmulator) -> None:
    env_free = run_suite(shop.parents[1], emulator)
    assert env_free.returncode == 1
    assert "needs the emulator: pass --ruscope-emulator URL or set RUSCOPE_EMULATOR" in env_free.stdout


def test_where_plugins_are_not_autoloaded_dash_p_ruscope_loads_it(shop: Path, emulator: RunningEmulator) -> None:
    off = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    named = run_suite(shop.parents[1], emulator, "-p", "ruscope", "--ruscope-emulator", emulator.url, extra_env=off)
    assert named.returncode == 0 and "3 passed" in named.stdout, named.stdout + named.stderr
    unnamed = run_suite(shop.parents[1], emulator, "--ruscope-emulator", emulator.url, extra_env=off)
    assert unnamed.returncode == 4 and "unrecognized arguments: --ruscope-emulator" in unnamed.stderr


def test_an_emulator_that_is_down_fails_the_budgeted_tests_with_why(shop: Path, emulator: RunningEmulator) -> None:
    result = run_suite(shop.parents[1], emulator, "--ruscope-emulator", "http://127.0.0.1:9/")
    assert result.returncode == 1
    assert "ruscope: http://127.0.0.1:9/_ruscope/requests: cannot read the request log" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
