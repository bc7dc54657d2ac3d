"""Per-partition indexes: a selective filter reads only its matches, and the answer is the
scan's, row for row and in the same order, through writes, deletes, replaces, a paced build and a split.

The values at the probed path mix every type (numbers as int and float, strings, booleans, null, arrays,
objects, missing), since equality and ordering are type-strict (cosmos-sql-semantics §3.6)."""

from __future__ import annotations

import contextlib
import random
import time
from dataclasses import replace
from typing import Any

import pytest
from azure.cosmos import CosmosClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sortedcontainers import SortedKeyList

from cosmoscore.limits import Limits
from cosmoscore.sql import execute, parse_query
from cosmoscore.sql.probes import index_probes
from emulator.engine.errors import CosmosError
from emulator.engine.facade import Context, Engine, QuerySettings, QuerySpec, ThroughputSpec
from emulator.engine.model import StoredItem
from emulator.engine.query.range_index import IndexSettings, RangeIndexes, presorted

CTX = Context()
EAGER = QuerySettings(index=IndexSettings(min_documents=0, max_share=1.0, build_budget_ms=1e9))  # built inline
OFF = QuerySettings(index=IndexSettings(min_documents=10**9))
VALUES = [0, 1, 1.0, 2.5, -3, 10, "a", "ab", "abc", "b", "", "B", True, False, None, [1], {"x": 1}, "1"]
MISSING = object()

QUERIES = [
    "SELECT * FROM c WHERE c.v = 1",
    "SELECT * FROM c WHERE 1 = c.v",
    "SELECT * FROM c WHERE c.v = 'ab'",
    "SELECT * FROM c WHERE c.v = true",
    "SELECT * FROM c WHERE c.v = null",
    "SELECT * FROM c WHERE c.v IN (1, 'a', false, null)",
    "SELECT * FROM c WHERE c.v > 1",
    "SELECT * FROM c WHERE c.v >= 1 AND c.v < 10",
    "SELECT * FROM c WHERE 2 < c.v",
    "SELECT * FROM c WHERE c.v <= 'ab'",
    "SELECT * FROM c WHERE c.v BETWEEN 'a' AND 'b'",
    "SELECT * FROM c WHERE c.v BETWEEN 0 AND 'b'",
    "SELECT * FROM c WHERE STARTSWITH(c.v, 'a')",
    "SELECT * FROM c WHERE STARTSWITH(c.v, 'A', true)",
    "SELECT * FROM c WHERE c.v = 1 AND c.w.x > 3",
    "SELECT * FROM c WHERE c.w.x = 5 OR c.v = 1",
    "SELECT VALUE COUNT(1) FROM c WHERE c.v > 0",
    "SELECT c.id FROM c WHERE c.v >= 0 ORDER BY c.n DESC OFFSET 2 LIMIT 5",
    "SELECT DISTINCT VALUE c.v FROM c WHERE c.v IN (1, 2.5, 'abc')",
    "SELECT * FROM c WHERE c.v = @p",
    "SELECT * FROM c WHERE c.v = [1]",
    "SELECT TOP 3 * FROM c ORDER BY c.v",
    "SELECT * FROM c ORDER BY c.v DESC OFFSET 2 LIMIT 4",
    "SELECT TOP 5 c.id FROM c WHERE true ORDER BY c.n DESC",
    "SELECT c.id FROM c WHERE c.n > 3 AND c.n <= 60 ORDER BY c.n OFFSET 1 LIMIT 3",
    "SELECT TOP 4 * FROM c WHERE c.v >= 'a' ORDER BY c.v DESC",
    "SELECT TOP 2 * FROM c WHERE c.v > 1 AND c.v < 'z' ORDER BY c.v",
    "SELECT TOP 6 c.w FROM c ORDER BY c.w.x",
    "SELECT TOP @k c.id FROM c ORDER BY c.pk DESC",
]


def make(settings: QuerySettings, limits: Limits | None = None) -> Engine:
    engine = Engine(throttling=False, query_settings=settings, limits=limits or Limits())
    engine.create_database(CTX, {"id": "d"})
    body = {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "d", body, ThroughputSpec(400))
    return engine


