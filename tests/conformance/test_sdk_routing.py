"""Which physical partitions a query reaches, observed through the real SDK (4.17.1) on the wire.

One emulator for the module, the "main" conformance dataset (48 documents) in a `/pk` container and a
hierarchical `/tenant`,`/user` container, both with 4 physical partitions. A client-level
raw_response_hook records every HTTP exchange; the data pages are the 200 answers to query POSTs, and
the range that served each is its `x-ms-documentdb-partitionkeyrangeid` response header. Expected
ranges come from the SDK's own EPK code against the container's `/pkranges` (cosmos-wire-protocol.md
§1.5-1.9), never from the emulator's routing code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from azure.cosmos import exceptions

from tests.conformance.dataset import MAIN
from tests.conformance.sdk_harness import Call, Harness, Target, error_texts, syntax_errors


@pytest.fixture(scope="module")
def h() -> Iterator[Harness]:
    harness = Harness.start(datasets=("main",))
    for t in harness.targets.values():
        assert len(t.ranges) >= 4, f"{t.name}: {len(t.ranges)} partitions"
    yield harness
    harness.stop()


@pytest.fixture(scope="module")
def pk(h: Harness) -> Target:
    return h.targets["main_pk"]


@pytest.fixture(scope="module")
def hier(h: Harness) -> Target:
    return h.targets["main_hier"]


def ids(rows: list) -> list[str]:
    return sorted(r["id"] if isinstance(r, dict) else r for r in rows)


def ids_where(pred) -> list[str]:  # noqa: ANN001
    return sorted(d["id"] for d in MAIN if pred(d))


def calls(h: Harness, t: Target) -> list[Call]:
    return h.recorder.for_container(t.name)


def plan_calls(h: Harness, t: Target) -> list[Call]:
    return [c for c in calls(h, t) if c.is_plan]


def refused(h: Harness, t: Target) -> list[Call]:
    return [c for c in calls(h, t) if c.is_query and c.status == 400]


def assert_gateway_served(h: Harness, t: Target) -> None:
    """Served by the emulator itself: no 400/1004, no query plan, no range chosen by the SDK."""
    assert not refused(h, t) and not plan_calls(h, t)
    assert all("x-ms-documentdb-partitionkeyrangeid" not in c.request_headers for c in h.recorder.data_pages(t.name))


def assert_sdk_fanned_out(h: Harness, t: Target) -> dict:
    """The 400/1004, then the plan; every data page carries the range the SDK chose. Returns the plan."""
    (first,) = refused(h, t)
    assert first.response_headers.get("x-ms-substatus") == "1004"
    (plan_call,) = plan_calls(h, t)
    assert plan_call.status == 200
    assert all("x-ms-documentdb-partitionkeyrangeid" in c.request_headers for c in h.recorder.data_pages(t.name))
    return json.loads(plan_call.body)


def point(t: Target, key: object) -> dict:
    lo, hi, is_point = t.epk_range(key)
    assert is_point
    return {"min": lo, "max": hi, "isMinInclusive": True, "isMaxInclusive": True}


def upper_ranges(plan: dict) -> list[dict]:
    return [{**r, "min": r["min"].upper(), "max": r["max"].upper()} for r in plan["queryRanges"]]


# -- /pk container ------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["p1", "p6"])
def test_partition_key_query_is_one_request_to_the_owner(h: Harness, pk: Target, key: str) -> None:
    rows = h.query(pk, "SELECT * FROM c", partition_key=key)
    assert ids(rows) == ids_where(lambda d: d["pk"] == key)
    (page,) = h.recorder.data_pages(pk.name)
    assert json.loads(page.request_headers["x-ms-documentdb-partitionkey"]) == [key]
    assert {page.range_id} == pk.ranges_for(key)
    assert not plan_calls(h, pk) and not refused(h, pk)
    assert h.query(pk, "SELECT VALUE COUNT(1) FROM c", partition_key=key) == [6]  # aggregate: still one request
    assert h.recorder.ranges_called(pk.name) == pk.ranges_for(key) and len(h.recorder.data_pages(pk.name)) == 1


def test_where_pk_streamable_is_served_on_the_owner_only(h: Harness, pk: Target) -> None:
    rows = h.query(pk, "SELECT * FROM c WHERE c.pk = 'p3'")
    assert ids(rows) == ids_where(lambda d: d["pk"] == "p3")
    assert_gateway_served(h, pk)
    assert h.recorder.ranges_called(pk.name) == pk.ranges_for("p3")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT VALUE COUNT(1) FROM c WHERE c.pk = 'p3'", [6]),
        ("SELECT VALUE c.id FROM c WHERE c.pk = 'p3' ORDER BY c.id", ids_where(lambda d: d["pk"] == "p3")),
        ("SELECT VALUE c.id FROM c WHERE c.pk = @k ORDER BY c.id DESC", ids_where(lambda d: d["pk"] == "p3")[::-1]),
    ],
)
def test_where_pk_non_streamable_plan_targets_the_owner_only(h: Harness, pk: Target, sql: str, expected: list) -> None:
    rows = h.query(pk, sql, {"@k": "p3"} if "@k" in sql else None)
    assert rows == expected
    plan = assert_sdk_fanned_out(h, pk)
    assert upper_ranges(plan) == [point(pk, "p3")]
    assert h.recorder.ranges_called(pk.name) == pk.ranges_for("p3")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM c WHERE c.pk IN ('p1', 'p5')",
        "SELECT * FROM c WHERE c.pk IN ('p1', 'p5') ORDER BY c.id",
    ],
)
def test_in_list_targets_the_owners_only(h: Harness, pk: Target, sql: str) -> None:
    rows = h.query(pk, sql)
    assert ids(rows) == ids_where(lambda d: d["pk"] in ("p1", "p5"))
    owners = pk.ranges_for("p1") | pk.ranges_for("p5")
    assert h.recorder.ranges_called(pk.name) == owners
    if "ORDER BY" in sql:
        plan = assert_sdk_fanned_out(h, pk)
        key = lambda r: r["min"]  # noqa: E731
        assert sorted(upper_ranges(plan), key=key) == sorted([point(pk, "p1"), point(pk, "p5")], key=key)
    else:
        assert_gateway_served(h, pk)


@pytest.mark.parametrize("sql", ["SELECT * FROM c", "SELECT VALUE COUNT(1) FROM c", "SELECT * FROM c ORDER BY c.id"])
def test_no_filter_reaches_every_range(h: Harness, pk: Target, sql: str) -> None:
    rows = h.query(pk, sql)
    assert (rows == [48]) if "COUNT" in sql else (ids(rows) == ids_where(lambda d: True))
    assert h.recorder.ranges_called(pk.name) == pk.all_ranges
    if sql == "SELECT * FROM c":
        assert_gateway_served(h, pk)
    else:
        plan = assert_sdk_fanned_out(h, pk)
        assert upper_ranges(plan) == [{"min": "", "max": "FF", "isMinInclusive": True, "isMaxInclusive": False}]


def test_gateway_pages_one_range_at_a_time_with_continuations(h: Harness, pk: Target) -> None:
    rows = h.query(pk, "SELECT * FROM c", max_item_count=5)
    assert ids(rows) == ids_where(lambda d: True)
    pages = h.recorder.data_pages(pk.name)
    assert all(len(p.documents) <= 5 for p in pages)
    order = [p.range_id for p in pages]
    visits = [r for i, r in enumerate(order) if i == 0 or order[i - 1] != r]
    assert sorted(visits) == sorted(pk.all_ranges), f"each range drained once, in one run: {order}"
    by_range: dict[str, set] = {}
    for p in pages:
        by_range.setdefault(p.range_id, set()).update(d["id"] for d in p.documents)  # type: ignore[arg-type]
    for rid, served in by_range.items():
        assert all(pk.range_of_doc(d) == rid for d in MAIN if d["id"] in served), f"range {rid} served others' docs"
    assert all("x-ms-continuation" in p.response_headers for p in pages[:-1])
    assert not pages[-1].response_headers.get("x-ms-continuation")


@pytest.mark.parametrize("sql", ["SELECT * FROM c WHERE c.pk > 'p3'", "SELECT VALUE COUNT(1) FROM c WHERE c.pk > 'p3'"])
def test_range_filter_on_the_key_reaches_every_range(h: Harness, pk: Target, sql: str) -> None:
    rows = h.query(pk, sql)
    want = ids_where(lambda d: d["pk"] > "p3")
    assert (rows == [len(want)]) if "COUNT" in sql else (ids(rows) == want)
    assert h.recorder.ranges_called(pk.name) == pk.all_ranges


# -- hierarchical container ---------------------------------------------------------------------
def test_prefix_partition_key_reaches_the_prefix_ranges_only(h: Harness, hier: Target) -> None:
    rows = h.query(hier, "SELECT * FROM c", partition_key=["t1"])
    assert ids(rows) == ids_where(lambda d: d["tenant"] == "t1")
    want = hier.ranges_for(["t1"])
    assert h.recorder.ranges_called(hier.name) == want
    lo, hi, _ = hier.epk_range(["t1"])
    for page in h.recorder.data_pages(hier.name):
        assert page.request_headers["x-ms-documentdb-partitionkeyrangeid"] in want
        if "x-ms-start-epk" in page.request_headers:  # a sub-range of the pkrange: the emulator filters on EPK
            assert (page.request_headers["x-ms-start-epk"].upper(), page.request_headers["x-ms-end-epk"].upper()) == (
                lo,
                hi,
            )
    others = [d for d in MAIN if d["tenant"] != "t1" and hier.range_of_doc(d) in want]
    assert others, "the test needs other tenants' documents in the prefix's range to show EPK filtering"


@pytest.mark.parametrize(
    "sql", ["SELECT * FROM c WHERE c.tenant = 't1'", "SELECT VALUE COUNT(1) FROM c WHERE c.tenant = 't1'"]
)
def test_where_tenant_reaches_the_prefix_ranges_only(h: Harness, hier: Target, sql: str) -> None:
    rows = h.query(hier, sql)
    want = ids_where(lambda d: d["tenant"] == "t1")
    assert (rows == [len(want)]) if "COUNT" in sql else (ids(rows) == want)
    assert h.recorder.ranges_called(hier.name) == hier.ranges_for(["t1"])
    if "COUNT" in sql:
        lo, hi, _ = hier.epk_range(["t1"])
        plan = assert_sdk_fanned_out(h, hier)
        assert upper_ranges(plan) == [{"min": lo, "max": hi, "isMinInclusive": True, "isMaxInclusive": False}]


@pytest.mark.parametrize(
    "sql", ["SELECT * FROM c WHERE c.user = 'u1'", "SELECT VALUE COUNT(1) FROM c WHERE c.user = 'u1'"]
)
def test_second_level_only_reaches_every_range(h: Harness, hier: Target, sql: str) -> None:
    rows = h.query(hier, sql)
    want = ids_where(lambda d: d["user"] == "u1")
    assert (rows == [len(want)]) if "COUNT" in sql else (ids(rows) == want)
    assert h.recorder.ranges_called(hier.name) == hier.all_ranges


def test_full_hierarchical_key_is_one_range(h: Harness, hier: Target) -> None:
    want = ids_where(lambda d: (d["tenant"], d["user"]) == ("t1", "u1"))
    owner = hier.ranges_for(["t1", "u1"])
    assert len(owner) == 1
    rows = h.query(hier, "SELECT * FROM c", partition_key=["t1", "u1"])
    assert ids(rows) == want
    (page,) = h.recorder.data_pages(hier.name)
    assert json.loads(page.request_headers["x-ms-documentdb-partitionkey"]) == ["t1", "u1"]
    assert h.recorder.ranges_called(hier.name) == owner
    for sql in [
        "SELECT * FROM c WHERE c.tenant = 't1' AND c.user = 'u1'",
        "SELECT * FROM c WHERE c.tenant = 't1' AND c.user = 'u1' ORDER BY c.id",
    ]:
        assert ids(h.query(hier, sql)) == want
        assert h.recorder.ranges_called(hier.name) == owner, sql


# -- feed ranges --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["main_pk", "main_hier"])
def test_each_feed_range_is_exactly_its_range(h: Harness, name: str) -> None:
    t = h.targets[name]
    feed_ranges = list(t.container.read_feed_ranges())
    assert len(feed_ranges) == len(t.ranges)
    seen: list[str] = []
    for fr in feed_ranges:
        rng = fr["Range"]
        (match,) = [
            r
            for r in t.ranges
            if (r["minInclusive"].upper(), r["maxExclusive"].upper()) == (rng["min"].upper(), rng["max"].upper())
        ]
        rows = h.query(t, "SELECT * FROM c", feed_range=fr)
        assert h.recorder.ranges_called(t.name) == {match["id"]}
        assert all(t.range_of_doc(r) == match["id"] for r in rows)
        seen.extend(r["id"] for r in rows)
    assert sorted(seen) == ids_where(lambda d: True)  # a partition of all documents: no loss, no overlap


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "codes", "token"),
    [
        ("SELECT * FORM c", {"SC1001"}, "FORM"),
        ("SELECT c.n FROM c WHERE", {"SC1001", "SC1002"}, None),  # SC1002: unexpected end-of-file
        ("SELECT BADFUNC(c.n) FROM c", {"SC2005"}, "BADFUNC"),
    ],
)
@pytest.mark.parametrize("routing", ["cross", "key"])
def test_malformed_queries_are_400_with_code_and_location(
    h: Harness, pk: Target, sql: str, codes: set, token: str | None, routing: str
) -> None:
    kwargs = {"partition_key": "p1"} if routing == "key" else {}
    with pytest.raises(exceptions.CosmosHttpResponseError) as info:
        h.query(pk, sql, **kwargs)
    assert info.value.status_code == 400, error_texts(info.value)
    (err,) = syntax_errors(info.value)
    assert err["code"] in codes and err["severity"] == "Error"
    start, end = err["location"]["start"], err["location"]["end"]
    assert 0 <= start <= end <= len(sql)
    if token is not None:
        assert sql[start:end] == token and token in err["message"]


def test_group_by_cross_partition_is_refused_single_partition_works(h: Harness, pk: Target) -> None:
    sql = "SELECT c.user, COUNT(1) AS n FROM c GROUP BY c.user"
    with pytest.raises(exceptions.CosmosHttpResponseError) as info:
        h.query(pk, sql)
    assert info.value.status_code == 400 and "GroupBy" in error_texts(info.value)
    rows = h.query(pk, sql, partition_key="p1")
    counts: dict[str, int] = {}
    for d in MAIN:
        if d["pk"] == "p1":
            counts[d["user"]] = counts.get(d["user"], 0) + 1
    assert sorted(rows, key=lambda r: r["user"]) == [{"user": u, "n": n} for u, n in sorted(counts.items())]
    assert h.recorder.ranges_called(pk.name) == pk.ranges_for("p1")


def test_query_without_from_runs_once_per_range(h: Harness, pk: Target) -> None:
    """A FROM-less query reads no documents: served once per physical partition it targets (the emulator's
    choice, believed to match the gateway; not verified against the service)."""
    rows = h.query(pk, "SELECT VALUE 1")
    assert rows == [1] * len(pk.all_ranges)
    assert h.recorder.ranges_called(pk.name) == pk.all_ranges
    assert h.query(pk, "SELECT VALUE 1", partition_key="p1") == [1]


# -- RU (ru-cost-model.md T18) -------------------------------------------------------------------
@pytest.mark.parametrize("sql", ["SELECT VALUE COUNT(1) FROM c", "SELECT * FROM c WHERE c.n = -999"])
def test_fan_out_charge_is_at_least_2_3_per_range(h: Harness, pk: Target, sql: str) -> None:
    h.query(pk, sql)
    pages = h.recorder.data_pages(pk.name)
    probed = h.recorder.ranges_called(pk.name)
    assert probed == pk.all_ranges
    total = sum(p.charge for p in pages)
    assert total >= 2.3 * len(probed), f"{total} RU over {len(probed)} ranges"


def test_single_partition_count_is_cheap(h: Harness, pk: Target) -> None:
    h.query(pk, "SELECT VALUE COUNT(1) FROM c", partition_key="p1")
    (page,) = h.recorder.data_pages(pk.name)
    assert 0 < page.charge < 4
