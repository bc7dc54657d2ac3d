"""The storage collector through the real SDK against the emulator: per-pkrange storage equals what the
engine holds, the largest logical keys come first, a split shows its lineage, the rows land in the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from collectors.config import Config, parse_config
from collectors.registry import Options, collector, run_collector
from collectors.storage import parse_quota
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from store import read_table, store_location


def shop_config(emu: RunningEmulator, **account: object) -> Config:
    if account:
        entry = {"name": "eu-1", "endpoint": emu.url, "key_env": "EU_1_KEY", **account}
        return parse_config({"accounts": [entry]}, Path("storage.toml"))
    return parse_config({"cosmos": {"endpoint": emu.url, "database": "shop"}}, Path("storage.toml"))


def load_orders(emu: RunningEmulator, throughput: int = 18_000) -> None:
    """60 orders over 6 tenants through the SDK; tenant t0's documents are ten times larger."""
    orders = (
        CosmosClient(emu.url, credential=emu.key)
        .create_database("shop")
        .create_container("orders", PartitionKey("/tenantId"), offer_throughput=throughput)
    )
    for i in range(60):
        pad = "x" * (5_000 if i % 6 == 0 else 500)
        orders.create_item({"id": f"o{i}", "tenantId": f"t{i % 6}", "pad": pad})


def collect(emu: RunningEmulator, store: Path, config: Config | None = None) -> tuple[int, list[str], list[str]]:
    out: list[str] = []
    err: list[str] = []
    summary = run_collector(
        collector("storage"),
        config or shop_config(emu),
        store=store_location(store),
        out=out.append,
        err=err.append,
        options=Options(credential=emu.key),
    )
    return summary.exit_code, out, err


def test_storage_per_pkrange_equals_what_was_written(emulator: RunningEmulator, tmp_path: Path) -> None:
    load_orders(emulator)
    code, out, err = collect(emulator, tmp_path)
    assert (code, err) == (0, [])
    ranges = emulator.engine.container("shop", "orders").ranges
    assert len(ranges) == 3
    partitions = read_table(store_location(tmp_path), "partitions").set_index("pkrange_id")
    assert sorted(partitions.index) == sorted(r.id for r in ranges)
    for rng in ranges:
        row = partitions.loc[rng.id]
        assert row["size_kb"] == -(-rng.size // 1024) and row["document_count"] == rng.docs
        assert row["sampled_distinct_keys"] == len(rng.logical) and row["parents"] == ""
    assert partitions["document_count"].sum() == 60
    assert set(partitions["throughput_ru"]) == {18_000.0} and set(partitions["throughput_share"]) == {6_000.0}
    total_kb = -(-sum(r.size for r in ranges) // 1024)
    assert set(partitions["usage_collection_kb"]) == {total_kb} and partitions["quota_collection_kb"].min() > total_kb
    assert set(partitions[["account", "database", "container"]].itertuples(index=False)) == {
        ("127.0.0.1", "shop", "orders")
    }
    assert out[0].startswith("orders: 3 partition(s), ") and "of 50 GB" in out[0] and 'largest key "t0"' in out[0]


def test_the_largest_logical_key_comes_first(emulator: RunningEmulator, tmp_path: Path) -> None:
    load_orders(emulator)
    collect(emulator, tmp_path)
    keys = read_table(store_location(tmp_path), "logical_keys")
    assert len(keys) == 6 and keys.sort_values("size_kb", ascending=False).iloc[0]["partition_key"] == '["t0"]'
    engine = {
        (rng.id, json.dumps(list(lp.key))): -(-lp.size // 1024)
        for rng in emulator.engine.container("shop", "orders").ranges
        for lp in rng.logical.values()
    }
    assert {(r.pkrange_id, r.partition_key): r.size_kb for r in keys.itertuples()} == engine
    for _, rows in keys.groupby("pkrange_id", sort=False):  # within a pkrange: largest first
        assert rows["size_kb"].tolist() == sorted(rows["size_kb"], reverse=True)


def test_a_split_container_shows_children_with_their_parents(emulator: RunningEmulator, tmp_path: Path) -> None:
    load_orders(emulator)
    container = CosmosClient(emulator.url, credential=emulator.key).get_database_client("shop")
    container.get_container_client("orders").replace_throughput(45_000)  # P = 5: two of three ranges split
    code, out, _ = collect(emulator, tmp_path)
    assert code == 0 and out[0].startswith("orders: 5 partition(s)")
    partitions = read_table(store_location(tmp_path), "partitions").set_index("pkrange_id")
    engine = {r.id: ",".join(r.parents) for r in emulator.engine.container("shop", "orders").ranges}
    assert partitions["parents"].to_dict() == engine
    bounds = {r.id: (r.min, r.max) for r in emulator.engine.container("shop", "orders").ranges}
    assert dict(zip(partitions.index, zip(partitions["min_epk"], partitions["max_epk"]))) == bounds
    assert sum(1 for parents in engine.values() if parents) == 4
    assert partitions["document_count"].sum() == 60 and set(partitions["throughput_share"]) == {9_000.0}


def test_every_container_of_every_database_and_an_unknown_database(
    emulator: RunningEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_orders(emulator, throughput=6_000)
    client = CosmosClient(emulator.url, credential=emulator.key)
    client.get_database_client("shop").create_container("carts", PartitionKey("/userId"))
    shared = client.create_database("shared", offer_throughput=4_000)
    shared.create_container("events", PartitionKey("/id")).create_item({"id": "e1"})
    monkeypatch.setenv("EU_1_KEY", emulator.key)
    config = shop_config(emulator, databases=["shop", "nope", "shared"])
    code, out, err = collect(emulator, tmp_path, config)
    assert code == 1 and err == ["database 'nope' not found in account 'eu-1'"]
    assert sorted(line.split(":")[0] for line in out) == ["shared/events", "shop/carts", "shop/orders"]
    partitions = read_table(store_location(tmp_path), "partitions")
    events = partitions[partitions["container"] == "events"]
    assert events["throughput_ru"].isna().all() and events["document_count"].sum() == 1  # shared throughput
    assert set(events["database_throughput_ru"]) == {4_000.0}  # the throughput unit it belongs to
    assert partitions[partitions["container"] != "events"]["database_throughput_ru"].isna().all()
    assert set(partitions["account"]) == {"eu-1"}


def test_an_account_that_is_down_is_one_line(tmp_path: Path) -> None:
    emu = start_in_thread(open_engine())
    url = emu.url
    emu.stop()
    config = parse_config({"cosmos": {"endpoint": url, "database": "shop"}}, Path("storage.toml"))
    code, out, err = collect(emu, tmp_path, config)
    assert code == 1 and out == [] and len(err) == 1 and err[0].startswith(f"account '127.0.0.1': cannot reach {url}")


def test_parse_quota_reads_pairs_in_any_order() -> None:
    assert parse_quota("documentsCount=-1;collectionSize=1408;bad;x=y;") == {
        "documentsCount": -1.0,
        "collectionSize": 1408.0,
    }
    assert parse_quota(None) == {}
