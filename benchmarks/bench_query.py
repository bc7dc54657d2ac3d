"""SQL queries through the real azure-cosmos SDK: single-partition queries/s, and fan-outs over a big container.

1. Single-partition `SELECT * FROM c WHERE c.id = @id` with a partition key: emulator vs the null server
   (the SDK's own floor), each in its own process as in bench_point_ops.py.
2. 500,000 items of 1 KB on 10 physical partitions (query_server.py, populated in-process): a fan-out
   `SELECT VALUE COUNT(1)`, a selective filtered fan-out, a filtered count and a filter matching nothing
   (the SDK's and HTTP's own cost of a fan-out), each checked against a plain-Python loop over the same
   dicts, timed in this run (the baseline). Each query's first run is shown apart: it scans and asks
   for the partitions' indexes of the paths it probes, which the server builds while idle; then best of 3.
   The server's memory comes from its /proc/<pid>/status: RSS over its idle RSS, as a multiple of the raw
   JSON size. Also `ORDER BY id OFFSET 100 LIMIT 10` against a heap (`heapq.nsmallest`), the first
   filtered fan-out after writes to every physical partition against the same query warm (best of 3
   rounds each), and the server's worst garbage-collection pause while it served all of this (its heap
   settled as `ruscope emulator` does).
Targets: the fan-out count within 3x of the loop; peak memory at most 3x the raw JSON size.
Targets, set when the emulator was hardened: the filtered fan-out and ORDER BY OFFSET/LIMIT within 3x of the loop; the first query
after a write within 1.2x of warm; the worst GC pause at most 150 ms.
3. The change feed (issue 25): 100,000 items on 10 physical partitions read from the beginning through
   `query_items_change_feed` (the SDK's default page size), against a plain loop over the same items: the
   SDK's read feed (`read_all_items`, the same pages, HTTP and parsing without the change feed's
   positions; the read feed answers a range's items in one page, the change feed 100 per page, so also
   the read feed at 100 per page), and a plain-Python loop doing the unavoidable work, each item's JSON
   encoded and decoded. Target: the change feed within 3x of the read feed (its own page size).
Run: .venv/bin/python benchmarks/bench_query.py [--ops 2000] [--items 500000] [--feed-items 100000]
"""

from __future__ import annotations

import argparse
import heapq
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError
from bench_point_ops import KEY, ROOT, free_port, start
from query_server import CONTAINER, DATABASE, make_doc

POINT_QUERY = "SELECT * FROM c WHERE c.id = @id"
COUNT_TARGET = 3.0
LOOP_TARGET = 3.0  # a filtered fan-out and ORDER BY OFFSET/LIMIT within 3x of the loop
AFTER_WRITE_TARGET = 1.2  # the first query after a write within 1.2x of warm
GC_PAUSE_TARGET_MS = 150.0  # the worst pause under a 500k-document load
MEMORY_TARGET = 3.0
CHANGE_FEED_TARGET = 3.0  # a change feed read from the beginning within 3x of the plain read feed
CHANGE_FEED_PAGE = 100  # the emulator's change feed page without x-ms-max-item-count (W29)
BUILD_PAUSE_S = 3.0  # after a query's first run: the server builds the indexes it asked for (~1.2 s here)
MB = 1024 * 1024


@dataclass(frozen=True)
class FanOut:
    """A cross-partition query (`{a}` stands for its alias) and the plain-Python loop with the same answer."""

    name: str
    sql: str
    loop: Callable[[list[dict[str, Any]]], Any]
    target: float | None


