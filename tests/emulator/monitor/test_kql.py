"""The KQL subset of the Log Analytics stand-in: each operator evaluated on the engine's per-minute
history (checked against the raw records), and each refusal in the service's 400 shape."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from emulator.engine.facade import Engine
from emulator.monitor.kql.parser import BinOp, Call, Col, InList, Lit, Star, parse
from emulator.monitor.kql.scan import scan_of
from emulator.monitor.logs import LogsApp, parse_timespan
from emulator.monitor.query import MonitorRequest
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START, _hot_workload, _setup

T0 = dt.datetime.fromtimestamp(START, dt.UTC)


@pytest.fixture(scope="module")
def app() -> Iterator[tuple[LogsApp, Engine, str]]:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, _, _ = _hot_workload(engine, clock, minutes=2)
    yield LogsApp(engine), engine, hot


def _ask(app: LogsApp, kql: str, timespan: str | None = None, path: str = "/v1/workspaces/w/query") -> tuple[int, Any]:
    body = orjson.dumps({"query": kql, "timespan": timespan})
    request = MonitorRequest("POST", path, {b"authorization": b"Bearer t"}, body, "https")
    status, _, raw = app.handle(request)
    return status, orjson.loads(raw)


def _result(app: tuple[LogsApp, Engine, str], kql: str, timespan: str | None = None) -> list[dict[str, Any]]:
    status, body = _ask(app[0], kql, timespan)
    assert status == 200, body
    (table,) = body["tables"]
    names = [c["name"] for c in table["columns"]]
    return [dict(zip(names, row, strict=True)) for row in table["rows"]]


def _types(app: tuple[LogsApp, Engine, str], kql: str) -> list[tuple[str, str]]:
    status, body = _ask(app[0], kql)
    assert status == 200, body
    return [(c["name"], c["type"]) for c in body["tables"][0]["columns"]]


def _records(engine: Engine) -> list[Any]:
    return [r for r in engine.accounting.records() if r.container == "c"]


def test_parse_builds_the_ast() -> None:
    query = parse("T | where a in ('x', 'y') and b >= ago(1h) | summarize arg_max(TimeGenerated, *) by a | take 3")
    where, summarize, take = query.operators
    assert query.table == "T"
    assert where.expr == BinOp(
        "and",
        InList(Col("a"), (Lit("x", "string"), Lit("y", "string")), negated=False),
        BinOp(">=", Col("b"), Call("ago", (Lit(dt.timedelta(hours=1), "timespan"),))),
    )
    assert summarize.items == ((None, Call("arg_max", (Col("TimeGenerated"), Star()))),)
    assert summarize.by == ((None, Col("a")),)
    assert take.expr == Lit(3, "long")
    assert parse('T | where t > datetime("02/12/2021, 11:20:00.000 PM")').operators[0].expr == BinOp(
        ">", Col("t"), Lit(dt.datetime(2021, 2, 12, 23, 20, tzinfo=dt.UTC), "datetime")
    )


def test_where_summarize_by_bin_and_order(app: tuple[LogsApp, Engine, str]) -> None:
    rows = _result(
        app,
        "CDBDataPlaneRequests | where OperationName in ('Read') and StatusCode != 201"
        " | summarize n = count(), ru = sum(todouble(RequestCharge)) by StatusCode, bin(TimeGenerated, 1m)"
        " | order by TimeGenerated asc, StatusCode asc",
    )
    expected: dict[tuple[int, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for r in _records(app[1]):
        if r.operation == "Read":
            minute = dt.datetime.fromtimestamp(r.time // 60 * 60, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            expected[(r.status, minute)][0] += 1
            expected[(r.status, minute)][1] += r.request_charge
    assert [(r["StatusCode"], r["TimeGenerated"]) for r in rows] == sorted(expected, key=lambda k: (k[1], k[0]))
    for r in rows:
        n, ru = expected[(r["StatusCode"], r["TimeGenerated"])]
        assert r["n"] == n and r["ru"] == pytest.approx(ru)


def test_top_project_extend_take_and_count(app: tuple[LogsApp, Engine, str]) -> None:
    _, engine, hot = app
    rows = _result(
        app,
        "CDBPartitionKeyRUConsumption | summarize RU = sum(RequestCharge) by PartitionKeyRangeId"
        " | extend Share = round(100.0 * RU / 1000, 1), Pk = toint(PartitionKeyRangeId)"
        " | top 2 by RU desc | project Pk, RU, Label = tostring(Pk) | take 1",
    )
    per_range: Counter[str] = Counter()
    for r in _records(engine):
        if r.partition_key:
            per_range[r.pkrange_id] += r.request_charge  # type: ignore[assignment]
    assert rows == [{"Pk": int(hot), "RU": pytest.approx(per_range[hot]), "Label": hot}]
    assert _result(app, "CDBDataPlaneRequests | count") == [{"Count": len(_records(engine))}]


def test_result_types(app: tuple[LogsApp, Engine, str]) -> None:
    assert _types(
        app,
        "CDBDataPlaneRequests | summarize c = count(), s = sum(RequestCharge), m = max(StatusCode),"
        " d = dcount(OperationName), a = avg(RequestCharge), t = min(TimeGenerated) by OperationName,"
        " l = tolong(StatusCode)",
    ) == [
        ("OperationName", "string"),
        ("l", "long"),
        ("c", "long"),
        ("s", "real"),
        ("m", "int"),
        ("d", "long"),
        ("a", "real"),
        ("t", "datetime"),
    ]


def test_avg_is_ru_over_requests_and_time_filters(app: tuple[LogsApp, Engine, str]) -> None:
    _, engine, _ = app
    start = T0 + dt.timedelta(minutes=1)
    kql = (
        "CDBDataPlaneRequests | where TimeGenerated >= datetime(" + start.isoformat() + ")"
        " | summarize a = avg(RequestCharge), n = count()"
    )
    (row,) = _result(app, kql)
    picked = [r for r in _records(engine) if r.time >= start.timestamp()]
    assert row["n"] == len(picked)
    assert row["a"] == pytest.approx(sum(r.request_charge for r in picked) / len(picked))
    # the body's timespan applies in addition: the first minute only
    (row,) = _result(app, "CDBDataPlaneRequests | summarize n = count()", f"{T0.isoformat()}/PT1M")
    assert row["n"] == sum(1 for r in _records(engine) if r.time < START + 60)


def test_snapshots_table_is_not_weighted(app: tuple[LogsApp, Engine, str]) -> None:
    rows = _result(app, "CDBPartitionKeyStatistics | where SizeKb >= 0 | project PartitionKey, SizeKb | take 2")
    assert len(rows) == 2 and all(r["PartitionKey"].startswith('["') for r in rows)
    legacy = _result(
        app,
        "AzureDiagnostics | where Category == 'PartitionKeyStatistics' | project partitionKey_s, sizeKb_d | take 1",
    )
    assert isinstance(legacy[0]["sizeKb_d"], float)


def test_leading_where_is_pushed_down() -> None:
    query = parse(
        "AzureDiagnostics | where TimeGenerated > ago(1h) and databaseName_s == 'd' and collectionName_s in ('a', 'b')"
        " and Category == 'DataPlaneRequests' | where TimeGenerated <= datetime(2027-01-01) | summarize count()"
    )
    now = dt.datetime(2027, 1, 1, 12, tzinfo=dt.UTC)
    scan = scan_of(query, 0.0, 1e11, now)
    assert scan.since == (now - dt.timedelta(hours=1)).timestamp()
    assert scan.until == dt.datetime(2027, 1, 1, tzinfo=dt.UTC).timestamp() + 1
    assert (scan.databases, scan.containers) == (frozenset({"d"}), frozenset({"a", "b"}))
    assert scan.categories == frozenset({"DataPlaneRequests"})


def test_timespans() -> None:
    assert parse_timespan("PT86400.0S", 100_000.0) == (13_600.0, 100_000.0)
    assert parse_timespan("2024-01-01T00:00:00.000Z/PT3600.0S", 0) == (1704067200.0, 1704070800.0)
    assert parse_timespan("2024-01-01T00:00:00Z/2024-01-02T00:00:00Z", 0)[1] == 1704153600.0


REFUSALS = [
    ("Nope | count", "SemanticError", "SEM0100", "Failed to resolve table or column expression named 'Nope'"),
    (  # the table has it (a key-second's RU, azure-monitor.md §7b R24): not "no such column", the stand-in's limit
        "CDBPartitionKeyRUConsumption | where ActivityId == 'x' | count",
        "SemanticError",
        "",
        "'where' operator: 'ActivityId': a row of this table is a key's RU in one second summed over its requests",
    ),
    ("CDBDataPlaneRequests | summarize dcount(RequestResourceType)", "SemanticError", "", "not per resource type"),
    ("CDBDataPlaneRequests | where DurationMs > 1 | count", "SemanticError", "", "keep no durations"),
    ("AzureDiagnostics | where todouble(duration_s) > 1 | count", "SemanticError", "", "its per-request rows"),
    ("cdbdataplanerequests | count", "SemanticError", "SEM0100", "Failed to resolve table"),
    ("CDBDataPlaneRequests | where (", "SyntaxError", "SYN0002", "Query could not be parsed"),
    ("CDBDataPlaneRequests | where StatusCode == '429' | count", "SemanticError", "SEM0025", "Cannot compare"),
    ("CDBDataPlaneRequests | join (CDBQueryRuntimeStatistics) on CollectionName", "SemanticError", "", "(left side)"),
    ("let x = 1; CDBDataPlaneRequests", "SemanticError", "", "a 'let' of a scalar value"),
    ("CDBDataPlaneRequests | where OperationName startswith 'R' | count", "SemanticError", "", "'startswith'"),
    ("CDBDataPlaneRequests | where StatusCode has '429' | count", "SemanticError", "SEM0025", "compares strings"),
    ("CDBPartitionKeyRUConsumption | extend k = parse_json(PartitionKey) | count", "SemanticError", "", "parse_json"),
    ("CDBDataPlaneRequests | summarize percentile(StatusCode, 95)", "SemanticError", "", "bare aggregate"),
    ("CDBDataPlaneRequests | where RequestCharge > 5 | count", "SemanticError", "", "per-minute aggregates"),
    ("CDBDataPlaneRequests | summarize max(RequestCharge)", "SemanticError", "", "per-minute aggregates"),
    ("CDBDataPlaneRequests | summarize sum(tolong(RequestCharge))", "SemanticError", "", "per-minute aggregates"),
    ("CDBDataPlaneRequests | summarize count() by bin(TimeGenerated, 30s)", "SemanticError", "", "whole minutes"),
    ("CDBDataPlaneRequests | take 5", "SemanticError", "", "'take' before a summarize"),
    ("CDBDataPlaneRequests | order by TimeGenerated | summarize count()", "SemanticError", "", "'order'"),
    ("CDBDataPlaneRequests | project OperationName", "SemanticError", "", "returning a log table's rows"),
    ("AzureDiagnostics | summarize max(todouble(requestCharge_s))", "SemanticError", "", "per-minute aggregates"),
    ("CDBDataPlaneRequests | where count() > 1", "SemanticError", "SEM0222", "only be used in the 'summarize'"),
    ("CDBPartitionKeyRUConsumption | summarize count() by bin(TimeGenerated, 500ms)", "SemanticError", "", "seconds"),
    ("AzureDiagnostics | summarize count() by bin(TimeGenerated, 1s)", "SemanticError", "", "whole minutes"),
    ("let a = CDBPartitionKeyStatistics;\nb | count", "SemanticError", "SEM0100", "expression named 'b'"),
    (
        "CDBPartitionKeyStatistics | join (CDBQueryRuntimeStatistics | count) on QueryText",
        "SemanticError",
        "SEM0100",
        "both sides",
    ),
    (
        "CDBPartitionKeyStatistics | join (CDBPartitionKeyStatistics) on $left.SizeKb == $right.PartitionKey",
        "SemanticError",
        "SEM0025",
        "(int, string)",
    ),
    (
        "CDBPartitionKeyStatistics | join kind=outer (CDBPartitionKeyStatistics) on SizeKb",
        "SemanticError",
        "SEM0025",
        "kind must be",
    ),
]


def test_has_matches_whole_terms_and_contains_substrings_case_insensitively(
    app: tuple[LogsApp, Engine, str],
) -> None:
    """Kusto's string operators (azure-monitor.md §7b R72): `has` finds a whole term (a maximal run of
    alphanumerics), `contains` any substring, both case-insensitive; `!` negates. Counted per operation
    against the engine's own records."""
    operations = {r.operation for r in _records(app[1])}
    assert {"Read", "Create"} <= operations

    def count(predicate: str) -> int:
        rows = _result(app, f"CDBDataPlaneRequests | where CollectionName == 'c' and {predicate} | count")
        return int(rows[0]["Count"])

    def requests(names: set[str]) -> int:
        return sum(1 for r in _records(app[1]) if r.operation in names)

    assert count("OperationName has 'read'") == requests({"Read"}) > 0
    assert count("OperationName has 'rea'") == 0  # a part of a term is no term
    assert count("OperationName contains 'EA'") == requests({"Read", "Create"} & operations)
    assert count("OperationName !contains 'e'") == requests({op for op in operations if "e" not in op.lower()})
    assert count("OperationName !has 'create'") == requests(operations - {"Create"})


