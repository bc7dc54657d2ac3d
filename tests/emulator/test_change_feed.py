"""The change feed (latest-version mode) through the unmodified SDK: from the beginning, now, a point in
time and a continuation; per partition key and feed range; across a split and a restart."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator
from tests.conftest import ManualClock, sdk_client


def _container(client: CosmosClient, throughput: int = 18_000) -> ContainerProxy:
    db = client.create_database_if_not_exists("shop")
    return db.create_container("orders", PartitionKey("/tenant"), offer_throughput=throughput)


def _fill(container: ContainerProxy, ids: range, version: int = 1) -> None:
    for i in ids:
        container.upsert_item({"id": str(i), "tenant": f"t{i % 7}", "v": version})


def _drain(container: ContainerProxy, **kwargs: Any) -> tuple[list[dict[str, Any]], str]:
    """Every change the feed gives now, and the continuation to resume from."""
    changes = list(container.query_items_change_feed(**kwargs))
    return changes, container.client_connection.last_response_headers["etag"]


def test_from_the_beginning_each_item_once_in_its_latest_version(client: CosmosClient) -> None:
    container = _container(client)
    assert len(list(container.read_feed_ranges())) == 3
    _fill(container, range(60))
    _fill(container, range(0, 60, 5), version=2)  # updated: still one change each, the latest
    for i in (1, 2):
        container.delete_item(str(i), partition_key=f"t{i % 7}")  # deletes are not changes in this mode
    changes, _ = _drain(container, start_time="Beginning", max_item_count=7)
    assert sorted(int(d["id"]) for d in changes) == sorted(set(range(60)) - {1, 2})
    assert {d["id"]: d["v"] for d in changes if int(d["id"]) % 5 == 0} == {str(i): 2 for i in range(0, 60, 5)}
    assert all(isinstance(d["_lsn"], int) for d in changes)
    by_tenant: dict[str, list[int]] = {}
    for doc in changes:
        by_tenant.setdefault(doc["tenant"], []).append(doc["_lsn"])
    assert all(lsns == sorted(lsns) for lsns in by_tenant.values())  # in write order per logical partition


def test_a_continuation_resumes_after_what_was_read(client: CosmosClient) -> None:
    container = _container(client)
    _fill(container, range(20))
    first, token = _drain(container, start_time="Beginning")
    assert len(first) == 20
    assert list(container.query_items_change_feed(continuation=token)) == []  # nothing new: 304s
    _fill(container, range(20, 26))
    _fill(container, range(3), version=2)
    again, token = _drain(container, continuation=token)
    assert sorted((d["id"], d["v"]) for d in again) == sorted(
        [(str(i), 1) for i in range(20, 26)] + [(str(i), 2) for i in range(3)]
    )
    assert list(container.query_items_change_feed(continuation=token)) == []


def test_from_now_only_later_changes(client: CosmosClient) -> None:
    container = _container(client)
    _fill(container, range(10))
    none, token = _drain(container, start_time="Now")
    assert none == []
    _fill(container, range(10, 13))
    later, _ = _drain(container, continuation=token)
    assert sorted(d["id"] for d in later) == ["10", "11", "12"]


def test_from_a_point_in_time(make_emulator: Callable[..., RunningEmulator]) -> None:
    clock = ManualClock()
    emu = make_emulator(clock=clock, throttling=False)
    container = _container(sdk_client(emu))
    _fill(container, range(10))
    clock.advance(30)
    since = datetime.fromtimestamp(clock(), tz=UTC)  # exclusive: changes after it
    clock.advance(30)
    _fill(container, range(10, 14))
    _fill(container, range(2), version=2)
    changes = list(container.query_items_change_feed(start_time=since))
    assert sorted(d["id"] for d in changes) == ["0", "1", "10", "11", "12", "13"]


def test_per_partition_key_and_per_feed_range(client: CosmosClient) -> None:
    container = _container(client)
    _fill(container, range(70))
    t3 = list(container.query_items_change_feed(partition_key="t3", start_time="Beginning"))
    assert sorted(int(d["id"]) for d in t3) == [i for i in range(70) if i % 7 == 3]
    per_range = [
        [d["id"] for d in container.query_items_change_feed(feed_range=fr, start_time="Beginning")]
        for fr in container.read_feed_ranges()
    ]
    assert len(per_range) == 3 and sorted(int(i) for ids in per_range for i in ids) == list(range(70))


def test_a_split_child_continues_where_its_parent_stopped(client: CosmosClient, emulator: RunningEmulator) -> None:
    container = _container(client, throughput=6_000)
    _fill(container, range(40))
    first, token = _drain(container, start_time="Beginning")
    assert len(first) == 40 and len(emulator.engine.container("shop", "orders").ranges) == 1
    _fill(container, range(40, 50))
    container.replace_throughput(30_000)  # the one range splits (T24)
    assert len(emulator.engine.container("shop", "orders").ranges) > 1
    _fill(container, range(50, 55))
    after, token = _drain(container, continuation=token)
    assert sorted(int(d["id"]) for d in after) == list(range(40, 55))  # none lost, none doubled
    assert list(container.query_items_change_feed(continuation=token)) == []


def test_the_position_survives_a_restart(tmp_path: Path, make_emulator: Callable[..., RunningEmulator]) -> None:
    emu = make_emulator(data_dir=tmp_path)
    container = _container(sdk_client(emu))
    _fill(container, range(12))
    _, token = _drain(container, start_time="Beginning")
    _fill(container, range(12, 15))
    container.delete_item("14", partition_key="t0")  # the last position handed out is a deleted item's
    read, latest = _drain(container, continuation=token)
    assert sorted(d["id"] for d in read) == ["12", "13"]
    emu.engine.close()  # compacted into a snapshot, as at shutdown
    reopened = sdk_client(make_emulator(data_dir=tmp_path)).get_database_client("shop").get_container_client("orders")
    _fill(reopened, range(15, 17))
    assert sorted(int(d["id"]) for d in reopened.query_items_change_feed(continuation=token)) == [12, 13, 15, 16]
    assert sorted(int(d["id"]) for d in reopened.query_items_change_feed(continuation=latest)) == [15, 16]


def test_a_page_is_charged_like_the_point_reads_of_its_items(client: CosmosClient) -> None:
    container = _container(client, throughput=400)
    _fill(container, range(5))
    charges: list[float] = []

    def hook(headers: Any, _: Any) -> None:
        charges.append(float(headers["x-ms-request-charge"]))

    assert len(list(container.query_items_change_feed(start_time="Beginning", response_hook=hook))) == 5
    assert charges[0] == pytest.approx(5.0, abs=0.5)  # five ~100-byte items: five 1 RU reads (Q19)


def test_all_versions_and_deletes_is_refused_not_looped(client: CosmosClient) -> None:
    container = _container(client)
    _fill(container, range(3))
    outcome: list[BaseException | list[Any]] = []

    def read() -> None:
        try:
            outcome.append(list(container.query_items_change_feed(mode="AllVersionsAndDeletes", start_time="Now")))
        except BaseException as exc:  # the outcome is what the test checks
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    assert not reader.is_alive(), "the all-versions change feed kept paging"
    assert isinstance(outcome[0], exceptions.CosmosHttpResponseError) and outcome[0].status_code == 400
    assert "all versions and deletes" in str(outcome[0])
