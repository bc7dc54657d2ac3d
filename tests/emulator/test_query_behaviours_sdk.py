"""Query behaviours through the unmodified azure-cosmos SDK on a container of three physical partitions:
an aggregate with ORDER BY gets the plan the service gives it, index metrics name the indexes a query uses
and the ones it lacks, unpinned queries need the cross-partition flag, a query that can match no partition
is still charged, and continuation tokens in the service's format round-trip while malformed ones are a
400 (cosmos-wire-protocol.md §1.7-1.8, §2, W70-W79)."""

from __future__ import annotations

import json

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey, exceptions

from cosmoscore.costmodel import CostModel

KEYS = [1, 2, 3, 4, 5, "abc", "xyz", None, True]  # numbers, strings, null and a boolean, as the SDK's own tests


@pytest.fixture
def orders(client: CosmosClient) -> ContainerProxy:
    """Three physical partitions (18,000 RU/s), one item per key and a few per tenant."""
    container = client.create_database("shop").create_container(
        "orders", PartitionKey("/tenant"), offer_throughput=18000
    )
    for i, key in enumerate(KEYS):
        container.create_item({"id": str(i), "tenant": f"t{i % 4}", "key": key, "n": i})
    return container


def _cross(container: ContainerProxy, sql: str, **kwargs: object) -> list[object]:
    return list(container.query_items(sql, enable_cross_partition_query=True, **kwargs))


# -- 1. an aggregate with ORDER BY (W70) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", 3),
        ("SELECT VALUE SUM(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", 15),
        ("SELECT VALUE COUNT(r.key) FROM r ORDER BY r.key", len(KEYS)),
        ("SELECT VALUE MAX(r.key) FROM r ORDER BY r.key", "xyz"),
        ("SELECT VALUE MIN(r.key) FROM r ORDER BY r.key DESC", None),
    ],
)
def test_an_aggregate_with_order_by_is_merged_by_the_sdk(orders: ContainerProxy, sql: str, expected: object) -> None:
    assert _cross(orders, sql) == [expected]


def test_the_plan_of_an_aggregate_with_order_by_has_no_order_by_and_keeps_it_in_the_rewrite(
    orders: ContainerProxy,
) -> None:
    plan = orders.client_connection._GetQueryPlanThroughGateway(  # the SDK's own plan request
        "SELECT VALUE AVG(r.key) FROM r WHERE IS_NUMBER(r.key) ORDER BY r.key", orders.container_link
    )
    info = plan["queryInfo"]
    assert (info["orderBy"], info["orderByExpressions"], info["aggregates"]) == ([], [], ["Average"])
    assert info["rewrittenQuery"] == (
        'SELECT VALUE [{"item": {"sum": SUM(r.key), "count": COUNT(r.key)}}]\n'
        "FROM r\nWHERE IS_NUMBER(r.key)\nORDER BY r.key"
    )


# -- 2. index metrics: utilised and potential, single and composite (W71-W73) ---------------------

PEOPLE = [
    {"id": "1", "tenant": "t1", "name": "Julien", "age": 30, "town": "Redmond", "timestamp": 2349230200},
    {"id": "2", "tenant": "t1", "name": "Tim", "age": 20, "town": "Redmond", "timestamp": 2349230300},
    {"id": "3", "tenant": "t1", "name": "Tim", "age": 10, "town": "Paris", "timestamp": 1, "secret": "x"},
]
NAME_AGE = [{"path": "/name", "order": "ascending"}, {"path": "/age", "order": "ascending"}]


def _people(client: CosmosClient, name: str, **policy: object) -> ContainerProxy:
    indexing = {"includedPaths": [{"path": "/*"}], "excludedPaths": [{"path": "/secret/?"}], **policy}
    db = client.create_database_if_not_exists("crm")
    container = db.create_container(name, PartitionKey("/tenant"), indexing_policy=indexing)
    for person in PEOPLE:
        container.create_item(person)
    return container


def _index_metrics(container: ContainerProxy, sql: str) -> dict[str, object]:
    """The last page's index metrics, as azure-cosmos decodes them (base64 JSON to a dict)."""
    rows = list(container.query_items(sql, partition_key="t1", populate_index_metrics=True))
    assert rows, "the service sends index metrics only with results"
    decoded = container.client_connection.last_response_headers["x-ms-cosmos-index-utilization"]
    assert isinstance(decoded, dict)
    return decoded


def _single(expression: str, spec: str) -> dict[str, object]:
    return {
        "FilterExpression": expression,
        "IndexSpec": spec,
        "FilterPreciseSet": True,
        "IndexPreciseSet": True,
        "IndexImpactScore": "High",
    }


def _composite(specs: list[str], *, utilized: bool) -> dict[str, object]:
    return {"IndexSpecs": specs, "IndexPreciseSet": utilized, "IndexImpactScore": "High"}


