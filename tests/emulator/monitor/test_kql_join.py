"""`let` and `join` in the Log Analytics stand-in, queried by the real `LogsQueryClient` over HTTPS: each
join flavor's rows and columns as Kusto documents them (azure-monitor.md §7b R56-R59), checked against
the engine's raw accounting records, computed independently here."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

import orjson
import pytest
from azure.monitor.query import LogsBatchQuery, LogsQueryClient, LogsQueryError, LogsQueryResult, LogsTable

from emulator.engine.facade import Engine, ThroughputSpec
from emulator.monitor.app import MonitorApp
from emulator.monitor.budget import Budget
from emulator.monitor.kql.ast import Join, KqlError, Operator, Query
from emulator.monitor.kql.parser import parse
from emulator.monitor.logs import LogsApp
from emulator.monitor.query import MonitorRequest
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import RunningEmulator, start_in_thread
from tests.conftest import ManualClock
from tests.emulator.history.test_history import CTX, LIMITS, START, _setup
from tests.emulator.monitor.test_metrics import FixedToken

WORKSPACE = "11111111-2222-3333-4444-555555555555"
KEYS = {"c": ["a", "b", "e"], "d": ["a", "x"]}  # container -> its logical keys; "a" is in both
KEY_RU = "CDBPartitionKeyRUConsumption"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LogsQueryClient, Engine]]:
    """Two containers of one database, a few keys each, written and read over five seconds."""
    certificates = ensure_certificates(tmp_path_factory.mktemp("join-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    body = {"id": "d", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "t", body, ThroughputSpec(400))
    for second in range(5):
        for container, keys in KEYS.items():
            for n, key in enumerate(keys):
                engine.create_item(CTX, "t", container, {"id": f"{second}", "k": key}, [key])
                for _ in range(n + second % 3):  # each key its own RU
                    engine.read_item(CTX, "t", container, f"{second}", [key])
        clock.advance(1.0)
    clock.advance(60)
    running: RunningEmulator = start_in_thread(engine, app=MonitorApp(engine), tls=certificates.server_context())
    url = running.url.rstrip("/")
    yield LogsQueryClient(FixedToken(), endpoint=url, connection_verify=str(certificates.ca), retry_total=0), engine
    running.stop()


def _rows(client: tuple[LogsQueryClient, Engine], kql: str) -> tuple[list[str], list[dict[str, object]]]:
    result = client[0].query_workspace(WORKSPACE, kql, timespan=None)
    assert isinstance(result, LogsQueryResult), result
    (table,) = result.tables
    assert isinstance(table, LogsTable)
    return list(table.columns), [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _key(value: str) -> str:
    return f'["{value}"]'  # a logical key as the log writes it (its JSON)


def _key_seconds(engine: Engine) -> Counter[tuple[str, str]]:
    """CDBPartitionKeyRUConsumption's rows per (container, key) from the raw records: one row per key,
    pkrange, operation and second (azure-monitor.md §7b R24)."""
    seconds = {
        (r.container, r.partition_key, r.pkrange_id, r.operation, int(r.time)) for r in engine.accounting.records()
    }
    return Counter((container, key) for container, key, *_ in seconds if key)


def _key_ru(engine: Engine) -> dict[tuple[str, str], float]:
    ru: dict[tuple[str, str], float] = defaultdict(float)
    for r in engine.accounting.records():
        if r.pkrange_id:
            ru[(r.container, r.partition_key)] += r.request_charge
    return dict(ru)


# -- the parser ---------------------------------------------------------------------------------------


def test_parse_let_statements_and_joins() -> None:
    query = parse(
        "let a = T | where x > 1;\nlet b = (a | take 2);\n"
        "b | join kind=leftouter (a | project k) on k, $left.p == $right.q and r | join a on k;"
    )
    assert [name for name, _ in query.lets] == ["a", "b"]
    assert query.lets[1][1] == Query("a", (Operator("take", expr=parse("T | take 2").operators[0].expr),))
    first, second = query.operators
    assert first.join == Join(
        "leftouter", Query("a", (parse("T | project k").operators[0],)), (("k", "k"), ("p", "q"), ("r", "r"))
    )
    assert second.join == Join(None, Query("a", ()), (("k", "k"),))
    hinted = parse("T | join kind=inner hint.strategy=broadcast hint.shufflekey=k hint.concurrency=4 U on k")
    assert hinted.operators[0].join == Join("inner", Query("U", ()), (("k", "k"),))  # hints change no result


@pytest.mark.parametrize(
    ("kql", "code", "message"),
    [
        ("let n = 10; T | take n", "NotSupportedByStandIn", "a 'let' of a scalar value"),
        ("let t = ago(1d);\nT | where TimeGenerated > t", "NotSupportedByStandIn", "a 'let' of a scalar value"),
        ("let f = (x: long) { x };\nT", "NotSupportedByStandIn", "or a function"),
        ("T | join kind=inner U", "SYN0002", "at the end of the query"),
        ("T | join (U) on $right.a == $left.b", "SYN0002", "'$' on line [1,17]"),
        ("let a = T | count T", "SYN0002", "'T'"),
    ],
)
def test_parse_refusals(kql: str, code: str, message: str) -> None:
    with pytest.raises(KqlError) as caught:
        parse(kql)
    assert caught.value.code == code and message in caught.value.message


# -- through the client --------------------------------------------------------------------------------


def test_microsofts_hot_key_query_joins_each_key_to_its_containers_total(
    client: tuple[LogsQueryClient, Engine],
) -> None:
    """azure-monitor.md §7's hot-key query, as written there: two summarized sides joined on DatabaseName,
    CollectionName (ordinary rows, so the join is exact)."""
    kql = (
        "CDBPartitionKeyRUConsumption\n"
        "| where TimeGenerated > ago(1d) and isnotempty(PartitionKey)\n"
        "| summarize TotalRU = sum(todouble(RequestCharge)) by AccountName, DatabaseName, CollectionName, "
        "PartitionKey, PartitionKeyRangeId\n"
        "| join kind=inner (CDBPartitionKeyRUConsumption | where TimeGenerated > ago(1d)\n"
        "                   | summarize ContainerRU = sum(todouble(RequestCharge)) by DatabaseName, CollectionName)\n"
        "        on DatabaseName, CollectionName\n"
        "| extend SharePct = round(100.0 * TotalRU / ContainerRU, 2)\n"
        "| top 20 by TotalRU desc"
    )
    columns, rows = _rows(client, kql)
    assert columns == [
        "AccountName",
        "DatabaseName",
        "CollectionName",
        "PartitionKey",
        "PartitionKeyRangeId",
        "TotalRU",
        "DatabaseName1",
        "CollectionName1",
        "ContainerRU",
        "SharePct",
    ]
    ru = _key_ru(client[1])
    container_ru = {c: sum(v for (cc, _), v in ru.items() if cc == c) for c in KEYS}
    expected = {(c, k): round(100.0 * v / container_ru[c], 2) for (c, k), v in ru.items() if k}
    assert {(r["CollectionName"], r["PartitionKey"]): r["SharePct"] for r in rows} == pytest.approx(expected)
    assert len(expected) == sum(len(keys) for keys in KEYS.values())
    assert all(r["CollectionName1"] == r["CollectionName"] and r["DatabaseName1"] == "t" for r in rows)
    assert [r["TotalRU"] for r in rows] == sorted((r["TotalRU"] for r in rows), reverse=True)


def test_inner_repeats_left_rows_innerunique_keeps_one_per_key(client: tuple[LogsQueryClient, Engine]) -> None:
    """`inner`: a row per match; `innerunique` (the default): the left side de-duplicated on the key
    first, the right side's repeats kept (the join pages' examples)."""
    seconds = _key_seconds(client[1])
    raw = f"({KEY_RU} | where CollectionName == 'c' | project PartitionKey, RequestCharge)"
    per_key = f"({KEY_RU} | where CollectionName == 'c' | summarize KeyRU = sum(RequestCharge) by PartitionKey)"
    count = "| summarize n = count()"
    in_c = sum(n for (c, _), n in seconds.items() if c == "c")
    assert _rows(client, f"{raw} | join kind=inner {per_key} on PartitionKey {count}")[1] == [{"n": in_c}]
    assert _rows(client, f"{raw} | join {per_key} on PartitionKey {count}")[1] == [{"n": len(KEYS["c"])}]
    assert _rows(client, f"{raw} | join kind=innerunique {per_key} on PartitionKey {count}")[1] == [{"n": 3}]
    assert _rows(client, f"{per_key} | join {raw} on PartitionKey {count}")[1] == [{"n": in_c}]
    # innerunique's kept left row is whole: its RequestCharge is one of that key's rows
    columns, rows = _rows(client, f"{raw} | join {per_key} on PartitionKey")
    assert columns == ["PartitionKey", "RequestCharge", "PartitionKey1", "KeyRU"]
    assert sorted(r["PartitionKey"] for r in rows) == sorted(_key(k) for k in KEYS["c"])
    assert all(0 < r["RequestCharge"] <= r["KeyRU"] and r["PartitionKey1"] == r["PartitionKey"] for r in rows)


def test_outer_joins_fill_nulls_and_semi_anti_keep_one_sides_columns(client: tuple[LogsQueryClient, Engine]) -> None:
    """Keys a, b, e on the left (container c), a, x on the right (d): each flavor's rows and columns as
    the join operator's page lists them."""
    ru = _key_ru(client[1])
    left = f"{KEY_RU} | where CollectionName == 'c' and isnotempty(PartitionKey) | summarize RU = sum(RequestCharge) by PartitionKey"
    right = f"({KEY_RU} | where CollectionName == 'd' | summarize RU = sum(RequestCharge) by PartitionKey)"

    def join(kind: str) -> tuple[list[str], list[tuple[object, ...]]]:
        columns, rows = _rows(client, f"{left} | join kind={kind} {right} on PartitionKey")
        return columns, sorted((tuple(r.values()) for r in rows), key=str)

    def c(key: str) -> tuple[str, object]:
        return _key(key), pytest.approx(ru[("c", _key(key))])

    def d(key: str) -> tuple[str, object]:
        return _key(key), pytest.approx(ru[("d", _key(key))])

    # no match: the other side's columns null, a string's the empty string (Kusto's strings are never null)
    both = ["PartitionKey", "RU", "PartitionKey1", "RU1"]
    assert join("leftouter") == (both, [(*c("a"), *d("a")), (*c("b"), "", None), (*c("e"), "", None)])
    assert join("rightouter") == (both, [("", None, *d("x")), (*c("a"), *d("a"))])
    assert join("fullouter") == (
        both,
        [("", None, *d("x")), (*c("a"), *d("a")), (*c("b"), "", None), (*c("e"), "", None)],
    )
    assert join("leftsemi") == (["PartitionKey", "RU"], [c("a")])
    assert join("leftanti") == join("anti") == (["PartitionKey", "RU"], [c("b"), c("e")])
    assert join("rightsemi") == (["PartitionKey", "RU"], [d("a")])
    assert join("rightanti") == (["PartitionKey", "RU"], [d("x")])


