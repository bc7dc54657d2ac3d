"""Every HTTP request the SDK sends, as a `RequestRecord`: the client-level request/response hooks.

Why client-level: cosmos-wire-protocol.md §3 - the per-call hooks and `last_response_headers` miss the
refused 400/1004, the query plan and `/pkranges` reads, which cost round trips (and RU) too.

`request_fields` is pure (one HTTP exchange to the record's HTTP fields); `Capture` adds the run and the
query in progress (`context`) and the request's order in the run (`seq`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlparse

from store import RequestRecord

REQUEST_KINDS = ("page", "refused", "query_plan", "pkranges", "metadata")


def request_kind(method: str, path: str, request_headers: Mapping[str, str], status: int, substatus: int) -> str:
    """What a request was for, from its method, path and headers (cosmos-wire-protocol.md §1.6-1.9)."""
    if request_headers.get("x-ms-cosmos-is-query-plan-request", "").lower() == "true":
        return "query_plan"
    if method == "POST" and request_headers.get("x-ms-documentdb-isquery", "").lower() == "true":
        return "refused" if status == 400 and substatus == 1004 else "page"
    if path.rstrip("/").endswith("/pkranges"):
        return "pkranges"
    return "metadata"


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def parse_query_metrics(raw: str | None) -> dict[str, str]:
    """`x-ms-documentdb-query-metrics` (`name=value;...`) as a dict."""
    if not raw:
        return {}
    return dict(part.split("=", 1) for part in raw.split(";") if "=" in part)


def request_fields(
    method: str,
    url: str,
    request_headers: Mapping[str, str],
    status: int,
    response_headers: Mapping[str, str],
    duration_ms: float,
    at: float,
) -> dict[str, Any]:
    """A `requests` record's fields from an HTTP exchange (no run or query context yet)."""
    substatus = _int(response_headers.get("x-ms-substatus")) or 0
    path = unquote(urlparse(url).path).strip("/")
    metrics = parse_query_metrics(response_headers.get("x-ms-documentdb-query-metrics"))
    return {
        "time": datetime.fromtimestamp(at, UTC),
        "request_kind": request_kind(method, path, request_headers, status, substatus),
        "method": method,
        "resource": path,
        "pkrange_id": response_headers.get("x-ms-documentdb-partitionkeyrangeid")
        or request_headers.get("x-ms-documentdb-partitionkeyrangeid")
        or "",
        "status": status,
        "substatus": substatus,
        "request_charge": _float(response_headers.get("x-ms-request-charge")) or 0.0,
        "item_count": _int(response_headers.get("x-ms-item-count")),
        "duration_ms": duration_ms,
        "activity_id": response_headers.get("x-ms-activity-id", ""),
        "correlated_activity_id": request_headers.get("x-ms-cosmos-correlated-activityid", ""),
        "retry_after_ms": _float(response_headers.get("x-ms-retry-after-ms")),
        "retrieved_document_count": _int(metrics.get("retrievedDocumentCount")),
        "retrieved_document_size": _int(metrics.get("retrievedDocumentSize")),
        "output_document_count": _int(metrics.get("outputDocumentCount")),
        "output_document_size": _int(metrics.get("outputDocumentSize")),
        "index_hit_ratio": _float(metrics.get("indexUtilizationRatio")),
        "index_utilization": _index_json(response_headers.get("x-ms-cosmos-index-utilization")),
    }


def _index_json(raw: Any) -> str | None:
    """The SDK replaces the base64 header with a decoded dict in some paths; keep JSON text either way."""
    if raw is None or raw == "":
        return None
    return json.dumps(raw) if isinstance(raw, dict) else str(raw)


def _no_query() -> dict[str, Any]:
    return {"query_name": None, "execution_id": None, "container": ""}


@dataclass
class Capture:
    """The client-level hooks. Records wait here until the collector takes them (after each execution)."""

    common: Mapping[str, Any]  # run_id, account, database
    clock: Callable[[], float] = time.time
    charge: Callable[[float], None] = lambda ru: None  # the run's RU meter
    # told of the SDK's wait before it retries a 429 (its Retry-After): a simulated clock moves by it
    waiting: Callable[[float], None] = lambda seconds: None
    # the query and execution in progress; requests before the first one (the account read) have none
    context: dict[str, Any] = field(default_factory=_no_query)
    count: int = 0  # requests seen in the whole run: the `seq` of the next one
    rows: list[RequestRecord] = field(default_factory=list)
    _started: dict[int, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_request(self, pipeline_request: Any) -> None:
        self._started[id(pipeline_request.http_request)] = time.perf_counter()

    def on_response(self, pipeline_response: Any) -> None:
        request, response = pipeline_response.http_request, pipeline_response.http_response
        started = self._started.pop(id(request), None)
        duration = (time.perf_counter() - started) * 1000 if started is not None else 0.0
        fields = request_fields(
            request.method, request.url, request.headers, response.status_code, response.headers, duration, self.clock()
        )
        with self._lock:
            record = RequestRecord(**fields, **self.common, **self.context, seq=self.count)
            self.count += 1
            self.rows.append(record)
            self.charge(record.request_charge)
        if record.status == 429 and record.retry_after_ms:
            self.waiting(record.retry_after_ms / 1000)  # the SDK sleeps it next (also after its last try)

    def take(self) -> list[RequestRecord]:
        """The records captured since the last call."""
        with self._lock:
            rows, self.rows = self.rows, []
        return rows
