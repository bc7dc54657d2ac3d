"""Query serving through the real SDK: RU model calibration, paging, metrics headers, index rules,
errors and accounting. (SQL semantics: tests/sql; routing over the conformance set: tests/conformance.)"""

from __future__ import annotations

import base64
import json

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.documents import ConnectionPolicy, RetryOptions
from azure.cosmos.exceptions import CosmosHttpResponseError

from emulator.engine.facade import Context, Engine
from emulator.engine.query.plan import NO_COMPOSITE_INDEX, ORDER_BY_EXCLUDED
from tests import rawhttp
from tests.conftest import ManualClock


class Recorder:
    """A client-level raw_response_hook: every response the SDK received (cosmos-wire-protocol §3)."""

    def __init__(self) -> None:
        self.pages: list[tuple[int, str, float, dict]] = []  # status, pkrange id, RU, response headers

    def __call__(self, response) -> None:
        request, headers = response.http_request, response.http_response.headers
        if request.method == "POST" and request.headers.get("x-ms-documentdb-isquery"):
            self.pages.append(
                (
                    response.http_response.status_code,
                    headers.get("x-ms-documentdb-partitionkeyrangeid", ""),
                    float(headers.get("x-ms-request-charge") or 0),
                    dict(headers),
                )
            )

    def clear(self) -> None:
        self.pages.clear()

    @property
    def data_pages(self) -> list[tuple[int, str, float, dict]]:
        return [p for p in self.pages if p[0] == 200]

    @property
    def charge(self) -> float:
        return sum(p[2] for p in self.data_pages)

    @property
    def ranges(self) -> set[str]:
        return {p[1] for p in self.data_pages}


def container(
    emulator, recorder: Recorder | None = None, *, throughput: int = 400, policy: dict | None = None, name: str = "c"
):
    client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=recorder)
    db = client.create_database_if_not_exists("q")
    kwargs = {"indexing_policy": policy} if policy else {}
    return db.create_container(name, PartitionKey("/pk"), offer_throughput=throughput, **kwargs)


def fill(emulator, docs: list[dict], name: str = "c") -> None:
    """Load documents through the engine, unthrottled (fast); the SDK only queries them."""
    throttle = emulator.engine.throttle
    throttle.enabled = False
    try:
        for doc in docs:
            emulator.engine.create_item(Context(), "q", name, doc, [doc["pk"]])
    finally:
        throttle.enabled = True


def small_doc(i: int, pk: str = "p") -> dict:
    return {"id": f"d{i}", "pk": pk, "n": i, "name": f"name{i % 10}", "cat": f"c{i % 7}"}


def test_single_partition_query_returning_one_small_doc_costs_about_2_9(emulator) -> None:
    rec = Recorder()
    c = container(emulator, rec)
    fill(emulator, [small_doc(i) for i in range(20)])
    rows = list(c.query_items("SELECT * FROM c WHERE c.id = 'd3'", partition_key="p"))
    assert [r["n"] for r in rows] == [3]
    assert len(rec.data_pages) == 1
    assert 2.3 <= rec.charge <= 3.2  # T15


def test_strong_consistency_doubles_a_query(make_emulator) -> None:
    charges = {}
    for level in ("Session", "Strong"):
        emu = make_emulator(Engine(consistency=level))
        rec = Recorder()
        c = container(emu, rec)
        fill(emu, [small_doc(i) for i in range(5)])
        list(c.query_items("SELECT * FROM c WHERE c.n = 1", partition_key="p"))
        charges[level] = rec.charge
    assert charges["Strong"] == pytest.approx(2 * charges["Session"], abs=0.011)  # T16


def test_empty_fan_out_costs_the_minimum_per_partition(emulator) -> None:
    rec = Recorder()
    c = container(emulator, rec, throughput=24_000)
    fill(emulator, [small_doc(i, f"p{i % 9}") for i in range(60)])
    ranges = list(c.read_feed_ranges())
    assert len(ranges) == 4
    assert list(c.query_items("SELECT * FROM c WHERE c.n > 1000", enable_cross_partition_query=True)) == []
    assert len(rec.ranges) == 4 and len(rec.data_pages) == 4  # gateway-served, one page per partition
    assert 2.0 * 4 <= rec.charge <= 3.0 * 4  # T17
    rec.clear()
    assert list(c.query_items("SELECT VALUE COUNT(1) FROM c WHERE c.n > 1000", enable_cross_partition_query=True)) == [
        0
    ]
    assert rec.charge >= 2.3 * 4  # T18, through the SDK's own fan-out this time
    assert any(p[0] == 400 and p[3].get("x-ms-substatus") == "1004" for p in rec.pages)


