"""What a query's leading `where` operators pin, so only those containers and minutes are read.

The pushed-down `Scan` is only ever a superset of what the `where` keeps: the `where` itself still
runs on every row, so a bound read loosely here costs time, never correctness. The request body's
`timespan` narrows it further (the service applies it in addition to the KQL, azure-monitor.md §1.6).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

from cosmoscore.monitor.logs import CATEGORY, COLLECTION_NAME, DATABASE_NAME, TIME_GENERATED
from emulator.monitor.kql.ast import BinOp, Col, InList, KqlError, Lit, Query
from emulator.monitor.kql.expr import constant, uses_columns
from emulator.monitor.tables import Scan, spellings

_PINNED = {
    **dict.fromkeys(spellings(DATABASE_NAME), "databases"),
    **dict.fromkeys(spellings(COLLECTION_NAME), "containers"),
    CATEGORY: "categories",
}


def scan_of(query: Query, since: float, until: float, now: dt.datetime) -> Scan:
    """The scan for `query` within [since, until) (the body's timespan)."""
    scan = Scan(since, until)
    for op in query.operators:
        if op.kind != "where":
            break
        for term in _conjuncts(op.expr):
            scan = _narrow(scan, term, now)
    return scan


def _conjuncts(expr: Any) -> Iterator[Any]:
    if isinstance(expr, BinOp) and expr.op == "and":
        yield from _conjuncts(expr.left)
        yield from _conjuncts(expr.right)
    else:
        yield expr


def _value(node: Any, now: dt.datetime) -> Any:
    if uses_columns(node):
        return None
    try:
        return constant(node, now)
    except KqlError:
        return None  # the where's own check reports it


def _narrow(scan: Scan, term: Any, now: dt.datetime) -> Scan:
    if isinstance(term, InList) and not term.negated and isinstance(term.value, Col):
        field = _PINNED.get(term.value.name)
        values = [i.value for i in term.items if isinstance(i, Lit) and i.type == "string"]
        if field and len(values) == len(term.items):
            return _pin(scan, field, frozenset(values))
        return scan
    if not isinstance(term, BinOp) or not isinstance(term.left, Col):
        return scan
    name, value = term.left.name, _value(term.right, now)
    if term.op == "==" and name in _PINNED and isinstance(value, str):
        return _pin(scan, _PINNED[name], frozenset({value}))
    if name == TIME_GENERATED and isinstance(value, dt.datetime):
        at = value.timestamp()
        if term.op in (">", ">="):
            return dataclasses.replace(scan, since=max(scan.since, at))
        if term.op in ("<", "<="):  # rows are minute starts: `<=` keeps the minute starting at `at`
            return dataclasses.replace(scan, until=min(scan.until, at + (1 if term.op == "<=" else 0)))
        if term.op == "==":
            return dataclasses.replace(scan, since=max(scan.since, at), until=min(scan.until, at + 1))
    return scan


def _pin(scan: Scan, field: str, values: frozenset[str]) -> Scan:
    current: frozenset[str] | None = getattr(scan, field)
    narrowed = values if current is None else current & values
    if field == "databases":
        return dataclasses.replace(scan, databases=narrowed)
    if field == "containers":
        return dataclasses.replace(scan, containers=narrowed)
    return dataclasses.replace(scan, categories=narrowed)
