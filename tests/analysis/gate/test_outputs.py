"""The baseline file and what CI shows: deterministic JSON, a readable refusal of a bad file, the Markdown
table of a pull-request comment and JUnit XML as CI servers read it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from junitparser import JUnitXml

from analysis.gate.baseline import Accepted, BaselineError, baseline_of, decode, encode
from analysis.gate.outputs import junit_xml, markdown_summary, summary_lines
from analysis.gate.verdicts import judge
from tests.analysis.gate.test_verdicts import accepted, measured


def _verdicts():
    now = {
        "fanned": measured("fanned", 40.7, 4, "fan-out"),
        "steady": measured("steady", 4.07),
        "fresh": measured("fresh", 3),
    }
    return judge(now, {}, {"fanned": accepted(20.16), "steady": accepted(4.07)}, tolerance=0.1)


def test_the_baseline_round_trips_and_is_written_byte_for_byte_the_same() -> None:
    now = {
        "b": measured("b", 4.071),
        "a": measured("a", 20.0, 2, "targeted"),
        "gone": measured("gone", None, error="x"),
    }
    text = encode(baseline_of(now))
    assert text == encode(baseline_of(dict(reversed(list(now.items())))))  # the order queries ran in is not kept
    assert text.endswith("}\n") and text.index('"a"') < text.index('"b"')
    assert decode(text) == {
        "a": Accepted("orders", "SELECT * FROM c", 20.0, 2, "targeted"),
        "b": Accepted("orders", "SELECT * FROM c", 4.07, 1, "single"),
    }  # a query that failed keeps no entry


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not JSON"),
        ('{"queries": {}}', 'expected "format": "ruscope-baseline/1"'),
        ('{"format": "ruscope-baseline/1", "queries": []}', '"queries" must be an object'),
        ('{"format": "ruscope-baseline/1", "queries": {"q": {"ru": 1}}}', "query 'q': needs container, sql, ru"),
    ],
)
def test_a_bad_baseline_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(BaselineError) as refused:
        decode(text)
    assert says in str(refused.value)


def test_the_markdown_summary_is_the_pull_request_table_then_the_reasons() -> None:
    text = markdown_summary(_verdicts(), target="the embedded emulator")
    lines = text.splitlines()
    assert lines[0] == "### ruscope check: failed (1 of 3 queries failed, on the embedded emulator)"
    assert lines[2] == "| query | RU before | RU now | change | routing | partitions | verdict |"
    assert "| fanned | 20.16 | 40.70 | +101.9% | fan-out | 4 | **FAIL** |" in lines
    assert "| steady | 4.07 | 4.07 | +0.0% | single | 1 | pass |" in lines
    assert "| fresh |  | 3.00 |  | single | 1 | new |" in lines
    assert "- fail: routing went from single to fan-out" in lines
    assert any(line.startswith("- why: routing: fan-out over 4 partitions") for line in lines)
    assert "**steady**" not in text and "**fresh**" not in text  # nothing to say about those


def test_a_pipe_in_a_query_does_not_break_the_table() -> None:
    v = judge({"q": measured("q", 1, sql="SELECT c.a || c.b FROM c")}, {}, {}, tolerance=0.1)
    assert "`SELECT c.a \\|\\| c.b FROM c`" not in markdown_summary(v, target="x")  # only shown when it did not pass
    assert all(line.count("|") == 8 for line in markdown_summary(v, target="x").splitlines()[2:5])


def test_junit_xml_has_one_case_per_query_and_a_failure_with_every_reason() -> None:
    text = junit_xml(_verdicts())
    root = ET.fromstring(text)  # well-formed, read by a parser that is not the writer
    suite = root.find("testsuite") if root.tag == "testsuites" else root
    assert suite is not None and suite.get("name") == "ruscope check"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"fanned", "steady", "fresh"} and {c.get("classname") for c in cases.values()} == {"orders"}
    failure = cases["fanned"].find("failure")
    assert failure is not None and failure.get("type") == "baseline.ru"
    assert "baseline.routing: routing went from single to fan-out" in (failure.text or "")
    assert cases["steady"].find("failure") is None
    parsed = JUnitXml.fromstring(text)
    assert sum(1 for suite in parsed for case in suite if not case.is_passed) == 1


def test_the_terminal_lines_name_the_query_its_figures_and_reasons() -> None:
    lines = summary_lines(_verdicts())
    assert lines[0] == "FAIL fanned: 40.70 RU, fan-out, 4 partitions (+101.9% vs baseline)"
    assert "PASS steady: 4.07 RU, single, 1 partition (+0.0% vs baseline)" in lines
