"""The sampled read of a live container through the real SDK against the emulator: spread over physical
partitions, stopped by the cap or the RU budget, written as JSONL, failing in one line."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from collectors.config import Account, parse_config
from collectors.sample import SampleError, clean_document, range_quotas, sample_container
from emulator.engine import Context


def account_for(url: str) -> Account:
    return parse_config({"cosmos": {"endpoint": url, "database": "shop"}}, Path("t.toml")).account()


def load_orders(emu, *, throughput: int = 30_000, docs: int = 300) -> None:
    db = CosmosClient(emu.url, credential=emu.key).create_database_if_not_exists("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=throughput)
    emu.engine.throttle.enabled = False
    for i in range(docs):
        doc = {"id": f"o{i}", "tenantId": f"t{i % 30}", "n": i, "note": "x" * 200}
        emu.engine.create_item(Context(), "shop", "orders", doc, [f"t{i % 30}"])
    emu.engine.throttle.enabled = True


def physical_partitions(emu) -> int:
    client = CosmosClient(emu.url, credential=emu.key)
    return len(list(client.get_database_client("shop").get_container_client("orders").read_feed_ranges()))


def test_every_physical_partition_is_sampled_and_the_jsonl_round_trips(emulator, tmp_path: Path) -> None:
    load_orders(emulator)
    ranges = physical_partitions(emulator)
    assert ranges >= 3
    out = tmp_path / "sample.jsonl"
    report = sample_container(
        account_for(emulator.url),
        "shop",
        "orders",
        max_documents=12 * ranges,
        budget_ru=10_000,
        out_path=out,
        page_size=10,
        credential=emulator.key,
    )
    docs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert report.documents == len(docs) == 12 * ranges
    assert (report.partitions_covered, report.partitions, report.stopped_by) == (ranges, ranges, "max_documents")
    assert report.request_charge > 0
    assert len({d["id"] for d in docs}) == 12 * ranges
    assert all("_rid" not in d and "_etag" not in d and "_self" not in d and "_ts" in d for d in docs)
    original = {f"o{i}": {"tenantId": f"t{i % 30}", "n": i, "note": "x" * 200} for i in range(300)}
    assert all({k: d[k] for k in ("tenantId", "n", "note")} == original[d["id"]] for d in docs)
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_small_container_is_read_to_its_end(emulator, tmp_path: Path) -> None:
    load_orders(emulator, docs=25)
    report = sample_container(
        account_for(emulator.url),
        "shop",
        "orders",
        max_documents=1_000,
        budget_ru=10_000,
        out_path=tmp_path / "s.jsonl",
        page_size=7,
        credential=emulator.key,
    )
    assert (report.documents, report.stopped_by) == (25, "end")


def test_the_ru_budget_stops_the_read_within_one_page(emulator, tmp_path: Path) -> None:
    load_orders(emulator)
    budget = 12.0
    report = sample_container(
        account_for(emulator.url),
        "shop",
        "orders",
        max_documents=10_000,
        budget_ru=budget,
        out_path=tmp_path / "s.jsonl",
        page_size=5,
        credential=emulator.key,
    )
    assert report.stopped_by == "budget"
    assert 0 < report.documents < 300
    full = sample_container(
        account_for(emulator.url),
        "shop",
        "orders",
        max_documents=10_000,
        budget_ru=100_000,
        out_path=tmp_path / "all.jsonl",
        page_size=5,
        credential=emulator.key,
    )
    page_ru = full.request_charge / (300 / 5)  # an upper bound of one page, metadata reads included
    assert report.request_charge <= budget + 2 * page_ru
    assert full.documents == 300 and full.request_charge > budget


def test_a_wrong_key_is_one_line(emulator, tmp_path: Path) -> None:
    load_orders(emulator, docs=5)
    wrong = base64.b64encode(b"not the key" * 6).decode()
    with pytest.raises(SampleError) as caught:
        sample_container(account_for(emulator.url), "shop", "orders", out_path=tmp_path / "s.jsonl", credential=wrong)
    assert str(caught.value).startswith("401 unauthorized") and "\n" not in str(caught.value)
    assert not (tmp_path / "s.jsonl").exists()


def test_an_unreachable_endpoint_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    with pytest.raises(SampleError) as caught:
        sample_container(account_for(url), "shop", "orders", out_path=tmp_path / "s.jsonl", credential="a2V5")
    assert not (tmp_path / "s.jsonl").exists()
    assert str(caught.value).startswith(f"cannot reach {url}") and "\n" not in str(caught.value)


def test_a_missing_container_is_named(emulator, tmp_path: Path) -> None:
    CosmosClient(emulator.url, credential=emulator.key).create_database("shop")
    with pytest.raises(SampleError, match="container 'orders' not found in database 'shop'"):
        sample_container(
            account_for(emulator.url), "shop", "orders", out_path=tmp_path / "s.jsonl", credential=emulator.key
        )


def test_pure_helpers() -> None:
    assert range_quotas(10, 3) == [4, 3, 3]
    assert clean_document({"id": "a", "_rid": "r", "_self": "s", "_etag": "e", "_attachments": "x", "_ts": 1}) == {
        "id": "a",
        "_ts": 1,
    }
