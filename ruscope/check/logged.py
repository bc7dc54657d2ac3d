"""`ruscope check --from-emulator URL`: the queries a test run of any SDK sent to a running ruscope emulator,
read from its request log (`ruscope.check.emulator_log`) and measured as `analysis.gate.logged` defines,
then judged as a replay's are: the config's budgets and baseline for the queries it names (by their SQL),
the baseline alone for the others.

The stretch of the log is the run's: from `--since` (the time the suite started, ISO 8601 or epoch seconds)
and with `--tag` (the `x-ruscope-tag` header the suite's client sends, e.g. @azure/cosmos's
`defaultHeaders`), when given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

from analysis.gate.logged import RUN_ID, executions_of, normalized_sql, query_rows
from analysis.gate.measure import measured_queries
from analysis.gate.verdicts import Check
from collectors.config import Config, QuerySpec
from ruscope.check.emulator_log import EmulatorLog, EmulatorLogError, LoggedRequest
from ruscope.check.run import Measurement, lint_checks, selected_queries
from ruscope.check.target import CheckError


@dataclass(frozen=True)
class LogStretch:
    """Which requests of the log are the run's."""

    url: str
    key: str | None = None
    since: float | None = None
    tag: str | None = None


def parse_since(text: str) -> float:
    """Epoch seconds from `--since`: ISO 8601 (a time without a zone is UTC) or epoch seconds."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CheckError(
            f"--since: {text!r} is neither an ISO 8601 time (2026-12-03T10:00:00Z) nor epoch seconds"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def named_queries(config: Config | None) -> list[QuerySpec]:
    """The config's checked queries (none without a config): their SQL names them in the log."""
    return [] if config is None else selected_queries(config)


def measure_log(config: Config | None, stretch: LogStretch, *, err: Callable[[str], None]) -> Measurement:
    """What each query of the stretch cost per execution, with the advisor's lint of the config's queries."""
    try:
        read = EmulatorLog(stretch.url, stretch.key).since(0)
    except EmulatorLogError as exc:
        raise CheckError(str(exc)) from None
    if read.dropped and _lost_some(read.requests, stretch.since):
        err(
            "the emulator's request log dropped requests of this run before they were read "
            "(its --request-log-mb cap): the figures may miss some"
        )
    queries = named_queries(config)
    names = {normalized_sql(q.sql): q.name for q in queries}
    rows = query_rows((vars(r) for r in read.requests), since=stretch.since, tag=stretch.tag)
    executions = executions_of(rows, names)
    if executions.empty:
        raise CheckError(f"{stretch.url}: no query in its request log{_stretch_text(stretch)}: nothing to check")
    measured = measured_queries(executions, pd.DataFrame(), {q.name: q.rate_per_s for q in queries})
    seen = [q for q in queries if q.name in measured]
    lint: dict[str, list[Check]] = lint_checks(config, seen) if config is not None and seen else {}
    return Measurement(measured, lint, RUN_ID, 0)


def _lost_some(requests: list[LoggedRequest], since: float | None) -> bool:
    """Whether records at or after `since` may have left the log: its oldest record held is no older."""
    return not requests or since is None or requests[0].time >= since


def _stretch_text(stretch: LogStretch) -> str:
    parts = []
    if stretch.since is not None:
        parts.append(f"since {datetime.fromtimestamp(stretch.since, UTC).isoformat()}")
    if stretch.tag is not None:
        parts.append(f"tagged {stretch.tag!r}")
    return f" ({', '.join(parts)})" if parts else ""