def test_unindexed_filter_scans_the_partition(emulator) -> None:
    policy = {
        "indexingMode": "consistent",
        "includedPaths": [{"path": "/*"}],
        "excludedPaths": [{"path": "/name/?"}, {"path": '/"_etag"/?'}],
    }
    rec = Recorder()
    c = container(emulator, rec, policy=policy)
    fill(emulator, [{**small_doc(i), "pad": "x" * 600} for i in range(6000)])

    def run(sql: str) -> tuple[float, dict]:
        rec.clear()
        list(c.query_items(sql, partition_key="p", populate_query_metrics=True, populate_index_metrics=True))
        return rec.charge, rec.data_pages[-1][3]

    indexed, indexed_headers = run("SELECT * FROM c WHERE c.id = 'd42'")
    scan, scan_headers = run("SELECT * FROM c WHERE c.name = 'name_none'")
    upper, upper_headers = run("SELECT * FROM c WHERE UPPER(c.cat) = 'C1_NONE'")
    assert scan / indexed >= 50  # T21
    assert upper / indexed >= 50
    metrics = dict(kv.split("=") for kv in scan_headers["x-ms-documentdb-query-metrics"].split(";"))
    assert metrics["retrievedDocumentCount"] == "6000" and metrics["outputDocumentCount"] == "0"
    indexed_metrics = dict(kv.split("=") for kv in indexed_headers["x-ms-documentdb-query-metrics"].split(";"))
    assert indexed_metrics["retrievedDocumentCount"] == "1" and indexed_metrics["outputDocumentCount"] == "1"
    assert int(indexed_metrics["outputDocumentSize"]) > 600
    assert "x-ms-cosmos-index-utilization" not in scan_headers  # no results, no index metrics (W73)
    _, found_headers = run("SELECT * FROM c WHERE c.name = 'name3' OFFSET 0 LIMIT 1")
    use = c.client_connection.last_response_headers  # the SDK decodes the index header to a dict
    assert isinstance(use.get("x-ms-cosmos-index-utilization"), dict)
    raw = json.loads(base64.b64decode(found_headers["x-ms-cosmos-index-utilization"]))
    assert [i["IndexSpec"] for i in raw["PotentialSingleIndexes"]] == ["/name/?"]


def test_paging_keeps_results_and_total_charge(emulator) -> None:
    rec = Recorder()
    c = container(emulator, rec, throughput=12_000)
    fill(emulator, [small_doc(i, f"p{i % 5}") for i in range(50)])
    sql = "SELECT * FROM c WHERE c.n >= 10"
    whole = list(c.query_items(sql, enable_cross_partition_query=True, max_item_count=-1))
    whole_charge, whole_pages = rec.charge, len(rec.data_pages)
    rec.clear()
    paged = list(c.query_items(sql, enable_cross_partition_query=True, max_item_count=3))
    assert sorted(d["id"] for d in paged) == sorted(d["id"] for d in whole) and len(paged) == 40
    assert len(rec.data_pages) > whole_pages
    assert all(int(p[3]["x-ms-item-count"]) <= 3 for p in rec.data_pages)
    assert rec.charge == pytest.approx(whole_charge, abs=0.01 * len(rec.data_pages))  # M2
    rec.clear()
    pager = c.query_items("SELECT * FROM c", partition_key="p1", max_item_count=4).by_page()
    first = list(next(pager))
    token = pager.continuation_token
    assert len(first) == 4 and token
    rest = [
        d
        for page in c.query_items("SELECT * FROM c", partition_key="p1", max_item_count=4).by_page(token)
        for d in page
    ]
    assert len(first) + len(rest) == 10 and not {d["id"] for d in first} & {d["id"] for d in rest}


def test_multi_key_order_by_needs_a_composite_index(emulator) -> None:
    c = container(emulator, name="plain")
    c.create_item({"id": "1", "pk": "a", "x": 1, "y": 2})
    sql = "SELECT * FROM c ORDER BY c.x, c.y DESC"
    for kwargs in ({"enable_cross_partition_query": True}, {"partition_key": "a"}):
        with pytest.raises(CosmosHttpResponseError) as info:
            list(c.query_items(sql, **kwargs))
        assert info.value.status_code == 400 and NO_COMPOSITE_INDEX in info.value.message
    policy = {
        "indexingMode": "consistent",
        "includedPaths": [{"path": "/*"}],
        "excludedPaths": [{"path": "/z/?"}],
        "compositeIndexes": [[{"path": "/x", "order": "descending"}, {"path": "/y", "order": "ascending"}]],
    }
    c2 = container(emulator, policy=policy, throughput=12_000, name="composite")
    for i in range(12):
        c2.create_item({"id": str(i), "pk": f"k{i % 4}", "x": i % 3, "y": i, "z": i})
    rows = list(c2.query_items(sql, enable_cross_partition_query=True))  # exactly inverted: served
    assert [(r["x"], r["y"]) for r in rows] == sorted(((i % 3, i) for i in range(12)), key=lambda t: (t[0], -t[1]))
    with pytest.raises(CosmosHttpResponseError) as info:
        list(c2.query_items("SELECT * FROM c ORDER BY c.y, c.x", enable_cross_partition_query=True))
    assert NO_COMPOSITE_INDEX in info.value.message
    with pytest.raises(CosmosHttpResponseError) as info:
        list(c2.query_items("SELECT * FROM c ORDER BY c.z", partition_key="k1"))
    assert ORDER_BY_EXCLUDED in info.value.message