def test_a_let_is_read_at_each_reference_and_may_shadow_a_table(client: tuple[LogsQueryClient, Engine]) -> None:
    """A `let` binds a calculation, used here twice (each key's share of its container), or of per-minute
    rows summarized where it is used; a `let` named as a table shadows it, its own body still naming the
    table (Kusto.Language's binder)."""
    ru = _key_ru(client[1])
    kql = (
        f"let perKey = {KEY_RU} | where isnotempty(PartitionKey) | summarize RU = sum(RequestCharge) by CollectionName, PartitionKey;\n"
        "let totals = perKey | summarize Total = sum(RU) by CollectionName;\n"
        "perKey | join kind=inner totals on CollectionName | extend Share = RU / Total | project CollectionName, PartitionKey, Share"
    )
    totals = {c: sum(v for (cc, k), v in ru.items() if cc == c and k) for c in KEYS}
    expected = {(c, k): v / totals[c] for (c, k), v in ru.items() if k}
    got = {(r["CollectionName"], r["PartitionKey"]): r["Share"] for r in _rows(client, kql)[1]}
    assert got == pytest.approx(expected)
    reads = "let reads = CDBDataPlaneRequests | where OperationName == 'Read';\nreads | summarize n = count() by CollectionName"
    expected_reads = Counter(r.container for r in client[1].accounting.records() if r.operation == "Read")
    assert {r["CollectionName"]: r["n"] for r in _rows(client, reads)[1]} == dict(expected_reads)  # per-minute rows
    shadow = f"let {KEY_RU} = {KEY_RU} | where CollectionName == 'd';\n{KEY_RU} | summarize n = count()"
    assert _rows(client, shadow)[1] == [{"n": sum(n for (c, _), n in _key_seconds(client[1]).items() if c == "d")}]


