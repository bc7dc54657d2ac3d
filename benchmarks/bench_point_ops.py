"""Point reads/s and upserts/s through the real azure-cosmos SDK: emulator vs a null server.

Both servers run as separate processes (the machine has 2 cores: one for the SDK, one for the
server); the null server answers with canned responses, so its rate is the SDK's own floor.
Target: emulator time / null-server time <= 1.5 for both operations.
Run: .venv/bin/python benchmarks/bench_point_ops.py [--ops 3000]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

ROOT = Path(__file__).resolve().parent.parent
KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port}")


def start(command: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return proc


def measure(url: str, ops: int, setup: bool) -> dict[str, float]:
    client = CosmosClient(url, credential=KEY, consistency_level="Eventual")
    if setup:
        db = client.create_database_if_not_exists("bench")
        container = db.create_container_if_not_exists("bench", PartitionKey("/pk"), offer_throughput=10_000)
    else:
        container = client.get_database_client("bench").get_container_client("bench")
    item = {"id": "item", "pk": "p", "payload": "x" * 900}
    container.upsert_item(item)
    for _ in range(200):  # warm-up: connection, caches
        container.read_item("item", "p")
    rates = {}
    start_t = time.perf_counter()
    for _ in range(ops):
        container.read_item("item", "p")
    rates["point_read_s"] = time.perf_counter() - start_t
    start_t = time.perf_counter()
    for i in range(ops):
        item["n"] = i
        container.upsert_item(item)
    rates["upsert_s"] = time.perf_counter() - start_t
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=3000)
    args = parser.parse_args()
    results = {}
    for name, command, setup in (
        ("null", [sys.executable, "benchmarks/null_server.py"], False),
        ("emulator", [sys.executable, "-m", "emulator", "--no-throttling", "--monitor-port", "0"], True),
    ):
        port = free_port()
        cmd = command + ([str(port)] if name == "null" else ["--port", str(port)])
        proc = start(cmd, port)
        try:
            results[name] = measure(f"http://127.0.0.1:{port}/", args.ops, setup)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"{'operation':<12} {'null ops/s':>11} {'emulator ops/s':>15} {'time ratio':>11}  target <= 1.5")
    for op in ("point_read_s", "upsert_s"):
        null_rate = args.ops / results["null"][op]
        emu_rate = args.ops / results["emulator"][op]
        ratio = results["emulator"][op] / results["null"][op]
        print(
            f"{op[:-2]:<12} {null_rate:>11.0f} {emu_rate:>15.0f} {ratio:>11.2f}  {'ok' if ratio <= 1.5 else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
