"""The engine's own accounting agrees with what the SDK saw, request by request."""

from __future__ import annotations

import dataclasses

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.accounting import Accounting, RequestRecord, record_bytes
from emulator.engine.facade import Context, Engine
from emulator.history.aggregates import History
from tests.conftest import ManualClock


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


def _at(time: float, container: str = "c", activity_id: str = "") -> RequestRecord:
    return RequestRecord(time, "d", container, "Read", "docs", 200, 0, 1.0, "0", '["k"]', activity_id, "", 0.1)


def test_the_log_knows_up_to_when_it_may_miss_records() -> None:
    """`missing_until`: None while every record is kept; then the newest time of any dropped record, so
    every request timed after it is in the log (what the monitor stand-in's per-request rows rely on)."""
    log = Accounting(max_records=3)
    for t in (10.0, 12.0, 11.0):  # out of order, as two threads may add them
        log.add(_at(t))
    assert log.missing_until is None
    log.add(_at(13.0))
    log.add(_at(14.0))
    assert log.missing_until == 12.0  # 10 and 12 were dropped, 11 is kept
    assert [r.time for r in log.records()] == [11.0, 13.0, 14.0]
    log.lose_until(5.0)
    assert log.missing_until == 12.0  # never moves back
    log.clear()
    assert log.missing_until == 14.0 and log.records() == []


def test_the_byte_cap_moves_the_coverage_too() -> None:
    log = Accounting(max_bytes=1_000)
    for i in range(20):
        log.add(_at(float(i), activity_id=f"id-{i}"))
    kept = log.records()
    assert 0 < len(kept) < 20 and log.missing_until == kept[0].time - 1


def test_a_window_is_the_containers_records_in_a_time_range() -> None:
    log = Accounting()
    for i in range(10):
        log.add(_at(float(i), container="a" if i % 2 else "b"))
    held, missing = log.window(2.0, 8.0, frozenset({("d", "a")}))
    assert [r.time for r in held] == [3.0, 5.0, 7.0] and missing is None


def test_an_engine_on_a_saved_history_has_no_ids_before_its_start(tmp_path) -> None:
    """A history saved by an earlier run counts requests this process's log never saw: the log says so."""
    clock = ManualClock(1_800_000_000.0)
    first = Engine(clock=clock, history=History(path=tmp_path / "h.jsonl"))
    first.create_database(Context(), {"id": "d"})
    assert first.accounting.missing_until is None
    first.history.save()
    clock.advance(120)
    second = Engine(clock=clock, history=History.open(tmp_path / "h.jsonl"))
    assert second.accounting.missing_until == clock()


def test_a_record_keeps_a_querys_text_capped_like_every_string() -> None:
    log = Accounting(max_field_chars=10)
    log.add(dataclasses.replace(_at(1.0), query_text="SELECT * FROM c WHERE c.k = 1"))
    assert log.records()[0].query_text == "SELECT * F"
    assert record_bytes(_at(1.0)) < record_bytes(dataclasses.replace(_at(1.0), query_text="SELECT 1"))
