"""The Log Analytics query API served from the engine's per-minute `History` (an `emulator.rest.server.App`).

Paths, as `azure.monitor.query.LogsQueryClient` sends them (azure-monitor.md §3.1), under `/v1`:
- `POST /v1/workspaces/{workspaceId}/query` (any workspace id: resource-specific and AzureDiagnostics
  tables are both present in every workspace);
- `POST /v1/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.DocumentDB/databaseAccounts/{acct}/query`
  (resource-centric);
- `POST /v1/$batch` (each item answered in the same shape with its own status; always 200).
A bearer token is required (401 without, as the metrics API). `Prefer: include-statistics=true` adds a
small statistics dict. Refused queries get the service's 400 (`BadArgumentError` over a Syntax/Semantic
error); the KQL subset is in `kql.parser`, its evaluation rules in `kql.evaluate` (`kql.join`), the tables
in `tables`. A query's `let` names and tables are resolved by `kql.tabular.bind`; each table it names (the
body's, a `let`'s, a join's right side) is read by `LogsApp._table`, narrowed by its own leading `where`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import re
import time
from collections.abc import Iterable
from typing import Any

import orjson

from cosmoscore.monitor.logs import TIME_GENERATED
from emulator.engine.facade import Engine
from emulator.monitor.budget import Budget, Cancelled, TimedOut
from emulator.monitor.kql.ast import KqlError, Query, semantic
from emulator.monitor.kql.expr import Row, to_text
from emulator.monitor.kql.parser import parse
from emulator.monitor.kql.scan import scan_of
from emulator.monitor.kql.shape import Planned
from emulator.monitor.kql.tabular import bind
from emulator.monitor.query import MonitorError, MonitorRequest, authenticate, parse_resource
from emulator.monitor.request_log import wants_request_rows
from emulator.monitor.tables import EVERYTHING, SENT, Source, rows, shape_of
from emulator.rest.request import Request

log = logging.getLogger("ruscope.emulator.monitor")

Response = tuple[int, dict[str, str], bytes]
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # Kusto's long
_JSON = {"content-type": "application/json; charset=utf-8"}
DEFAULT_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
_DURATION = re.compile(r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def _bad(message: str, code: str = "BadArgumentError") -> MonitorError:
    return MonitorError(400, code, message)


def _error_body(exc: MonitorError) -> dict[str, Any]:
    return {"error": {"code": exc.code, "message": exc.message}}


class LogsApp:
    """Log Analytics' query API for the emulator's one account."""

    request_type = MonitorRequest

    def __init__(
        self,
        engine: Engine,
        region: str = "local",
        resource_group: str = "ruscope",
        categories: Iterable[str] = SENT,
    ) -> None:
        self.engine = engine
        self.region = region
        # The diagnostic setting's categories: a workspace holds rows of those only (a category not sent
        # answers no rows, as a setting without it does)
        self.categories = frozenset(categories)
        self.resource_id = (
            f"/subscriptions/{DEFAULT_SUBSCRIPTION}/resourceGroups/{resource_group}"
            f"/providers/Microsoft.DocumentDB/databaseAccounts/{engine.account_name}"
        )

    def handle(self, request: Request, budget: Budget | None = None) -> Response:
        """One request to (status, headers, body); errors in the service's shapes, never a traceback.
        `budget`: its time and result caps (default: the service's)."""
        try:
            authenticate(request)
            if request.method != "POST":
                raise MonitorError(405, "MethodNotAllowed", f"{request.method} is not allowed; use POST.")
            status, body = self._route(request, budget or Budget())
        except MonitorError as exc:
            return exc.status, dict(_JSON), orjson.dumps(_error_body(exc))
        except Exception:  # a bug costs one request a 500, never the server
            log.exception("internal error on %s %s", request.method, request.path)
            error = {"error": {"code": "InternalServerError", "message": "The stand-in failed; see its log."}}
            return 500, dict(_JSON), orjson.dumps(error)
        return status, dict(_JSON), orjson.dumps(body)

    def _route(self, request: Request, budget: Budget) -> tuple[int, dict[str, Any]]:
        seg = request.segments
        payload = _json(request.body)
        prefer = request.header("prefer") or ""
        if seg == ["v1", "$batch"]:
            return 200, self.batch(payload, budget)
        if len(seg) == 4 and seg[:2] == ["v1", "workspaces"] and seg[3] == "query":
            return self.query(seg[2], self.resource_id, payload, prefer, budget)
        if len(seg) > 2 and seg[0] == "v1" and seg[1].lower() == "subscriptions" and seg[-1] == "query":
            resource = "/" + "/".join(seg[1:-1])
            parse_resource(resource)  # the service's 400 for anything but a Cosmos DB account id
            return self.query(DEFAULT_SUBSCRIPTION, resource, payload, prefer, budget)
        raise MonitorError(404, "PathNotFoundError", f"The requested path does not exist: {request.path}")

    def batch(self, payload: Any, budget: Budget) -> dict[str, Any]:
        """`$batch`: each request answered as if alone, in request order, ids echoed; all within the one
        HTTP request's time budget (what the client waits for), the items past it answered 504."""
        requests = payload.get("requests") if isinstance(payload, dict) else None
        if not isinstance(requests, list):
            raise _bad('The body must be {"requests": [...]}.')
        responses = []
        for item in requests:
            if not isinstance(item, dict):
                raise _bad("Each batch request must be an object.")
            prefer = str((item.get("headers") or {}).get("Prefer") or "")
            try:
                if budget.spent():  # the client stops waiting at the one deadline: the rest are not run
                    raise TimedOut
                workspace = str(item.get("workspace") or "")
                status, body = self.query(workspace, self.resource_id, item.get("body"), prefer, budget)
            except MonitorError as exc:
                status, body = exc.status, _error_body(exc)
            except TimedOut:
                status, body = 504, _error_body(_timed_out(budget))
            responses.append({"id": item.get("id"), "status": status, "body": body})
        return {"responses": responses}

    def query(
        self, workspace: str, resource_id: str, payload: Any, prefer: str, budget: Budget | None = None
    ) -> tuple[int, dict[str, Any]]:
        """One query's (status, body): 200 with the table (and a `PartialError` when cut at a result cap),
        400 with the service's error shape, or 504 past the time budget."""
        budget = budget or Budget()
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            raise _bad('The body must be {"query": "<KQL>", "timespan": ...}.')
        started = time.perf_counter()
        now = self.engine.clock()
        try:
            since, until = parse_timespan(payload.get("timespan"), now)
            table, count, partial = self._evaluate(payload["query"], since, until, now, workspace, resource_id, budget)
        except KqlError as exc:
            return 400, exc.body()
        except RecursionError:
            return 400, KqlError("SyntaxError", "SYN0002", "The query is nested too deeply.").body()
        except (ArithmeticError, ValueError, TypeError) as exc:  # a value no column type can hold, as Kusto refuses it
            log.info("a query could not be evaluated: %s: %s", type(exc).__name__, str(exc)[:200])
            log.debug("traceback", exc_info=exc)
            return 400, semantic(f"The query cannot be evaluated: {_reason(exc)}.", "E_OVERFLOW").body()
        except TimedOut:
            raise _timed_out(budget) from None
        except Cancelled:
            raise MonitorError(503, "ServiceUnavailable", "The stand-in is shutting down.") from None
        body: dict[str, Any] = {"tables": [table]}
        if partial is not None:
            body["error"] = partial
        if "include-statistics=true" in prefer.replace(" ", "").lower():
            elapsed = time.perf_counter() - started
            body["statistics"] = {"query": {"executionTime": elapsed, "resourceUsage": {"rows": count}}}
        return 200, body

    def _evaluate(
        self, text: str, since: float, until: float, now: float, workspace: str, resource_id: str, budget: Budget
    ) -> tuple[dict[str, Any], int, dict[str, Any] | None]:
        """The result table (its rows already JSON), their number, and the `PartialError` when it was cut
        at a result cap."""
        query = parse(text)
        now_dt = dt.datetime.fromtimestamp(now, dt.UTC)
        per_request = wants_request_rows(query)  # ActivityId anywhere: the request log's rows, for every table
        containers = frozenset(self.engine.monitored_containers())
        account = self.engine.account_name
        source = Source(
            self.engine.history,
            containers,
            account,
            resource_id,
            self.region,
            workspace,
            budget.check,
            self.categories,
            now=now,
            accounting=self.engine.accounting,
        )
        # every table the query names (its body's, each let's, each join's right side) is read by `_table`
        answer = bind(query, lambda q: self._table(q, source, since, until, now_dt, per_request), now_dt, budget.check)
        names = list(answer.shape.columns)
        types = [c.type for c in answer.shape.columns.values()]
        # The rows are written as JSON into one buffer as they come: no object per row for the allocator to
        # scatter, nothing for the GC. (A kept `orjson.dumps` result holds 4 KB whatever its length, orjson
        # >= 3.12: 200 MB for a 50,000-row answer.) The budget is checked per minute of history read
        # (`Source.tick`), per row every stage takes (`run`) and per row of the answer (`_watched`).
        out = bytearray(b"[")
        count, partial = 0, None
        for r in _watched(answer.rows(), budget):
            row = orjson.dumps([_wire(r.get(n), t) for n, t in zip(names, types, strict=True)])
            if count >= budget.max_rows or len(out) + len(row) + 1 > budget.max_bytes:
                partial = _too_large(budget, rows=count >= budget.max_rows)
                break
            if count:
                out += b","
            out += row
            count += 1
        out += b"]"
        columns = [{"name": n, "type": t} for n, t in zip(names, types, strict=True)]
        rows_json = orjson.Fragment(bytes(out))
        return {"name": "PrimaryResult", "columns": columns, "rows": rows_json}, count, partial

    def _table(
        self, query: Query, source: Source, since: float, until: float, now: dt.datetime, per_request: bool
    ) -> Planned:
        """The log table `query` names, narrowed by its leading `where` and the body's timespan: its shape
        and its rows (read lazily, anew at each call); `per_request`: the whole query names ActivityId, so the
        request tables' rows are the request log's (`request_log`). SEM0100 for a name that is no table."""
        # nothing before the retention or after the current minute: bounds a query with no time limit
        stamp = now.timestamp()
        kept = stamp - self.engine.history.config.retention_days * 86400
        scan = scan_of(query, max(since, kept), min(until, (stamp // 60 + 1) * 60), now)
        scan = dataclasses.replace(scan, per_request=per_request)
        shape = shape_of(query.table, scan)
        start, end = dt.datetime.fromtimestamp(since, dt.UTC), dt.datetime.fromtimestamp(until, dt.UTC)
        return Planned(shape, lambda: (r for r in rows(query.table, scan, source) if start <= r[TIME_GENERATED] < end))


def _watched(items: Any, budget: Budget) -> Any:
    """`items`, checking the budget's deadline and the shutdown as they come."""
    for item in items:
        budget.check()
        yield item


def _timed_out(budget: Budget) -> MonitorError:
    """The service's answer to a query past its time limit: 504 Gateway Timeout."""
    message = f"The query ran past its time limit of {budget.seconds:g} s (Prefer: wait=N; 180 s by default)."
    return MonitorError(504, "GatewayTimeout", message)


def _too_large(budget: Budget, rows: bool) -> dict[str, Any]:
    """The `PartialError` of a result cut at a cap, as Log Analytics words it (azure-monitor.md §3.1)."""
    limit = f"record count limit {budget.max_rows}" if rows else f"data size limit {budget.max_bytes}"
    message = f"Query result set has exceeded the internal {limit} (E_QUERY_RESULT_SET_TOO_LARGE)."
    return {
        "code": "PartialError",
        "message": "There were some errors when processing your query.",
        "details": [{"code": "EngineError", "message": message}],
    }


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        raise _bad("The request body is not valid JSON.") from None


def _wire(value: Any, kind: str) -> Any:
    """A value as Kusto writes it in a table row (datetimes ISO with Z, timespans as text)."""
    if value is None:
        return None
    if kind in ("datetime", "timespan"):
        return to_text(value)
    if kind == "real":
        return float(value)
    if kind in ("int", "long"):
        number = int(value)
        if not _LONG_MIN <= number <= _LONG_MAX:
            raise OverflowError(f"{number} is out of the range of a 64-bit long")
        return number
    return value


def _reason(exc: BaseException) -> str:
    """An evaluation failure in words: the overflow of a datetime or long, or what Python said."""
    text = str(exc).rstrip(".")
    if isinstance(exc, OverflowError) and "date" in text:
        return "a datetime is out of the range 0001-01-01 to 9999-12-31"
    return text[:200] or type(exc).__name__


def parse_timespan(value: Any, now: float) -> tuple[float, float]:
    """The body's `timespan` (azure-monitor.md §1.6): null, an ISO 8601 duration ending now, `start/end`
    or `start/duration`; as [since, until) epoch seconds."""
    if value is None:
        return EVERYTHING
    if not isinstance(value, str):
        raise _bad(f"Invalid timespan {value!r}.")
    parts = value.split("/")
    if len(parts) == 1:
        return now - _duration(parts[0]), now
    if len(parts) != 2:
        raise _bad(f"Invalid timespan {value!r}.")
    start = _instant(parts[0])
    end = start + _duration(parts[1]) if parts[1].upper().startswith("P") else _instant(parts[1])
    if end < start:
        raise _bad(f"Invalid timespan {value!r}: it ends before it starts.")
    return start, end


def _duration(text: str) -> float:
    match = _DURATION.match(text.strip().upper())
    if match is None or not any(match.groups()):
        raise _bad(f"Invalid timespan duration {text!r}: expected ISO 8601 such as PT3600S or P1D.")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60 + seconds


def _instant(text: str) -> float:
    try:
        parsed = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise _bad(f"Invalid timespan start or end {text!r}: expected an ISO 8601 time.") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp()


Rows = list[Row]