@pytest.mark.parametrize(("kql", "kind", "code", "message"), REFUSALS)
def test_refusals_in_the_services_shape(
    app: tuple[LogsApp, Engine, str], kql: str, kind: str, code: str, message: str
) -> None:
    status, body = _ask(app[0], kql)
    assert status == 400
    error = body["error"]
    assert (error["code"], error["message"]) == ("BadArgumentError", "The request had some invalid properties")
    assert error["innererror"]["code"] == kind
    inner = error["innererror"]["innererror"]
    assert inner["code"] == (code or "NotSupportedByStandIn")
    assert message in inner["message"]


def test_http_errors(app: tuple[LogsApp, Engine, str]) -> None:
    request = MonitorRequest("POST", "/v1/workspaces/w/query", {}, b"{}", "https")
    assert app[0].handle(request)[0] == 401
    assert _ask(app[0], "CDBDataPlaneRequests | count", path="/v1/nowhere")[0] == 404
    status, body = _ask(app[0], "CDBDataPlaneRequests | count", timespan="yesterday")
    assert status == 400 and "timespan" in body["error"]["message"]


def test_string_and_time_functions(app: tuple[LogsApp, Engine, str]) -> None:
    _, engine, hot = app
    records = _records(engine)
    rows = _result(
        app,
        "CDBDataPlaneRequests | where OperationName =~ 'READ' and PartitionId !in ('nope') and TimeGenerated < now()"
        " and isnotempty(PartitionId) | summarize n = count(), ranges = dcount(PartitionId),"
        " throttled = countif(StatusCode == 429) | extend hot = iff(throttled > 0, 'yes', 'no')",
    )
    reads = [r for r in records if r.operation == "Read"]
    assert rows == [
        {
            "n": len(reads),
            "ranges": len({r.pkrange_id for r in reads}),
            "throttled": sum(1 for r in reads if r.status == 429),
            "hot": "yes",
        }
    ]
    (day,) = _result(app, "CDBDataPlaneRequests | summarize count() by bin(TimeGenerated, 1d)")
    assert day["TimeGenerated"] == T0.strftime("%Y-%m-%dT00:00:00Z") and day["count_"] == len(records)