FAN_OUTS = (  # {a}: the alias, new in every run, so no run is answered from the emulator's result cache
    FanOut("count", "SELECT VALUE COUNT(1) FROM {a}", lambda docs: sum(1 for d in docs), COUNT_TARGET),
    FanOut(
        "filter",
        "SELECT * FROM {a} WHERE {a}.category = 'cat7' AND {a}.n > 990",
        lambda docs: [d for d in docs if d["category"] == "cat7" and d["n"] > 990],
        LOOP_TARGET,
    ),
    FanOut(
        "count where",
        "SELECT VALUE COUNT(1) FROM {a} WHERE {a}.category = 'cat7'",
        lambda docs: sum(1 for d in docs if d["category"] == "cat7"),
        None,
    ),
    FanOut(  # matches nothing: with the index, the SDK's and HTTP's own cost of a 10-range fan-out
        "no match",
        "SELECT * FROM {a} WHERE {a}.category = 'none'",
        lambda docs: [d for d in docs if d["category"] == "none"],
        None,
    ),
    FanOut(
        "order page",
        "SELECT * FROM {a} ORDER BY {a}.id OFFSET 100 LIMIT 10",
        lambda docs: heapq.nsmallest(110, docs, key=lambda d: d["id"])[100:],
        LOOP_TARGET,
    ),
)


@dataclass
class Probe:
    """A raw_response_hook: what one query cost and which partition key ranges answered it."""

    requests: int = 0
    charge: float = 0.0
    ranges: set[str] = field(default_factory=set)

    def __call__(self, response: Any) -> None:
        headers = response.http_response.headers
        self.requests += 1
        self.charge += float(headers.get("x-ms-request-charge") or 0)
        if "/docs" in response.http_request.url and headers.get("x-ms-documentdb-partitionkeyrangeid"):
            self.ranges.add(headers["x-ms-documentdb-partitionkeyrangeid"])

    def reset(self) -> None:
        self.requests, self.charge, self.ranges = 0, 0.0, set()


@dataclass(frozen=True)
class Row:
    """One fan-out's figures: emulator seconds (fresh and from its result cache), loop seconds (in creation
    order, the baseline, and grouped by partition key, the order the emulator reads them), checks."""

    fan_out: FanOut
    first_s: float  # the first run: it builds the partitions' indexes for the paths it probes
    emu_s: float
    cached_s: float
    loop_s: float
    loop_pk_s: float
    verdict: str
    probe: Probe


