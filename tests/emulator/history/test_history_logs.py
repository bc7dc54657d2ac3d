"""What `History` keeps for the logs stand-in and the storage metrics, checked against what the test did
and against the engine's own state: key request counts, key sizes (forward-filled), query RU and counts,
storage change-points (splits, offers, deletes), and a save/open round trip."""

from __future__ import annotations

from pathlib import Path

import orjson

from cosmoscore.keys import key_json
from cosmoscore.monitor.metrics import (
    DATA_USAGE,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
)
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.history import on_disk
from emulator.history.aggregates import KEY_COUNT, KEY_RU, KEY_SIZE, QUERY_COUNT, QUERY_RU, History, HistoryConfig
from tests.conftest import ManualClock
from tests.emulator.history.test_history import LIMITS, START

CTX = Context()


def _engine(tmp_path: Path | None = None) -> tuple[Engine, ManualClock]:
    clock = ManualClock(START)
    history = History(path=tmp_path / "h.jsonl.gz") if tmp_path else None
    engine = Engine(limits=LIMITS, clock=clock, throttling=False, history=history)
    engine.create_database(CTX, {"id": "t"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "t", body, ThroughputSpec(400))
    return engine, clock


def _doc_size(engine: Engine, key: str, item_id: str) -> int:
    """Persisted bytes as the engine computes them: UTF-8 JSON of the stored document."""
    doc = engine.read_item(CTX, "t", "c", item_id, [key]).doc
    assert doc is not None
    return len(orjson.dumps(doc))


def test_key_requests_count_each_request(tmp_path: Path) -> None:
    engine, clock = _engine()
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "hot"})
    for _ in range(7):
        engine.read_item(CTX, "t", "c", "a", ["hot"])
    engine.create_item(CTX, "t", "c", {"id": "b", "k": "cold"})
    counts = {
        p.dimensions["PartitionKey"]: p.value for p in engine.history.series("t", "c", KEY_COUNT, START, START + 60)
    }
    assert counts == {key_json(("hot",)): 8.0, key_json(("cold",)): 1.0}
    ru = {p.dimensions["PartitionKey"]: p.value for p in engine.history.series("t", "c", KEY_RU, START, START + 60)}
    assert ru[key_json(("hot",))] > ru[key_json(("cold",))]


def test_key_sizes_forward_fill_and_follow_writes() -> None:
    engine, clock = _engine()
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "big", "pad": "x" * 500})
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "small"})
    clock.advance(120)
    engine.create_item(CTX, "t", "c", {"id": "b", "k": "big", "pad": "y" * 100})
    clock.advance(3600)  # a quiet hour
    big = _doc_size(engine, "big", "a") + _doc_size(engine, "big", "b")
    points = engine.history.series("t", "c", KEY_SIZE, START, START + 5 * 60)
    by_minute: dict[float, dict[str, float]] = {}
    for p in points:
        by_minute.setdefault(p.time, {})[p.dimensions["PartitionKey"]] = p.value
    assert sorted(by_minute) == [START + 60 * i for i in range(5)]  # one point per interval, forward-filled
    assert by_minute[START][key_json(("small",))] == _doc_size(engine, "small", "a")
    assert by_minute[START][key_json(("big",))] == _doc_size(engine, "big", "a")
    assert by_minute[START + 240][key_json(("big",))] == big
    late = engine.history.series("t", "c", KEY_SIZE, START + 3600, START + 3660)
    assert {p.dimensions["PartitionKey"]: p.value for p in late}[key_json(("big",))] == big
    engine.delete_item(CTX, "t", "c", "a", ["small"])
    now = engine.history.series("t", "c", KEY_SIZE, clock.now, clock.now + 60)
    assert key_json(("small",)) not in {p.dimensions["PartitionKey"] for p in now}  # emptied: gone


