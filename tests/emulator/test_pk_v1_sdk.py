"""Partition key version 1 through the unmodified azure-cosmos SDK (cosmos-wire-protocol.md W60): the
definition is accepted and kept, items are hashed with V1 and land on the physical partition whose
range holds the EPK the SDK itself computes, and point reads, single-partition queries and feed-range
queries find them there."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import PartitionKey, exceptions
from azure.cosmos.partition_key import NonePartitionKeyValue, NullPartitionKeyValue

from cosmoscore.epk import UNDEFINED, epk_v1
from cosmoscore.layout import key_space_share
from emulator.rest.server import RunningEmulator, open_engine
from tests import rawhttp
from tests.conftest import sdk_client

V1 = PartitionKey(path="/pk", kind="Hash", version=1)
MISSING = object()  # an item without the key path: the undefined key

# Keys of every kind the SDK and the service hash alike (the SDK's V1 gaps are in tests/cosmoscore/test_epk.py)
KEYS: list[Any] = [
    *(f"tenant-{i}" for i in range(40)),
    "",
    "é" * 120,  # past 100 characters: V1 keeps a prefix
    "q" * 150,
    0,
    7,
    2**31,
    3.5,
    -2.25,
    1e10,
    True,
    False,
    None,
    MISSING,
]


def _item(i: int, key: Any, copy: int) -> dict[str, Any]:
    item: dict[str, Any] = {"id": f"{i}-{copy}", "n": i}
    if key is not MISSING:
        item["pk"] = key
    return item


def _sdk_key(key: Any) -> Any:
    """The SDK's spelling of a key for a request: null and undefined have sentinels."""
    return NonePartitionKeyValue if key is MISSING else NullPartitionKeyValue if key is None else key


def _sdk_epk(container: Any, key: Any) -> str:
    """The EPK the SDK computes for a key (its feed range of the key), upper-cased as its `Range` does."""
    feed_range = container.feed_range_from_partition_key(_sdk_key(key))
    epk = str(feed_range["Range"]["min"]).upper()
    assert epk == str(feed_range["Range"]["max"]).upper()
    return epk


def _pkranges(emu: RunningEmulator, db: str, coll: str) -> list[dict[str, Any]]:
    status, _, body = rawhttp.request(emu.url, emu.key, "GET", f"/dbs/{db}/colls/{coll}/pkranges/")
    assert status == 200 and body is not None
    ranges: list[dict[str, Any]] = body["PartitionKeyRanges"]
    return ranges


def _owner(ranges: list[dict[str, Any]], epk: str) -> str:
    """The id of the pkrange whose [minInclusive, maxExclusive) holds an EPK."""
    owners = [
        r["id"] for r in ranges if r["minInclusive"] <= epk and (r["maxExclusive"] == "FF" or epk < r["maxExclusive"])
    ]
    assert len(owners) == 1, (epk, owners)
    return str(owners[0])


@pytest.fixture
def loaded(emulator: RunningEmulator) -> tuple[Any, list[dict[str, Any]]]:
    """A V1 container on 4 physical partitions (24,000 RU/s), two items per key."""
    container = sdk_client(emulator).create_database("v1").create_container("c", V1, offer_throughput=24_000)
    for i, key in enumerate(KEYS):
        for copy in range(2):
            container.create_item(_item(i, key, copy))
    return container, _pkranges(emulator, "v1", "c")


def test_a_version_1_definition_is_accepted_and_kept(emulator: RunningEmulator) -> None:
    db = sdk_client(emulator).create_database("d")
    container = db.create_container("c", V1)
    assert container.read()["partitionKey"] == {"paths": ["/pk"], "kind": "Hash", "version": 1}
    assert db.get_container_client("c").read()["partitionKey"]["version"] == 1
    assert emulator.engine.container("d", "c").hash_version == 1


