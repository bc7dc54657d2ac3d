"""Transactional batch (`execute_item_batch`) through the unmodified azure-cosmos SDK: all or nothing, the
service's per-operation results and limits, its charge, throttling and durability (cosmos-wire-protocol.md
W22-W26)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from azure.cosmos.documents import ConnectionPolicy, RetryOptions

from cosmoscore.limits import Limits
from emulator.engine.facade import Engine
from emulator.rest.server import RunningEmulator, open_engine
from tests.conftest import ManualClock, sdk_client


@pytest.fixture
def container(client: CosmosClient):
    return client.create_database("shop").create_container("orders", PartitionKey("/tenant"))


def _ids(container) -> list[str]:
    return sorted(d["id"] for d in container.read_all_items())


def test_a_batch_applies_every_operation_in_order(emulator: RunningEmulator, container) -> None:
    container.create_item({"id": "r", "tenant": "t1", "v": 1})
    container.create_item({"id": "d", "tenant": "t1"})
    container.create_item({"id": "p", "tenant": "t1", "n": 1})
    lsn = int(container.read_item("r", "t1").get_response_headers()["lsn"])
    done = container.execute_item_batch(
        [
            ("create", ({"id": "new", "tenant": "t1"},)),
            ("replace", ("new", {"id": "new", "tenant": "t1", "replaced": True})),  # sees the create
            ("upsert", ({"id": "r", "tenant": "t1", "v": 2},)),
            ("read", ("r",)),
            ("patch", ("p", [{"op": "incr", "path": "/n", "value": 5}])),
            ("delete", ("d",)),
        ],
        partition_key="t1",
    )
    assert [r["statusCode"] for r in done] == [201, 200, 200, 200, 200, 204]
    assert done[1]["resourceBody"]["replaced"] is True and done[3]["resourceBody"]["v"] == 2
    assert done[4]["resourceBody"]["n"] == 6 and done[4]["eTag"] == done[4]["resourceBody"]["_etag"]
    assert "resourceBody" not in done[5]
    assert _ids(container) == ["new", "p", "r"]
    headers = done.get_response_headers()
    assert int(headers["lsn"]) == lsn + 1  # one log sequence number for the whole batch (W25)
    charge = float(headers["x-ms-request-charge"])
    assert charge == pytest.approx(sum(r["requestCharge"] for r in done), abs=0.02)
    record = emu_record(emulator, "Batch")
    assert (record.status, record.request_charge) == (200, round(charge, 2))


def emu_record(emulator: RunningEmulator, operation: str):
    return next(r for r in reversed(emulator.engine.accounting.records()) if r.operation == operation)


def test_one_failing_operation_applies_none_and_the_others_answer_424(emulator: RunningEmulator, container) -> None:
    container.create_item({"id": "kept", "tenant": "t1", "v": 1})
    with pytest.raises(exceptions.CosmosBatchOperationError) as caught:
        container.execute_item_batch(
            [
                ("create", ({"id": "a", "tenant": "t1"},)),
                ("upsert", ({"id": "kept", "tenant": "t1", "v": 2},)),
                ("create", ({"id": "a", "tenant": "t1"},)),  # the batch's own create makes it a 409
                ("delete", ("kept",)),
            ],
            partition_key="t1",
        )
    error = caught.value
    assert (error.status_code, error.error_index) == (409, 2)
    assert [r["statusCode"] for r in error.operation_responses] == [424, 424, 409, 424]
    assert _ids(container) == ["kept"] and container.read_item("kept", "t1")["v"] == 1
    assert emu_record(emulator, "Batch").status == 207
    assert float(error.headers["x-ms-request-charge"]) > 0  # what ran is still charged (M2)


@pytest.mark.parametrize(
    ("operations", "status", "index"),
    [
        ([("read", ("absent",)), ("read", ("absent",))], 404, 0),
        ([("create", ({"id": "x", "tenant": "t1"},)), ("create", ({"id": "y", "tenant": "other"},))], 400, 1),
        ([("replace", ("absent", {"id": "absent", "tenant": "t1"}))], 404, 0),
        (
            [
                ("upsert", ({"id": "e", "tenant": "t1"},)),
                ("replace", ("e", {"id": "e", "tenant": "t1"}), {"if_match_etag": '"stale"'}),
            ],
            412,
            1,
        ),
        ([("delete", ("absent",)), ("delete", ("absent",))], 404, 0),
    ],
)
def test_the_failing_operation_carries_its_own_status(container, operations, status, index) -> None:
    with pytest.raises(exceptions.CosmosBatchOperationError) as caught:
        container.execute_item_batch(operations, partition_key="t1")
    assert (caught.value.status_code, caught.value.error_index) == (status, index)
    statuses = [r["statusCode"] for r in caught.value.operation_responses]
    assert statuses[index] == status and all(s == 424 for i, s in enumerate(statuses) if i != index)
    assert _ids(container) == []


def test_batch_limits_are_the_services(container) -> None:
    with pytest.raises(exceptions.CosmosHttpResponseError) as empty:
        container.execute_item_batch([], partition_key="t1")
    assert empty.value.status_code == 400 and "Batch request has no operations." in empty.value.message
    many = [("create", ({"id": str(i), "tenant": "t1"},)) for i in range(101)]
    with pytest.raises(exceptions.CosmosHttpResponseError) as too_many:
        container.execute_item_batch(many, partition_key="t1")
    assert too_many.value.status_code == 400
    assert "Batch request has more operations than what is supported." in too_many.value.message
    assert len(container.execute_item_batch(many[:100], partition_key="t1")) == 100
    big = {"id": "big", "tenant": "t1", "blob": "x" * 1_500_000}
    with pytest.raises(exceptions.CosmosHttpResponseError) as too_large:
        container.execute_item_batch([("upsert", (big,)), ("upsert", ({**big, "id": "big2"},))], partition_key="t1")
    assert too_large.value.status_code == 413 and too_large.value.message.startswith("(RequestEntityTooLarge)")
    assert len(_ids(container)) == 100


def test_a_hierarchical_batch_needs_the_whole_key(client: CosmosClient) -> None:
    container = client.create_database("d").create_container(
        "c", PartitionKey(path=["/state", "/city"], kind="MultiHash")
    )
    item = {"id": "1", "state": "WA", "city": "Redmond"}
    assert container.execute_item_batch([("create", (item,))], partition_key=["WA", "Redmond"])[0]["statusCode"] == 201
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        container.execute_item_batch([("read", ("1",))], partition_key=["WA"])
    assert (
        caught.value.status_code == 400 and "Partition key provided either doesn't correspond" in caught.value.message
    )


def test_a_batch_is_throttled_as_a_whole(make_emulator: Callable[..., RunningEmulator]) -> None:
    clock = ManualClock()
    emu = make_emulator(Engine(limits=Limits(manual_ru_per_partition_at_creation=400), clock=clock))
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(max_retry_attempt_count=0)  # see the 429 itself
    client = CosmosClient(emu.url, credential=emu.key, connection_policy=policy)
    container = client.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=400)
    batch = [("create", ({"id": str(i), "k": "hot", "pad": "x" * 900},)) for i in range(100)]
    done = container.execute_item_batch(batch, partition_key="hot")  # one request may overdraw the second
    assert float(done.get_response_headers()["x-ms-request-charge"]) > 400
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        container.execute_item_batch([("read", ("0",))], partition_key="hot")
    assert caught.value.status_code == 429 and int(caught.value.headers["x-ms-retry-after-ms"]) > 0
    clock.advance(1.0)
    assert container.execute_item_batch([("read", ("0",))], partition_key="hot")[0]["statusCode"] == 200


def test_a_committed_batch_is_one_journal_entry_and_survives_a_restart(
    tmp_path: Path, make_emulator: Callable[..., RunningEmulator]
) -> None:
    emu = make_emulator(data_dir=tmp_path)
    container = sdk_client(emu).create_database("shop").create_container("orders", PartitionKey("/tenant"))
    container.create_item({"id": "gone", "tenant": "t1"})
    journal = emu.engine.state.journal
    assert journal is not None
    entries: list[dict] = []
    append = journal.append
    journal.append = lambda entry: (entries.append(entry), append(entry))[1]  # type: ignore[method-assign]
    container.execute_item_batch(
        [("create", ({"id": "a", "tenant": "t1"},)), ("delete", ("gone",)), ("upsert", ({"id": "b", "tenant": "t1"},))],
        partition_key="t1",
    )
    assert [e["op"] for e in entries] == ["batch"]
    assert [e["op"] for e in entries[0]["entries"]] == ["put", "delete", "put"]
    with pytest.raises(exceptions.CosmosBatchOperationError):
        container.execute_item_batch([("create", ({"id": "c", "tenant": "t1"},)), ("read", ("x",))], partition_key="t1")
    assert len(entries) == 1  # a failed batch journals nothing
    journal.close()  # as a kill would leave it: no compaction
    restarted = open_engine(tmp_path).container("shop", "orders")  # replayed, not from the snapshot
    assert sorted(i for r in restarted.ranges for lp in r.logical.values() for i in lp.items) == ["a", "b"]


def test_a_batch_is_replayed_whole_from_the_journal(tmp_path: Path) -> None:
    from emulator.durability.journal import Journal
    from emulator.engine.metering import Context
    from emulator.engine.results import BatchOperation

    engine = Engine(journal=Journal(tmp_path))
    ctx = Context()
    engine.create_database(ctx, {"id": "d"})
    engine.create_container(ctx, "d", {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}})
    ops = [BatchOperation("Create", doc={"id": str(i), "k": "a"}) for i in range(3)]
    assert engine.execute_batch(ctx, "d", "c", ("a",), ops).committed
    lsn = engine.container("d", "c").ranges[0].lsn
    assert engine.state.journal is not None
    engine.state.journal.close()
    replayed = Engine(journal=Journal(tmp_path)).container("d", "c")  # no compaction: the journal replays
    assert sorted(i for r in replayed.ranges for lp in r.logical.values() for i in lp.items) == ["0", "1", "2"]
    assert replayed.ranges[0].lsn == lsn == 1