def test_let_and_join_errors_in_the_services_words(client: tuple[LogsQueryClient, Engine]) -> None:
    per_key = f"{KEY_RU} | summarize RU = sum(RequestCharge) by PartitionKey"
    cases = [
        (f"{per_key} | join ({KEY_RU} | summarize by CollectionName) on PartitionKey", "must exist on both sides"),
        (f"{per_key} | join ({per_key}) on $left.PartitionKey == $right.Nope", "named 'Nope'"),
        (f"{per_key} | join ({per_key}) on $left.PartitionKey == $right.RU", "inconsistent data types"),
        (f"let a = {per_key};\nb | count", "Failed to resolve table or column expression named 'b'"),
        (f"let a = {per_key};\nlet a = {per_key};\na | count", "'a' has already been declared"),
        ("let a = a | count;\na", "named 'a'"),  # a let's body does not see its own name
        (f"{per_key} | join kind=outer ({per_key}) on PartitionKey", "kind must be one of"),
        (  # per-minute rows: which requests match is not determined by what the stand-in records
            "CDBDataPlaneRequests | join kind=inner (CDBDataPlaneRequests | summarize n = count() by OperationName)"
            " on OperationName",
            "'join' of a log table's rows (left side)",
        ),
        (f"{per_key} | join (CDBDataPlaneRequests) on $left.PartitionKey == $right.OperationName", "(right side)"),
        ("let raw = CDBDataPlaneRequests | where StatusCode == 429;\nraw", "returning a log table's rows"),
    ]
    results = client[0].query_batch([LogsBatchQuery(WORKSPACE, kql, timespan=None) for kql, _ in cases])
    for (kql, message), result in zip(cases, results, strict=True):
        assert isinstance(result, LogsQueryError), kql
        assert result.code == "BadArgumentError" and message in result.message, (kql, result.message)