def test_cross_partition_flag_is_required_only_when_more_than_one_partition_is_hit(emulator) -> None:
    big = container(emulator, throughput=12_000, name="big")
    fill(emulator, [small_doc(i, f"p{i % 6}") for i in range(30)], name="big")
    with pytest.raises(CosmosHttpResponseError) as info:
        list(big.query_items("SELECT * FROM c"))
    assert info.value.status_code == 400 and "Cross partition query is required but disabled" in info.value.message
    assert len(list(big.query_items("SELECT * FROM c WHERE c.pk = 'p2'"))) == 5  # pinned: one partition
    small = container(emulator, name="small")
    fill(emulator, [small_doc(i, f"p{i % 6}") for i in range(30)], name="small")
    assert len(list(small.query_items("SELECT * FROM c"))) == 30


def test_cross_partition_group_by_and_non_value_aggregates_are_refused(emulator) -> None:
    c = container(emulator, throughput=12_000)
    fill(emulator, [small_doc(i, f"p{i % 6}") for i in range(30)])
    with pytest.raises(CosmosHttpResponseError) as info:
        list(c.query_items("SELECT c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", enable_cross_partition_query=True))
    assert info.value.status_code == 400 and "GroupBy" in info.value.message
    grouped = list(c.query_items("SELECT c.cat, COUNT(1) AS n FROM c GROUP BY c.cat", partition_key="p0"))
    assert sum(g["n"] for g in grouped) == 5
    with pytest.raises(CosmosHttpResponseError, match="only supports 'VALUE <AggregateFunc>'"):  # the SDK's own
        list(c.query_items("SELECT COUNT(1) AS n FROM c", enable_cross_partition_query=True))


def test_malformed_queries_get_located_400s_and_are_recorded_free(emulator) -> None:
    c = container(emulator)
    cases = {
        "SELECT * FORM c": ("SC1001", "near 'FORM'"),
        "SELECT c.n FROM c WHERE": ("SC1002", "end-of-file"),
        "SELECT NOPE(c.n) FROM c": ("SC2005", "NOPE"),
        "SELECT * FROM c WHERE c.n = @missing": ("SC2001", "@missing"),
    }
    for sql, (code, fragment) in cases.items():
        with pytest.raises(CosmosHttpResponseError) as info:
            list(c.query_items(sql, partition_key="p"))
        assert info.value.status_code == 400
        assert code in info.value.message and fragment in info.value.message, info.value.message
    with pytest.raises(CosmosHttpResponseError) as info:
        list(
            c.query_items(
                "SELECT * FROM c WHERE c.n = @p",
                parameters=[{"name": "@p", "value": 1}, {"name": "@p", "value": 2}],
                partition_key="p",
            )
        )
    assert "duplicate parameter name '@p'" in info.value.message
    queries = [r for r in emulator.engine.accounting.records() if r.operation == "Query"]
    assert [r.status for r in queries] == [400] * 5 and all(r.request_charge == 0 for r in queries)


