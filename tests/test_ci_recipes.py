"""The CI recipes of docs/ci/ tried as a new user would: each workflow file parsed, and its steps run by hand
in order (bash, as both CI services run `run:` / `script:`) on a copy of the sample application
`workloads/shop`, with ruscope from this checkout instead of the install step. Each must pass on the
application as it is and fail at the gate on a change that drops the query's partition key."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RECIPES = {
    "github": ROOT / "docs" / "ci" / "github-actions.yml",
    "devops": ROOT / "docs" / "ci" / "azure-pipelines.yml",
}  # ("azure" is the real-account marker)


def steps_of(kind: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The recipe's variables and its shell steps (name, script) in order, the install step left out."""
    recipe: dict[str, Any] = yaml.safe_load(RECIPES[kind].read_text(encoding="utf-8"))
    if kind == "github":
        variables = recipe["env"]
        [job] = recipe["jobs"].values()
        raw = [s for s in job["steps"] if "run" in s and s.get("id") != "install"]
        return variables, [(s["name"], s["run"]) for s in raw]
    variables = recipe["variables"]
    raw = [s for s in recipe["steps"] if "script" in s and s.get("name") != "install"]
    return variables, [(s["displayName"], s["script"]) for s in raw]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def application(root: Path) -> Path:
    """The shop as its own repository: its package, its suite, its ruscope.toml and baseline at the root."""
    (root / "workloads").mkdir(parents=True)
    (root / "workloads" / "__init__.py").write_text("", encoding="utf-8")
    shutil.copytree(
        ROOT / "workloads" / "shop", root / "workloads" / "shop", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(root / "workloads" / "shop" / "tests", root / "tests")
    for name in ("ruscope.toml", "ruscope-baseline.json"):
        shutil.copy(root / "workloads" / "shop" / name, root / name)
    return root


def run_recipe(kind: str, app: Path) -> tuple[list[str], subprocess.CompletedProcess[str] | None, Path]:
    """Run the steps until one fails; the names of those that passed, the failure, the step summary file."""
    variables, steps = steps_of(kind)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/"
    summary = app / "step-summary.md"
    env = {
        **os.environ,
        **{k: str(v) for k, v in variables.items()},
        "COSMOS_ENDPOINT": endpoint,
        "RUSCOPE_EMULATOR": endpoint,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # ruscope, python, pytest
        "PYTHONPATH": str(app),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PR": "",
        "COLUMNS": "1000",
    }
    env.pop("PYTEST_ADDOPTS", None)
    passed: list[str] = []
    try:
        for name, script in steps:
            script = script.replace("--port 8081", f"--port {port}")
            result = subprocess.run(
                ["bash", "-e", "-c", script], cwd=app, env=env, capture_output=True, text=True, timeout=240
            )
            if result.returncode != 0:
                return passed, result, summary
            passed.append(name)
        return passed, None, summary
    finally:
        subprocess.run(["pkill", "-f", f"ruscope emulator --port {port}"], check=False)


@pytest.mark.parametrize("kind", ["github", "devops"])
def test_the_recipe_passes_an_unchanged_application(kind: str, tmp_path: Path) -> None:
    app = application(tmp_path / "app")
    passed, failure, summary = run_recipe(kind, app)
    assert failure is None, (passed, failure and failure.stdout + failure.stderr)
    assert "ruscope check against the committed baseline" in passed
    assert (app / "ruscope-check.xml").exists() and (app / "ruscope-check.json").exists()
    table = (app / "ruscope-check.md").read_text(encoding="utf-8")
    assert "### ruscope check: passed" in table
    if kind == "github":
        assert summary.read_text(encoding="utf-8") == table  # the job's summary page shows the table


def test_a_change_that_drops_the_partition_key_stops_the_pipeline(tmp_path: Path) -> None:
    app = application(tmp_path / "app")
    config = app / "ruscope.toml"
    text = config.read_text(encoding="utf-8")
    changed = text.replace("WHERE c.tenantId = @t ORDER BY", "WHERE c.total > 10 ORDER BY", 1).replace(
        'partition_key = "t3"\nrate_per_s', "rate_per_s", 1
    )
    assert changed != text
    config.write_text(changed, encoding="utf-8")
    passed, failure, _ = run_recipe("github", app)
    assert failure is not None and failure.returncode == 1
    assert passed[-1] == "The application's tests, with their RU budgets"  # the gate is the step that failed
    assert "FAIL latest-orders:" in failure.stdout and "routing went from single to fan-out" in failure.stdout