def best_of(runs: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of `runs` calls, and the last call's result."""
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def _refusal(exc: CosmosHttpResponseError) -> str:
    return f"{exc.status_code}: {str(exc.message).splitlines()[0][:100]}"


# -- 1. single-partition queries per second ----------------------------------------------------


def point_query_seconds(url: str, ops: int, setup: bool) -> float | str:
    """Seconds for `ops` single-partition queries, or why the server refused them."""
    client = CosmosClient(url, credential=KEY, consistency_level="Eventual")
    if setup:
        db = client.create_database_if_not_exists("bench")
        container = db.create_container_if_not_exists("bench", PartitionKey("/pk"), offer_throughput=10_000)
        container.upsert_item({"id": "item", "pk": "p", "payload": "x" * 900})
    else:
        container = client.get_database_client("bench").get_container_client("bench")
    params: list[dict[str, Any]] = [{"name": "@id", "value": "item"}]

    def query() -> list[dict[str, Any]]:
        return list(container.query_items(POINT_QUERY, parameters=params, partition_key="p"))

    try:
        if [d["id"] for d in query()] != ["item"]:
            return "wrong answer"
        for _ in range(200):  # warm-up: connection, caches
            query()
    except CosmosHttpResponseError as exc:
        return _refusal(exc)
    started = time.perf_counter()
    for _ in range(ops):
        query()
    return time.perf_counter() - started


def single_partition(ops: int) -> None:
    """Null server first, then the emulator, one process each; print both rates and the time ratio."""
    results: dict[str, float | str] = {}
    for name, command in (
        ("null", [sys.executable, "benchmarks/null_server.py"]),
        ("emulator", [sys.executable, "-m", "emulator", "--no-throttling", "--monitor-port", "0", "--port"]),
    ):
        port = free_port()
        proc = start(command + [str(port)], port)
        try:
            results[name] = point_query_seconds(f"http://127.0.0.1:{port}/", ops, name == "emulator")
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    null_s, emu_s = results["null"], results["emulator"]
    print(f"\nsingle-partition query ({ops} x `{POINT_QUERY}`, partition_key='p')")
    print(f"{'null ops/s':>11} {'emulator ops/s':>15} {'time ratio':>11}")
    if isinstance(null_s, str) or isinstance(emu_s, str):
        print(f"  not measured: null {null_s}, emulator {emu_s}")
        return
    print(f"{ops / null_s:>11.0f} {ops / emu_s:>15.0f} {emu_s / null_s:>11.2f}")


# -- 2. fan-outs over a populated container ------------------------------------------------------


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak RSS) of a process, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {k: int(fields[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}


def reset_peak(pid: int) -> None:
    """Start VmHWM again from the current RSS, so the next peak is the queries' own."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


class Server:
    """query_server.py as a child process, stepped through its stdin/stdout handshake."""

    def __init__(self, items: int) -> None:
        command = [sys.executable, "benchmarks/query_server.py", "--items", str(items)]
        self.proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def expect(self, word: str) -> list[str]:
        line = self.proc.stdout.readline().split()  # type: ignore[union-attr]
        if not line or line[0] != word:
            raise RuntimeError(f"query_server said {line!r}, expected {word!r} (exit code {self.proc.poll()})")
        return line[1:]

    def go(self) -> None:
        self.proc.stdin.write("go\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def stop(self) -> list[str]:
        """Close its stdin; its last line's words ("gc MAX COUNT SUM" without the "gc"), or [] if none."""
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            last = self.expect("gc")
            self.proc.wait(timeout=30)
            return last
        except (subprocess.TimeoutExpired, RuntimeError):
            self.proc.kill()
            return []


def check(got: list[Any], expected: Any) -> str:
    """'ok' when the emulator's answer equals the loop's."""
    if isinstance(expected, list):
        same = sorted(d["id"] for d in got) == sorted(d["id"] for d in expected)
        return "ok" if same else f"WRONG: {len(got)} rows, expected {len(expected)}"
    return "ok" if got == [expected] else f"WRONG: {got[:3]}, expected [{expected}]"


def run_fan_outs(url: str, docs: list[dict[str, Any]], runs: int) -> list[Row]:
    """Each fan-out timed through the SDK and as a loop; requests, pkranges and RU are its last run's.

    The emulator caches a range's result until the range changes (so paging costs the rows once); each
    timed run uses a fresh alias to miss that cache, and `cached_s` repeats the last text to hit it."""
    probe = Probe()
    client = CosmosClient(url, credential=KEY, consistency_level="Eventual", raw_response_hook=probe)
    container = client.get_database_client(DATABASE).get_container_client(CONTAINER)
    aliases = iter(f"c{i}" for i in range(1_000_000))
    by_pk = sorted(docs, key=lambda d: d["pk"])  # same dicts; a scattered walk through memory, like the emulator's
    rows = []
    for fan_out in FAN_OUTS:
        loop_s, expected = best_of(runs, lambda f=fan_out: f.loop(docs))
        loop_pk_s, _ = best_of(runs, lambda f=fan_out: f.loop(by_pk))

        def query(sql: str) -> list[Any]:
            probe.reset()
            return list(container.query_items(sql, enable_cross_partition_query=True))

        try:
            first_s, _ = best_of(1, lambda f=fan_out: query(f.sql.format(a=next(aliases))))
            time.sleep(BUILD_PAUSE_S)  # the server builds the indexes the first run asked for, while idle
            emu_s, got = best_of(runs, lambda f=fan_out: query(f.sql.format(a=next(aliases))))
            last_run = Probe(probe.requests, probe.charge, set(probe.ranges))
            query(fan_out.sql.format(a="c"))  # computes every range's result and caches it
            cached_s, _ = best_of(1, lambda f=fan_out: query(f.sql.format(a="c")))
            verdict = check(got, expected)
        except CosmosHttpResponseError as exc:
            first_s = emu_s = cached_s = float("nan")
            last_run, verdict = Probe(), f"refused {_refusal(exc)}"
        rows.append(Row(fan_out, first_s, emu_s, cached_s, loop_s, loop_pk_s, verdict, last_run))
    return rows


def after_write(url: str, items: int, runs: int) -> tuple[float, float]:
    """The filtered fan-out warm (best of `runs`, new aliases) and its first run after upserts into every
    physical partition (200 documents' tenants), best of as many rounds of writes and query, in seconds."""
    client = CosmosClient(url, credential=KEY, consistency_level="Eventual")
    container = client.get_database_client(DATABASE).get_container_client(CONTAINER)
    sql = FAN_OUTS[1].sql
    aliases = iter(f"w{i}" for i in range(1_000_000))

    def query() -> list[Any]:
        return list(container.query_items(sql.format(a=next(aliases)), enable_cross_partition_query=True))

    query()
    warm_s, _ = best_of(runs, query)
    after: list[float] = []
    for _ in range(runs):
        for i in range(0, items, max(1, items // 200)):  # 200 documents' tenants: every range gets a write
            doc = make_doc(i)
            container.upsert_item({**doc, "n": doc["n"]})
        started = time.perf_counter()
        query()
        after.append(time.perf_counter() - started)
    return warm_s, min(after)


def fan_outs(items: int, runs: int) -> None:
    """Populate the server, time the fan-outs against the loops, and print both tables."""
    server = Server(items)
    try:
        server.expect("idle")
        idle = memory(server.proc.pid)
        server.go()
        started = time.perf_counter()
        docs = [make_doc(i) for i in range(items)]  # meanwhile, on the other core
        raw = sum(len(orjson.dumps(d)) for d in docs)
        url, stored = server.expect("ready")
        populate_s = time.perf_counter() - started
        populated = memory(server.proc.pid)
        reset_peak(server.proc.pid)
        rows = run_fan_outs(url, docs, runs)
        warm_s, written_s = after_write(url, items, runs)
        after = memory(server.proc.pid)
    finally:
        gc_words = server.stop()
    print(
        f"\nfan-out over {items:,} items of ~1 KB on 10 physical partitions, best of {runs}; "
        f"population {populate_s:.1f} s ({items / populate_s:,.0f} items/s, in-process)"
    )
    print(
        f"{'query':<12} {'first s':>8} {'emulator s':>11} {'loop s':>9} {'ratio':>8} {'target':>7}  {'verdict':<7} "
        f"{'cached s':>9} {'pk-loop s':>9} {'requests':>8} {'pkranges':>8} {'RU':>9}  answer"
    )
    for row in rows:
        ratio, target = row.emu_s / row.loop_s, row.fan_out.target
        verdict = "-" if target is None or ratio != ratio else ("ok" if ratio <= target else "MISS")
        print(
            f"{row.fan_out.name:<12} {row.first_s:>8.3f} {row.emu_s:>11.3f} {row.loop_s:>9.4f} {ratio:>8.1f} "
            f"{f'<= {target:g}' if target else '-':>7}  {verdict:<7} {row.cached_s:>9.3f} {row.loop_pk_s:>9.4f} "
            f"{row.probe.requests:>8} {len(row.probe.ranges):>8} {row.probe.charge:>9.1f}  {row.verdict}"
        )
    print(
        f"  first s: the first run (it scans, and asks for each partition's index of the paths it probes); emulator s: best of "
        f"the runs {BUILD_PAUSE_S:g} s after it\n  (the server builds the indexes while idle), each with a new alias "
        "(no result-cache hits); loop s: the baseline, in "
        "creation order; cached s: the same text again;\n  pk-loop s: the loop over the same dicts grouped by "
        "partition key (the emulator's reading order); requests, pkranges, RU: one run, via raw_response_hook"
    )
    ratio = written_s / warm_s
    verdict = "ok" if ratio <= AFTER_WRITE_TARGET else "MISS"
    print(
        f"\nfirst filtered fan-out after writes to every partition (best of {runs} rounds): {written_s:.3f} s "
        f"against {warm_s:.3f} s warm "
        f"= {ratio:.2f}x (target <= {AFTER_WRITE_TARGET:g}x): {verdict}"
    )
    if gc_words:
        worst, count, total = float(gc_words[0]), int(gc_words[1]), float(gc_words[2])
        verdict = "ok" if worst <= GC_PAUSE_TARGET_MS else "MISS"
        print(
            f"server GC while serving: worst pause {worst:.1f} ms (target <= {GC_PAUSE_TARGET_MS:g} ms): {verdict}; "
            f"{count} collections, {total:.0f} ms in all"
        )
    print_memory(raw, int(stored), idle, populated, after)


def print_memory(raw: int, stored: int, idle: dict[str, int], populated: dict[str, int], after: dict[str, int]) -> None:
    print(
        f"\nserver memory; raw JSON {raw / MB:,.0f} MB (stored with system properties: {stored / MB:,.0f} MB), "
        f"idle RSS {idle['VmRSS'] / MB:,.0f} MB"
    )
    print(f"{'phase':<28} {'RSS MB':>8} {'over idle MB':>13} {'x raw JSON':>11} {'target':>7}  verdict")
    phases = (
        ("after population", populated["VmRSS"]),
        ("peak during population", populated["VmHWM"]),
        ("peak during queries", after["VmHWM"]),
    )
    for name, rss in phases:
        over = rss - idle["VmRSS"]
        ratio = over / raw
        verdict = "ok" if ratio <= MEMORY_TARGET else "MISS"
        print(f"{name:<28} {rss / MB:>8,.0f} {over / MB:>13,.0f} {ratio:>11.2f} {'<= 3':>7}  {verdict}")


# -- 3. the change feed -------------------------------------------------------------------------


def change_feed(items: int, runs: int) -> None:
    """The change feed from the beginning against the read feed of the same items, and the JSON loop."""
    server = Server(items)
    try:
        server.expect("idle")
        server.go()
        docs = [make_doc(i) for i in range(items)]
        url, _ = server.expect("ready")
        probe = Probe()
        client = CosmosClient(url, credential=KEY, consistency_level="Eventual", raw_response_hook=probe)
        container = client.get_database_client(DATABASE).get_container_client(CONTAINER)

        def changes() -> list[dict[str, Any]]:
            probe.reset()
            return list(container.query_items_change_feed(start_time="Beginning"))

        def read_feed() -> list[dict[str, Any]]:
            return list(container.read_all_items())

        def read_feed_paged() -> list[dict[str, Any]]:  # the change feed's page size: as many requests
            return list(container.read_all_items(max_item_count=CHANGE_FEED_PAGE))

        feed_s, got = best_of(runs, changes)
        feed_probe = Probe(probe.requests, probe.charge, set(probe.ranges))
        plain_s, plain = best_of(runs, read_feed)
        paged_s, _ = best_of(runs, read_feed_paged)
        json_s, _ = best_of(runs, lambda: [json.loads(orjson.dumps(d)) for d in docs])
    finally:
        server.stop()
    verdict = "ok" if sorted(d["id"] for d in got) == sorted(d["id"] for d in docs) else f"WRONG: {len(got)} items"
    ratio = feed_s / plain_s
    target = "ok" if ratio <= CHANGE_FEED_TARGET else "MISS"
    print(f"\nchange feed from the beginning over {items:,} items of ~1 KB on 10 physical partitions, best of {runs}")
    print(f"{'read':<28} {'s':>8} {'items/s':>10} {'requests':>9} {'RU':>10}  answer")
    print(
        f"{'change feed':<28} {feed_s:>8.3f} {items / feed_s:>10,.0f} {feed_probe.requests:>9} {feed_probe.charge:>10.1f}  {verdict}"
    )
    print(f"{'read feed (read_all_items)':<28} {plain_s:>8.3f} {len(plain) / plain_s:>10,.0f}")
    print(f"{f'read feed, {CHANGE_FEED_PAGE} per page':<28} {paged_s:>8.3f} {len(plain) / paged_s:>10,.0f}")
    print(f"{'JSON loop (encode, decode)':<28} {json_s:>8.3f} {items / json_s:>10,.0f}")
    print(
        f"change feed / read feed = {ratio:.2f}x (target <= {CHANGE_FEED_TARGET:g}x): {target}; "
        f"change feed / JSON loop = {feed_s / json_s:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--items", type=int, default=500_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--feed-items", type=int, default=100_000)
    parser.add_argument("--only", choices=("queries", "change-feed"), help="run one part")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined] - in order with the server's stderr
    if args.only != "change-feed":
        single_partition(args.ops)
        fan_outs(args.items, args.runs)
    if args.only != "queries":
        change_feed(args.feed_items, args.runs)


if __name__ == "__main__":
    main()