def test_an_equality_and_a_range_filter_use_single_indexes_and_name_their_composite(client: CosmosClient) -> None:
    people = _people(client, "plain")
    assert _index_metrics(people, "SELECT * FROM c WHERE c.name = 'Julien' AND c.age > 12") == {
        "UtilizedSingleIndexes": [_single('(ROOT.name = "Julien")', "/name/?"), _single("(ROOT.age > 12)", "/age/?")],
        "PotentialSingleIndexes": [],
        "UtilizedCompositeIndexes": [],
        "PotentialCompositeIndexes": [_composite(["/name ASC", "/age ASC"], utilized=False)],
    }


def test_with_the_composite_index_the_filter_uses_it(client: CosmosClient) -> None:
    people = _people(client, "indexed", compositeIndexes=[NAME_AGE])
    assert _index_metrics(people, "SELECT * FROM c WHERE c.name = 'Julien' AND c.age > 12") == {
        "UtilizedSingleIndexes": [],
        "PotentialSingleIndexes": [],
        "UtilizedCompositeIndexes": [_composite(["/name ASC", "/age ASC"], utilized=True)],
        "PotentialCompositeIndexes": [],
    }


def test_each_range_gets_a_composite_after_the_equalities(client: CosmosClient) -> None:  # the docs' example
    people = _people(client, "docs")
    sql = "SELECT c.id FROM c WHERE c.name = 'Tim' AND c.age > 15 AND c.town = 'Redmond' AND c.timestamp > 2349230183"
    metrics = _index_metrics(people, sql)
    assert [e["IndexSpec"] for e in metrics["UtilizedSingleIndexes"]] == [
        "/name/?",
        "/age/?",
        "/town/?",
        "/timestamp/?",
    ]
    assert [e["IndexSpecs"] for e in metrics["PotentialCompositeIndexes"]] == [
        ["/name ASC", "/town ASC", "/age ASC"],
        ["/name ASC", "/town ASC", "/timestamp ASC"],
    ]


def test_an_order_by_on_two_paths_uses_its_composite_index(client: CosmosClient) -> None:
    people = _people(client, "sorted", compositeIndexes=[NAME_AGE])
    for sql in ("SELECT * FROM c ORDER BY c.name, c.age", "SELECT * FROM c ORDER BY c.name DESC, c.age DESC"):
        assert _index_metrics(people, sql) == {
            "UtilizedSingleIndexes": [],
            "PotentialSingleIndexes": [],
            "UtilizedCompositeIndexes": [_composite(["/name ASC", "/age ASC"], utilized=True)],
            "PotentialCompositeIndexes": [],
        }


def test_a_filter_and_an_order_by_on_another_path_name_the_composite_that_serves_both(client: CosmosClient) -> None:
    people = _people(client, "filtered")
    assert _index_metrics(people, "SELECT * FROM c WHERE c.town = 'Redmond' ORDER BY c.age DESC") == {
        "UtilizedSingleIndexes": [_single('(ROOT.town = "Redmond")', "/town/?"), _single("", "/age/?")],
        "PotentialSingleIndexes": [],
        "UtilizedCompositeIndexes": [],
        "PotentialCompositeIndexes": [_composite(["/town ASC", "/age DESC"], utilized=False)],
    }
    town_age = [{"path": "/town", "order": "ascending"}, {"path": "/age", "order": "descending"}]
    served = _people(client, "served", compositeIndexes=[town_age])
    assert _index_metrics(served, "SELECT * FROM c WHERE c.town = 'Redmond' ORDER BY c.age DESC") == {
        "UtilizedSingleIndexes": [],
        "PotentialSingleIndexes": [],
        "UtilizedCompositeIndexes": [_composite(["/town ASC", "/age DESC"], utilized=True)],
        "PotentialCompositeIndexes": [],
    }


def test_a_filter_on_an_excluded_path_names_the_single_index_it_lacks(client: CosmosClient) -> None:
    people = _people(client, "excluded")
    assert _index_metrics(people, "SELECT * FROM c WHERE c.secret = 'x' AND c.age < 50") == {
        "UtilizedSingleIndexes": [_single("(ROOT.age < 50)", "/age/?")],
        "PotentialSingleIndexes": [_single('(ROOT.secret = "x")', "/secret/?")],
        "UtilizedCompositeIndexes": [],
        "PotentialCompositeIndexes": [_composite(["/secret ASC", "/age ASC"], utilized=False)],
    }


def test_a_query_without_results_sends_no_index_metrics(client: CosmosClient) -> None:
    people = _people(client, "empty")
    assert (
        list(
            people.query_items(
                "SELECT * FROM c WHERE c.name = 'nobody'", partition_key="t1", populate_index_metrics=True
            )
        )
        == []
    )
    assert "x-ms-cosmos-index-utilization" not in people.client_connection.last_response_headers


