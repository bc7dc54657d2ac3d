"""The RU gate's own cost (issue 26).

1. `ruscope check` of 50 queries on a 20,000-document sample (the embedded emulator, 2 physical partitions),
   against the same 50 queries run once through the bare azure-cosmos SDK against an emulator engine loaded
   the same way (in-process, then served over HTTP), timed in this run (the baseline). The check is timed as
   CI runs it, a process (start, load, replay, verdicts, files), with 50 queries and with the first one
   alone: the difference is what the other 49 queries cost in the check (replay, store, verdicts), held
   against those 49 through the bare SDK. Target: within 2x.
2. The pytest plugin on a suite of 500 SDK calls (50 tests of 10 point reads each, against a `ruscope
   emulator` process): the suite with the plugin on (`--ruscope-emulator`, a budget on every test) against
   the same suite with it off, best of 3 each. Target: at most 5% more.
Run: .venv/bin/python benchmarks/bench_check.py [--docs 20000] [--queries 50]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from azure.cosmos import CosmosClient
from bench_point_ops import KEY, ROOT, free_port, start

from collectors.config import load_config
from emulator.engine.facade import Context, Engine
from emulator.engine.results import ThroughputSpec
from emulator.rest.server import start_in_thread

CHECK_TARGET = 2.0
PLUGIN_TARGET = 0.05
COMPOSITE = [{"path": "/tenantId", "order": "ascending"}, {"path": "/total", "order": "descending"}]
SHAPES = [
    ("SELECT * FROM c WHERE c.tenantId = @t AND c.total > {n}", True),
    ("SELECT TOP 20 c.id, c.total FROM c WHERE c.tenantId = @t ORDER BY c.total DESC", True),
    ("SELECT VALUE COUNT(1) FROM c WHERE c.status = 'open' AND c.total > {n}", False),
    ("SELECT c.id FROM c WHERE c.total = {n}", False),
    ("SELECT VALUE SUM(c.total) FROM c WHERE c.tenantId = @t", True),
]


def write_app(root: Path, docs: int, queries: int) -> Path:
    with (root / "docs.jsonl").open("w", encoding="utf-8") as out:
        for n in range(docs):
            doc = {"id": str(n), "tenantId": f"t{n % 40}", "total": n % 500, "status": ("open", "paid")[n % 2]}
            out.write(json.dumps(doc) + "\n")
    blocks = []
    for q in range(queries):
        sql, pinned = SHAPES[q % len(SHAPES)]
        key = f'partition_key = "t{q % 40}"\n' if pinned else ""
        params = f'parameters = {{ "@t" = "t{q % 40}" }}\n' if "@t" in sql else ""
        blocks.append(
            f'[[queries]]\nname = "q{q:02d}"\ncontainer = "orders"\nsql = "{sql.format(n=q * 7)}"\n{params}{key}'
            "budget = { max_ru = 5000 }\n"
        )
    (root / "ruscope.toml").write_text(
        '[cosmos]\nendpoint = "http://127.0.0.1:1/"\ndatabase = "shop"\n\n'
        '[[check.containers]]\nid = "orders"\npartition_key = "/tenantId"\nthroughput = 12000\nsample = "docs.jsonl"\n'
        '[check.containers.indexing_policy]\ncompositeIndexes = [[{ path = "/tenantId", order = "ascending" }, '
        '{ path = "/total", order = "descending" }]]\n\n' + "\n".join(blocks),
        encoding="utf-8",
    )
    return root / "ruscope.toml"


def bare_sdk(config_path: Path, docs_path: Path) -> tuple[float, float, float]:
    """Load time, the first query's time and the other queries' through the bare SDK."""
    config = load_config(config_path)
    started = time.perf_counter()
    engine = Engine(throttling=False)
    ctx = Context()
    engine.create_database(ctx, {"id": "shop"})
    definition = {
        "id": "orders",
        "partitionKey": {"paths": ["/tenantId"], "kind": "Hash", "version": 2},
        "indexingPolicy": {"compositeIndexes": [COMPOSITE]},
    }
    engine.create_container(ctx, "shop", definition, ThroughputSpec(12000))
    with docs_path.open(encoding="utf-8") as lines:
        for line in lines:
            engine.create_item(ctx, "shop", "orders", json.loads(line), upsert=True)
    server = start_in_thread(engine)
    loaded = time.perf_counter() - started
    try:
        container = CosmosClient(server.url, credential=KEY).get_database_client("shop").get_container_client("orders")
        list(container.query_items("SELECT * FROM c WHERE c.id = '1'", partition_key="t1"))  # the SDK's caches
        times = []
        for q in config.account().queries:
            started = time.perf_counter()
            params = [{"name": k, "value": v} for k, v in q.parameters.items()]
            if q.partition_key is not None:
                list(container.query_items(q.sql, parameters=params, partition_key=q.partition_key))
            else:
                list(container.query_items(q.sql, parameters=params, enable_cross_partition_query=True))
            times.append(time.perf_counter() - started)
        return loaded, times[0], sum(times[1:])
    finally:
        server.stop()
        engine.close()


def first_only(config_path: Path) -> Path:
    """The same config with its first query only (`[check] queries`)."""
    path = config_path.with_name("first.toml")
    if not path.exists():
        text = config_path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("[[check.containers]]", '[check]\nqueries = ["q00"]\n\n[[check.containers]]', 1),
            encoding="utf-8",
        )
    return path


def check_process(config_path: Path, only_first: bool = False) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruscope",
            "check",
            "--config",
            str(config_path if not only_first else first_only(config_path)),
        ],
        cwd=config_path.parent,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return time.perf_counter() - started


SUITE = """
import os
import pytest
from azure.cosmos import CosmosClient