def test_query_text_ru_and_count() -> None:
    engine, clock = _engine()
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "x"})
    sql = "SELECT * FROM c WHERE c.k = 'x'"
    total = sum(engine.run_query("t", "c", sql, partition_key=["x"]).request_charge for _ in range(3))
    ru = engine.history.series("t", "c", QUERY_RU, START, START + 60)
    count = engine.history.series("t", "c", QUERY_COUNT, START, START + 60)
    assert [(p.dimensions["QueryText"], p.value) for p in count] == [(sql, 3.0)]
    assert [p.dimensions["QueryText"] for p in ru] == [sql]
    assert abs(ru[0].value - total) < 0.05


def test_storage_change_points_split_and_offer() -> None:
    engine, clock = _engine()
    for i in range(20):
        engine.create_item(CTX, "t", "c", {"id": f"d{i}", "k": f"k{i}", "pad": "p" * i})
    coll = engine.container("t", "c")
    sizes = {r.id: r.size for r in coll.ranges}
    before = {r.id for r in coll.ranges}
    clock.advance(180)
    engine.read_item(CTX, "t", "c", "d1", ["k1"])  # reads change nothing
    offer = next(iter(engine.offers.values()))
    engine.replace_offer(CTX, offer.rid, 2 * LIMITS.max_ru_per_partition * len(before))  # forces a split
    after = {r.id for r in coll.ranges}
    assert after != before
    points = engine.history.series("t", "c", PARTITION_SIZE, START, START + 5 * 60)
    first = {p.dimensions["PartitionKeyRangeId"]: p.value for p in points if p.time == START}
    assert first == sizes
    last = {p.dimensions["PartitionKeyRangeId"]: p.value for p in points if p.time == START + 180}
    assert set(last) == after  # the parents' series ended, the children's began
    assert sum(last.values()) == sum(sizes.values())
    usage = {p.time: p.value for p in engine.history.series("t", "c", DATA_USAGE, START, START + 300)}
    assert set(usage.values()) == {float(sum(sizes.values()))}
    assert {p.value for p in engine.history.series("t", "c", INDEX_USAGE, START, START + 300)} == {0.0}
    assert {p.value for p in engine.history.series("t", "c", DOCUMENT_COUNT, START, START + 300)} == {20.0}
    provisioned = {p.time: p.value for p in engine.history.series("t", "c", PROVISIONED, START, START + 300)}
    assert provisioned[START] == 400 and provisioned[START + 180] == offer.throughput
    budget = engine.history.series("t", "c", PARTITION_THROUGHPUT, START + 180, START + 240)
    assert {p.value for p in budget} == {engine.partition_budget(coll)}


def test_delete_ends_series_and_history_still_lists_it(tmp_path: Path) -> None:
    engine, clock = _engine()
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "x"})
    clock.advance(120)
    engine.delete_container(CTX, "t", "c")
    assert ("t", "c") in engine.history.containers()
    usage = engine.history.series("t", "c", DATA_USAGE, START, START + 300)
    assert [p.time for p in usage] == [START, START + 60]


def test_saved_history_round_trips(tmp_path: Path) -> None:
    engine, clock = _engine(tmp_path)
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "x", "pad": "z" * 50})
    engine.run_query("t", "c", "SELECT * FROM c", partition_key=["x"])
    clock.advance(90)
    engine.create_item(CTX, "t", "c", {"id": "b", "k": "y"})
    engine.history.save()
    reopened = History.open(tmp_path / "h.jsonl.gz")
    for metric in (KEY_COUNT, KEY_RU, KEY_SIZE, QUERY_RU, QUERY_COUNT, DATA_USAGE, PARTITION_SIZE, PROVISIONED):
        want = engine.history.series("t", "c", metric, START, START + 600, now=clock.now)
        assert want, metric
        assert reopened.series("t", "c", metric, START, START + 600, now=clock.now) == want, metric
    assert reopened.containers() == {("t", "c")}


