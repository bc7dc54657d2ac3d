"""Time to live through the unmodified azure-cosmos SDK: items expire from their last write by the
container's `defaultTtl` or their own `ttl`, are never seen once expired (point read, query, feeds), are
deleted as the journal records, and leave the storage figures (cosmos-wire-protocol.md W54-W57)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from azure.cosmos import PartitionKey, exceptions

from emulator.engine.facade import Engine
from emulator.rest.server import RunningEmulator, open_engine
from tests.conftest import ManualClock, sdk_client


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def db(make_emulator: Callable[..., RunningEmulator], clock: ManualClock):
    return sdk_client(make_emulator(Engine(clock=clock))).create_database("app")


def _ids(container) -> list[str]:
    return sorted(d["id"] for d in container.read_all_items())


def test_a_default_ttl_expires_items_from_their_last_write(db, clock: ManualClock) -> None:
    sessions = db.create_container("sessions", PartitionKey("/user"), default_ttl=60)
    sessions.create_item({"id": "a", "user": "u1"})
    clock.advance(30)
    sessions.create_item({"id": "b", "user": "u1"})
    clock.advance(29)
    assert _ids(sessions) == ["a", "b"]  # a is 59 s old
    clock.advance(1)
    assert _ids(sessions) == ["b"]  # a is 60 s old: expired
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        sessions.read_item("a", "u1")
    sessions.upsert_item({"id": "b", "user": "u1", "touched": True})  # a write restarts its clock
    clock.advance(59)
    assert list(sessions.query_items("SELECT VALUE c.id FROM c", partition_key="u1")) == ["b"]
    clock.advance(1)
    assert list(sessions.query_items("SELECT VALUE c.id FROM c", enable_cross_partition_query=True)) == []


def test_an_item_ttl_overrides_the_default_and_minus_one_never_expires(db, clock: ManualClock) -> None:
    cache = db.create_container("cache", PartitionKey("/k"), default_ttl=-1)  # only items with a ttl expire
    cache.create_item({"id": "forever", "k": "x"})
    cache.create_item({"id": "short", "k": "x", "ttl": 5})
    timed = db.create_container("timed", PartitionKey("/k"), default_ttl=10)
    timed.create_item({"id": "default", "k": "x"})
    timed.create_item({"id": "longer", "k": "x", "ttl": 100})
    timed.create_item({"id": "pinned", "k": "x", "ttl": -1})
    clock.advance(10)
    assert _ids(cache) == ["forever"]
    assert _ids(timed) == ["longer", "pinned"]
    clock.advance(90)
    assert _ids(timed) == ["pinned"]


def test_without_a_default_ttl_an_item_ttl_is_ignored(db, clock: ManualClock) -> None:
    plain = db.create_container("plain", PartitionKey("/k"))
    plain.create_item({"id": "1", "k": "x", "ttl": 5})
    clock.advance(3600)
    assert _ids(plain) == ["1"]


def test_an_expired_id_can_be_created_again_and_the_change_feed_skips_it(db, clock: ManualClock) -> None:
    sessions = db.create_container("sessions", PartitionKey("/user"), default_ttl=5)
    sessions.create_item({"id": "a", "user": "u1"})
    sessions.create_item({"id": "b", "user": "u1", "ttl": 100})
    clock.advance(5)
    assert [d["id"] for d in sessions.query_items_change_feed(start_time="Beginning")] == ["b"]
    sessions.create_item({"id": "a", "user": "u1", "again": True})  # 201, not 409: the old one is gone
    assert sessions.read_item("a", "u1")["again"] is True


def _usage(container) -> dict[str, str]:
    container.read(populate_quota_info=True)
    headers = container.client_connection.last_response_headers
    return dict(part.split("=") for part in headers["x-ms-resource-usage"].rstrip(";").split(";"))


def test_expired_items_leave_the_container_storage(db, clock: ManualClock) -> None:
    logs = db.create_container("logs", PartitionKey("/k"), default_ttl=1)
    for n in range(20):
        logs.create_item({"id": str(n), "k": f"k{n}", "pad": "x" * 1000})
    assert _usage(logs)["documentsCount"] == "20"
    clock.advance(1)
    assert _usage(logs)["documentsCount"] == "0"  # the container read sweeps first, as a query would


def test_a_restart_does_not_bring_expired_items_back(
    tmp_path, make_emulator: Callable[..., RunningEmulator], clock: ManualClock
) -> None:
    data = tmp_path / "data"
    first = make_emulator(open_engine(data, clock=clock))
    container = sdk_client(first).create_database("app").create_container("s", PartitionKey("/k"), default_ttl=10)
    container.create_item({"id": "old", "k": "x"})
    clock.advance(5)
    container.create_item({"id": "new", "k": "x"})
    clock.advance(5)
    assert _ids(container) == ["new"]  # old expired, its deletion journaled
    first.stop()
    again = sdk_client(make_emulator(open_engine(data, clock=clock)))
    reopened = again.get_database_client("app").get_container_client("s")
    assert _ids(reopened) == ["new"]
    clock.advance(5)
    assert _ids(reopened) == []  # the replayed item keeps its expiry


def test_the_server_checkpoint_sweeps_without_any_request(make_emulator, clock: ManualClock) -> None:
    emu = make_emulator(Engine(clock=clock))
    logs = sdk_client(emu).create_database("app").create_container("logs", PartitionKey("/k"), default_ttl=2)
    for n in range(5):
        logs.create_item({"id": str(n), "k": "x"})
    clock.advance(2)
    stored = emu.engine.databases["app"].containers["logs"]
    assert stored.size > 0  # nothing has read the container since they expired
    assert emu.engine.expire() == 5
    assert stored.size == 0 and emu.engine.expire() == 0
