"""Does one pathological query stall everyone else?

The emulator runs in a subprocess (`python -m emulator --port N --data-dir D`, a fresh engine; D holds
only a metrics history of MONITOR_MINUTES minutes, written here, for the monitor cases). A second
client, in its own process, reads one item every 50 ms through the real SDK, from its own container (so
RU throttling of the query container never delays it), while this process sends each pathological query
in turn. For each
case it prints how the query was answered, its wall time, the reader's worst latency while it ran
(target: at most 300 ms) and the server's RSS after the case (target: back within 50 MB of its start).
The monitor cases (`MONITOR_CASES`) send heavy Azure Monitor requests to the stand-in through the real
`MetricsClient` / `LogsQueryClient` instead: the same reader, and RSS back within 100 MB of its start.

Run: .venv/bin/python benchmarks/bench_interference.py [--root CHECKOUT] [--only NAME ...]
(`--root` runs the emulator of another checkout, e.g. a `git worktree` of an older commit, for before/after.)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError
from azure.monitor.query import LogsBatchQuery, LogsQueryClient
from azure.monitor.querymetrics import MetricsClient
from bench_point_ops import free_port, wait_for

ROOT = Path(__file__).resolve().parent.parent
KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
READ_EVERY_S = 0.05
TARGET_WORST_MS = 300.0
TARGET_RSS_MB = 50.0
SCAN_DOCS = 10_000  # small documents the scanning cases (LIKE, RegexMatch, JOIN) run over


def _in_list(n: int) -> str:
    return "SELECT VALUE c.id FROM c WHERE c.n IN (" + ",".join(str(i) for i in range(n)) + ")"


def _or_chain(n: int) -> str:
    return "SELECT VALUE c.id FROM c WHERE " + " OR ".join(f"c.n = {i}" for i in range(n))


CASES: dict[str, str] = {
    "LIKE %foo%bar%foo%baz% (2.4 KB)": "SELECT VALUE c.id FROM c WHERE c.s LIKE '%foo%bar%foo%baz%'",
    "RegexMatch (a+)+$": "SELECT VALUE RegexMatch(CONCAT(REPLICATE('a', 26), '!'), '(a+)+$')",
    "RegexMatch over 10k docs": "SELECT VALUE c.id FROM c WHERE RegexMatch(c.t, 'z+$')",
    "LIKE scan over 10k docs": "SELECT VALUE c.id FROM c WHERE c.t LIKE '%q%z%'",
    "IN list 100k numbers": _in_list(100_000),
    "IN list 70k (under 512 KB)": _in_list(70_000),
    "REPLICATE('a', 1e15)": "SELECT VALUE REPLICATE('a', 1e15)",
    "JOIN 1M rows, filtered": "SELECT VALUE a FROM c JOIN a IN c.arr JOIN b IN c.arr WHERE a + b < 0",
    "JOIN 1M rows, COUNT": "SELECT VALUE COUNT(1) FROM c JOIN a IN c.arr JOIN b IN c.arr",
    "nesting 1,000 deep": "SELECT VALUE " + "-(" * 1000 + "1" + ")" * 1000,
    "OR chain 1 MB": _or_chain(75_000),
    "OR chain 200 KB": _or_chain(15_000),
    "read_items shape, 500 terms": "SELECT * FROM c WHERE "
    + " OR ".join(f"(c.id='d{i}' AND c.pk='p{i % 10}')" for i in range(500)),
}


def start_emulator(root: Path, port: int, monitor_port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    """The emulator of checkout `root` (this one, or a "before" worktree) on `port`, once it listens."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "emulator", "--port", str(port), "--monitor-port", str(monitor_port)]
    command += ["--data-dir", str(data_dir)]
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
    except RuntimeError:
        proc.kill()
        raise
    return proc


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _read_forever(url: str, samples: Connection, stop: Any) -> None:
    """The second client (its own process: in the benchmark's, the answers the main thread parses would
    hold its GIL): reads item x every 50 ms and sends each (started, latency s) on `samples`."""
    container = CosmosClient(url, credential=KEY).get_database_client("bench").get_container_client("reader")
    while not stop.is_set():
        began = time.monotonic()
        with contextlib.suppress(Exception):  # a failed read still measures a wait
            container.read_item("x", "x")
        samples.send((began, time.monotonic() - began))
        time.sleep(max(0.0, READ_EVERY_S - (time.monotonic() - began)))


