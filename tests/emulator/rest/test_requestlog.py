"""`GET /_ruscope/requests` (emulator.rest.requestlog) read by `ruscope.check.emulator_log`, around requests
the real azure-cosmos SDK sends: what the pytest plugin and `ruscope check --from-emulator` build on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from azure.cosmos import ContainerProxy, PartitionKey

from emulator.engine.accounting import Accounting
from emulator.engine.facade import Engine
from emulator.rest.request import TAG_HEADER
from emulator.rest.server import RunningEmulator
from ruscope.check import emulator_log
from ruscope.check.emulator_log import EmulatorLog, EmulatorLogError
from tests.conftest import sdk_client, wait_for_sdk_background_requests


def orders(emu: RunningEmulator, throughput: int = 12_000) -> ContainerProxy:
    container = (
        sdk_client(emu)
        .create_database("shop")
        .create_container("orders", PartitionKey("/tenantId"), offer_throughput=throughput)
    )
    for n in range(40):
        container.create_item({"id": f"o{n}", "tenantId": f"t{n % 4}", "total": n})
    container.read_item("o0", partition_key="t0")  # the SDK reads its routing map now, not in a test's stretch
    wait_for_sdk_background_requests()
    return container


def test_the_requests_after_a_position_are_exactly_those_sent_since(emulator: RunningEmulator) -> None:
    container = orders(emulator)
    log = EmulatorLog(emulator.url, emulator.key)
    start = log.last()
    container.read_item("o1", partition_key="t1")
    list(container.query_items("SELECT * FROM c WHERE c.total > 3", enable_cross_partition_query=True))
    read = log.since(start)
    docs = [r for r in read.requests if r.resource_type == "docs"]
    assert [r.operation for r in docs] == ["Read", "Query", "Query"]
    assert [r.seq for r in read.requests] == list(range(start + 1, start + 1 + len(read.requests)))
    assert read.last == read.requests[-1].seq and not read.dropped
    point, *pages = docs
    assert (point.request_charge, point.partition_key, point.pkrange_count) == (1.0, '["t1"]', 2)
    assert sorted(p.pkrange_id for p in pages) == ["0", "1"]
    assert pages[0].correlated_activity_id and pages[0].correlated_activity_id == pages[1].correlated_activity_id
    assert pages[0].query_text == "SELECT * FROM c WHERE c.total > 3"
    assert log.since(read.last).requests == []  # the log's own reads are not in it


def test_a_clients_tag_is_kept_with_its_requests(emulator: RunningEmulator) -> None:
    container = orders(emulator)
    tagged = sdk_client(emulator, headers={TAG_HEADER: "checkout-suite"})  # azure-core's client-wide headers
    tagged_orders = tagged.get_database_client("shop").get_container_client("orders")
    tagged_orders.read_item("o0", partition_key="t0")
    wait_for_sdk_background_requests()
    log = EmulatorLog(emulator.url, emulator.key)
    start = log.last()
    tagged_orders.read_item("o2", partition_key="t2")
    container.read_item("o3", partition_key="t3")
    assert [(r.operation, r.tag) for r in log.since(start).requests] == [("Read", "checkout-suite"), ("Read", "")]


def test_a_read_pages_through_more_requests_than_one_answer_holds(
    emulator: RunningEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = orders(emulator)
    log = EmulatorLog(emulator.url, emulator.key)
    start = log.last()
    for n in range(7):
        container.read_item(f"o{n}", partition_key=f"t{n % 4}")
    monkeypatch.setattr(emulator_log, "PAGE", 3)
    read = log.since(start)
    assert [r.operation for r in read.requests] == ["Read"] * 7
    assert len({r.seq for r in read.requests}) == 7


def test_requests_that_left_the_capped_log_are_reported_as_dropped(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    emu = make_emulator(Engine(accounting=Accounting(max_records=10)))
    container = orders(emu)
    log = EmulatorLog(emu.url, emu.key)
    start = log.last()
    for n in range(15):
        container.read_item(f"o{n}", partition_key=f"t{n % 4}")
    read = log.since(start)
    assert read.dropped
    assert len(read.requests) == 10 and read.requests[-1].seq == start + 15  # the newest are kept
    assert not log.since(read.last - 3).dropped


def test_a_wrong_key_or_no_emulator_is_a_clear_error(emulator: RunningEmulator) -> None:
    other_key = "dGhpcyBpcyBub3QgdGhlIGtleSBvZiB0aGlzIGVtdWxhdG9yIGF0IGFsbCEhIQ=="
    with pytest.raises(EmulatorLogError, match="the key was refused"):
        EmulatorLog(emulator.url, other_key).last()
    with pytest.raises(EmulatorLogError, match="cannot read the request log"):
        EmulatorLog("http://127.0.0.1:9/", timeout_s=2).last()