def test_repeated_names_get_a_suffix(app: tuple[LogsApp, Engine, str]) -> None:
    assert [name for name, _ in _types(app, "CDBDataPlaneRequests | summarize count(), count() by OperationName")] == [
        "OperationName",
        "count_",
        "count_1",
    ]


def test_a_leading_where_on_either_legacy_spelling_pins_the_database() -> None:
    """QueryRuntimeStatistics spells it databasename_s, the other categories databaseName_s (§6.5)."""
    now = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)
    for column in ("databasename_s", "databaseName_s"):
        scan = scan_of(parse(f"AzureDiagnostics | where {column} == 'd' | summarize count()"), 0.0, 1e11, now)
        assert scan.databases == frozenset({"d"})


def test_the_account_filters_ignore_case(app: tuple[LogsApp, Engine, str]) -> None:
    """`=~` and `!~` (Kusto's case-insensitive equality and its negation), as the collector filters the
    account: AzureDiagnostics holds it upper-cased, the resource-specific tables as named."""
    records = _records(app[1])
    count = "| summarize n = count()"
    assert _result(app, f"CDBDataPlaneRequests | where AccountName =~ 'LocalHost' {count}") == [{"n": len(records)}]
    assert _result(app, f"CDBDataPlaneRequests | where AccountName !~ 'LOCALHOST' {count}") == [{"n": 0}]
    legacy = f"AzureDiagnostics | where Category == 'DataPlaneRequests' and Resource =~ 'localhost' {count}"
    assert _result(app, legacy) == [{"n": len(records)}]
    assert _result(app, "AzureDiagnostics | where Category == 'DataPlaneRequests' | summarize by Resource") == [
        {"Resource": "LOCALHOST"}
    ]