class Reader:
    """The second client's process; `worst_since(t)` is the worst latency of its reads that began after t
    (`time.monotonic`, one clock for both processes)."""

    def __init__(self, url: str) -> None:
        context = multiprocessing.get_context("spawn")
        self._samples, child_end = context.Pipe(duplex=False)
        self.stop = context.Event()
        self._process = context.Process(target=_read_forever, args=(url, child_end, self.stop), daemon=True)
        self.samples: list[tuple[float, float]] = []

    def start(self) -> None:
        self._process.start()
        while not self._samples.poll(0.1):  # it reads before the cases begin
            if not self._process.is_alive():
                raise RuntimeError("the reader process exited")

    def worst_since(self, t: float) -> float:
        while self._samples.poll():
            self.samples.append(self._samples.recv())
        return max((lat for began, lat in self.samples if began >= t), default=0.0)

    def close(self) -> None:
        self.stop.set()
        self._process.join(timeout=10)


def load(client: CosmosClient) -> tuple[object, object]:
    db = client.create_database_if_not_exists("bench")
    reader = db.create_container_if_not_exists("reader", PartitionKey("/pk"), offer_throughput=400)
    reader.upsert_item({"id": "x", "pk": "x", "v": 1})
    data = db.create_container_if_not_exists("q", PartitionKey("/pk"), offer_throughput=100_000)
    data.upsert_item({"id": "big", "pk": "p0", "s": "foobar" * 400, "n": -1})  # backtracks O(n^4)
    data.upsert_item({"id": "arr", "pk": "p0", "arr": list(range(1000)), "n": -2})
    for i in range(SCAN_DOCS):
        data.upsert_item({"id": f"d{i}", "pk": f"p{i % 10}", "n": i, "t": ("ab" * 40) + "q" * (i % 3)})
    return reader, data


def run_case(data: object, sql: str) -> tuple[str, float]:
    began = time.perf_counter()
    try:
        rows = list(data.query_items(sql, enable_cross_partition_query=True))  # type: ignore[attr-defined]
        outcome = f"200 ({len(rows)} rows)"
    except CosmosHttpResponseError as exc:
        outcome = f"{exc.status_code}"
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raised is the outcome
        outcome = type(exc).__name__
    return outcome, time.perf_counter() - began


# -- the monitor cases ----------------------------------------------------------------------------------

MONITOR_MINUTES = 10_000  # of history, 5 operations each: a summarize over it takes seconds
TARGET_MONITOR_RSS_MB = 100.0
SUB = "00000000-0000-0000-0000-000000000000"
RESOURCE = f"/subscriptions/{SUB}/resourceGroups/ruscope/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
NAMESPACE = "Microsoft.DocumentDB/databaseAccounts"
HEAVY_KQL = "CDBDataPlaneRequests | summarize sum(RequestCharge) by OperationName, bin(TimeGenerated, 1m)"


class Token:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("bench", 4_102_444_800)


def write_history(data_dir: Path) -> Path:
    """A metrics history of MONITOR_MINUTES minutes up to now in `data_dir`, and the stand-in's CA there."""
    from emulator.history.aggregates import History
    from emulator.monitor.tls import ensure_certificates

    history = History(path=data_dir / "history.jsonl.gz")
    now = time.time()
    for m in range(MONITOR_MINUTES):
        at = now - (MONITOR_MINUTES - m) * 60
        for op in ("Read", "Create", "Query", "Upsert", "Delete"):
            history.record(at, "hist", "c", "0", op, 200, 1.0, partition_key="k", budget=400.0)
    history.save()
    return ensure_certificates(data_dir / "monitor-tls").ca


def _ids(n: int) -> list[str]:
    return [RESOURCE.replace("localhost", f"a{i:05d}") for i in range(n)]


