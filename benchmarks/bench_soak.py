"""Does the emulator's memory stay bounded under a steady load on a fixed data set?

The emulator runs in a subprocess on a fresh `--data-dir` (`--request-log-mb` as given, default the
emulator's). Four client threads (the real SDK) work on a fixed set of 1,000 items for `--minutes`: point
reads, upserts of the same ids, a single-partition query and a cross-partition query; every 15 s one
`MetricsClient.query_resources` and one KQL query ask the monitor stand-in about the same container. The
data set never grows: what may grow is what the emulator keeps *about* the requests, its request log
(`emulator.engine.accounting`, bounded by `--request-log-mb`) and the per-minute metrics history (a few
cells a minute, bounded by the retention).

Every `SAMPLE_S` it prints the server's RSS and the HTTP requests sent so far (the SDK's response hook).
Then the growth after the first minute (the warm-up: caches, indexes, connection pools, the request log
filling up to its cap), per request and in MB. Target: at most `TARGET_GROWTH_MB` after the warm-up.
`--request-log-mb 256` (the in-process default) shows the log's own cost: its growth per request against
its estimate of one record (`record_bytes`).

Run: .venv/bin/python benchmarks/bench_soak.py [--minutes 5] [--request-log-mb MB]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey
from azure.monitor.query import LogsQueryClient
from azure.monitor.querymetrics import MetricsClient
from bench_interference import KEY, NAMESPACE, RESOURCE, Token, rss_mb
from bench_point_ops import free_port, wait_for

from emulator.engine.accounting import RequestRecord, record_bytes
from emulator.monitor.tls import ensure_certificates

ROOT = Path(__file__).resolve().parent.parent
ITEMS = 1_000
SAMPLE_S = 15.0
WARM_UP_S = 60.0
TARGET_GROWTH_MB = 8.0  # a few minutes' history cells and allocator noise


def start(port: int, monitor_port: int, data_dir: Path, request_log_mb: float | None) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "emulator", "--port", str(port), "--monitor-port", str(monitor_port)]
    command += ["--data-dir", str(data_dir)]
    if request_log_mb is not None:
        command += ["--request-log-mb", str(request_log_mb)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return proc


def typical_record() -> RequestRecord:
    """A point read's record as the engine keeps it (ids and activity ids of their usual lengths)."""
    return RequestRecord(
        time=time.time(),
        database="soak",
        container="items",
        operation="Read",
        resource_type="docs",
        status=200,
        substatus=0,
        request_charge=1.0,
        pkrange_id="0",
        partition_key='["p7"]',
        activity_id="4f7a3c2e-1b6d-4e8f-9a0b-2c3d4e5f6a7b",
        correlated_activity_id="",
        duration_ms=0.4,
        retry_after_ms=0,
    )


class Counter:
    """HTTP requests the SDK sent (its response hook: a cross-partition query is several)."""

    def __init__(self) -> None:
        self.sent = 0
        self.lock = threading.Lock()

    def hook(self, response: object) -> None:
        with self.lock:
            self.sent += 1


class Load:
    """The client threads, each repeating one kind of call on the fixed data set."""

    def __init__(self, container: object) -> None:
        self.container = container
        self.failed = 0
        self.stop = threading.Event()

    def _loop(self, call: object) -> None:
        i = 0
        while not self.stop.is_set():
            i += 1
            try:
                call(i)  # type: ignore[operator]
            except Exception:  # noqa: BLE001 - a throttled or failed call is still load
                self.failed += 1

    def threads(self) -> list[threading.Thread]:
        c = self.container
        calls = [
            lambda i: c.read_item(f"d{i % ITEMS}", f"p{i % 10}"),  # type: ignore[attr-defined]
            lambda i: c.upsert_item({"id": f"d{i % ITEMS}", "pk": f"p{i % 10}", "n": i % ITEMS}),  # type: ignore[attr-defined]
            lambda i: list(c.query_items("SELECT * FROM c WHERE c.n < 5", partition_key=f"p{i % 10}")),  # type: ignore[attr-defined]
            lambda i: list(c.query_items("SELECT VALUE COUNT(1) FROM c", enable_cross_partition_query=True)),  # type: ignore[attr-defined]
        ]
        return [threading.Thread(target=self._loop, args=(call,), daemon=True) for call in calls]


