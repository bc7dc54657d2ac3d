"""A check run read back from what it wrote, for the dashboard's Query costs page: its JSON report
(`ruscope check --report`, `analysis.gate.outputs.json_report`) or its JUnit XML (`--junit`), as one table
of the baseline against now with each query's verdict and reasons.

JUnit holds what a test view shows: RU now and before, routing, partitions (its `system-out`) and the failed
rules; the JSON report holds every check, warnings and notes too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd
from junitparser import Failure, JUnitXml, Skipped

from analysis.gate.outputs import REPORT_FORMAT

COLUMNS = [
    "query_name",
    "verdict",
    "ru_before",
    "ru_now",
    "change_pct",
    "routing",
    "partitions",
    "reasons",
    "container",
    "sql",
]
_FIGURES = re.compile(r"ru=(?P<ru>[\d.]*) before=(?P<before>[\d.]*) routing=(?P<routing>\S+) partitions=(?P<n>\d+)")


class ReportError(ValueError):
    """Not a check run's JSON report or JUnit XML (the message says why)."""


@dataclass(frozen=True)
class CheckReport:
    target: str
    queries: pd.DataFrame  # COLUMNS, one row per query

    @property
    def failed(self) -> int:
        return int((self.queries["verdict"] == "fail").sum())


def decode_report(text: str) -> CheckReport:
    """The report in `text`, JSON or JUnit XML by its first character."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _from_json(stripped)
    if stripped.startswith("<"):
        return _from_junit(stripped)
    raise ReportError("neither a ruscope check JSON report nor JUnit XML")


def _from_json(text: str) -> CheckReport:
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ReportError(f"not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != REPORT_FORMAT:
        raise ReportError(f"not a ruscope check report (format {REPORT_FORMAT!r} expected)")
    rows = [_json_row(q) for q in body.get("queries") or [] if isinstance(q, dict)]
    return CheckReport(str(body.get("target") or ""), pd.DataFrame(rows, columns=COLUMNS))


def _json_row(q: dict[str, Any]) -> dict[str, Any]:
    reasons = [f"{c.get('severity')}: {c.get('message')}" for c in q.get("checks") or [] if c.get("severity") != "note"]
    reasons += [f"why: {w}" for w in q.get("why") or []]
    return {
        "query_name": q.get("name"),
        "verdict": q.get("verdict"),
        "ru_before": q.get("ru_before"),
        "ru_now": q.get("ru_now"),
        "change_pct": q.get("change_pct"),
        "routing": q.get("routing"),
        "partitions": q.get("partitions"),
        "reasons": "; ".join(reasons),
        "container": q.get("container"),
        "sql": q.get("sql"),
    }


def _from_junit(text: str) -> CheckReport:
    try:
        xml = JUnitXml.fromstring(text)
    except Exception as exc:  # junitparser raises lxml's or ElementTree's own parse errors
        raise ReportError(f"not JUnit XML ({exc})") from None
    suites = list(xml) if isinstance(xml, JUnitXml) else [xml]
    rows, target = [], ""
    for suite in suites:
        target = target or str(suite.name or "")
        rows += [_junit_row(case) for case in suite]
    if not rows:
        raise ReportError("JUnit XML without test cases")
    return CheckReport(target, pd.DataFrame(rows, columns=COLUMNS))


def _junit_row(case: Any) -> dict[str, Any]:
    figures = _FIGURES.search(case.system_out or "")
    failures = [r for r in case.result if isinstance(r, Failure)]
    skipped = any(isinstance(r, Skipped) for r in case.result)
    ru = float(figures["ru"]) if figures and figures["ru"] else None
    before = float(figures["before"]) if figures and figures["before"] else None
    verdict = "fail" if failures else ("error" if skipped else ("new" if before is None else "pass"))
    return {
        "query_name": case.name,
        "verdict": verdict,
        "ru_before": before,
        "ru_now": ru,
        "change_pct": round((ru / before - 1) * 100, 1) if ru is not None and before else None,
        "routing": figures["routing"] if figures else None,
        "partitions": int(figures["n"]) if figures else None,
        "reasons": "; ".join(_reason(line) for f in failures for line in (f.text or f.message or "").splitlines()),
        "container": case.classname,
        "sql": None,
    }


def _reason(line: str) -> str:
    """A failure line of the JUnit text (`rule: message` or `why: ...`) as the JSON report says it."""
    if line.startswith("why: "):
        return line
    _, _, message = line.partition(": ")
    return f"fail: {message or line}"
