"""Per-request rows of CDBDataPlaneRequests and CDBQueryRuntimeStatistics, read from the engine's request log.

History keeps per-minute counts, not request ids, so a query that names ActivityId (in either mode's
spelling, `activityId_g` in AzureDiagnostics) is answered from the request log instead
(`emulator.engine.accounting`): one row per request, at its own time, with its own id, status and charge,
unweighted, so count(), dcount(), dcountif(), max() and a `project` are exact (azure-monitor.md §7b R52).
The trigger is the name as an identifier anywhere in the query (a column, a join key, an output name; a
string literal does not count): `wants_request_rows`. The log is bounded and drops its oldest records, so
before answering, every minute up to the log's `missing_until` that the scan reaches is checked against
History's request counts of the same containers; one that History counts more requests in than the log
holds means ids are missing, and the query is refused, naming the time after which every id is known
and a start it will answer (R55). Nothing is answered from a log that lost rows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from typing import Any

from cosmoscore.monitor.logs import (
    ACTIVITY_ID,
    BY_CATEGORY,
    DURATION_MS,
    OPERATION_NAME,
    PARTITION_ID,
    PARTITION_KEY_RANGE_ID,
    QUERY_STATS_CATEGORY,
    QUERY_TEXT,
    REQUEST_CHARGE,
    REQUESTS_CATEGORY,
    STATUS_CODE,
    USER_AGENT,
)
from emulator.engine.accounting import Accounting, RequestRecord, executed_query
from emulator.history.aggregates import History
from emulator.monitor.kql.ast import KqlError, Lit, not_supported

CATEGORIES = (REQUESTS_CATEGORY, QUERY_STATS_CATEGORY)  # the tables whose rows are requests
# The columns per-request rows add to what History's rows serve (DurationMs: the emulator's own time, R54;
# UserAgent: the client's User-Agent header, R70)
ADDED = {REQUESTS_CATEGORY: (ACTIVITY_ID, DURATION_MS, USER_AGENT), QUERY_STATS_CATEGORY: (ACTIVITY_ID,)}
_NAMES = frozenset({ACTIVITY_ID} | {t.legacy[ACTIVITY_ID] for t in BY_CATEGORY.values() if ACTIVITY_ID in t.legacy})
Coll = tuple[str, str]
Fact = tuple[float, dict[str, object], float]  # the request's time, its fields, weight 1


def wants_request_rows(query: Any) -> bool:
    """Whether the parsed query names ActivityId (any spelling) as an identifier anywhere: walks every
    dataclass node, tuple and list of the tree, skipping literals (so `let`, `join` and later operators are
    covered without knowing their shapes)."""
    if isinstance(query, str):
        return query in _NAMES
    if isinstance(query, Lit):
        return False
    if isinstance(query, tuple | list):
        return any(wants_request_rows(item) for item in query)
    if dataclasses.is_dataclass(query) and not isinstance(query, type):
        return any(wants_request_rows(getattr(query, f.name)) for f in dataclasses.fields(query))
    return False


def read_log(
    accounting: Accounting,
    history: History,
    window: tuple[float, float],
    containers: Iterable[Coll],
    tick: Callable[[], None] | None = None,
) -> dict[Coll, list[RequestRecord]]:
    """The records of `containers` in the scanned window [since, until), per container in log order; a
    KqlError when the log may lack some of them (`_check_complete`)."""
    since, until = window
    wanted = frozenset(containers)
    first = since // 60 * 60  # History counts whole minutes: the log is read and compared by whole minutes
    held, missing = accounting.window(first, until // 60 * 60 + 60, wanted)
    if missing is not None and since <= missing:
        end = (min(missing, until) // 60 + 1) * 60
        _check_complete([r for r in held if r.time < end], history, wanted, (first, end), missing, tick)
    out: dict[Coll, list[RequestRecord]] = {c: [] for c in wanted}
    for r in held:
        if since <= r.time < until:
            out[(r.database, r.container)].append(r)
    return out


def _check_complete(
    held: list[RequestRecord],
    history: History,
    containers: frozenset[Coll],
    minutes: tuple[float, float],
    missing: float,
    tick: Callable[[], None] | None,
) -> None:
    """Refuse at the first minute of [first, end) that holds more of a container's requests in History than
    the log (`held`: its records of those minutes): the log dropped them (or the engine started on an older
    saved history), so their ids are gone."""
    first, end = minutes
    logged = Counter((r.database, r.container, r.time // 60 * 60) for r in held)
    for db, coll in sorted(containers):
        entries = history.minute_entries(db, coll, "ops", first, end, tick=tick)
        for minute, cells in groupby(entries, key=lambda entry: entry[0]):  # oldest first, a minute at a time
            lost = sum(int(values[0]) for _, _, values in cells) - logged[(db, coll, minute)]
            if lost > 0:
                raise _unknown_ids(missing, f"{lost} requests of {db}/{coll} in the minute of {_iso(minute)}")


def _iso(time: float) -> str:
    return dt.datetime.fromtimestamp(time, dt.UTC).isoformat().replace("+00:00", "Z")


def _unknown_ids(missing: float, lost: str) -> KqlError:
    known, start = _iso(missing), _iso((missing // 60 + 1) * 60)  # a scan from the next minute is never checked
    return not_supported(
        f"{ACTIVITY_ID}: the ruscope stand-in knows every request's id only after {known}: its request log is "
        f"bounded and dropped older requests ({lost} are counted per minute but have no record), so an answer "
        f"would silently lose rows. Start the query at {start} or later (where TimeGenerated >= datetime({start})), "
        "or run the emulator with a larger --request-log-mb"
    )


def facts(category: str, records: list[RequestRecord]) -> Iterator[Fact]:
    """One container's per-request facts of `category`: every request (CDBDataPlaneRequests), or every query
    the engine ran (CDBQueryRuntimeStatistics: `executed_query`, R53). OperationName, StatusCode and
    PartitionId (the pkrange) as History's cells give them, so both representations agree."""
    if category == REQUESTS_CATEGORY:
        for r in records:
            fields: dict[str, object] = {
                OPERATION_NAME: r.operation,
                STATUS_CODE: r.status,
                PARTITION_ID: r.pkrange_id,
                REQUEST_CHARGE: r.request_charge,
                ACTIVITY_ID: r.activity_id,
                DURATION_MS: r.duration_ms,
                USER_AGENT: r.user_agent,
            }
            yield r.time, fields, 1.0
        return
    for r in records:
        if executed_query(r):
            yield (
                r.time,
                {PARTITION_KEY_RANGE_ID: r.pkrange_id, QUERY_TEXT: r.query_text, ACTIVITY_ID: r.activity_id},
                1.0,
            )