def test_raw_protocol_errors(emulator) -> None:
    c = container(emulator)
    rid = c.read()["_rid"]
    path = "/dbs/q/colls/c/docs"
    headers = {
        "x-ms-documentdb-isquery": "true",
        "content-type": "application/query+json",
        "x-ms-cosmos-intended-collection-rid": rid,
    }
    body = json.dumps({"query": "SELECT * FROM c"})
    status, resp_headers, _ = rawhttp.request(
        emulator.url, emulator.key, "POST", path, body, {**headers, "x-ms-documentdb-partitionkeyrangeid": "99"}
    )
    assert (status, resp_headers.get("x-ms-substatus")) == (410, "1002")
    status, _, err = rawhttp.request(
        emulator.url,
        emulator.key,
        "POST",
        path,
        body,
        {**headers, "x-ms-documentdb-partitionkeyrangeid": "0", "x-ms-continuation": "not json"},
    )
    assert status == 400 and "continuation token specified in the request is malformed" in err["message"]
    status, _, err = rawhttp.request(emulator.url, emulator.key, "POST", path, json.dumps({"sql": "x"}), headers)
    assert status == 400 and "'query' string" in err["message"]
    not_a_list = json.dumps({"query": "SELECT * FROM c", "parameters": 5})
    status, _, err = rawhttp.request(emulator.url, emulator.key, "POST", path, not_a_list, headers)
    assert status == 400 and "'parameters' must be an array" in err["message"]
    status, resp_headers, err = rawhttp.request(
        emulator.url,
        emulator.key,
        "POST",
        path,
        json.dumps({"query": "SELECT TOP 1 * FROM c"}),
        {**headers, "x-ms-documentdb-query-enablecrosspartition": "true"},
    )
    assert (status, resp_headers.get("x-ms-substatus")) == (400, "1004")
    plan = json.loads(err["additionalErrorInfo"])
    assert plan["queryInfo"]["top"] == 1 and plan["queryRanges"][0]["max"] == "FF"


def test_query_plan_targets_the_where_clause_keys(emulator) -> None:
    container(emulator, throughput=24_000)
    path = "/dbs/q/colls/c/docs"
    headers = {"x-ms-cosmos-is-query-plan-request": "True", "content-type": "application/json"}

    def plan(sql: str, params: list | None = None) -> list[dict]:
        body = json.dumps({"query": sql, "parameters": params or []})
        status, _, answer = rawhttp.request(emulator.url, emulator.key, "POST", path, body, headers)
        assert status == 200, answer
        return answer["queryRanges"]

    point = plan("SELECT VALUE COUNT(1) FROM c WHERE c.pk = @p", [{"name": "@p", "value": "redmond"}])
    assert point == [
        {
            "min": "22E342F38A486A088463DFF7838A5963",
            "max": "22E342F38A486A088463DFF7838A5963",
            "isMinInclusive": True,
            "isMaxInclusive": True,
        }
    ]  # E5 vector
    assert len(plan("SELECT TOP 1 * FROM c WHERE c.pk IN ('a', 'b', 'a')")) == 2
    assert plan("SELECT TOP 1 * FROM c WHERE c.pk > 'a'") == [
        {"min": "", "max": "FF", "isMinInclusive": True, "isMaxInclusive": False}
    ]


def test_pages_of_one_query_share_a_correlated_activity_id_in_the_accounting(emulator) -> None:
    rec = Recorder()
    c = container(emulator, rec, throughput=24_000)
    fill(emulator, [small_doc(i, f"p{i % 8}") for i in range(40)])
    assert list(c.query_items("SELECT VALUE SUM(c.n) FROM c", enable_cross_partition_query=True)) == [780]
    records = [r for r in emulator.engine.accounting.records() if r.operation in ("Query", "QueryPlan")]
    pages = [r for r in records if r.operation == "Query" and r.status == 200]
    assert len(pages) == 4 and len({r.correlated_activity_id for r in pages}) == 1
    refused = [r for r in records if r.substatus == 1004]
    assert len(refused) == 1 and refused[0].correlated_activity_id == pages[0].correlated_activity_id
    assert sum(r.request_charge for r in pages) == pytest.approx(rec.charge, abs=0.01)
    assert {r.pkrange_id for r in pages} == rec.ranges


def test_a_scan_spends_the_partition_budget_and_the_next_query_is_throttled(make_emulator) -> None:
    clock = ManualClock()
    emu = make_emulator(Engine(clock=clock))
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(max_retry_attempt_count=0)  # see the 429 itself
    client = CosmosClient(emu.url, credential=emu.key, connection_policy=policy)
    c = client.create_database("q").create_container("c", PartitionKey("/pk"), offer_throughput=400)
    fill(emu, [{**small_doc(i), "pad": "y" * 900} for i in range(10_000)], name="c")
    clock.advance(5)  # a fresh one-second window
    list(c.query_items("SELECT * FROM c WHERE UPPER(c.name) = 'X'", partition_key="p"))
    assert float(c.client_connection.last_response_headers["x-ms-request-charge"]) > 400  # > the whole budget
    with pytest.raises(CosmosHttpResponseError) as info:
        list(c.query_items("SELECT * FROM c WHERE c.id = 'd1'", partition_key="p"))
    assert info.value.status_code == 429 and info.value.sub_status == 3200
    clock.advance(1.0)
    assert [d["id"] for d in c.query_items("SELECT * FROM c WHERE c.id = 'd1'", partition_key="p")] == ["d1"]
