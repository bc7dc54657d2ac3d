"""The engine's own accounting agrees with what the SDK saw, request by request."""

from __future__ import annotations

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.facade import Engine


def test_every_request_is_recorded_with_its_charge(emulator) -> None:
    seen: list[tuple[str, float, str]] = []

    def hook(response) -> None:
        headers = response.http_response.headers
        seen.append(
            (
                headers.get("x-ms-activity-id"),
                float(headers.get("x-ms-request-charge") or 0),
                headers.get("x-ms-documentdb-partitionkeyrangeid", ""),
            )
        )

    client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=hook)
    c = client.create_database("a").create_container("c", PartitionKey("/k"), offer_throughput=12_000)
    for i in range(10):
        c.upsert_item({"id": str(i), "k": f"k{i % 3}", "n": i})
    c.read_item("1", "k1")
    c.delete_item("2", "k2")
    list(c.read_all_items())
    records = {r.activity_id: r for r in emulator.engine.accounting.records()}
    for activity, charge, pkrange in seen:
        assert activity in records, "a response the SDK saw was not recorded"
        assert records[activity].request_charge == pytest.approx(charge, abs=0.005)
        if pkrange:
            assert records[activity].pkrange_id == pkrange
    total_seen = sum(charge for _, charge, _ in seen)
    assert total_seen == pytest.approx(sum(r.request_charge for r in records.values()), abs=0.05)
    point = [r for r in records.values() if r.resource_type == "docs" and r.operation == "Read"]
    assert point[0].partition_key == '["k1"]' and point[0].duration_ms >= 0


def test_strong_consistency_doubles_reads_only(make_emulator) -> None:
    charges = {}
    for level in ("Session", "Strong"):
        emu = make_emulator(Engine(consistency=level))
        c = CosmosClient(emu.url, credential=emu.key).create_database("s").create_container("c", PartitionKey("/k"))
        c.create_item({"id": "1", "k": "a", "pad": "z" * 700})
        write = float(c.client_connection.last_response_headers["x-ms-request-charge"])
        c.read_item("1", "a")
        read = float(c.client_connection.last_response_headers["x-ms-request-charge"])
        charges[level] = (write, read)
    assert charges["Session"][1] == pytest.approx(1.00)
    assert charges["Strong"][1] == pytest.approx(2.00)
    assert charges["Strong"][0] == charges["Session"][0]


def test_excluded_paths_and_indexing_none_lower_write_charges(emulator) -> None:
    db = CosmosClient(emulator.url, credential=emulator.key).create_database("i")
    doc = {"id": "1", "k": "a", "a": 1, "b": 2, "c": {"d": 3, "e": 4}}
    charges = {}
    for name, policy in (
        ("default", None),
        (
            "excluded",
            {
                "indexingMode": "consistent",
                "includedPaths": [{"path": "/*"}],
                "excludedPaths": [{"path": "/c/*"}, {"path": '/"_etag"/?'}],
            },
        ),
        ("none", {"indexingMode": "none", "automatic": False}),
    ):
        kwargs = {"indexing_policy": policy} if policy else {}
        c = db.create_container(name, PartitionKey("/k"), **kwargs)
        c.create_item(dict(doc))
        charges[name] = float(c.client_connection.last_response_headers["x-ms-request-charge"])
    assert charges["default"] == pytest.approx(5.0 + 0.2 * 2 * 6)  # 6 indexed leaves, 2 terms each (W1, k_t)
    assert charges["none"] == pytest.approx(5.0)
    assert charges["none"] < charges["excluded"] < charges["default"]