def test_a_history_file_from_before_these_fields_still_loads(tmp_path: Path) -> None:
    minute = int(START // 60)
    old = {
        "m": minute,
        "ops": [["t", "c", "0", "Read", 200, 3, 3.0]],
        "peaks": [],
        "keys": [["t", "c", "0", [['["a"]', 3.0]]]],
    }
    on_disk.write_lines(tmp_path / "old.jsonl.gz", [old])
    history = History.open(tmp_path / "old.jsonl.gz")
    assert [p.value for p in history.series("t", "c", KEY_RU, START, START + 60)] == [3.0]
    assert [p.value for p in history.series("t", "c", KEY_COUNT, START, START + 60)] == [0.0]  # not recorded then
    assert history.series("t", "c", DATA_USAGE, START, START + 60, now=START + 30) == []
    assert history.containers() == {("t", "c")}


def test_a_series_from_epoch_zero_starts_at_the_retention() -> None:
    engine, clock = _engine()
    engine.create_item(CTX, "t", "c", {"id": "a", "k": "x"})
    points = engine.history.series("t", "c", DATA_USAGE, 0.0, START + 120, 1)
    assert [p.time for p in points] == [START]  # no walk over 56 years of empty minutes


def test_an_operation_with_no_single_key_is_kept_under_the_empty_key_beside_the_top_keys() -> None:
    """A query across keys is recorded under the empty key (CDBPartitionKeyRUConsumption leaves PartitionKey
    empty for it); when the minute closes it is kept beside the top N, never in a key's place."""
    history = History(HistoryConfig(top_keys=2))
    for key, ru in (('["a"]', 3.0), ('["b"]', 2.0), ('["c"]', 1.0), ("", 10.0)):
        history.record(START, "t", "c", "0", "Read" if key else "Query", 200, ru, partition_key=key)
    history.record(START + 60, "t", "c", "0", "Read", 200, 1.0, partition_key='["a"]')  # closes the minute
    kept = {dims[1]: values[0] for _, dims, values in history.minute_entries("t", "c", "keys", START, START + 60)}
    assert kept == {'["a"]': 3.0, '["b"]': 2.0, "": 10.0}


def test_a_keys_seconds_by_operation_survive_a_save_and_open(tmp_path: Path) -> None:
    """CDBPartitionKeyRUConsumption's rows are a key's consumption per second and operation: History keeps
    them for the keys it keeps, saved and opened again; a minute saved without them reads as one entry."""
    history = History(path=tmp_path / "h.jsonl.gz")
    minute = (START // 60 + 1) * 60
    for offset, op, ru in ((0, "Read", 1.0), (0, "Read", 2.0), (0, "Upsert", 5.0), (7, "Read", 1.5)):
        history.record(minute + offset, "t", "c", "0", op, 200, ru, partition_key='["a"]')
    history.record(minute + 60, "t", "c", "0", "Read", 200, 1.0, partition_key='["b"]')  # closes the minute
    expected = [
        (minute, ("0", '["a"]', "Read", "0"), [3.0]),
        (minute, ("0", '["a"]', "Upsert", "0"), [5.0]),
        (minute, ("0", '["a"]', "Read", "7"), [1.5]),
    ]
    assert list(history.minute_entries("t", "c", "key_ops", minute, minute + 60)) == expected
    history.save()
    assert list(History.open(tmp_path / "h.jsonl.gz").minute_entries("t", "c", "key_ops", minute, minute + 60)) == (
        expected
    )
    old = {"m": int(minute // 60), "ops": [], "peaks": [], "keys": [["t", "c", "0", [['["a"]', 9.5, 4]]]]}
    on_disk.write_lines(tmp_path / "old.jsonl.gz", [old])
    reopened = History.open(tmp_path / "old.jsonl.gz")
    assert list(reopened.minute_entries("t", "c", "key_ops", minute, minute + 60)) == [
        (minute, ("0", '["a"]', "", "0"), [9.5])
    ]
