"""A check run read back from its JSON report and its JUnit XML (analysis.gate.reported): the same table of
the baseline against now, whichever file CI kept."""

from __future__ import annotations

import pytest

from analysis.gate.outputs import json_report, junit_xml
from analysis.gate.reported import ReportError, decode_report
from tests.analysis.gate.test_outputs import _verdicts


def test_the_json_report_reads_back_every_figure_and_reason() -> None:
    report = decode_report(json_report(_verdicts(), target="the embedded emulator"))
    assert report.target == "the embedded emulator" and report.failed == 1
    rows = report.queries.set_index("query_name")
    assert rows.loc["fanned", ["verdict", "ru_before", "ru_now", "change_pct", "routing", "partitions"]].tolist() == [
        "fail",
        20.16,
        40.7,
        101.9,
        "fan-out",
        4,
    ]
    assert "fail:" in rows.loc["fanned", "reasons"] and "why:" in rows.loc["fanned", "reasons"]
    assert rows.loc["fresh", "verdict"] == "new" and rows.loc["steady", "verdict"] == "pass"


def test_junit_gives_the_same_figures_and_verdicts() -> None:
    from_json = decode_report(json_report(_verdicts(), target="x")).queries.set_index("query_name")
    from_junit = decode_report(junit_xml(_verdicts())).queries.set_index("query_name")
    columns = ["verdict", "ru_before", "ru_now", "change_pct", "routing", "partitions"]
    assert from_junit[columns].sort_index().astype(str).equals(from_json[columns].sort_index().astype(str))
    assert "why:" in from_junit.loc["fanned", "reasons"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "neither a ruscope check JSON report nor JUnit XML"),
        ('{"format": "ruscope-baseline/1", "queries": {}}', "not a ruscope check report"),
        ("{not json", "not JSON"),
        ("<testsuites><testsuite", "not JUnit XML"),
    ],
)
def test_another_file_is_refused_with_why(text: str, message: str) -> None:
    with pytest.raises(ReportError, match=message):
        decode_report(text)