def test_a_definition_without_a_version_is_v1_and_reads_back_without_one(emulator: RunningEmulator) -> None:
    """A legacy definition: "if not specified the default value is 1" (W60)."""
    sdk_client(emulator).create_database("legacy")
    body = json.dumps({"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash"}})
    status, _, created = rawhttp.request(emulator.url, emulator.key, "POST", "/dbs/legacy/colls", body=body)
    assert status == 201 and created is not None
    assert created["partitionKey"] == {"paths": ["/pk"], "kind": "Hash"}
    container = sdk_client(emulator).get_database_client("legacy").get_container_client("c")
    container.create_item({"id": "1", "pk": "a"})
    assert container.read_item("1", "a")["id"] == "1"
    (lp,) = [lp for r in emulator.engine.container("legacy", "c").ranges for lp in r.logical.values()]
    assert lp.epk == epk_v1(["a"]) == _sdk_epk(container, "a")


@pytest.mark.parametrize("version", [0, 3, "2", True])
def test_another_version_is_a_400(emulator: RunningEmulator, version: object) -> None:
    sdk_client(emulator).create_database("bad")
    pk = {"paths": ["/pk"], "kind": "Hash", "version": version}
    status, _, body = rawhttp.request(
        emulator.url, emulator.key, "POST", "/dbs/bad/colls", body=json.dumps({"id": "c", "partitionKey": pk})
    )
    assert status == 400 and body is not None and "version" in body["message"]


def test_items_land_on_the_partition_of_the_sdks_epk(
    emulator: RunningEmulator, loaded: tuple[Any, list[dict[str, Any]]]
) -> None:
    container, ranges = loaded
    assert len(ranges) == 4
    coll = emulator.engine.container("v1", "c")
    placed = {lp.epk: (rng.id, lp.key) for rng in coll.ranges for lp in rng.logical.values()}
    assert len(placed) == len(KEYS)  # one logical partition per key (0 and False included)
    used = set()
    for key in KEYS:
        engine_key = UNDEFINED if key is MISSING else key
        epk = epk_v1([engine_key])
        range_id, stored = placed[epk]
        assert stored == (engine_key,) and type(stored[0]) is type(engine_key)
        sdk = _sdk_epk(container, key)
        assert _owner(ranges, sdk) == range_id, key
        if key is not None:  # the SDK drops null's trailing 01 (W60); the partition is still the same
            assert sdk == epk
        used.add(range_id)
    assert used == {r["id"] for r in ranges}  # the keys spread over every partition


def test_point_reads_and_single_partition_queries_find_every_item(
    loaded: tuple[Any, list[dict[str, Any]]],
) -> None:
    container, ranges = loaded
    for i, key in enumerate(KEYS):
        sdk_key = _sdk_key(key)
        assert container.read_item(f"{i}-1", partition_key=sdk_key)["n"] == i
        found = list(container.query_items("SELECT VALUE c.id FROM c", partition_key=sdk_key))
        assert sorted(found) == [f"{i}-0", f"{i}-1"], key
        served = container.client_connection.last_response_headers["x-ms-documentdb-partitionkeyrangeid"]
        assert served == _owner(ranges, _sdk_epk(container, key)), key
    with pytest.raises(exceptions.CosmosResourceNotFoundError):
        container.read_item("0-0", partition_key="tenant-1")  # the right id under another key


def test_feed_range_queries_return_the_keys_items(loaded: tuple[Any, list[dict[str, Any]]]) -> None:
    container, ranges = loaded
    for i, key in enumerate(KEYS):
        if key is None:
            continue  # the SDK's null EPK lacks its trailing 01 (W60), so its point range names no item
        feed_range = container.feed_range_from_partition_key(_sdk_key(key))
        found = list(container.query_items("SELECT VALUE c.id FROM c", feed_range=feed_range))
        assert sorted(found) == [f"{i}-0", f"{i}-1"], key
    by_partition = {}
    for feed_range in container.read_feed_ranges():
        ids = list(container.query_items("SELECT VALUE c.n FROM c", feed_range=feed_range))
        served = container.client_connection.last_response_headers["x-ms-documentdb-partitionkeyrangeid"]
        by_partition[served] = set(ids)
    for i, key in enumerate(KEYS):
        assert i in by_partition[_owner(ranges, _sdk_epk(container, key))], key
    assert sum(len(ids) for ids in by_partition.values()) == len(KEYS)


