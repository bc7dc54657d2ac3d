"""The Query costs page showing a `ruscope check` run (`ruscope dashboard --check-report F`): AppTest runs
through the frame, the report written by analysis.gate's own outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.gate.outputs import json_report, junit_xml
from dashboard.environment import CHECK_REPORT_ENV
from tests.analysis.gate.test_outputs import _verdicts
from tests.dashboard.test_query_costs_page import run_app


@pytest.mark.parametrize("kind", ["json", "junit"])
def test_a_check_run_is_shown_baseline_against_now(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    report = tmp_path / f"check.{'json' if kind == 'json' else 'xml'}"
    text = json_report(_verdicts(), target="the embedded emulator") if kind == "json" else junit_xml(_verdicts())
    report.write_text(text, encoding="utf-8")
    monkeypatch.setenv(CHECK_REPORT_ENV, str(report))
    app = run_app()
    [table] = [d for d in app.dataframe if "verdict" in d.value.columns]
    rows = table.value.set_index("query_name")
    assert rows.loc["fanned", ["verdict", "ru_before", "ru_now", "routing", "partitions"]].tolist() == [
        "fail",
        20.16,
        40.7,
        "fan-out",
        4,
    ]
    assert rows.loc["steady", "verdict"] == "pass" and rows.loc["fresh", "verdict"] == "new"
    assert "why:" in rows.loc["fanned", "reasons"]
    [failed] = app.error
    assert failed.value.startswith("1 of 3 queries failed")
    assert not app.info  # the empty store's how-to is not shown over a check run
    [reasons] = [m.value for m in app.markdown if m.value.startswith("**fanned** (fail)")]
    assert "\n- fail: " in reasons and "\n- why: " in reasons


def test_a_file_that_is_no_check_report_is_named_with_why(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "baseline.json"
    report.write_text('{"format": "ruscope-baseline/1", "queries": {}}', encoding="utf-8")
    monkeypatch.setenv(CHECK_REPORT_ENV, str(report))
    app = run_app()
    [warning] = app.warning
    assert str(report) in warning.value and "not a ruscope check report" in warning.value