def _key_seconds(engine: Engine) -> dict[tuple[str, str, str, dt.datetime], float]:
    """RU per (pkrange, key, operation, second) from the raw records: CDBPartitionKeyRUConsumption's rows
    (a key's aggregated consumption per second, azure-monitor.md §7b R7, R24), the empty key for an
    operation with no single key (R22)."""
    sums: dict[tuple[str, str, str, dt.datetime], float] = defaultdict(float)
    for r in _records(engine):
        if r.pkrange_id:
            second = dt.datetime.fromtimestamp(r.time // 1, dt.UTC)
            sums[(r.pkrange_id, r.partition_key, r.operation, second)] += r.request_charge
    return dict(sums)


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


HOT_KEY_QUERIES = {  # nosql/troubleshoot-request-rate-too-large.md, both tabs, as published (the container named)
    "resource-specific": (
        "CDBPartitionKeyRUConsumption\n| where TimeGenerated >= ago(24hour)\n"
        '| where CollectionName == "c"\n| where isnotempty(PartitionKey)\n'
        "// Sum total request units consumed by logical partition key for each second\n"
        "| summarize sum(RequestCharge) by PartitionKey, OperationName, bin(TimeGenerated, 1s)\n"
        "| order by sum_RequestCharge desc",
        ("PartitionKey", "OperationName", "sum_RequestCharge"),
    ),
    "azure-diagnostics": (
        'AzureDiagnostics\n| where TimeGenerated >= ago(24hour)\n| where Category == "PartitionKeyRUConsumption"\n'
        '| where collectionName_s == "c"\n| where isnotempty(partitionKey_s)\n'
        "// Sum total request units consumed by logical partition key for each second\n"
        "| summarize sum(todouble(requestCharge_s)) by partitionKey_s, operationType_s, bin(TimeGenerated, 1s)\n"
        "| order by sum_requestCharge_s desc",
        ("partitionKey_s", "operationType_s", "sum_requestCharge_s"),
    ),
}


@pytest.mark.parametrize("mode", HOT_KEY_QUERIES)
def test_microsofts_hot_key_query_per_second_and_operation(app: tuple[LogsApp, Engine, str], mode: str) -> None:
    kql, (key, operation, ru) = HOT_KEY_QUERIES[mode]
    rows = _result(app, kql)
    expected: dict[tuple[str, str, dt.datetime], float] = defaultdict(float)
    for (_, k, op, second), charge in _key_seconds(app[1]).items():
        if k:
            expected[(k, op, second)] += charge
    assert {(r[key], r[operation], _when(r["TimeGenerated"])): r[ru] for r in rows} == pytest.approx(expected)
    assert rows[0][ru] == pytest.approx(max(expected.values()))  # the hottest key-second heads the ranking
    assert [r[ru] for r in rows] == sorted((r[ru] for r in rows), reverse=True)


def test_a_row_of_the_key_table_is_a_key_second_so_count_and_max_are_exact(app: tuple[LogsApp, Engine, str]) -> None:
    seconds = _key_seconds(app[1])
    assert _result(app, "CDBPartitionKeyRUConsumption | count") == [{"Count": len(seconds)}]
    legacy = "AzureDiagnostics | where Category == 'PartitionKeyRUConsumption' | summarize n = count()"
    assert _result(app, legacy) == [{"n": len(seconds)}]
    peak = _result(
        app,
        "CDBPartitionKeyRUConsumption | summarize RUperSec = sum(RequestCharge) by PartitionKeyRangeId,"
        " bin(TimeGenerated, 1s) | summarize Peak = max(RUperSec) by PartitionKeyRangeId",
    )
    per_range: dict[tuple[str, dt.datetime], float] = defaultdict(float)
    for (pk, _, _, second), charge in seconds.items():
        per_range[(pk, second)] += charge
    expected = {pk: max(v for (p, _), v in per_range.items() if p == pk) for pk, _ in per_range}
    assert {r["PartitionKeyRangeId"]: r["Peak"] for r in peak} == pytest.approx(expected)
    hot = _result(app, "CDBPartitionKeyRUConsumption | where RequestCharge > 100 | summarize n = count()")
    assert hot == [{"n": sum(1 for v in seconds.values() if v > 100)}]


THROTTLE_QUERIES = {  # nosql/troubleshoot-request-rate-too-large.md, step 3, both tabs, as published (R45)
    "resource-specific": (
        "CDBDataPlaneRequests\n| where TimeGenerated >= ago(24h)\n"
        "| summarize throttledOperations = dcountif(ActivityId, StatusCode == 429), totalOperations = "
        "dcount(ActivityId), totalConsumedRUPerMinute = sum(RequestCharge) by DatabaseName, CollectionName, "
        "OperationName, RequestResourceType, bin(TimeGenerated, 1min)\n"
        "| extend averageRUPerOperation = 1.0 * totalConsumedRUPerMinute / totalOperations\n"
        "| extend fractionOf429s = 1.0 * throttledOperations / totalOperations\n"
        "| order by fractionOf429s desc"
    ),
    "azure-diagnostics": (
        'AzureDiagnostics\n| where TimeGenerated >= ago(24h)\n| where Category == "DataPlaneRequests"\n'
        "| summarize throttledOperations = dcountif(activityId_g, statusCode_s == 429), totalOperations = "
        "dcount(activityId_g), totalConsumedRUPerMinute = sum(todouble(requestCharge_s)) by databaseName_s, "
        "collectionName_s, OperationName, requestResourceType_s, bin(TimeGenerated, 1min)\n"
        "| extend averageRUPerOperation = 1.0 * totalConsumedRUPerMinute / totalOperations\n"
        "| extend fractionOf429s = 1.0 * throttledOperations / totalOperations\n"
        "| order by fractionOf429s desc"
    ),
}


@pytest.mark.parametrize("mode", THROTTLE_QUERIES)
def test_microsofts_429_query_as_published_groups_by_a_column_the_stand_in_does_not_fill(
    app: tuple[LogsApp, Engine, str], mode: str
) -> None:
    """R45 as published groups by RequestResourceType, which the stand-in does not back (R54): refused, with
    the reason, rather than grouped under made-up values."""
    status, body = _ask(app[0], THROTTLE_QUERIES[mode])
    inner = body["error"]["innererror"]["innererror"]
    assert (status, inner["code"]) == (400, "NotSupportedByStandIn")
    assert "not per resource type" in inner["message"]


def test_the_429_share_of_requests_per_operation_and_minute_is_exact(app: tuple[LogsApp, Engine, str]) -> None:
    """The same query over requests (a row each, retries apart, R47): count() and countif() are exact."""
    rows = _result(
        app,
        "CDBDataPlaneRequests\n| where TimeGenerated >= ago(24h)\n"
        "| summarize throttled = countif(StatusCode == 429), total = count(), ru = sum(RequestCharge) "
        "by DatabaseName, CollectionName, OperationName, bin(TimeGenerated, 1min)\n"
        "| extend fractionOf429s = 1.0 * throttled / total\n| order by fractionOf429s desc",
    )
    expected: dict[tuple[str, dt.datetime], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for r in _records(app[1]):
        cell = expected[(r.operation, dt.datetime.fromtimestamp(r.time // 60 * 60, dt.UTC))]
        cell[0] += r.status == 429
        cell[1] += 1
        cell[2] += r.request_charge
    got = {(r["OperationName"], _when(r["TimeGenerated"])): [r["throttled"], r["total"], r["ru"]] for r in rows}
    assert {k: v[:2] for k, v in got.items()} == {k: v[:2] for k, v in expected.items()}
    assert {k: v[2] for k, v in got.items()} == pytest.approx({k: v[2] for k, v in expected.items()})
    assert any(r["fractionOf429s"] > 0 for r in rows) and rows[0]["fractionOf429s"] == max(
        r["throttled"] / r["total"] for r in rows
    )
