"""The shop's own gate as its CI runs it: the committed ruscope.toml and baseline, the sample written by its
generator, a real `ruscope check` process on the embedded emulator."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from workloads.shop.sample import write_sample

SHOP = Path(__file__).resolve().parents[2] / "workloads" / "shop"


def test_the_committed_baseline_holds_and_is_rewritten_byte_for_byte(tmp_path: Path) -> None:
    sample = tmp_path / "orders.jsonl"
    assert write_sample(sample) == 1200
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes((SHOP / "ruscope-baseline.json").read_bytes())
    command = [sys.executable, "-m", "ruscope", "check", "--config", str(SHOP / "ruscope.toml")]
    command += ["--sample", str(sample), "--baseline", str(baseline), "--update-baseline"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS latest-orders:" in result.stdout and "PASS open-total:" in result.stdout
    assert baseline.read_bytes() == (SHOP / "ruscope-baseline.json").read_bytes()