def document(i: int, value: Any, n: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": f"i{i}", "pk": f"t{i % 5}", "n": n, "w": {"x": n % 7}}
    if value is not MISSING:
        doc["v"] = value
    return doc


PARAMS = {"@p": 2.5, "@k": 7}


def user_fields(rows: list[Any]) -> list[Any]:
    """Rows without system properties (each engine has its own resource ids and etags)."""
    return [{k: v for k, v in r.items() if not k.startswith("_")} if isinstance(r, dict) else r for r in rows]


def scanned(engine: Engine, sql: str) -> list[Any]:
    """The query over every document of the container, in each range's write order, with no index."""
    coll = engine.container("d", "c")
    rows: list[Any] = []
    for rng in coll.ranges:
        rows += execute(parse_query(sql), rng.documents_in_write_order(), PARAMS).rows
    return rows


def single_range_answer(engine: Engine, sql: str) -> list[Any]:
    """The rows each range serves, page by page as the SDK reads them (in-process `run_query` merges a
    fan-out from the documents themselves, so only the pages show what the index handed over)."""
    rows: list[Any] = []
    for rng in engine.container("d", "c").ranges:
        spec = QuerySpec(sql, PARAMS, pkrange_id=rng.id)
        while True:
            page = engine.query_page(CTX, "d", "c", spec)
            rows += page.rows
            if page.next is None:
                break
            spec = replace(spec, cursor=page.next)
    return rows


def apply(engine: Engine, ops: list[tuple[str, int, int]]) -> None:
    for n, (action, i, v) in enumerate(ops):
        if action == "delete":
            with contextlib.suppress(CosmosError):
                engine.delete_item(CTX, "d", "c", f"i{i}", [f"t{i % 5}"])
        else:
            value = MISSING if v == len(VALUES) else VALUES[v]
            engine.create_item(CTX, "d", "c", document(i, value, n), [f"t{i % 5}"], upsert=True)


OPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "put", "delete"]), st.integers(0, 40), st.integers(0, len(VALUES))),
    min_size=1,
    max_size=120,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=OPS, after=OPS, sql=st.sampled_from(QUERIES))
def test_an_indexed_answer_is_the_scan_through_any_writes(before, after, sql) -> None:
    engine, unindexed = make(EAGER), make(OFF)
    for ops in (before, after):  # the first query builds the index, writes then keep it current
        apply(engine, ops)
        apply(unindexed, ops)
        rows = single_range_answer(engine, sql)
        assert user_fields(rows) == user_fields(single_range_answer(unindexed, sql))
        assert rows == scanned(engine, sql)
        got, expected = engine.run_query("d", "c", sql, PARAMS), unindexed.run_query("d", "c", sql, PARAMS)
        assert got.request_charge == expected.request_charge  # charged for what a scan matches


def test_a_selective_filter_reads_only_its_matches() -> None:
    engine = make(EAGER)
    apply(engine, [("put", i, i % (len(VALUES) + 1)) for i in range(200)])
    rng = engine.container("d", "c").ranges[0]
    for sql in QUERIES[:13]:
        query = parse_query(sql)
        found = rng.indexes.candidates(rng.written, index_probes(query, {}), EAGER.index)
        matches = execute(query, rng.documents_in_write_order(), {}).rows
        assert found == matches, sql  # one probe: the candidates are exactly the matches, in write order


@pytest.mark.parametrize("desc", [False, True])
def test_ties_at_the_cut_of_a_bounded_order_are_taken_as_a_stable_sort_takes_them(desc: bool) -> None:
    engine, unindexed = make(EAGER), make(OFF)
    ops = [("put", i, [3, 3, 4, 4, 4, 4, 5, 3, 4, 5][i % 10]) for i in range(40)]  # 2.5, 10 and -3: ties
    apply(engine, ops)
    apply(unindexed, ops)
    for k in range(1, 30, 3):
        sql = f"SELECT TOP {k} c.id, c.v FROM c ORDER BY c.v{' DESC' if desc else ''}"
        assert single_range_answer(engine, sql) == scanned(engine, sql), sql
        assert user_fields(scanned(engine, sql)) == user_fields(scanned(unindexed, sql))