# -- 3. an unpinned query needs the cross-partition flag (W74) -----------------------------------

CROSS_PARTITION_DISABLED = "Cross partition query is required but disabled"


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM c",
        "SELECT VALUE COUNT(1) FROM c",  # one the SDK would fan out itself
        "SELECT * FROM c WHERE c.tenant IN ('t0', 't1', 't2', 't3')",  # keys on several partitions
        "SELECT * FROM c ORDER BY c.n",
    ],
)
def test_an_unpinned_query_without_the_flag_is_refused_on_several_partitions(orders: ContainerProxy, sql: str) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        list(orders.query_items(sql))
    assert refused.value.status_code == 400 and CROSS_PARTITION_DISABLED in refused.value.message
    assert _cross(orders, sql)  # the flag serves it


def test_a_query_the_filter_pins_to_one_partition_needs_no_flag(orders: ContainerProxy) -> None:
    assert sorted(d["id"] for d in orders.query_items("SELECT * FROM c WHERE c.tenant = 't1'")) == ["1", "5"]
    assert list(orders.query_items("SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 't2'")) == [2]


# -- 4. a query that can match no partition is still charged (W75) ------------------------------

BASE = CostModel().query_min_per_partition  # Q3: "a minimum of about 2.5 RUs" per partition checked


def _charges(container: ContainerProxy, sql: str, **kwargs: object) -> tuple[list[object], list[float]]:
    """The rows and the charge of every request the SDK sent for them."""
    charges: list[float] = []

    def hook(headers: dict[str, str], _: object) -> None:
        charges.append(float(headers.get("x-ms-request-charge", 0)))

    rows = list(container.query_items(sql, response_hook=hook, **kwargs))
    return rows, charges


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM c WHERE c.tenant = 't1' AND c.tenant = 't2'",
        "SELECT * FROM c WHERE c.tenant IN ('t0', 't1') AND c.tenant IN ('t2', 't3')",
        "SELECT c.id FROM c WHERE c.tenant = 't1' AND c.tenant = 't2' ORDER BY c.tenant",  # the SDK's fan-out
    ],
)
def test_a_contradictory_partition_key_filter_is_charged_one_partitions_minimum(
    orders: ContainerProxy, sql: str
) -> None:
    for kwargs in ({}, {"enable_cross_partition_query": True}):
        rows, charges = _charges(orders, sql, **kwargs)
        assert rows == [] and sum(charges) == pytest.approx(BASE)


def test_a_contradictory_query_answers_and_costs_as_a_key_without_items(orders: ContainerProxy) -> None:
    for sql in (
        "SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 't1' AND c.tenant = 't2'",  # one row: [0]
        "SELECT c.id FROM c WHERE c.tenant = 't1' AND c.tenant = 't2' ORDER BY c.n",  # Q11: no (tenant, n) index
    ):
        rows, charges = _charges(orders, sql, enable_cross_partition_query=True)
        pinned_rows, pinned = _charges(orders, sql, partition_key="nobody")
        assert rows == pinned_rows and sum(charges) == pytest.approx(sum(pinned)) and sum(charges) >= BASE


def test_an_empty_in_list_is_the_services_syntax_error(orders: ContainerProxy) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        _cross(orders, "SELECT * FROM c WHERE c.tenant IN ()")
    assert refused.value.status_code == 400 and "Syntax error, incorrect syntax near ')'" in refused.value.message


# -- 5. continuation tokens in the service's format (W76-W77) ------------------------------------

MALFORMED = "The continuation token specified in the request is malformed. Re-run the query without it and iterate."


def _pages(container: ContainerProxy, sql: str, token: str | None = None, **kwargs: object) -> tuple[list, str | None]:
    """The rows of the first page from `token`, and the continuation the SDK hands back for them."""
    pages = container.query_items(sql, max_item_count=2, **kwargs).by_page(token)
    return list(next(pages, [])), pages.continuation_token


def _drain(container: ContainerProxy, sql: str, token: str | None, **kwargs: object) -> list:
    """Every row from `token` on, each page resumed from a persisted token as an application would."""
    rows: list = []
    for _ in range(100):  # never a loop
        page, token = _pages(container, sql, token, **kwargs)
        rows += page
        if not token:
            return rows
    raise AssertionError("the continuation never ended")


@pytest.fixture
def tenants(orders: ContainerProxy) -> ContainerProxy:
    for i in range(9, 21):
        orders.create_item({"id": str(i), "tenant": "t1", "key": i, "n": i})
    return orders


