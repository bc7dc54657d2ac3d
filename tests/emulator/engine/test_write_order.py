"""A physical partition keeps its documents in write order as writes happen (measured: re-sorting the
range after every write cost more than the query that followed): creates, replaces, upserts, deletes,
a storage split and a restart from the journal all leave `PkRange.written` equal to the items sorted by
their write sequence, and a query after a write sees the write."""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

from cosmoscore.limits import Limits
from emulator.engine.errors import CosmosError
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.rest.server import open_engine

CTX = Context()
LIMITS = Limits(physical_partition_max_bytes=40_000, logical_partition_max_bytes=30_000)


def sorted_by_seq(engine: Engine) -> dict[str, list[str]]:
    coll = engine.container("d", "c")
    return {
        rng.id: [
            i.doc["id"]
            for i in sorted((i for lp in rng.logical.values() for i in lp.items.values()), key=lambda i: i.seq)
        ]
        for rng in coll.ranges
    }


def kept(engine: Engine) -> dict[str, list[str]]:
    return {rng.id: [doc["id"] for doc in rng.documents_in_write_order()] for rng in engine.container("d", "c").ranges}


def churn(engine: Engine, seed: int, writes: int) -> None:
    rnd = random.Random(seed)
    for n in range(writes):
        key = f"t{rnd.randrange(12)}"
        item = f"i{rnd.randrange(60)}"
        action = rnd.random()
        if action < 0.2:
            with contextlib.suppress(CosmosError):  # not there: nothing to delete
                engine.delete_item(CTX, "d", "c", item, [key])
        else:
            engine.create_item(
                CTX, "d", "c", {"id": item, "tenantId": key, "n": n, "pad": "x" * 300}, [key], upsert=True
            )


def make(engine: Engine) -> Engine:
    engine.create_database(CTX, {"id": "d"})
    body = {"id": "c", "partitionKey": {"paths": ["/tenantId"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "d", body, ThroughputSpec(400))
    return engine


def test_the_write_order_is_kept_through_updates_deletes_and_a_split() -> None:
    engine = make(Engine(limits=LIMITS, throttling=False))
    churn(engine, 1, 600)
    assert len(engine.container("d", "c").ranges) > 1  # the storage split happened
    assert kept(engine) == sorted_by_seq(engine) and sum(map(len, kept(engine).values())) > 100


def test_a_query_after_a_write_sees_it_in_write_order() -> None:
    engine = make(Engine(throttling=False))
    churn(engine, 2, 200)
    before = engine.run_query("d", "c", "SELECT VALUE c.id FROM c").rows
    engine.create_item(CTX, "d", "c", {"id": before[0], "tenantId": "t0", "n": -1}, ["t0"], upsert=True)
    rows = engine.run_query("d", "c", "SELECT c.id, c.n FROM c WHERE c.n = -1").rows
    assert rows == [{"id": before[0], "n": -1}]
    assert kept(engine) == sorted_by_seq(engine)


def test_the_write_order_survives_a_restart(tmp_path: Path) -> None:
    engine = make(open_engine(tmp_path, limits=LIMITS, throttling=False))
    churn(engine, 3, 400)
    expected = kept(engine)
    engine.close()
    again = open_engine(tmp_path, limits=LIMITS, throttling=False)
    try:
        assert kept(again) == sorted_by_seq(again)
        assert {k: sorted(v) for k, v in kept(again).items()} == {k: sorted(v) for k, v in expected.items()}
    finally:
        again.close()
