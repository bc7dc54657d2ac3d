"""The replay collector against the emulator through the real SDK: what it records, how it routes,
and how it fails."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from collectors.config import Config, parse_config
from collectors.replay import replay
from cosmoscore.limits import Limits
from emulator.engine.facade import Context, Engine
from store import read_table, store_location
from tests.conftest import ManualClock


def config_for(
    emu, queries: list[dict[str, Any]], *, replay_settings: dict | None = None, cosmos: dict | None = None
) -> Config:
    data = {
        "cosmos": {"endpoint": emu.url, "database": "shop", **(cosmos or {})},
        "replay": replay_settings or {},
        "queries": queries,
    }
    return parse_config(data, Path("test.toml"))


def run(emu, config: Config, store: Path, **kwargs: Any):
    out: list[str] = []
    err: list[str] = []
    summary = replay(
        config,
        store=store_location(store),
        credential=emu.key,
        progress=False,
        out=out.append,
        err=err.append,
        **kwargs,
    )
    return summary, out, err


def query_lines(out: list[str]) -> list[str]:
    """The per-query lines (the run's last lines say what it spent per account and container)."""
    return [line for line in out if not line.startswith(("replay spent", "  "))]


def load_orders(emu, *, throughput: int = 24_000, docs: int = 200) -> None:
    db = CosmosClient(emu.url, credential=emu.key).create_database_if_not_exists("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=throughput)
    throttle = emu.engine.throttle
    throttle.enabled = False
    for i in range(docs):
        emu.engine.create_item(
            Context(), "shop", "orders", {"id": f"o{i}", "tenantId": f"t{i % 10}", "n": i}, [f"t{i % 10}"]
        )
    throttle.enabled = True


def by_name(frame, name: str):
    return frame[frame["query_name"] == name]


QUERIES = [
    {
        "name": "one-tenant",
        "container": "orders",
        "sql": "SELECT * FROM c WHERE c.tenantId = @t",
        "parameters": {"@t": "t3"},
        "partition_key": "t3",
        "repeat": 2,
    },
    {"name": "no-key", "container": "orders", "sql": "SELECT * FROM c WHERE c.n > 100"},
    {
        "name": "two-tenants",
        "container": "orders",
        "sql": "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId IN ('t1', 't2')",
    },
    {"name": "count-all", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c"},
    {"name": "count-each", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c", "mode": "per-feed-range"},
]


@pytest.fixture
def loaded(emulator):
    load_orders(emulator)
    return emulator


def test_records_every_request_with_the_emulators_own_charges(loaded, tmp_path: Path) -> None:
    summary, out, err = run(loaded, config_for(loaded, QUERIES), tmp_path)
    assert summary.failed == 0 and summary.exit_code == 0 and not err
    requests = read_table(store_location(tmp_path), "requests")
    accounting = {r.activity_id: r for r in loaded.engine.accounting.records()}
    assert len(requests) > 0
    for row in requests.itertuples():
        record = accounting[row.activity_id]  # every captured request is one the emulator metered
        assert row.request_charge == pytest.approx(record.request_charge, abs=0.005)
        if row.request_kind == "page" and row.status == 200:
            assert row.pkrange_id == record.pkrange_id
    replay_activity = set(requests["activity_id"])
    served = [r for r in accounting.values() if r.activity_id in replay_activity]
    assert requests["request_charge"].sum() == pytest.approx(sum(r.request_charge for r in served), abs=0.05)
    assert summary.total_ru == pytest.approx(requests["request_charge"].sum(), abs=0.05)
    assert set(requests["request_kind"]) >= {"page", "refused", "query_plan", "pkranges", "metadata"}
    assert (requests["run_id"] == summary.run_id).all() and (requests["database"] == "shop").all()
    assert len(query_lines(out)) == len(QUERIES)
    spent = [line for line in out if line.startswith("replay spent")]
    assert spent == [
        f"replay spent {summary.total_ru:.2f} RU on account '127.0.0.1' in {len(requests)} request(s), "
        + spent[0].split(" request(s), ")[1]
    ]
    assert "paced at 100 RU/s" in spent[0]  # the default ceiling, said


def test_routing_classes_predicted_and_observed(loaded, tmp_path: Path) -> None:
    run(loaded, config_for(loaded, QUERIES), tmp_path)
    executions = read_table(store_location(tmp_path), "executions")
    assert (executions["status"] == "ok").all()
    assert not executions["routing_mismatch"].any()
    single = by_name(executions, "one-tenant")
    assert len(single) == 2 and set(single["routing_observed"]) == {"single"} and set(single["pkrange_count"]) == {1}
    assert set(single["items"]) == {20}
    fan_out = by_name(executions, "no-key")
    assert fan_out["routing_predicted"].item() == "fan-out" and fan_out["pkrange_count"].item() == 4
    assert fan_out["items"].item() == 99
    targeted = by_name(executions, "two-tenants")
    assert targeted["pkrange_count"].item() in (1, 2)  # the owners of t1 and t2 only
    owners = {
        loaded.engine.container("shop", "orders").range_for(loaded.engine.container("shop", "orders").epk((t,))).id
        for t in ("t1", "t2")
    }
    assert set(targeted["pkranges"].item().split(",")) == owners
    expected_class = "single" if len(owners) == 1 else "targeted"
    assert targeted["routing_observed"].item() == targeted["routing_predicted"].item() == expected_class


def test_per_feed_range_mode_measures_each_partitions_share(loaded, tmp_path: Path) -> None:
    run(loaded, config_for(loaded, QUERIES), tmp_path)
    executions = read_table(store_location(tmp_path), "executions")
    requests = read_table(store_location(tmp_path), "requests")
    each = by_name(executions, "count-each")
    assert len(each) == 4 and set(each["pkrange_count"]) == {1}
    assert sorted(each["pkranges"]) == sorted(r.id for r in loaded.engine.container("shop", "orders").ranges)
    assert set(each["feed_range"].str.contains(r"\.\.")) == {True}
    whole = by_name(executions, "count-all")
    whole_pages = requests[
        (requests["execution_id"] == whole["execution_id"].item()) & (requests["request_kind"] == "page")
    ]
    each_pages = requests[requests["execution_id"].isin(each["execution_id"]) & (requests["request_kind"] == "page")]
    # the same work per partition: the per-range charges add up to the fan-out's data pages
    assert each_pages["request_charge"].sum() == pytest.approx(whole_pages["request_charge"].sum(), abs=0.05)
    assert each_pages.groupby("pkrange_id")["request_charge"].sum().to_dict() == pytest.approx(
        whole_pages.groupby("pkrange_id")["request_charge"].sum().to_dict(), abs=0.02
    )


def test_a_hierarchical_prefix_that_spans_partitions_is_targeted(make_emulator, tmp_path: Path) -> None:
    small = Limits(physical_partition_max_bytes=40_000, logical_partition_max_bytes=20_000)
    emu = make_emulator(Engine(limits=small, throttling=False))
    db = CosmosClient(emu.url, credential=emu.key).create_database("shop")
    db.create_container("chats", PartitionKey(path=["/tenantId", "/userId"], kind="MultiHash"), offer_throughput=24_000)
    for i in range(240):  # tenant big grows past one partition and splits on user boundaries
        tenant = "big" if i % 3 else f"small{i % 9}"
        emu.engine.create_item(
            Context(),
            "shop",
            "chats",
            {"id": f"m{i}", "tenantId": tenant, "userId": f"u{i % 12}", "text": "x" * 300},
            [tenant, f"u{i % 12}"],
        )
    coll = emu.engine.container("shop", "chats")
    assert len(coll.ranges) >= 5  # 4 at creation, the one holding "big" split
    queries = [
        {"name": "prefix-key", "container": "chats", "sql": "SELECT * FROM c", "partition_key": ["big"]},
        {"name": "prefix-where", "container": "chats", "sql": "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = 'big'"},
        {"name": "second-level", "container": "chats", "sql": "SELECT * FROM c WHERE c.userId = 'u1'"},
    ]
    summary, _, err = run(emu, config_for(emu, queries), tmp_path)
    assert summary.failed == 0, err
    executions = read_table(store_location(tmp_path), "executions").set_index("query_name")
    assert executions.loc["prefix-key", "routing_observed"] == "targeted"
    assert executions.loc["prefix-key", "items"] == 160
    assert executions.loc["prefix-where", "routing_observed"] == "targeted"
    assert executions.loc["second-level", "routing_observed"] == "fan-out"
    assert not executions["routing_mismatch"].any()


def test_the_budget_stops_a_run(loaded, tmp_path: Path) -> None:
    queries = [{"name": f"q{i}", "container": "orders", "sql": "SELECT * FROM c WHERE c.n > 100"} for i in range(6)]
    summary, _, _ = run(loaded, config_for(loaded, queries, replay_settings={"budget_ru": 25}), tmp_path)
    executions = read_table(store_location(tmp_path), "executions")
    assert summary.ended_by == "budget" and summary.exit_code == 1
    assert 0 < len(executions) < 6
    spent = read_table(store_location(tmp_path), "requests")["request_charge"].sum()
    assert spent <= 25 + executions["total_ru"].max()  # at most the execution that crossed the line


def test_each_failure_is_one_line_and_one_row_and_the_run_goes_on(loaded, tmp_path: Path) -> None:
    queries = [
        {"name": "syntax", "container": "orders", "sql": "SELECT * FORM c"},
        {"name": "no-container", "container": "nope", "sql": "SELECT * FROM c"},
        {"name": "bad-key", "container": "orders", "sql": "SELECT * FROM c", "partition_key": ["a", "b"]},
        {"name": "fine", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c", "partition_key": "t1"},
    ]
    summary, out, err = run(loaded, config_for(loaded, queries), tmp_path)
    assert summary.exit_code == 1 and summary.failed == 3
    assert len(err) == 3 and all(line.startswith("query '") for line in err)
    assert "SC1001" in err[0] and "near 'FORM'" in err[0] and "(at 9-13)" in err[0]
    assert "container 'nope' not found in database 'shop'" in err[1]
    assert "400" in err[2] and "Partition key" in err[2]
    executions = read_table(store_location(tmp_path), "executions").set_index("query_name")
    assert list(executions["status"]) == ["error", "error", "error", "ok"]
    assert executions.loc["fine", "items"] == 1 and query_lines(out) == [
        line for line in out if line.startswith("fine:")
    ]


def test_wrong_key_and_unreachable_endpoint(loaded, tmp_path: Path) -> None:
    queries = [{"name": "q", "container": "orders", "sql": "SELECT * FROM c", "partition_key": "t1"}]
    wrong = "d3JvbmcgYnV0IHZhbGlkIGJhc2U2NCBrZXkgb2YgYW55IGxlbmd0aA=="
    summary = replay(
        config_for(loaded, queries),
        store=store_location(tmp_path / "a"),
        credential=wrong,
        progress=False,
        out=lambda _: None,
        err=(errors := []).append,
    )
    assert summary.exit_code == 1 and "401 unauthorized" in errors[0]
    down = config_for(loaded, queries, cosmos={"endpoint": "http://127.0.0.1:9/"})
    summary, _, err = run(loaded, down, tmp_path / "b")
    assert (
        summary.exit_code == 1
        and err == [err[0]]
        and err[0].startswith("account '127.0.0.1': cannot reach http://127.0.0.1:9/")
    )
    assert read_table(store_location(tmp_path / "b"), "executions")["error"].str.startswith("cannot reach").all()
    for path in (tmp_path / "a").rglob("*.parquet"):
        assert wrong.encode() not in path.read_bytes()


def test_a_storm_of_429s_is_recorded_not_fatal(make_emulator, tmp_path: Path) -> None:
    clock = ManualClock()  # the second never ends: the partition the load spent stays throttled
    emu = make_emulator(Engine(clock=clock))
    load_orders(emu, throughput=400, docs=300)  # ~2,000 RU of writes against a 400 RU/s budget
    CosmosClient(emu.url, credential=emu.key).get_database_client("shop").create_container(
        "other", PartitionKey("/tenantId")
    )
    queries = [
        {"name": "storm", "container": "orders", "sql": "SELECT * FROM c", "partition_key": "t1"},
        {"name": "calm", "container": "other", "sql": "SELECT * FROM c", "partition_key": "t1"},
    ]
    config = config_for(emu, queries, cosmos={"max_retry_attempts": 2, "max_retry_wait_s": 1})
    summary, _, err = run(emu, config, tmp_path)
    executions = read_table(store_location(tmp_path), "executions").set_index("query_name")
    requests = read_table(store_location(tmp_path), "requests")
    refused = requests[(requests["query_name"] == "storm") & (requests["status"] == 429)]
    assert executions.loc["storm", "status"] == "error" and executions.loc["storm", "throttled"] == len(refused) >= 3
    assert executions.loc["storm", "retry_after_ms_total"] == refused["retry_after_ms"].sum() > 0
    assert "429 throttled" in executions.loc["storm", "error"] and summary.exit_code == 1
    assert executions.loc["calm", "status"] == "ok"  # the run went on
    assert err == ["query 'storm': " + executions.loc["storm", "error"]]
    assert (summary.failed, summary.throttled_out) == (1, 1)  # failed only for staying throttled


def test_a_failure_that_is_not_a_throttle_is_not_counted_as_one(loaded, tmp_path: Path) -> None:
    queries = [{"name": "bad", "container": "nope", "sql": "SELECT * FROM c"}]
    summary, _, _ = run(loaded, config_for(loaded, queries), tmp_path)
    assert (summary.failed, summary.throttled_out) == (1, 0)


def test_a_stop_signal_finishes_the_request_and_keeps_what_was_collected(loaded, tmp_path: Path) -> None:
    stop = threading.Event()
    queries = [
        {"name": f"q{i}", "container": "orders", "sql": "SELECT * FROM c", "max_item_count": 5} for i in range(3)
    ]
    lines: list[str] = []

    def out(line: str) -> None:
        lines.append(line)
        stop.set()  # after the first query completes

    summary = replay(
        config_for(loaded, queries),
        store=store_location(tmp_path),
        credential=loaded.key,
        progress=False,
        out=out,
        err=lines.append,
        stop=stop,
    )
    assert summary.ended_by == "signal" and summary.exit_code == 0
    executions = read_table(store_location(tmp_path), "executions")
    assert list(executions["query_name"]) == ["q0"] and executions["items"].item() == 200