CLIENT = CosmosClient(os.environ["COSMOS_ENDPOINT"], credential=os.environ["COSMOS_KEY"])
ORDERS = CLIENT.get_database_client("bench").get_container_client("orders")

@pytest.mark.ru_budget(max_ru=100, max_partitions=2)
@pytest.mark.parametrize("n", range(50))
def test_reads(n):
    for k in range(10):
        assert ORDERS.read_item(str(n * 10 + k), partition_key=f"t{(n * 10 + k) % 40}")["id"]
"""


def plugin_overhead(rounds: int) -> tuple[float, float]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = start([sys.executable, "-m", "ruscope", "emulator", "--port", str(port)], port)
    try:
        db = CosmosClient(url, credential=KEY).create_database("bench")
        from azure.cosmos import PartitionKey

        orders = db.create_container("orders", PartitionKey("/tenantId"), offer_throughput=12000)
        for n in range(500):
            orders.create_item({"id": str(n), "tenantId": f"t{n % 40}"})
        with tempfile.TemporaryDirectory() as suite_dir:
            Path(suite_dir, "test_suite.py").write_text(SUITE, encoding="utf-8")
            env = {**os.environ, "COSMOS_ENDPOINT": url, "COSMOS_KEY": KEY, "PYTHONPATH": str(ROOT)}
            env.pop("RUSCOPE_EMULATOR", None)

            def run(*extra: str) -> float:
                started = time.perf_counter()
                command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_suite.py", *extra]
                result = subprocess.run(command, cwd=suite_dir, env=env, capture_output=True, text=True)
                elapsed = time.perf_counter() - started
                return elapsed if result.returncode == 0 else float("nan")

            off, on = [], []
            for _ in range(rounds):  # interleaved: a slow moment of the machine falls on both
                off.append(run("-p", "no:ruscope"))
                on.append(run("--ruscope-emulator", url))
            return min(off), min(on)
    finally:
        server.terminate()
        server.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = write_app(root, args.docs, args.queries)
        bare = [bare_sdk(config, root / "docs.jsonl") for _ in range(args.rounds)]
        whole = min(check_process(config) for _ in range(args.rounds))
        first = min(check_process(config, only_first=True) for _ in range(args.rounds))
    bare_load = min(b[0] for b in bare)
    bare_rest = min(b[2] for b in bare)
    bare_all = min(b[1] + b[2] for b in bare)
    marginal = whole - first
    ratio = marginal / bare_rest
    others = args.queries - 1
    print(f"1. {args.queries} queries on {args.docs:,} documents (best of {args.rounds})")
    print(
        f"   bare SDK: load {bare_load:.2f} s, all {args.queries} queries {bare_all:.3f} s, the other {others} {bare_rest:.3f} s"
    )
    print(f"   ruscope check process: {args.queries} queries {whole:.3f} s, the first alone {first:.3f} s")
    print(f"   the other {others} queries in the check: {marginal:.3f} s")
    print(
        f"   check / bare SDK ({others} queries): {ratio:5.2f}x   target <= {CHECK_TARGET:.0f}x  {'OK' if ratio <= CHECK_TARGET else 'MISSED'}"
    )
    print(f"   whole check process / (load + {args.queries} bare queries): {whole / (bare_load + bare_all):5.2f}x")
    off, on = plugin_overhead(args.rounds)
    extra = on / off - 1
    print(f"2. a suite of 500 SDK calls (50 tests x 10 point reads, best of {args.rounds})")
    print(f"   plugin off: {off:6.3f} s   plugin on, a budget on every test: {on:6.3f} s")
    print(
        f"   overhead: {extra * 100:+.1f}%   target <= {PLUGIN_TARGET * 100:.0f}%  {'OK' if extra <= PLUGIN_TARGET else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