@pytest.mark.parametrize(
    "kwargs",
    [{"partition_key": "t1"}, {"enable_cross_partition_query": True}],
    ids=["one partition key", "gateway-served cross-partition"],
)
def test_a_persisted_token_in_the_services_format_resumes_where_it_stopped(
    tenants: ContainerProxy, kwargs: dict[str, object]
) -> None:
    sql = "SELECT VALUE c.id FROM c"
    whole = list(tenants.query_items(sql, **kwargs))
    first, token = _pages(tenants, sql, **kwargs)
    assert token is not None
    [entry] = json.loads(token)  # the gateway's composite token: one range and its backend token
    assert set(entry) == {"token", "range"} and set(entry["range"]) == {"min", "max"}
    assert "#TRC:2" in entry["token"]  # the rows of this range returned so far, as the service counts them
    assert first + _drain(tenants, sql, token, **kwargs) == whole and len(set(whole)) == len(whole)


def test_a_token_of_an_in_list_names_the_key_it_stopped_at(tenants: ContainerProxy) -> None:
    sql = "SELECT VALUE c.id FROM c WHERE c.tenant IN ('t0', 't1', 't2', 't3')"  # two keys share a partition
    whole = list(tenants.query_items(sql, enable_cross_partition_query=True))
    assert _drain(tenants, sql, None, enable_cross_partition_query=True) == whole and len(whole) == len(KEYS) + 12


def test_a_feed_range_token_the_sdk_wraps_round_trips(tenants: ContainerProxy) -> None:
    sql = "SELECT VALUE c.id FROM c"
    for feed_range in tenants.read_feed_ranges():
        whole = list(tenants.query_items(sql, feed_range=feed_range))
        first, token = _pages(tenants, sql, feed_range=feed_range)
        rest = _drain(tenants, sql, token, feed_range=feed_range) if token else []
        assert first + rest == whole


def test_the_services_own_token_shapes_are_accepted(tenants: ContainerProxy) -> None:
    sql = "SELECT VALUE c.id FROM c"
    ranges = [r["Range"] for r in tenants.read_feed_ranges()]
    by_range = [list(tenants.query_items(sql, feed_range={"Range": r})) for r in ranges]
    whole = list(tenants.query_items(sql, enable_cross_partition_query=True))
    assert whole == [row for rows in by_range for row in rows]
    first = {"min": ranges[0]["min"], "max": ranges[0]["max"]}
    service = "+RID:~QqAcAN25+rfPLQQAAAAAAA==#RT:1#TRC:2#ISV:2#IEO:65567#QCF:8"  # a backend token, 2 rows in
    listed = json.dumps([{"token": service, "range": first}])
    assert _drain(tenants, sql, listed, enable_cross_partition_query=True) == whole[2:]
    second = {"min": ranges[1]["min"], "max": ranges[1]["max"]}
    unstarted = json.dumps({"token": None, "range": second})  # the single-object form, a range not begun
    assert _drain(tenants, sql, unstarted, enable_cross_partition_query=True) == whole[len(by_range[0]) :]


@pytest.mark.parametrize(
    "token",
    [
        "not json",
        "[]",
        "[1]",
        '[{"token": "+RID:~x#RT:1#TRC:2"}]',  # no range
        '[{"token": "+RID:~x#RT:1", "range": {"min": "", "max": "FF"}}]',  # no count of rows
        '[{"token": "+RID:~x#RT:1#TRC:-1", "range": {"min": "", "max": "FF"}}]',
        '[{"token": 5, "range": {"min": "", "max": "FF"}}]',
        '[{"token": null, "range": {"min": "zz", "max": "FF"}}]',
        '[{"token": null, "range": {"min": "FF", "max": ""}}]',
        '[{"token": null, "range": {"min": ""}}]',
        '[{"token": null, "range": {"min": "", "max": "FF"}, "extra": 1}]',
        '[{"token": null, "range": {"min": "", "max": "FF"}}, {"token": null, "range": {"min": "", "max": "FF"}}]',
        '{"min": "", "offset": 2}',
        "x" * 20_000,
    ],
)
def test_a_malformed_token_is_the_services_400(tenants: ContainerProxy, token: str) -> None:
    for kwargs in ({"partition_key": "t1"}, {"enable_cross_partition_query": True}):
        with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
            _pages(tenants, "SELECT VALUE c.id FROM c", token, **kwargs)
        assert refused.value.status_code == 400 and MALFORMED in refused.value.message


def test_a_token_on_a_query_the_sdk_fans_out_is_the_services_invalid_continuation(tenants: ContainerProxy) -> None:
    sql = "SELECT VALUE c.id FROM c ORDER BY c.n"  # azure-sdk-for-python#37230: the SDK hands back a range's token
    _, token = _pages(tenants, sql, enable_cross_partition_query=True)
    assert token is not None
    with pytest.raises(exceptions.CosmosHttpResponseError) as refused:
        _pages(tenants, sql, token, enable_cross_partition_query=True)
    assert refused.value.status_code == 400 and "Invalid Continuation Token" in refused.value.message
