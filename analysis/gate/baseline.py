"""The baseline: what each query cost when the application last accepted it, committed in its repository.

A JSON document, written so that a re-run over the same data and queries rewrites it byte for byte
(sorted keys, RU rounded to 0.01, a final newline): the emulator's charges are a model, not a clock, so a
baseline changes only when a query or its data does, and its diff in a pull request shows exactly that.

    {"format": "ruscope-baseline/1",
     "queries": {"orders-of-tenant": {"container": "orders", "partitions": 1, "routing": "single",
                                       "ru": 4.07, "sql": "SELECT ..."}}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analysis.gate.measure import Measured

FORMAT = "ruscope-baseline/1"


class BaselineError(ValueError):
    """A baseline file that cannot be read as one (the message says what is wrong)."""


@dataclass(frozen=True)
class Accepted:
    """One query as the baseline holds it."""

    container: str
    sql: str
    ru: float
    partitions: int
    routing: str


def baseline_of(measured: Mapping[str, Measured]) -> dict[str, Accepted]:
    """The baseline a check run would write: every query that ran (a failed one keeps no entry)."""
    return {
        name: Accepted(m.container, m.sql, round(m.ru, 2), m.partitions, m.routing)
        for name, m in measured.items()
        if m.ru is not None
    }


def encode(accepted: Mapping[str, Accepted]) -> str:
    queries = {name: vars(entry) for name, entry in sorted(accepted.items())}
    return json.dumps({"format": FORMAT, "queries": queries}, indent=2, sort_keys=True) + "\n"


def decode(text: str) -> dict[str, Accepted]:
    """The baseline's queries; BaselineError naming what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f'not a ruscope baseline: expected "format": "{FORMAT}"')
    queries = data.get("queries")
    if not isinstance(queries, dict):
        raise BaselineError('"queries" must be an object of query names')
    return {str(name): _entry(name, entry) for name, entry in queries.items()}


def _entry(name: str, entry: Any) -> Accepted:
    try:
        return Accepted(
            container=str(entry["container"]),
            sql=str(entry["sql"]),
            ru=float(entry["ru"]),
            partitions=int(entry["partitions"]),
            routing=str(entry["routing"]),
        )
    except (TypeError, KeyError, ValueError) as exc:
        raise BaselineError(f"query {name!r}: needs container, sql, ru, partitions and routing ({exc})") from None
