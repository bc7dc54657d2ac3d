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
from collectors.sample import SampleError, clean_document, page_size_for, sample_container
from emulator.engine.facade import Context


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
    assert max(report.per_partition) - min(report.per_partition) <= 10  # even shares, within one page
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


def _page_charges(container, page_size: int) -> list[float]:
    charges: list[float] = []
    for feed_range in container.read_feed_ranges():
        pages = container.query_items(
            "SELECT * FROM c",
            feed_range=feed_range,
            max_item_count=page_size,
            response_hook=lambda headers, _: charges.append(float(headers["x-ms-request-charge"])),
        ).by_page()
        for page in pages:
            list(page)
    return charges


def test_the_ru_budget_stops_the_read_within_one_page(emulator, tmp_path: Path) -> None:
    load_orders(emulator)
    account = account_for(emulator.url)
    page = max(
        _page_charges(
            CosmosClient(emulator.url, credential=emulator.key)
            .get_database_client("shop")
            .get_container_client("orders"),
            5,
        )
    )
    full = sample_container(
        account,
        "shop",
        "orders",
        max_documents=10_000,
        budget_ru=1_000,
        out_path=tmp_path / "all.jsonl",
        page_size=5,
        credential=emulator.key,
    )
    assert (full.documents, full.stopped_by) == (300, "end")
    for budget in (8.0, 15.0, full.request_charge / 2):
        report = sample_container(
            account,
            "shop",
            "orders",
            max_documents=10_000,
            budget_ru=budget,
            out_path=tmp_path / "s.jsonl",
            page_size=5,
            credential=emulator.key,
        )
        assert report.stopped_by == "budget" and 0 < report.documents < 300
        assert report.request_charge <= budget + page
        assert len((tmp_path / "s.jsonl").read_text().splitlines()) == report.documents


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
    assert (page_size_for(10, 3, 100), page_size_for(10_000, 5, 100), page_size_for(1, 5, 100)) == (4, 100, 1)
    assert clean_document({"id": "a", "_rid": "r", "_self": "s", "_etag": "e", "_attachments": "x", "_ts": 1}) == {
        "id": "a",
        "_ts": 1,
    }
