"""The sampled read of a live container through the real SDK against the emulator: proportional across
physical partitions and over each one's `_ts` span, its bias stated, stopped by the cap or the RU budget,
written as JSONL, failing in one line."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from advisor.measure import Workload
from advisor.pipeline import advise_documents
from collectors.config import Account, parse_config
from collectors.sample import SampleError, clean_document, sample_container
from collectors.sample.plan import allot, window_edges, windows_for
from emulator.engine.facade import Context
from tests.conftest import ManualClock


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
    true = true_range_counts(emulator)
    assert report.range_documents == tuple(true)  # the windows' counts: every range was counted
    assert all(abs(n - 12 * ranges * t / 300) <= 2 for n, t in zip(report.per_partition, true, strict=True))
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


def _response_charges(container, page_size: int) -> list[float]:
    """The charges of every request the sample may send: pages, and the range-wide aggregates (the
    costliest: they examine the whole range)."""
    charges: list[float] = []

    def hook(headers, _) -> None:
        charges.append(float(headers["x-ms-request-charge"]))

    for feed_range in container.read_feed_ranges():
        for page in container.query_items(
            "SELECT * FROM c", feed_range=feed_range, max_item_count=page_size, response_hook=hook
        ).by_page():
            list(page)
        for sql in ("SELECT VALUE MIN(c._ts) FROM c", "SELECT VALUE MAX(c._ts) FROM c"):
            list(container.query_items(sql, feed_range=feed_range, response_hook=hook))
    return charges


def test_the_ru_budget_stops_the_read_within_one_page(emulator, tmp_path: Path) -> None:
    load_orders(emulator)
    account = account_for(emulator.url)
    largest = max(
        _response_charges(
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
    for budget in (20.0, 30.0, 45.0):  # the metadata reads cost about 7 RU; reading all about 60 without a plan
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
        assert report.request_charge <= budget + largest
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
    assert (
        allot(10, [1, 1, 1]) == [4, 3, 3]
        and allot(10, [0, 0]) == [0, 0]
        and allot(300, [600, 200, 200]) == [180, 60, 60]
    )
    assert sum(allot(7, [0.3, 2.9, 1.1, 0.0])) == 7 and allot(7, [0.3, 2.9, 1.1, 0.0])[3] == 0
    assert window_edges(100, 179, 4) == [100, 120, 140, 160, 180] and window_edges(5, 6, 8) == [5, 6, 7]
    assert (windows_for(0, 8), windows_for(3, 8), windows_for(300, 8)) == (1, 3, 8)
    assert clean_document({"id": "a", "_rid": "r", "_self": "s", "_etag": "e", "_attachments": "x", "_ts": 1}) == {
        "id": "a",
        "_ts": 1,
    }


def true_range_counts(emu, database: str = "shop", container: str = "orders") -> list[int]:
    """Each physical partition's documents straight from the engine, in EPK order (the feed ranges' order)."""
    ranges = emu.engine.databases[database].containers[container].ranges
    return [sum(len(lp.items) for lp in r.logical.values()) for r in sorted(ranges, key=lambda r: r.min)]


HOT = "acme"


def load_skewed(emu, clock: ManualClock, docs: int = 3_000) -> None:
    """18,000 RU/s (3 physical partitions), written a minute apart: for the first half 30 small tenants,
    then `HOT` onboards and takes 80% of the writes, so it holds 40% of the documents, all of them late,
    and its partition holds most of the documents."""
    db = CosmosClient(emu.url, credential=emu.key).create_database_if_not_exists("shop")
    db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=18_000)
    emu.engine.throttle.enabled = False
    for i in range(docs):
        tenant = HOT if i >= docs // 2 and i % 5 else f"t{i % 30}"
        clock.advance(60)
        emu.engine.create_item(Context(), "shop", "orders", {"id": f"o{i}", "tenantId": tenant, "n": i}, [tenant])
    emu.engine.throttle.enabled = True


def test_the_sample_is_proportional_across_ranges_and_over_time(make_emulator, tmp_path: Path) -> None:
    clock = ManualClock()
    emu = make_emulator(clock=clock)
    load_skewed(emu, clock)
    true = true_range_counts(emu)
    assert len(true) == 3 and max(true) / sum(true) > 0.5  # one range holds most documents
    out = tmp_path / "s.jsonl"
    budget = 5_000.0
    report = sample_container(
        account_for(emu.url), "shop", "orders", max_documents=300, budget_ru=budget, out_path=out,
        credential=emu.key,
    )  # fmt: skip
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert report.documents == len(docs) == 300 and report.stopped_by == "max_documents"
    assert report.request_charge <= budget
    for sampled, documents in zip(report.per_partition, true, strict=True):  # across ranges: within 2 pts
        assert abs(sampled / 300 - documents / sum(true)) <= 0.02
    hot = sum(d["tenantId"] == HOT for d in docs) / len(docs)
    assert abs(hot - 0.40) <= 0.04  # not biased to the early writes (a first-pages read has none of them)
    stamps = sorted(d["_ts"] for d in docs)
    written = 1_800_000_000 + 60 * 3_000
    assert stamps[-1] > written - 7 * 3_600 and stamps[0] < 1_800_000_000 + 7 * 3_600  # in each end's window (6.25 h)
    lines = report.bias_lines()
    shares = ", ".join(
        f"#{i} {s / 300:.1%} vs {d / sum(true):.1%}"
        for i, (s, d) in enumerate(zip(report.per_partition, true, strict=True))
    )
    assert lines[0].startswith(f"sample vs documents per feed range: {shares} (largest gap ")
    assert lines[1].startswith("_ts windows: 24 of 24 holding documents are in the sample; the documents' _ts ")
    tv = report.total_variation()
    assert (
        tv is not None
        and tv < 0.03
        and lines[2] == f"total variation over feed ranges x _ts windows: {tv:.1%} (0% is proportional)"
    )
    assert lines[-1].startswith("not measured: which documents of a window")
    # what the advisor makes of it: /tenantId's hottest partition and current hottest key as on every document
    stored = emu.engine.databases["shop"].containers["orders"].ranges
    every = [dict(item.doc) for r in stored for lp in r.logical.values() for item in lp.items.values()]
    on_sample, on_all = (
        advise_documents(d, Workload(time_property="_ts"), container="orders", candidates=[("/tenantId", None)], proposals=0)
        .verdicts[0]
        .measure
        for d in (docs, every)
    )  # fmt: skip
    assert abs(on_sample.hottest_share - on_all.hottest_share) <= 0.03  # a first-pages sample: 0.33 vs 0.62
    assert abs(on_sample.recent_hottest_logical_share - on_all.recent_hottest_logical_share) <= 0.1  # it: 0.05 vs 0.8


def test_a_plan_cut_by_the_budget_is_stated(make_emulator, tmp_path: Path) -> None:
    clock = ManualClock()
    emu = make_emulator(clock=clock)
    load_skewed(emu, clock, docs=600)
    report = sample_container(
        account_for(emu.url), "shop", "orders", max_documents=60, budget_ru=40, out_path=tmp_path / "s.jsonl",
        credential=emu.key,
    )  # fmt: skip
    assert report.documents > 0 and report.request_charge <= 40 + 30  # one aggregate past it at most
    lines = report.bias_lines()
    assert any("not counted by _ts window within the plan's share of the budget" in line for line in lines)
    assert lines[0].startswith("sample vs documents per feed range: #0 ")