def test_probes_name_only_what_an_index_can_answer() -> None:
    def probes(sql: str) -> list[Any]:
        return index_probes(parse_query(sql), {"@p": 1})

    assert probes("SELECT * FROM c WHERE c.a = 1 OR c.b = 2") == []  # not a conjunct of the root
    assert probes("SELECT * FROM c WHERE NOT (c.a = 1)") == []
    assert probes("SELECT * FROM c WHERE c.a != 1") == []
    assert probes("SELECT * FROM c WHERE c.a = c.b") == []
    assert probes("SELECT * FROM c WHERE UPPER(c.a) = 'A'") == []
    assert probes("SELECT * FROM c WHERE c.a NOT IN (1, 2)") == []
    assert probes("SELECT * FROM c WHERE c.a = {'x': 1}") == []
    assert probes("SELECT * FROM c WHERE c.a = @missing") == []  # the query reports the parameter itself
    assert probes("SELECT * FROM c IN c.kids WHERE c.a = 1") == []  # the alias is not the documents
    joined = probes("SELECT c.id FROM c JOIN t IN c.tags WHERE c.a = @p AND t = 'x'")
    assert [(p.steps, p.keys) for p in joined] == [(("a",), frozenset({(3, 1)}))]
    (bounded,) = probes("SELECT * FROM c WHERE c.n > 1 AND c.n <= 9 AND c.n >= 3 AND c.n < 20")
    assert (bounded.low.value, bounded.low.inclusive, bounded.high.value, bounded.high.inclusive) == (3, True, 9, True)


def test_a_paced_build_stays_exact_while_writes_land_between_its_steps() -> None:
    paced = QuerySettings(index=IndexSettings(min_documents=0, max_share=1.0, build_budget_ms=1e-6))  # a chunk
    engine = make(paced)
    rnd = random.Random(7)
    apply(engine, [("put", i, rnd.randrange(len(VALUES) + 1)) for i in range(9_000)])
    sql = "SELECT * FROM c WHERE c.v > 0"
    rng = engine.container("d", "c").ranges[0]
    steps = 0
    while True:  # each query page indexes one chunk of 4,096 documents, then scans
        assert single_range_answer(engine, sql) == scanned(engine, sql)
        steps += 1
        if all(index.ready for index in rng.indexes.paths.values()):
            break
        ops = [
            (rnd.choice(["put", "delete"]), rnd.randrange(9_000), rnd.randrange(len(VALUES) + 1)) for _ in range(300)
        ]
        apply(engine, ops)
    assert steps >= 3
    apply(engine, [("put", i, 3) for i in range(50)])
    assert single_range_answer(engine, sql) == scanned(engine, sql)


def test_a_split_drops_the_indexes_and_each_child_answers_exactly() -> None:
    engine = make(EAGER, Limits(physical_partition_max_bytes=60_000, logical_partition_max_bytes=50_000))
    rnd = random.Random(3)
    apply(engine, [("put", i, rnd.randrange(len(VALUES) + 1)) for i in range(60)])
    sql = "SELECT * FROM c WHERE c.v >= 1"
    first = sorted(r["id"] for r in engine.run_query("d", "c", sql).rows)
    apply(engine, [("put", i, rnd.randrange(len(VALUES) + 1)) for i in range(60, 400)])
    coll = engine.container("d", "c")
    assert len(coll.ranges) > 1  # split by storage
    got = sorted(r["id"] for r in engine.run_query("d", "c", sql).rows)
    assert got == sorted(r["id"] for r in scanned(engine, sql))
    assert set(first) <= set(got) | {f"i{i}" for i in range(60)}


def test_small_partitions_and_unselective_probes_scan() -> None:
    indexes = RangeIndexes()
    engine = make(QuerySettings())
    apply(engine, [("put", i, 1) for i in range(50)])
    rng = engine.container("d", "c").ranges[0]
    probes = index_probes(parse_query("SELECT * FROM c WHERE c.v = 1"), {})
    inline = IndexSettings(build_budget_ms=1e9)
    assert indexes.candidates(rng.written, probes, inline) is None  # 50 < 1,000 documents
    assert indexes.candidates(rng.written, probes, replace(inline, min_documents=0)) is None  # all match
    assert indexes.candidates(rng.written, probes, replace(inline, min_documents=0, max_share=1.0)) is not None


