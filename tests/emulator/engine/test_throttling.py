"""Per-partition RU/s budgets: a hot partition throttles while the others keep serving."""

from __future__ import annotations

import collections

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from azure.cosmos.documents import ConnectionPolicy, RetryOptions

from cosmoscore.limits import Limits
from emulator.engine.facade import Engine
from tests.conftest import ManualClock

SMALL = Limits(manual_ru_per_partition_at_creation=200)  # 400 RU/s -> 2 partitions of 200 RU/s each


def _keys_on_two_ranges(engine: Engine) -> tuple[str, str]:
    coll = engine.container("t", "c")
    hot = next(f"k{i}" for i in range(100) if coll.range_for(coll.epk((f"k{i}",))).id == coll.ranges[0].id)
    cold = next(f"k{i}" for i in range(100) if coll.range_for(coll.epk((f"k{i}",))).id == coll.ranges[1].id)
    return hot, cold


def test_hot_partition_throttles_alone(make_emulator) -> None:
    clock = ManualClock()
    emu = make_emulator(Engine(limits=SMALL, clock=clock))
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(max_retry_attempt_count=0)  # see every 429 (errors ref. §1.5)
    client = CosmosClient(emu.url, credential=emu.key, connection_policy=policy)
    c = client.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=400)
    hot, cold = _keys_on_two_ranges(emu.engine)
    assert emu.engine.partition_budget(emu.engine.container("t", "c")) == 200
    spent = 0.0
    with pytest.raises(exceptions.CosmosHttpResponseError) as err:
        for i in range(100):
            c.create_item({"id": str(i), "k": hot})
            spent += float(c.client_connection.last_response_headers["x-ms-request-charge"])
    assert err.value.status_code == 429 and err.value.sub_status == 3200
    assert 0 < int(err.value.headers["x-ms-retry-after-ms"]) <= 1000
    assert spent >= 200  # the budget was really spent before the refusal
    c.create_item({"id": "cold-1", "k": cold})  # the other partition serves in the same second
    with pytest.raises(exceptions.CosmosHttpResponseError):
        c.read_item("0", hot)
    clock.advance(1.0)  # a new one-second window
    assert c.read_item("0", hot)["id"] == "0"
    records = emu.engine.accounting.records()
    throttled = {r.pkrange_id for r in records if r.status == 429}
    coll = emu.engine.container("t", "c")
    assert throttled == {coll.ranges[0].id}


def test_sdk_retries_after_the_advertised_wait(make_emulator) -> None:
    emu = make_emulator(limits=SMALL)  # real clock
    client = CosmosClient(emu.url, credential=emu.key)
    c = client.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=400)
    hot, _ = _keys_on_two_ranges(emu.engine)

    def throttled() -> int:
        return sum(1 for r in emu.engine.accounting.records() if r.status == 429)

    written = 0  # ~6 RU each on a 200 RU/s partition: writes until one is refused (however slow the machine)
    while written < 60 or (not throttled() and written < 3000):
        c.create_item({"id": str(written), "k": hot})
        written += 1
    assert len(list(c.read_all_items())) == written  # every write landed despite the 429s
    statuses = collections.Counter(
        r.status for r in emu.engine.accounting.records() if r.operation == "Create" and r.resource_type == "docs"
    )
    assert statuses[201] == written  # each item created once; every other attempt was a 429
    assert statuses[429] >= 1
    waits = [r.retry_after_ms for r in emu.engine.accounting.records() if r.status == 429]
    assert all(0 < w <= 1000 for w in waits)


def test_throttling_can_be_switched_off(make_emulator) -> None:
    clock = ManualClock()
    emu = make_emulator(Engine(limits=SMALL, clock=clock, throttling=False))
    c = (
        CosmosClient(emu.url, credential=emu.key)
        .create_database("t")
        .create_container("c", PartitionKey("/k"), offer_throughput=400)
    )
    for i in range(80):
        c.create_item({"id": str(i), "k": "same"})
    assert not [r for r in emu.engine.accounting.records() if r.status == 429]