def ask_monitor(url: str, ca: Path) -> None:
    metrics = MetricsClient(url, Token(), connection_verify=str(ca), retry_total=0)
    logs = LogsQueryClient(Token(), endpoint=url + "/v1", connection_verify=str(ca), retry_total=0)
    day = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1), dt.timedelta(hours=1))
    metrics.query_resources(
        resource_ids=[RESOURCE],
        metric_names=["TotalRequests", "TotalRequestUnits"],
        timespan=day,
        metric_namespace=NAMESPACE,
    )
    logs.query_workspace("w", "CDBDataPlaneRequests | summarize sum(RequestCharge) by OperationName", timespan=None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--request-log-mb", type=float, default=None, help="the emulator's; default its own")
    args = parser.parse_args()
    port, monitor_port = free_port(), free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    ca = ensure_certificates(data_dir / "monitor-tls").ca
    proc = start(port, monitor_port, data_dir, args.request_log_mb)
    try:
        counter = Counter()
        client = CosmosClient(
            f"http://127.0.0.1:{port}/", credential=KEY, connection_timeout=60, raw_response_hook=counter.hook
        )
        db = client.create_database_if_not_exists("soak")
        container = db.create_container_if_not_exists("items", PartitionKey("/pk"), offer_throughput=100_000)
        for i in range(ITEMS):
            container.upsert_item({"id": f"d{i}", "pk": f"p{i % 10}", "n": i})
        load = Load(container)
        threads = load.threads()
        began = time.monotonic()
        start_rss = rss_mb(proc.pid)
        for t in threads:
            t.start()
        samples: list[tuple[float, float, int]] = []  # (seconds in, RSS MB, requests sent)
        next_monitor = began
        print(f"start RSS {start_rss:.0f} MB after loading {ITEMS} items")
        print(f"{'s':>6} {'RSS MB':>8} {'requests':>9}")
        while time.monotonic() - began < args.minutes * 60:
            if time.monotonic() >= next_monitor:
                try:
                    ask_monitor(f"https://127.0.0.1:{monitor_port}", ca)
                except Exception as exc:  # noqa: BLE001 - reported, the soak goes on
                    print(f"monitor request failed: {type(exc).__name__}: {str(exc)[:120]}")
                next_monitor += 15.0
            time.sleep(max(0.0, SAMPLE_S - (time.monotonic() - began) % SAMPLE_S))
            at, rss = time.monotonic() - began, rss_mb(proc.pid)
            with counter.lock:
                sent = counter.sent
            samples.append((at, rss, sent))
            print(f"{at:6.0f} {rss:8.1f} {sent:9d}", flush=True)
        load.stop.set()
        for t in threads:
            t.join(timeout=30)
        warm = next(s for s in samples if s[0] >= WARM_UP_S)
        last = samples[-1]
        grew_mb, requests = last[1] - warm[1], last[2] - warm[2]
        per_record = record_bytes(typical_record())
        print(f"failed calls: {load.failed}")
        print(
            f"after the warm-up ({warm[0]:.0f} s to {last[0]:.0f} s): RSS grew {grew_mb:.1f} MB over {requests} "
            f"requests ({grew_mb * 2**20 / max(1, requests):.0f} B a request; the request log estimates "
            f"{per_record} B a record) target <= {TARGET_GROWTH_MB:g} MB: {'ok' if grew_mb <= TARGET_GROWTH_MB else 'NO'}"
        )
        print(f"whole soak: RSS {start_rss:.0f} -> {last[1]:.0f} MB")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