def test_a_where_on_left_columns_after_innerunique_filters_before_deduplication(
    client: tuple[LogsQueryClient, Engine],
) -> None:
    """The innerunique page: a filter on the left's columns after the join is applied to the left side
    first, so the rows it selects are the ones joined (never none because another row was kept)."""
    raw = f"{KEY_RU} | where CollectionName == 'c' and PartitionKey == '{_key('b')}' | project PartitionKey, RequestCharge"
    per_key = f"({KEY_RU} | summarize KeyRU = sum(RequestCharge) by PartitionKey)"
    (kept,) = [r["RequestCharge"] for r in _rows(client, f"{raw} | join {per_key} on PartitionKey")[1]]
    others = {r["RequestCharge"] for r in _rows(client, raw)[1]} - {kept}
    assert others  # the key's seconds differ in RU
    rows = _rows(client, f"{raw} | join {per_key} on PartitionKey | where RequestCharge != {kept}")[1]
    assert len(rows) == 1 and rows[0]["RequestCharge"] in others
    inner = f"{raw} | join kind=inner {per_key} on PartitionKey | where RequestCharge != {kept} | count"
    assert _rows(client, inner)[1] == [{"Count": sum(1 for r in _rows(client, raw)[1] if r["RequestCharge"] != kept)}]


def _handled(engine: Engine, kql: str, budget: Budget) -> tuple[int, dict[str, object]]:
    body = orjson.dumps({"query": kql, "timespan": None})
    request = MonitorRequest(
        "POST", f"/v1/workspaces/{WORKSPACE}/query", {b"authorization": b"Bearer t"}, body, "https"
    )
    status, _, raw = LogsApp(engine).handle(request, budget)
    return status, orjson.loads(raw)


def test_a_join_is_bounded_by_the_budget(
    client: tuple[LogsQueryClient, Engine], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runaway join (every key row against every other) stops at the deadline, 504 as the service
    answers; a right side past the rows the stand-in holds in memory is refused, never half-read."""
    every = f"{KEY_RU} | extend one = 1"
    cross = f"{every} | join kind=inner ({every}) on one | count"
    assert _handled(client[1], cross, Budget(seconds=0))[0] == 504
    (n,) = [r["Count"] for r in _rows(client, f"{KEY_RU} | count")[1]]
    assert n > 16 and _rows(client, cross)[1] == [{"Count": n * n}]  # n * n > 256 budget checks: one clock read
    monkeypatch.setattr("emulator.monitor.kql.join.MAX_ROWS", 3)
    status, body = _handled(client[1], f"{KEY_RU} | join kind=inner ({KEY_RU}) on PartitionKey | count", Budget())
    assert status == 400 and "right side has more than 3 rows" in str(body)
