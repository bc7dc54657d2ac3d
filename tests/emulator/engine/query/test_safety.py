"""Queries a hostile or careless client sends are 400s, never 500s, through the real SDK and raw HTTP."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError

from emulator.engine.facade import Context, QuerySettings


@pytest.fixture
def items(emulator):
    client = CosmosClient(emulator.url, credential=emulator.key)
    db = client.create_database_if_not_exists("safety")
    coll = db.create_container("c", PartitionKey("/pk"), offer_throughput=400)
    for i in range(5):
        coll.create_item({"id": f"d{i}", "pk": f"p{i % 2}", "s": "a" * 26 + "!", "n": i})
    return coll


def query_error(coll, sql: str, **kwargs) -> CosmosHttpResponseError:
    with pytest.raises(CosmosHttpResponseError) as info:
        list(coll.query_items(sql, enable_cross_partition_query=True, **kwargs))
    return info.value


def test_an_invalid_like_set_is_a_400(items) -> None:
    err = query_error(items, "SELECT * FROM c WHERE c.s LIKE '[z-a]'")
    assert err.status_code == 400
    assert "LIKE pattern '[z-a]' is invalid" in err.message


def test_an_exponential_regex_is_a_400(items) -> None:
    err = query_error(items, "SELECT * FROM c WHERE RegexMatch(c.s, '(a+)+$')")
    assert err.status_code == 400
    assert "RegexMatch pattern" in err.message


def test_like_with_many_wildcards_answers(items) -> None:
    rows = list(
        items.query_items("SELECT VALUE c.id FROM c WHERE c.s LIKE '%a%a%!'", enable_cross_partition_query=True)
    )
    assert sorted(rows) == [f"d{i}" for i in range(5)]


def test_replicate_beyond_the_limit_is_undefined(items) -> None:
    rows = list(items.query_items("SELECT VALUE REPLICATE('a', 1e15)", enable_cross_partition_query=True))
    assert rows == []


def test_read_items_with_500_items(emulator) -> None:
    """The SDK sends one (id AND pk) OR term per item: 400 terms used to recurse into a 500."""
    client = CosmosClient(emulator.url, credential=emulator.key)
    coll = client.create_database_if_not_exists("safety").create_container("many", PartitionKey("/pk"))
    for i in range(500):
        coll.create_item({"id": f"i{i}", "pk": f"p{i % 9}"})
    wanted = [(f"i{i}", f"p{i % 9}") for i in range(500)]
    found = coll.read_items(wanted + [("absent", "p0")])
    assert sorted(d["id"] for d in found) == sorted(i for i, _ in wanted)


def test_a_deeply_nested_query_is_a_400(items) -> None:
    err = query_error(items, "SELECT VALUE " + "[" * 1000 + "1" + "]" * 1000 + " FROM c")
    assert err.status_code == 400
    assert "nested deeper" in err.message


def test_a_result_nested_beyond_serialisation_is_a_400(items) -> None:
    deep: object = 1
    for _ in range(120):
        deep = [deep]
    items.create_item({"id": "deep", "pk": "p0", "deep": deep})
    inner = "(SELECT VALUE " + "[" * 60 + "c.deep" + "]" * 60 + ")"  # each part within the nesting limit
    sql = "SELECT VALUE " + "[" * 100 + "d" + "]" * 100 + f" FROM c JOIN d IN {inner} WHERE c.id = 'deep'"
    err = query_error(items, sql, partition_key="p0")
    assert err.status_code == 400
    assert "cannot be serialized" in err.message
    assert items.read_item("deep", "p0")["id"] == "deep"  # the server still answers


def test_a_query_text_over_512_kb_is_a_400(items) -> None:
    sql = "SELECT * FROM c WHERE " + " OR ".join(f"c.n = {i}" for i in range(60000))
    err = query_error(items, sql)
    assert err.status_code == 400
    assert "SC3020" in err.message


def test_patch_incr_overflowing_to_infinity_is_a_400(items) -> None:
    items.create_item({"id": "big", "pk": "p0", "x": 1.7e308})
    with pytest.raises(CosmosHttpResponseError) as info:
        items.patch_item("big", "p0", [{"op": "incr", "path": "/x", "value": 1.7e308}])
    assert info.value.status_code == 400
    assert items.read_item("big", "p0")["x"] == 1.7e308
    items.patch_item("big", "p0", [{"op": "incr", "path": "/x", "value": -1.7e308}])
    assert items.read_item("big", "p0")["x"] == 0.0


# -- the per-page execution budget ------------------------------------------------------------


class Pages:
    """A raw_response_hook counting query pages and their charges."""

    def __init__(self) -> None:
        self.items: list[int] = []
        self.charges: list[float] = []

    def __call__(self, response) -> None:
        request, headers = response.http_request, response.http_response.headers
        if request.method == "POST" and request.headers.get("x-ms-documentdb-isquery") and "x-ms-item-count" in headers:
            self.items.append(int(headers["x-ms-item-count"]))
            self.charges.append(float(headers["x-ms-request-charge"]))


def user_fields(rows: list) -> list:
    """Rows without system properties (each emulator has its own resource ids, etags and times)."""
    return [{k: v for k, v in r.items() if not k.startswith("_")} if isinstance(r, dict) else r for r in rows]


def budget_container(emulator, pages: Pages):
    client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=pages)
    coll = client.create_database_if_not_exists("budget").create_container("c", PartitionKey("/pk"))
    engine = emulator.engine
    engine.throttle.enabled = False
    for i in range(400):
        engine.create_item(
            Context(), "budget", "c", {"id": f"d{i}", "pk": f"p{i % 4}", "n": i, "tags": ["a", "b"]}, [f"p{i % 4}"]
        )
    engine.throttle.enabled = True
    return coll


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM c WHERE c.n % 3 = 0",
        "SELECT VALUE c.n FROM c WHERE c.n > 390",
        "SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.n < 50",
    ],
)
def test_a_query_over_its_budget_returns_the_same_rows_in_more_pages(emulator, make_emulator, sql: str) -> None:
    pages = Pages()
    whole = list(budget_container(emulator, pages).query_items(sql, partition_key="p1"))
    whole_pages, whole_charge = len(pages.items), sum(pages.charges)
    stepped_pages = Pages()
    stepped_emulator = make_emulator(query_settings=QuerySettings(page_budget_ms=0.0))  # one step per page
    stepped = list(budget_container(stepped_emulator, stepped_pages).query_items(sql, partition_key="p1"))
    assert user_fields(stepped) == user_fields(whole)
    assert len(stepped_pages.items) > whole_pages
    assert 0 in stepped_pages.items or sql.endswith("< 50")  # pages with no rows yet still carry a continuation
    assert sum(stepped_pages.charges) == pytest.approx(whole_charge, abs=0.01 * len(stepped_pages.items) + 0.5)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT c.id, c.n FROM c ORDER BY c.n DESC",
        "SELECT VALUE COUNT(1) FROM c WHERE c.n > 10",
        "SELECT DISTINCT VALUE c.pk FROM c",
        "SELECT c.id FROM c ORDER BY c.n OFFSET 5 LIMIT 7",
        "SELECT TOP 3 c.id FROM c WHERE c.n > 100",
    ],
)
def test_whole_result_shapes_are_unchanged_by_the_budget(emulator, make_emulator, sql: str) -> None:
    expected = list(budget_container(emulator, Pages()).query_items(sql, enable_cross_partition_query=True))
    stepped = make_emulator(query_settings=QuerySettings(page_budget_ms=0.0))
    got = list(budget_container(stepped, Pages()).query_items(sql, enable_cross_partition_query=True))
    got, expected = user_fields(got), user_fields(expected)
    assert (sorted(got) if "DISTINCT" in sql else got) == (sorted(expected) if "DISTINCT" in sql else expected)


def test_a_cross_partition_scan_over_its_budget_is_complete(make_emulator) -> None:
    pages = Pages()
    coll = budget_container(make_emulator(query_settings=QuerySettings(page_budget_ms=0.0)), pages)
    rows = list(coll.query_items("SELECT VALUE c.n FROM c WHERE c.n >= 0", enable_cross_partition_query=True))
    assert sorted(rows) == list(range(400))
    assert len(pages.items) > 4
