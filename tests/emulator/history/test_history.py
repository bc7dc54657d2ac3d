"""The per-minute metrics history: what the Azure Monitor stand-in serves, checked against the raw
accounting records and the partition budgets, computed independently here."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey, exceptions
from azure.cosmos.documents import ConnectionPolicy, RetryOptions

from cosmoscore.limits import Limits
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS
from emulator.engine import errors
from emulator.engine.facade import Context, Engine, ThroughputSpec
from emulator.history.aggregates import KEY_RU, History, HistoryConfig, Point
from emulator.rest.server import HISTORY_FILE, open_engine
from tests.conftest import ManualClock

# 600 RU/s -> 3 partitions of 200 RU/s; 1,600 RU/s needs 4 partitions of at most 400 (a split)
LIMITS = Limits(manual_ru_per_partition_at_creation=200, max_ru_per_partition=400)
CTX = Context()
START = 1_800_000_000.0 - 1_800_000_000.0 % 3600  # on an hour, so minutes and PT5M intervals align


def _setup(engine: Engine, throughput: int = 600) -> None:
    engine.create_database(CTX, {"id": "t"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(CTX, "t", body, ThroughputSpec(throughput))


def _key_on(engine: Engine, pkrange_id: str, skip: int = 0) -> str:
    coll = engine.container("t", "c")
    keys = (f"k{i}" for i in range(10_000) if coll.range_for(coll.epk((f"k{i}",))).id == pkrange_id)
    return [next(keys) for _ in range(skip + 1)][-1]


def _range_ids(engine: Engine) -> list[str]:
    return [r.id for r in engine.container("t", "c").ranges]


def _reads(engine: Engine, key: str, n: int) -> None:
    """`n` point reads of 1 RU each (a small item, Session), 429s swallowed."""
    for _ in range(n):
        try:
            engine.read_item(CTX, "t", "c", "doc", [key])
        except errors.CosmosError as exc:
            assert exc.status == 429


def _expected_normalized(engine: Engine, budget_at: dict[int, float]) -> dict[tuple[float, str], float]:
    """NormalizedRUConsumption per (minute start, pkrange) from the raw records (P11), with the budget
    the test saw in force at each second."""
    per_second: dict[tuple[str, int], float] = defaultdict(float)
    for r in engine.accounting.records():
        if r.container == "c" and r.pkrange_id:
            per_second[(r.pkrange_id, math.floor(r.time))] += r.request_charge
    out: dict[tuple[float, str], float] = {}
    for (pk, second), ru in per_second.items():
        slot = (float(second - second % 60), pk)
        out[slot] = max(out.get(slot, 0.0), min(100.0, 100.0 * ru / budget_at[second]))
    return out


def _by(points: list[Point], *names: str) -> dict[tuple[object, ...], float]:
    return {(p.time, *(p.dimensions[n] for n in names)): p.value for p in points}


def _hot_workload(engine: Engine, clock: ManualClock, minutes: int) -> tuple[str, list[str], dict[int, float]]:
    """Each second: the hot key reads past its partition's budget, one cold key per other range reads
    a little. Returns the hot pkrange, the cold ones and the budget in force at each second."""
    ids = _range_ids(engine)
    hot_id, cold_ids = ids[0], ids[1:]
    keys = {pk: _key_on(engine, pk) for pk in ids}
    for key in keys.values():
        engine.create_item(CTX, "t", "c", {"id": "doc", "k": key}, [key])
    clock.advance(1.0)
    budget_at: dict[int, float] = {}
    for _ in range(minutes * 60):
        budget_at[math.floor(clock.now)] = engine.partition_budget(engine.container("t", "c"))
        _reads(engine, keys[hot_id], 230)  # 200 RU/s budget: the last ones get 429
        for pk in cold_ids:
            _reads(engine, keys[pk], 10)
        clock.advance(1.0)
    return hot_id, cold_ids, budget_at


def test_hot_key_partition_near_100_matches_the_records() -> None:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot, cold, budget_at = _hot_workload(engine, clock, minutes=3)
    budget_at[math.floor(START)] = 200.0  # the item creations' second
    points = engine.history.series("t", "c", NORMALIZED_RU, START, clock.now)
    got = _by(points, "PartitionKeyRangeId")
    assert got == pytest.approx(_expected_normalized(engine, budget_at))
    assert all(v >= 99 for (_, pk), v in got.items() if pk == hot)
    assert all(v <= 10 for (_, pk), v in got.items() if pk in cold)
    # 429s: counted under StatusCode 429, and on the hot range only
    split = engine.history.series("t", "c", TOTAL_REQUESTS, START, clock.now, split_pkrange=True)
    throttled = [p for p in split if p.dimensions["StatusCode"] == "429"]
    assert {p.dimensions["PartitionKeyRangeId"] for p in throttled} == {hot}
    records = engine.accounting.records()
    assert sum(p.value for p in throttled) == sum(1 for r in records if r.status == 429) == 3 * 60 * 30
    # totals by operation and status equal the records'
    ru = _by(engine.history.series("t", "c", TOTAL_REQUEST_UNITS, START, clock.now), "OperationType", "StatusCode")
    expected: dict[tuple[object, ...], float] = defaultdict(float)
    for r in records:
        if r.container == "c":
            expected[(float(r.time // 60 * 60), r.operation, str(r.status))] += r.request_charge
    assert ru == pytest.approx(dict(expected))
    # the hot key comes first in its range's top keys
    top = engine.history.series("t", "c", KEY_RU, START + 60, START + 120)
    assert top[0].dimensions == {"PartitionKeyRangeId": hot, "PartitionKey": f'["{_key_on(engine, hot)}"]'}


def test_throughput_change_mid_minute_uses_the_budget_of_each_second() -> None:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot = _range_ids(engine)[0]
    key = _key_on(engine, hot)
    engine.create_item(CTX, "t", "c", {"id": "doc", "k": key}, [key])
    clock.advance(10.0)
    _reads(engine, key, 150)  # 150 / 200 = 75 %
    clock.advance(20.0)
    offer = engine.offers[engine.container("t", "c").offer_rid]
    engine.replace_offer(CTX, offer.rid, 900)  # no split: 3 partitions of 300 RU/s
    assert _range_ids(engine) == [hot, *_range_ids(engine)[1:]]
    clock.advance(10.0)
    _reads(engine, key, 180)  # 180 / 300 = 60 % (90 % of the old budget, 45 % of the new one for the first)
    budget_at = {math.floor(START): 200.0, math.floor(START) + 10: 200.0, math.floor(START) + 40: 300.0}
    got = _by(engine.history.series("t", "c", NORMALIZED_RU, START, START + 60), "PartitionKeyRangeId")
    assert got == {(START, hot): pytest.approx(75.0)}
    assert got == pytest.approx(_expected_normalized(engine, budget_at))


def test_split_ends_the_parent_series_and_starts_the_childrens() -> None:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    keys = [f"k{i}" for i in range(40)]
    for key in keys:
        engine.create_item(CTX, "t", "c", {"id": "doc", "k": key}, [key])
    before = set(_range_ids(engine))

    def traffic(minutes: int) -> None:
        for _ in range(minutes):
            for _ in range(3):
                for key in keys:
                    _reads(engine, key, 1)
                clock.advance(1.0)
            clock.advance(57.0)

    traffic(2)
    split_at = clock.now
    offer = engine.offers[engine.container("t", "c").offer_rid]
    engine.replace_offer(CTX, offer.rid, 1600)
    after = set(_range_ids(engine))
    parents, children = before - after, after - before
    assert len(parents) == 1 and len(children) == 2
    traffic(2)
    points = engine.history.series("t", "c", NORMALIZED_RU, START, clock.now)
    times = defaultdict(list)
    for p in points:
        times[p.dimensions["PartitionKeyRangeId"]].append(p.time)
    (parent,) = parents
    assert times[parent] and max(times[parent]) < split_at
    for child in children:
        assert times[child] and min(times[child]) >= split_at


def test_pt5m_aggregates_pt1m_as_azure_does() -> None:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    hot = _range_ids(engine)[0]
    key = _key_on(engine, hot)
    engine.create_item(CTX, "t", "c", {"id": "doc", "k": key}, [key])
    for minute in range(10):
        clock.now = START + minute * 60 + 5
        _reads(engine, key, 10 * (minute + 1))
    h = engine.history
    for metric, names, combine in (
        (NORMALIZED_RU, ("PartitionKeyRangeId",), max),
        (TOTAL_REQUEST_UNITS, ("OperationType", "StatusCode"), sum),
        (TOTAL_REQUESTS, ("OperationType", "StatusCode"), sum),
    ):
        fine = _by(h.series("t", "c", metric, START, START + 600), *names)
        coarse = _by(h.series("t", "c", metric, START, START + 600, grain_minutes=5), *names)
        grouped: dict[tuple[object, ...], list[float]] = defaultdict(list)
        for (t, *dims), v in fine.items():
            assert isinstance(t, float)
            grouped[(t - t % 300, *dims)].append(v)
        assert coarse == pytest.approx({k: combine(v) for k, v in grouped.items()})
        assert {k[0] for k in coarse} == {START, START + 300}
    assert _by(h.series("t", "c", NORMALIZED_RU, START, START + 600, 5), "PartitionKeyRangeId") == {
        (START, hot): pytest.approx(25.0),
        (START + 300, hot): pytest.approx(50.0),
    }
    with pytest.raises(ValueError, match="grain_minutes"):
        h.series("t", "c", NORMALIZED_RU, START, START + 600, grain_minutes=7)


def test_retention_and_minute_cap_drop_old_minutes() -> None:
    for config, kept in ((HistoryConfig(retention_days=10 / 1440), 10), (HistoryConfig(max_minutes=5), 5)):
        history = History(config)
        for minute in range(30):
            history.record(START + minute * 60, "t", "c", "0", "Read", 200, 1.0, '["a"]', 200.0)
        last = int(START // 60) + 29
        assert history.minutes() == list(range(last - kept + 1, last + 1))
        # a request older than the retention is not recorded
        history.record(START, "t", "c", "0", "Read", 200, 1.0)
        assert len(history.minutes()) == kept


def test_a_day_of_minutes_on_the_simulated_clock() -> None:
    clock = ManualClock(START)
    engine = Engine(limits=LIMITS, clock=clock)
    _setup(engine)
    key = _key_on(engine, _range_ids(engine)[0])
    engine.create_item(CTX, "t", "c", {"id": "doc", "k": key}, [key])
    for _ in range(1440):
        clock.advance(60.0)
        _reads(engine, key, 2)
    assert len(engine.history.minutes()) == 1441
    total = engine.history.series("t", "c", TOTAL_REQUESTS, START, clock.now + 60, grain_minutes=1440)
    assert sum(p.value for p in total) == sum(1 for r in engine.accounting.records() if r.container == "c")
    assert {p.time for p in total} == {t - t % 86400 for t in (START, clock.now)}  # P1D: UTC days


def test_top_keys_are_bounded_per_range_and_minute() -> None:
    history = History(HistoryConfig(top_keys=3))
    for i in range(10):
        for _ in range(i + 1):
            history.record(START + 1, "t", "c", "0", "Read", 200, 1.0, f'["k{i}"]', 200.0)
    history.record(START + 61, "t", "c", "0", "Read", 200, 1.0, '["k0"]', 200.0)  # closes the first minute
    history.record(START + 2, "t", "c", "0", "Read", 200, 100.0, '["late"]', 200.0)  # a late key, not kept
    top = history.series("t", "c", KEY_RU, START, START + 60)
    assert [(p.dimensions["PartitionKey"], p.value) for p in top] == [('["k9"]', 10), ('["k8"]', 9), ('["k7"]', 8)]


def test_restart_with_a_data_dir_serves_the_same_history(tmp_path: Path) -> None:
    clock = ManualClock(START)
    engine = open_engine(tmp_path, clock=clock, limits=LIMITS)
    _setup(engine)
    _hot_workload(engine, clock, minutes=2)
    queries = [(m, g) for m in (NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS, KEY_RU) for g in (1, 5)]
    before = [engine.history.series("t", "c", m, START, clock.now, g) for m, g in queries]
    engine.close()
    assert (tmp_path / HISTORY_FILE).exists() and not list(tmp_path.glob(".*.tmp"))
    again = open_engine(tmp_path, clock=clock, limits=LIMITS)
    assert [again.history.series("t", "c", m, START, clock.now, g) for m, g in queries] == before
    again.close()
    assert History.open(tmp_path / HISTORY_FILE).minutes() == again.history.minutes()
    (tmp_path / "foreign").write_bytes(b"")
    with pytest.raises(ValueError, match="ruscope-history"):
        History.open(tmp_path / "foreign")


def test_without_a_data_dir_the_history_is_in_memory_only(tmp_path: Path) -> None:
    engine = open_engine(None, clock=ManualClock(START))
    engine.read_account(CTX)
    engine.close()
    assert engine.history.path is None and engine.history.minutes() == [int(START // 60)]


def test_sdk_throttled_requests_appear_under_429_on_the_hot_range_only(make_emulator) -> None:
    clock = ManualClock(START)
    emu = make_emulator(Engine(limits=LIMITS, clock=clock))
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(max_retry_attempt_count=0)
    client = CosmosClient(emu.url, credential=emu.key, connection_policy=policy)
    c = client.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=600)
    hot_id = _range_ids(emu.engine)[0]
    hot, cold = _key_on(emu.engine, hot_id), _key_on(emu.engine, _range_ids(emu.engine)[1])
    with pytest.raises(exceptions.CosmosHttpResponseError):
        for i in range(100):
            c.create_item({"id": str(i), "k": hot})
    c.create_item({"id": "cold", "k": cold})
    points = emu.engine.history.series("t", "c", TOTAL_REQUESTS, START, START + 60, split_pkrange=True)
    assert {p.dimensions["PartitionKeyRangeId"] for p in points if p.dimensions["StatusCode"] == "429"} == {hot_id}
    normalized = _by(emu.engine.history.series("t", "c", NORMALIZED_RU, START, START + 60), "PartitionKeyRangeId")
    assert normalized[(START, hot_id)] == 100.0 and normalized[(START, _range_ids(emu.engine)[1])] < 10


def test_a_late_minute_within_retention_is_kept_in_time_order() -> None:
    history = History(HistoryConfig(max_minutes=3))
    for minute in (0, 2, 1, 3):  # the clock went back once
        history.record(START + minute * 60, "t", "c", "0", "Read", 200, 1.0)
    first = int(START // 60)
    assert history.minutes() == [first + 1, first + 2, first + 3]  # the cap dropped the oldest, not the latest