def test_a_filter_on_the_key_is_routed_to_one_partition(loaded: tuple[Any, list[dict[str, Any]]]) -> None:
    container, ranges = loaded
    query = "SELECT VALUE c.id FROM c WHERE c.pk = @k"
    for key in ("tenant-3", 7, True):
        found = list(
            container.query_items(query, parameters=[{"name": "@k", "value": key}], enable_cross_partition_query=True)
        )
        assert len(found) == 2
        served = container.client_connection.last_response_headers["x-ms-documentdb-partitionkeyrangeid"]
        assert served == _owner(ranges, _sdk_epk(container, key))


def test_a_throughput_split_cuts_the_v1_hash_space(emulator: RunningEmulator) -> None:
    container = sdk_client(emulator).create_database("s").create_container("c", V1, offer_throughput=18_000)
    for i in range(60):
        container.create_item({"id": str(i), "pk": f"k{i}"})
    container.replace_throughput(45_000)  # 3 ranges -> 5: the two leftmost halved (P7)
    ranges = emulator.engine.container("s", "c").ranges
    assert sorted(key_space_share(r.min, r.max, 1) for r in ranges) == pytest.approx([1 / 6] * 4 + [1 / 3])
    assert all(r.docs >= 1 for r in ranges)  # every V1 range holds keys, none is empty space
    pkranges = _pkranges(emulator, "s", "c")
    holder = {lp.epk: r.id for r in ranges for lp in r.logical.values()}
    for i in range(0, 60, 3):
        assert container.read_item(str(i), f"k{i}")["id"] == str(i)
        assert _owner(pkranges, _sdk_epk(container, f"k{i}")) == holder[epk_v1([f"k{i}"])]


def test_multihash_hashes_every_level_with_v2_whatever_its_version(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    """Every SDK hashes a MultiHash key per level with V2 whatever the definition's version (E3); the
    docs name no refusal of a MultiHash V1 definition, so it is kept as given (W60, ASSUMPTION)."""
    emu = make_emulator()
    hpk = PartitionKey(path=["/t", "/u"], kind="MultiHash", version=1)
    container = sdk_client(emu).create_database("h").create_container("c", hpk, offer_throughput=24_000)
    assert container.read()["partitionKey"]["version"] == 1
    ranges = _pkranges(emu, "h", "c")
    for i in range(12):
        container.create_item({"id": str(i), "t": f"t{i % 3}", "u": f"u{i}"})
    for i in range(12):
        key = [f"t{i % 3}", f"u{i}"]
        assert container.read_item(str(i), partition_key=key)["id"] == str(i)
        found = list(container.query_items("SELECT VALUE c.id FROM c", partition_key=key))
        assert found == [str(i)]
        served = container.client_connection.last_response_headers["x-ms-documentdb-partitionkeyrangeid"]
        assert served == _owner(ranges, _sdk_epk(container, key))


def test_a_v1_container_is_the_same_after_a_restart(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    """The journal replays and the snapshot reloads a V1 container with its V1 layout and hashing."""
    emu = make_emulator(open_engine(tmp_path))
    container = sdk_client(emu).create_database("r").create_container("c", V1, offer_throughput=24_000)
    for i in range(20):
        container.create_item({"id": str(i), "pk": f"k{i}"})
    layout = [(r.id, r.min, r.max, r.docs) for r in emu.engine.container("r", "c").ranges]
    emu.stop()
    emu.engine.close()
    for _ in range(2):  # from the journal, then from the snapshot the first close wrote
        again = make_emulator(open_engine(tmp_path))
        assert [(r.id, r.min, r.max, r.docs) for r in again.engine.container("r", "c").ranges] == layout
        reopened = sdk_client(again).get_database_client("r").get_container_client("c")
        assert reopened.read()["partitionKey"]["version"] == 1
        assert all(reopened.read_item(str(i), f"k{i}")["id"] == str(i) for i in range(20))
        again.stop()
        again.engine.close()
