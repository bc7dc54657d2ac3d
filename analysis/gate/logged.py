"""The queries of a test run of any SDK, from the emulator's request log, as the executions a check measures.

`ruscope check --from-emulator` reads the requests a suite in JavaScript, .NET or Java sent (the log's
records as plain mappings: `emulator.engine.accounting.RequestRecord` with its `seq`) and judges their
queries as it judges its own replay, so the figures are `analysis.gate.measure`'s, not a second definition.

**One execution** of a query is every request carrying one correlated activity id
(`x-ms-cosmos-correlated-activityid`, cosmos-wire-protocol.md W89: azure-cosmos sends one per `query_items`
call on every page of every partition, @azure/cosmos also on the query plan request), or each request's own
activity id when a client sends none.
Its RU is the sum of those requests' charges, its partitions the pkranges that served them, its routing the
class of those against the container's partitions at the time (`pkrange_count` in the record).

**A query** is its SQL text, whitespace collapsed. One the config names (`[[queries]] sql`) gets the config's
name, so its budget and baseline apply; any other gets `sql-` and a hash of its text: stable across runs, so
a baseline of a suite's queries can be kept without naming them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from analysis.gate.requests import THROTTLED
from analysis.pkrange_ids import pkrange_sort_key
from analysis.queries.costs import EXECUTION_COLUMNS
from cosmoscore.routing import UNKNOWN, routing_class

NEEDS_PLAN = (400, 1004)  # "cross partition query ... requires a query plan": an SDK's normal first step
QUERY_OPERATIONS = frozenset({"Query", "QueryPlan"})
RUN_ID = "emulator-log"
GENERATED_PREFIX = "sql-"
_SPACE = re.compile(r"\s+")


def normalized_sql(sql: str) -> str:
    return _SPACE.sub(" ", sql).strip()


def generated_name(sql: str) -> str:
    """`sql-` and 10 hex digits of the SHA-256 of the normalized text."""
    return GENERATED_PREFIX + hashlib.sha256(normalized_sql(sql).encode("utf-8")).hexdigest()[:10]


def query_rows(
    rows: Iterable[Mapping[str, Any]], *, since: float | None = None, tag: str | None = None
) -> list[dict[str, Any]]:
    """The query requests of the stretch asked for: from `since` (engine clock, epoch seconds) and with
    `tag` (`x-ruscope-tag`), when given."""
    return [
        dict(row)
        for row in rows
        if row.get("operation") in QUERY_OPERATIONS
        and row.get("resource_type") == "docs"
        and (since is None or float(row.get("time") or 0.0) >= since)
        and (tag is None or row.get("tag") == tag)
    ]


def executions_of(rows: Iterable[Mapping[str, Any]], names: Mapping[str, str]) -> pd.DataFrame:
    """One executions row (the store's `executions` columns `analysis.queries.costs` reads) per execution of
    each query in `rows` (the log's query requests, `query_rows`); `names` maps a normalized SQL text to its
    name in the config."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        key = str(row.get("correlated_activity_id") or row.get("activity_id") or row.get("seq"))
        groups.setdefault(key, []).append(row)
    executions = [_execution(key, parts, names) for key, parts in groups.items()]
    executions = [e for e in executions if e is not None]
    frame = pd.DataFrame(executions, columns=EXECUTION_COLUMNS)  # items, documents: not in the log
    if frame.empty:
        return frame
    frame = frame.sort_values(["time", "execution_id"], kind="stable").reset_index(drop=True)
    frame["repeat"] = frame.groupby(["database", "container", "query_name"]).cumcount().astype("int32")
    return frame


def _application_sql(parts: list[Mapping[str, Any]]) -> str:
    """The query as the application wrote it: the query plan request's text (the pages of a cross-partition
    query carry the plan's rewritten query), else the first request's."""
    plans = [p for p in parts if p.get("operation") == "QueryPlan" and p.get("query_text")]
    texts = [str(p.get("query_text") or "") for p in plans or parts]
    return normalized_sql(next((t for t in texts if t), ""))


def _failed(part: Mapping[str, Any]) -> bool:
    """A failed request of an execution; neither a 429 (the SDK retries it: `throttled` counts it) nor the
    gateway's 400/1004 that sends an SDK for the query plan (cosmos-wire-protocol.md §1.7) is."""
    status, substatus = int(part.get("status") or 0), int(part.get("substatus") or 0)
    return status >= 400 and status != THROTTLED and (status, substatus) != NEEDS_PLAN


def _execution(key: str, parts: list[Mapping[str, Any]], names: Mapping[str, str]) -> dict[str, Any] | None:
    sql = _application_sql(parts)
    if not sql:
        return None  # no text logged (an emulator older than the log's query texts): nothing to name it by
    pages = [p for p in parts if p.get("operation") == "Query"]
    if not pages:
        return None  # a query plan request alone (azure-cosmos sends it without the query's id): no execution
    served = sorted({str(p["pkrange_id"]) for p in pages if p.get("pkrange_id")}, key=pkrange_sort_key)
    failed = [p for p in parts if _failed(p)]
    total = max((int(p.get("pkrange_count") or 0) for p in pages), default=0)
    first = parts[0]
    return {
        "run_id": RUN_ID,
        "database": str(first.get("database") or ""),
        "container": str(first.get("container") or ""),
        "query_name": names.get(sql) or generated_name(sql),
        "repeat": 0,
        "time": pd.Timestamp(min(float(p.get("time") or 0.0) for p in parts), unit="s", tz="UTC"),
        "execution_id": key,
        "mode": "as-is",
        "feed_range": "",
        "status": "error" if failed else "ok",
        "error": f"HTTP {failed[0].get('status')}/{failed[0].get('substatus') or 0}" if failed else "",
        "total_ru": round(sum(float(p.get("request_charge") or 0.0) for p in parts), 2),
        "pkranges": ",".join(served),
        "routing_observed": routing_class(len(served), total) if not failed else UNKNOWN,
        "routing_predicted": UNKNOWN,
        "routing_mismatch": False,
        "throttled": sum(int(p.get("status") or 0) == THROTTLED for p in parts),
        "pages": len(pages),
        "round_trips": len(parts),
        "sql": sql,
    }
