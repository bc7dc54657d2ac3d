"""Physical partitions, splits and limits, observed through the SDK and the engine's own view."""

from __future__ import annotations

import pytest
from azure.cosmos import PartitionKey, ThroughputProperties, exceptions

from cosmoscore.epk import epk_v2
from cosmoscore.layout import key_space_share
from cosmoscore.limits import Limits
from tests import rawhttp
from tests.conftest import sdk_client


@pytest.mark.parametrize(("throughput", "expected"), [(400, 1), (6_000, 1), (18_000, 3), (150_000, 25)])
def test_partitions_at_creation_through_the_sdk(emulator, throughput: int, expected: int) -> None:
    c = sdk_client(emulator).create_database("p").create_container("c", PartitionKey("/k"), offer_throughput=throughput)
    assert len(list(c.read_feed_ranges())) == expected
    assert c.get_throughput().offer_throughput == throughput


def test_autoscale_and_shared_throughput(emulator) -> None:
    client = sdk_client(emulator)
    c = client.create_database("a").create_container(
        "c", PartitionKey("/k"), offer_throughput=ThroughputProperties(auto_scale_max_throughput=250_000)
    )
    assert len(list(c.read_feed_ranges())) == 25  # autoscale: max / 10,000 (P6)
    assert c.get_throughput().auto_scale_max_throughput == 250_000
    shared = client.create_database("s", offer_throughput=40_000)
    sc = shared.create_container("c", PartitionKey("/k"))
    assert len(list(sc.read_feed_ranges())) == 4  # shared database: RU / 10,000 (P6)
    assert shared.get_throughput().offer_throughput == 40_000


def test_documents_live_on_the_range_of_their_epk(emulator) -> None:
    c = sdk_client(emulator).create_database("d").create_container("c", PartitionKey("/k"), offer_throughput=60_000)
    for i in range(200):
        c.create_item({"id": str(i), "k": f"key-{i}"})
    coll = emulator.engine.container("d", "c")
    counts = [r.docs for r in coll.ranges]
    assert sum(counts) == 200 and all(n > 0 for n in counts)  # spread over all 10 partitions
    for rng in coll.ranges:
        for lp in rng.logical.values():
            assert lp.epk == epk_v2(list(lp.key)) and rng.min <= lp.epk < (rng.max if rng.max != "FF" else "G")


def test_raising_throughput_splits_and_the_sdk_follows(emulator) -> None:
    c = sdk_client(emulator).create_database("s").create_container("c", PartitionKey("/k"), offer_throughput=18_000)
    for i in range(60):
        c.create_item({"id": str(i), "k": f"k{i}"})
    status, headers, before = rawhttp.request(emulator.url, emulator.key, "GET", "/dbs/s/colls/c/pkranges/")
    etag = headers["etag"]
    assert (
        rawhttp.request(emulator.url, emulator.key, "GET", "/dbs/s/colls/c/pkranges/", headers={"if-none-match": etag})[
            0
        ]
        == 304
    )
    c.replace_throughput(45_000)  # P = ROUNDUP(45,000 / 10,000) = 5 (T24)
    status, headers, after = rawhttp.request(
        emulator.url, emulator.key, "GET", "/dbs/s/colls/c/pkranges/", headers={"if-none-match": etag}
    )
    assert status == 200 and headers["etag"] != etag
    children = after["PartitionKeyRanges"]
    assert len(children) == 4 and all(r["parents"] for r in children)  # two parents halved, incremental feed
    ranges = emulator.engine.container("s", "c").ranges
    shares = sorted(key_space_share(r.min, r.max) for r in ranges)
    assert shares == pytest.approx([1 / 6] * 4 + [1 / 3])
    assert len(list(c.read_feed_ranges())) == 5
    assert sorted(int(d["id"]) for d in c.read_all_items()) == list(range(60))
    assert all(c.read_item(str(i), f"k{i}")["id"] == str(i) for i in range(0, 60, 7))
    assert sum(r.docs for r in ranges) == 60


def test_storage_split_and_logical_partition_limit(make_emulator) -> None:
    limits = Limits(physical_partition_max_bytes=40_000, logical_partition_max_bytes=12_000)
    emu = make_emulator(limits=limits)
    c = sdk_client(emu).create_database("l").create_container("c", PartitionKey("/k"))
    blob = "x" * 900
    for i in range(48):
        c.create_item({"id": str(i), "k": f"k{i % 8}", "blob": blob})
    ranges = emu.engine.container("l", "c").ranges
    assert len(ranges) >= 2  # past the physical limit it split ...
    for rng in ranges:  # ... and no logical partition was cut in two
        assert rng.size <= limits.physical_partition_max_bytes or len(rng.logical) == 1
        for other in ranges:
            if other is not rng:
                assert not set(rng.logical) & set(other.logical)
    assert sorted(int(d["id"]) for d in c.read_all_items()) == list(range(48))
    with pytest.raises(exceptions.CosmosHttpResponseError) as err:
        for i in range(48, 80):
            c.create_item({"id": str(i), "k": "k0", "blob": blob})
    assert (err.value.status_code, err.value.sub_status) == (403, 1014)
    logical = [lp for r in emu.engine.container("l", "c").ranges for lp in r.logical.values() if lp.key == ("k0",)]
    assert logical[0].size <= limits.logical_partition_max_bytes


def test_statistics_and_quota(emulator) -> None:
    c = sdk_client(emulator).create_database("q").create_container("c", PartitionKey("/k"), offer_throughput=12_000)
    for i in range(30):
        c.create_item({"id": str(i), "k": "hot" if i < 20 else f"k{i}", "pad": "y" * 500})
    props = c.read(populate_partition_key_range_statistics=True, populate_quota_info=True)
    stats = props["statistics"]
    assert [s["id"] for s in stats] == ["0", "1"]
    assert sum(s["documentCount"] for s in stats) == 30
    hot = [k for s in stats for k in s["partitionKeys"] if k["partitionKey"] == ["hot"]]
    assert hot and hot[0]["sizeInKB"] >= 10
    usage = dict(kv.split("=") for kv in props.get_response_headers()["x-ms-resource-usage"].strip(";").split(";"))
    assert usage["documentsCount"] == "30"