def monitor_cases(url: str, ca: Path) -> dict[str, Callable[[], str]]:
    metrics = MetricsClient(url, Token(), connection_verify=str(ca), retry_total=0, read_timeout=900)
    logs = LogsQueryClient(Token(), endpoint=url + "/v1", connection_verify=str(ca), retry_total=0, read_timeout=900)
    day = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1), dt.timedelta(days=1))

    def batch(ids: int, names: list[str], **query: Any) -> Callable[[], str]:
        def run() -> str:
            base = {"timespan": day, "metric_namespace": NAMESPACE}
            found = metrics.query_resources(resource_ids=_ids(ids), metric_names=names, **{**base, **query})
            return f"200 ({len(found)} res)"

        return run

    def kql_batch() -> str:
        found = logs.query_batch([LogsBatchQuery("w", HEAVY_KQL, timespan=None) for _ in range(10)])
        return "200 (" + ",".join(type(r).__name__.replace("LogsQuery", "")[:4] for r in found) + ")"

    def kql_waiting(seconds: int) -> Callable[[], str]:
        def run() -> str:
            found = logs.query_workspace("w", HEAVY_KQL, timespan=None, server_timeout=seconds)
            return f"200 ({type(found).__name__[9:]})"

        return run

    ancient = (dt.datetime(1, 1, 1, tzinfo=dt.UTC), dt.datetime(9999, 12, 31, tzinfo=dt.UTC))
    return {
        "getBatch 20,000 ids (2.7 MB)": batch(20_000, ["TotalRequests"]),
        "getBatch 5,000 ids": batch(5_000, ["TotalRequests"]),
        "getBatch 1,000 metric names": batch(1, ["TotalRequests"] * 1_000),
        "getBatch 0001-9999 at P1D": batch(
            1, ["NormalizedRUConsumption"], timespan=ancient, granularity=dt.timedelta(days=1)
        ),
        "getBatch 50 ids x 20 metrics, PT1M day": batch(50, ["TotalRequests"] * 20),
        "getBatch 50 ids x 3 metrics, PT1M day": batch(
            50, ["TotalRequests", "TotalRequestUnits", "NormalizedRUConsumption"]
        ),
        "$batch of 10 heavy KQL queries": kql_batch,
        "heavy KQL, Prefer: wait=1": kql_waiting(1),
        "heavy KQL, default wait": kql_waiting(180),
    }


def run_monitor_case(case: Callable[[], str]) -> tuple[str, float]:
    began = time.perf_counter()
    try:
        outcome = case()
    except HttpResponseError as exc:
        outcome = f"{exc.status_code}"
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raised is the outcome
        outcome = type(exc).__name__
    return outcome, time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose emulator to run")
    parser.add_argument("--only", nargs="*", help="case names (prefixes) to run")
    args = parser.parse_args()
    port, monitor_port = free_port(), free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-interference-"))
    ca = write_history(data_dir)
    proc = start_emulator(args.root.resolve(), port, monitor_port, data_dir)
    try:
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=KEY, connection_timeout=120)
        reader_coll, data = load(client)
        start_rss = rss_mb(proc.pid)
        reader_coll.read_item("x", "x")  # type: ignore[attr-defined]
        reader = Reader(f"http://127.0.0.1:{port}/")
        reader.start()
        time.sleep(1.0)
        baseline = reader.worst_since(0.0)
        print(
            f"emulator: {args.root}  start RSS {start_rss:.0f} MB  reader worst before the cases {baseline * 1000:.0f} ms"
        )
        print(f"{'case':34} {'answer':>16} {'query s':>8} {'worst read ms':>14} {'RSS MB':>8} {'ok':>4}")
        for name, sql in CASES.items():
            if args.only and not any(name.startswith(p) for p in args.only):
                continue
            mark = time.monotonic()
            outcome, took = run_case(data, sql)
            time.sleep(3 * READ_EVERY_S)
            worst = reader.worst_since(mark) * 1000
            rss = rss_mb(proc.pid)
            ok = worst <= TARGET_WORST_MS and rss - start_rss <= TARGET_RSS_MB and not outcome.startswith("5")
            print(
                f"{name:34} {outcome:>16} {took:8.2f} {worst:14.0f} {rss:8.0f} {'yes' if ok else 'NO':>4}", flush=True
            )
        for name, case in monitor_cases(f"https://127.0.0.1:{monitor_port}", ca).items():
            if args.only and not any(name.startswith(p) for p in args.only):
                continue
            mark = time.monotonic()
            outcome, took = run_monitor_case(case)
            time.sleep(3 * READ_EVERY_S)
            worst = reader.worst_since(mark) * 1000
            rss = rss_mb(proc.pid)
            ok = worst <= TARGET_WORST_MS and rss - start_rss <= TARGET_MONITOR_RSS_MB and not outcome.startswith("5")
            ok = ok or outcome == "504" and worst <= TARGET_WORST_MS  # the time budget's answer is the point
            print(
                f"{name:34} {outcome:>16} {took:8.2f} {worst:14.0f} {rss:8.0f} {'yes' if ok else 'NO':>4}", flush=True
            )
        reader.close()
    finally:
        began = time.perf_counter()
        proc.terminate()
        proc.wait(timeout=60)
        print(f"SIGTERM to exit: {time.perf_counter() - began:.1f} s")
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
