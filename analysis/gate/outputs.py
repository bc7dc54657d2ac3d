"""What CI shows of a check: the Markdown table of a pull-request comment, JUnit XML for the test view, the
JSON report the dashboard reads (`analysis.gate.reported`), and the lines the command prints. Pure: each
returns text, the command writes it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite

from analysis.gate.logged import GENERATED_PREFIX
from analysis.gate.measure import Measured
from analysis.gate.verdicts import Verdict

SQL_CHARS = 60  # of a query without a name, in the table and the terminal lines
MARK = {"pass": "pass", "new": "new", "warn": "warn", "fail": "**FAIL**"}


def _ru(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _change(verdict: Verdict) -> str:
    change = verdict.change_pct
    return "" if change is None else f"{change:+.1f}%"


def _label(m: Measured, *, quote: str = "") -> str:
    """A query's name; a name `analysis.gate.logged` generated says nothing, so its SQL (cut short) follows."""
    if not m.name.startswith(GENERATED_PREFIX) or not m.sql:
        return m.name
    sql = m.sql if len(m.sql) <= SQL_CHARS else m.sql[: SQL_CHARS - 1] + "\u2026"
    return f"{m.name} {quote}{sql}{quote}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_summary(verdicts: Sequence[Verdict], *, target: str) -> str:
    """The table (query, RU before, RU now, change, routing, partitions, verdict), then each query that did
    not pass with its reasons."""
    failed = sum(v.status == "fail" for v in verdicts)
    head = f"### ruscope check: {'failed' if failed else 'passed'} ({failed} of {len(verdicts)} queries failed, on {target})"
    lines = [
        head,
        "",
        "| query | RU before | RU now | change | routing | partitions | verdict |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for v in verdicts:
        m = v.measured
        before = v.before.ru if v.before is not None else None
        lines.append(
            f"| {_cell(_label(m, quote='`'))} | {_ru(before)} | {_ru(m.ru)} | {_change(v)} | {m.routing} | {m.partitions} | {MARK[v.status]} |"
        )
    for v in verdicts:
        notable = [c for c in v.checks if c.severity != "note"]
        if not notable:
            continue
        lines += ["", f"**{_cell(v.measured.name)}** ({v.measured.container}): `{_cell(v.measured.sql)}`"]
        lines += [f"- {c.severity}: {_cell(c.message)}" for c in notable]
        lines += [f"- why: {_cell(w)}" for w in v.why]
    return "\n".join(lines) + "\n"


def junit_xml(verdicts: Sequence[Verdict], *, suite: str = "ruscope check") -> str:
    """One test case per query (class name: its container); a failure carries every failed rule and why."""
    cases = []
    for v in verdicts:
        case = TestCase(v.measured.name, classname=v.measured.container)
        failed = [c for c in v.checks if c.severity == "fail"]
        if failed:
            text = "\n".join([*(f"{c.rule}: {c.message}" for c in failed), *(f"why: {w}" for w in v.why)])
            case.result = [Failure(failed[0].message, failed[0].rule)]
            case.result[0].text = text
        elif v.measured.ru is None:
            case.result = [Skipped(v.measured.error)]
        notes = [f"{c.severity} {c.rule}: {c.message}" for c in v.checks if c.severity != "fail"]
        case.system_out = "\n".join(
            [
                f"ru={_ru(v.measured.ru)} before={_ru(v.before.ru if v.before else None)} "
                f"routing={v.measured.routing} partitions={v.measured.partitions}",
                *notes,
            ]
        )
        cases.append(case)
    test_suite = TestSuite(suite)
    test_suite.add_testcases(cases)
    xml = JUnitXml()
    xml.add_testsuite(test_suite)
    raw: bytes = xml.tostring()  # type: ignore[no-untyped-call]  # junitparser leaves it unannotated
    return raw.decode("utf-8")


REPORT_FORMAT = "ruscope-check/1"


def json_report(verdicts: Sequence[Verdict], *, target: str) -> str:
    """Every verdict with its figures, checks and why (`--report`), deterministic like the baseline."""
    body = {
        "format": REPORT_FORMAT,
        "target": target,
        "failed": sum(v.status == "fail" for v in verdicts),
        "queries": [_reported(v) for v in verdicts],
    }
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _reported(v: Verdict) -> dict[str, Any]:
    m = v.measured
    return {
        "name": m.name,
        "container": m.container,
        "sql": m.sql,
        "ru_before": v.before.ru if v.before is not None else None,
        "ru_now": m.ru,
        "change_pct": v.change_pct,
        "routing": m.routing,
        "partitions": m.partitions,
        "verdict": v.status,
        "checks": [{"rule": c.rule, "severity": c.severity, "message": c.message} for c in v.checks],
        "why": list(v.why),
    }


def summary_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """One line per query for the terminal, and the reasons of each that did not pass."""
    lines = []
    for v in verdicts:
        m = v.measured
        change = f" ({_change(v)} vs baseline)" if v.change_pct is not None else ""
        reach = f"{m.partitions} partition" + ("" if m.partitions == 1 else "s")
        lines.append(f"{v.status.upper():4} {_label(m)}: {_ru(m.ru) or '-'} RU, {m.routing}, {reach}{change}")
        lines += [f"     {c.severity}: {c.message}" for c in v.checks if c.severity != "note" or v.status == "new"]
        if v.status in ("fail", "warn"):
            lines += [f"     why: {w}" for w in v.why]
    return lines