@pytest.mark.parametrize("max_paths", [1, 2])
def test_the_least_recently_probed_path_is_dropped(max_paths: int) -> None:
    settings_ = QuerySettings(
        index=IndexSettings(min_documents=0, max_share=1.0, max_paths=max_paths, build_budget_ms=1e9)
    )
    engine = make(settings_)
    apply(engine, [("put", i, i % 5) for i in range(30)])
    for sql in ("SELECT * FROM c WHERE c.v = 1", "SELECT * FROM c WHERE c.n = 2", "SELECT * FROM c WHERE c.v = 3"):
        assert single_range_answer(engine, sql) == scanned(engine, sql)
    paths = list(engine.container("d", "c").ranges[0].indexes.paths)
    assert paths == [("n",), ("v",)][-max_paths:]


def test_the_server_finishes_an_index_build_between_requests(make_emulator) -> None:
    served = QuerySettings(index=IndexSettings(min_documents=0, max_share=1.0))  # no building within pages
    emu = make_emulator(query_settings=served, throttling=False)
    engine = emu.engine
    engine.create_database(CTX, {"id": "d"})
    body = {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "d", body, ThroughputSpec(400))
    apply(engine, [("put", i, i % len(VALUES)) for i in range(20_000)])
    container = CosmosClient(emu.url, credential=emu.key).get_database_client("d").get_container_client("c")
    sql = "SELECT VALUE c.id FROM c WHERE c.v = 'ab'"
    rows = list(container.query_items(sql, enable_cross_partition_query=True))  # a scan; the index is wanted
    assert sorted(rows) == sorted(r["id"] for r in scanned(engine, "SELECT * FROM c WHERE c.v = 'ab'"))
    indexes = engine.container("d", "c").ranges[0].indexes
    for _ in range(500):  # no query more: the server builds it while idle
        if ("v",) in indexes.paths and indexes.paths[("v",)].ready:
            break
        time.sleep(0.01)
    assert indexes.paths[("v",)].ready
    assert list(container.query_items(sql, enable_cross_partition_query=True)) == rows


def test_a_presorted_list_is_the_one_sortedcontainers_builds() -> None:
    """`presorted` fills a SortedKeyList's own fields (sortedcontainers 2.4): the same list as its constructor
    makes, valid by its own check, and still so after adds and deletes."""
    rnd = random.Random(5)
    items = [StoredItem({"v": rnd.randrange(300)}, 10, seq) for seq in range(5_000)]

    def key(item: StoredItem) -> int:
        return item.doc["v"]

    ours = presorted(sorted(((key(i), i) for i in items), key=lambda p: p[0]), key)
    theirs = SortedKeyList(items, key=key)
    ours._check()
    assert [id(i) for i in ours] == [id(i) for i in theirs]  # ties in write order, as a stable sort leaves them
    assert (ours._keys, ours._maxes, len(ours)) == (theirs._keys, theirs._maxes, len(theirs))
    for n in range(2_000):
        ours.add(StoredItem({"v": rnd.randrange(300)}, 10, 5_000 + n))
        del ours[rnd.randrange(len(ours))]
    ours._check()


def test_a_range_waiting_for_its_index_is_not_kept_alive_once_its_container_is_gone() -> None:
    """An in-process engine has no builder: the ranges whose indexes are wanted must not outlive their container."""
    import gc
    import weakref

    engine = make(QuerySettings(index=IndexSettings(min_documents=0, max_share=1.0)))  # no building in pages
    apply(engine, [("put", i, i % len(VALUES)) for i in range(50)])
    single_range_answer(engine, "SELECT * FROM c WHERE c.v = 1")  # asks for the index of /v
    rng = engine.container("d", "c").ranges[0]
    assert rng.indexes.wanted and not rng.indexes.paths
    gone = weakref.ref(rng)
    del rng
    engine.delete_container(CTX, "d", "c")
    gc.collect()
    assert gone() is None
