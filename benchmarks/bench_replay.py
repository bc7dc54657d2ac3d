"""The replay collector's overhead: `ruscope replay` on a 50-query workload against a bare loop of the same
SDK calls that records nothing, timed in the same run.

The emulator runs in its own process (`python -m emulator --no-throttling`), populated through the SDK:
`shop/orders` (/tenantId, 4,000 small items, 24,000 RU/s = 4 physical partitions) and `shop/chats`
(hierarchical /tenantId/userId, 1,200 items, 4 physical partitions). The workload mixes single-partition
queries, gateway-served cross-partition filters, SDK fan-out aggregates (query plan), ORDER BY + TOP,
IN-targeted queries, per-feed-range queries and multi-page ones (small max_item_count); it is built as a
config dict and written out as TOML for the CLI.

The bare loop does the replay's SDK work and nothing else: one CosmosClient with the replay's options
(ConnectionPolicy with RetryOptions, connection_timeout, retry_connect/retry_read), and per query what
`collectors/replay.py` sends: container.read(), read_feed_ranges(), then query_items with the same kwargs
(once per feed range in per-feed-range mode), every page iterated. Before timing, one checked run of each
must send the same requests (counted per kind) and return the same items.

Measured in alternating order, best of N:
  CLI        `ruscope replay --config F --store TMP` as a subprocess vs `python bench_replay.py --bare F`
             (the same loop in a fresh interpreter that imports only azure-cosmos); target: <= 5% overhead.
  in-process `collectors.replay.replay(config, ...)` vs the bare loop in this process.
With --profile, or when the CLI misses the target, cProfile shows where the in-process replay spends its time.
Run: .venv/bin/python benchmarks/bench_replay.py [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.documents import ConnectionPolicy, RetryOptions

TARGET = 0.05
DATABASE = "shop"
ORDERS, CHATS = 4_000, 1_200
STATUSES = ("new", "paid", "shipped", "returned")

# -- the bare loop: imports nothing but the SDK (it also runs as `bench_replay.py --bare F` in a fresh process) --


def bare_kwargs(query: dict[str, Any], feed_range: dict[str, Any] | None) -> dict[str, Any]:
    """query_items' kwargs for one query, as collectors/replay.py builds them (with QuerySpec's defaults)."""
    kwargs: dict[str, Any] = {
        "populate_query_metrics": query.get("query_metrics", True),
        "populate_index_metrics": query.get("index_metrics", False),
    }
    if query.get("parameters"):
        kwargs["parameters"] = [{"name": k, "value": v} for k, v in query["parameters"].items()]
    if query.get("max_item_count") is not None:
        kwargs["max_item_count"] = query["max_item_count"]
    if query.get("partition_key") is not None:
        kwargs["partition_key"] = query["partition_key"]
    elif feed_range is not None:
        kwargs["feed_range"] = feed_range
    else:
        kwargs["enable_cross_partition_query"] = True
    return kwargs


def bare_client(cosmos: dict[str, Any], key: str, **hooks: Any) -> CosmosClient:
    """The client fetch_client builds (CosmosSettings' defaults), minus the capture hooks."""
    policy = ConnectionPolicy()
    policy.RetryOptions = RetryOptions(
        max_retry_attempt_count=cosmos.get("max_retry_attempts", 9),
        max_wait_time_in_seconds=cosmos.get("max_retry_wait_s", 30),
    )
    return CosmosClient(
        cosmos["endpoint"],
        credential=key,
        connection_policy=policy,
        connection_timeout=cosmos.get("connection_timeout_s", 10),
        retry_connect=2,
        retry_read=2,
        **hooks,
    )


def bare_loop(data: dict[str, Any], key: str, **hooks: Any) -> int:
    """Every configured query to its last page, recording nothing; returns the items seen."""
    client = bare_client(data["cosmos"], key, **hooks)
    items = 0
    for query in data["queries"]:
        container = client.get_database_client(data["cosmos"]["database"]).get_container_client(query["container"])
        container.read()
        raw_ranges = list(container.read_feed_ranges())
        targets = raw_ranges if query.get("mode") == "per-feed-range" else [None]
        for _ in range(query.get("repeat", 1)):
            for feed_range in targets:
                for page in container.query_items(query["sql"], **bare_kwargs(query, feed_range)).by_page():
                    items += sum(1 for _ in page)
    return items


def bare_main(path: str) -> None:
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    print(f"{bare_loop(data, os.environ['COSMOS_KEY'])} items")


# -- the workload -----------------------------------------------------------------------------------


def order(i: int) -> dict[str, Any]:
    h = (i * 2_654_435_761) & 0xFFFFFFFF
    return {
        "id": f"o{i:05d}",
        "tenantId": f"t{i % 40:02d}",
        "customer": f"c{(h >> 5) % 500:03d}",
        "status": STATUSES[(h >> 11) % 4],
        "category": f"cat{(h >> 15) % 12}",
        "amount": (h >> 3) % 100_000 / 100,
        "items": (h >> 21) % 5 + 1,
        "n": i,
    }


def chat(i: int) -> dict[str, Any]:
    h = (i * 2_246_822_519) & 0xFFFFFFFF
    return {
        "id": f"m{i:05d}",
        "tenantId": f"t{i % 10}",
        "userId": f"u{(h >> 7) % 37}",
        "len": h % 280,
        "text": "x" * (h % 280),
    }


def queries() -> list[dict[str, Any]]:
    """50 queries; `per-feed-range` ones run once per physical partition."""
    o, ch = "orders", "chats"

    def q(name: str, sql: str, container: str = o, **extra: Any) -> dict[str, Any]:
        return {"name": name, "container": container, "sql": sql, **extra}

    t = {"@t": "t07"}
    return [
        # single partition, with partition_key
        q("tenant-orders", "SELECT * FROM c WHERE c.tenantId = @t", parameters=t, partition_key="t07"),
        q(
            "tenant-paid",
            "SELECT c.id, c.amount FROM c WHERE c.tenantId = @t AND c.status = 'paid'",
            parameters={"@t": "t03"},
            partition_key="t03",
        ),
        q("tenant-total", "SELECT VALUE SUM(c.amount) FROM c WHERE c.tenantId = @t", parameters=t, partition_key="t07"),
        q("tenant-count", "SELECT VALUE COUNT(1) FROM c", partition_key="t11"),
        q(
            "tenant-top",
            "SELECT TOP 5 * FROM c WHERE c.tenantId = @t ORDER BY c.amount DESC",
            parameters=t,
            partition_key="t07",
        ),
        q("tenant-by-status", "SELECT c.status, COUNT(1) AS n FROM c GROUP BY c.status", partition_key="t12"),
        q(
            "tenant-customer",
            "SELECT * FROM c WHERE c.tenantId = @t AND c.customer = @cu",
            parameters={"@t": "t05", "@cu": "c105"},
            partition_key="t05",
        ),
        q("tenant-big", "SELECT * FROM c WHERE c.amount > 500", partition_key="t21"),
        q("tenant-recent", "SELECT * FROM c ORDER BY c.n DESC OFFSET 0 LIMIT 20", partition_key="t22"),
        q("tenant-ids", "SELECT VALUE c.id FROM c", partition_key="t23"),
        q("tenant-avg", "SELECT VALUE AVG(c.amount) FROM c", partition_key="t24"),
        q("tenant-statuses", "SELECT DISTINCT VALUE c.status FROM c", partition_key="t25"),
        # cross-partition filters the gateway serves page by page
        q("big-orders", "SELECT * FROM c WHERE c.amount > 990"),
        q("returned-cat3", "SELECT c.id, c.tenantId FROM c WHERE c.status = 'returned' AND c.category = 'cat3'"),
        q("customer-orders", "SELECT * FROM c WHERE c.customer = @cu", parameters={"@cu": "c042"}),
        q("one-id", "SELECT * FROM c WHERE c.id = 'o01234'"),
        q("five-item-cheap", "SELECT c.id FROM c WHERE c.items = 5 AND c.amount < 100"),
        q("n-range", "SELECT * FROM c WHERE c.n BETWEEN 1000 AND 1100"),
        q("customer-prefix", "SELECT c.id FROM c WHERE STARTSWITH(c.customer, 'c04')"),
        q("cats-dear", "SELECT c.id, c.amount FROM c WHERE c.category IN ('cat1', 'cat2') AND c.amount > 900"),
        # fan-out aggregates: 400/1004, query plan, the SDK fans out
        q("count-all", "SELECT VALUE COUNT(1) FROM c"),
        q("sum-all", "SELECT VALUE SUM(c.amount) FROM c"),
        q("count-paid", "SELECT VALUE COUNT(1) FROM c WHERE c.status = 'paid'"),
        q("sum-cat5", "SELECT VALUE SUM(c.amount) FROM c WHERE c.category = 'cat5'"),
        q("max-amount", "SELECT VALUE MAX(c.amount) FROM c"),
        q("avg-items", "SELECT VALUE AVG(c.items) FROM c"),
        # ORDER BY + TOP across partitions
        q("top-amount", "SELECT TOP 10 * FROM c ORDER BY c.amount DESC"),
        q("top-recent", "SELECT TOP 20 c.id, c.n FROM c ORDER BY c.n DESC"),
        q("top-paid", "SELECT TOP 10 * FROM c WHERE c.status = 'paid' ORDER BY c.amount DESC"),
        q("cheapest", "SELECT TOP 5 c.id, c.amount FROM c ORDER BY c.amount"),
        q("top-cat9", "SELECT TOP 25 * FROM c WHERE c.category = 'cat9' ORDER BY c.n"),
        # targeted by the WHERE clause's keys
        q("two-tenants", "SELECT * FROM c WHERE c.tenantId IN ('t01', 't02')"),
        q("three-tenants-count", "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId IN ('t05', 't06', 't07')"),
        q(
            "tenants-paid",
            "SELECT c.id FROM c WHERE c.tenantId IN (@a, @b) AND c.status = 'paid'",
            parameters={"@a": "t14", "@b": "t15"},
        ),
        q("tenant-where", "SELECT * FROM c WHERE c.tenantId = 't09'"),
        q("tenants-sum", "SELECT VALUE SUM(c.amount) FROM c WHERE c.tenantId IN ('t10', 't20', 't30')"),
        # once per physical partition
        q("count-per-range", "SELECT VALUE COUNT(1) FROM c", mode="per-feed-range"),
        q("sum-per-range", "SELECT VALUE SUM(c.amount) FROM c", mode="per-feed-range"),
        q("returned-per-range", "SELECT c.id FROM c WHERE c.status = 'returned'", mode="per-feed-range"),
        q("chats-per-range", "SELECT VALUE COUNT(1) FROM c", ch, mode="per-feed-range"),
        # many pages
        q(
            "tenant-pages",
            "SELECT * FROM c WHERE c.tenantId = @t",
            parameters={"@t": "t30"},
            partition_key="t30",
            max_item_count=10,
        ),
        q("dear-pages", "SELECT c.id, c.amount FROM c WHERE c.amount > 800", max_item_count=50),
        q("all-ids-pages", "SELECT VALUE c.id FROM c", max_item_count=500),
        q(
            "sorted-pages",
            "SELECT c.id, c.amount FROM c WHERE c.category = 'cat2' ORDER BY c.amount",
            max_item_count=25,
        ),
        q("in-pages", "SELECT * FROM c WHERE c.tenantId IN ('t12', 't13')", max_item_count=20),
        # hierarchical key: full key, prefix, prefix in WHERE, second level only (fan-out)
        q("chat-user", "SELECT * FROM c", ch, partition_key=["t1", "u5"]),
        q("chat-tenant", "SELECT c.id, c.userId FROM c", ch, partition_key=["t2"]),
        q("chat-tenant-where", "SELECT VALUE COUNT(1) FROM c WHERE c.tenantId = 't3'", ch),
        q("chat-user-anywhere", "SELECT * FROM c WHERE c.userId = 'u7'", ch),
        q("chat-longest", "SELECT TOP 10 c.id, c.len FROM c ORDER BY c.len DESC", ch),
    ]


def workload(url: str) -> dict[str, Any]:
    return {"cosmos": {"endpoint": url, "database": DATABASE}, "queries": queries()}


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for these texts
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def to_toml(data: dict[str, Any]) -> str:
    lines = ["[cosmos]"] + [f"{k} = {toml_value(v)}" for k, v in data["cosmos"].items()]
    for query in data["queries"]:
        lines += ["", "[[queries]]"] + [f"{k} = {toml_value(v)}" for k, v in query.items()]
    return "\n".join(lines) + "\n"


def populate(url: str, key: str) -> None:
    """Both containers through the SDK, 8 writers at a time."""
    db = CosmosClient(url, credential=key).create_database_if_not_exists(DATABASE)
    orders = db.create_container_if_not_exists("orders", PartitionKey("/tenantId"), offer_throughput=24_000)
    chats = db.create_container_if_not_exists(
        "chats", PartitionKey(path=["/tenantId", "/userId"], kind="MultiHash"), offer_throughput=24_000
    )
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(orders.upsert_item, map(order, range(ORDERS))))
        list(pool.map(chats.upsert_item, map(chat, range(CHATS))))


# -- measuring --------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> float:
    """Seconds for one call. Collect garbage first: a CosmosClient left in a reference cycle keeps the SDK's
    per-endpoint routing-map cache (shared by all clients of an endpoint) alive, and the next client would
    then skip its /pkranges reads; every run starts as cold as a fresh process."""
    gc.collect()
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run_cli(command: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])}... exited {done.returncode}: {done.stderr.strip()[-500:]}")


class Bench:
    """The four timed variants, sharing one workload, one key and a scratch directory for stores."""

    def __init__(self, data: dict[str, Any], key: str, toml: Path, scratch: Path) -> None:
        from collectors.config import load_config

        self.data, self.key, self.toml, self.scratch = data, key, toml, scratch
        self.config = load_config(toml)
        self.stores = (scratch / f"store{i}" for i in range(1_000_000))
        self.env = {**os.environ, "COSMOS_KEY": key}
        ruscope = Path(sys.executable).with_name("ruscope")
        self.cli = [str(ruscope)] if ruscope.exists() else [sys.executable, "-m", "ruscope"]
        self.cli += ["replay", "--config", str(toml)]
        self.bare_cli = [sys.executable, str(Path(__file__).resolve()), "--bare", str(toml)]

    def replay(self, store: Path | None = None, **kwargs: Any) -> Any:
        from collectors.replay import replay
        from store import store_location

        errors: list[str] = []
        summary = replay(
            self.config,
            store=store_location(store or next(self.stores)),
            credential=self.key,
            progress=False,
            out=lambda line: None,
            err=errors.append,
            **kwargs,
        )
        if summary.failed or errors:
            raise RuntimeError(f"the replay failed: {errors[:3]}")
        return summary

    def variants(self) -> dict[str, Callable[[], Any]]:
        return {
            "cli replay": lambda: run_cli(self.cli + ["--store", str(next(self.stores))], self.env),
            "cli bare": lambda: run_cli(self.bare_cli, self.env),
            "in-process replay": self.replay,
            "in-process bare": lambda: bare_loop(self.data, self.key),
        }


def check_same_work(bench: Bench) -> tuple[int, Counter[str], int]:
    """One replay and one hooked bare loop must send the same requests and see the same items."""
    from collectors.replay import _query_kwargs
    from collectors.replay.capture import request_kind
    from store import read_table, store_location

    for spec, raw in zip(bench.config.queries, bench.data["queries"]):
        for feed_range in (None, {"Range": {"min": "", "max": "FF"}}):
            if spec.partition_key is None or feed_range is None:
                assert _query_kwargs(spec, feed_range) == bare_kwargs(raw, feed_range), spec.name
    store = next(bench.stores)
    gc.collect()  # see timed()
    bench.replay(store)
    requests, executions = (
        read_table(store_location(store), "requests"),
        read_table(store_location(store), "executions"),
    )
    replayed = Counter(requests["request_kind"])
    seen: Counter[str] = Counter()

    def hook(response: Any) -> None:
        request = response.http_request
        path = request.url.split("//", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        seen[
            request_kind(
                request.method,
                path,
                request.headers,
                response.http_response.status_code,
                int(response.http_response.headers.get("x-ms-substatus") or 0),
            )
        ] += 1

    gc.collect()
    items = bare_loop(bench.data, bench.key, raw_response_hook=hook)
    if seen != replayed or items != int(executions["items"].sum()):
        raise RuntimeError(
            f"not the same work: replay {dict(replayed)} {int(executions['items'].sum())} items, "
            f"bare {dict(seen)} {items} items"
        )
    return items, replayed, len(executions)


def measure(bench: Bench, runs: int) -> dict[str, float]:
    """Best of `runs` per variant; each round runs the pairs in alternating order."""
    variants = bench.variants()
    pairs = [("cli replay", "cli bare"), ("in-process replay", "in-process bare")]
    best = dict.fromkeys(variants, float("inf"))
    for name in variants:  # warm-up: disk caches, the emulator's result caches
        variants[name]()
    for round_ in range(runs):
        for pair in pairs:
            for name in pair if round_ % 2 == 0 else reversed(pair):
                best[name] = min(best[name], timed(variants[name]))
    return best


def import_seconds(runs: int) -> dict[str, float]:
    """What a fresh interpreter pays before the first request: the CLI's imports vs the bare loop's, and the
    replay's first routing prediction (cosmoscore/sql builds its Lark parser on the first parse_query)."""
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import azure.cosmos": [sys.executable, "-c", "import azure.cosmos"],
        "import the replay CLI": [sys.executable, "-c", "import ruscope.cli, collectors.config, collectors.replay"],
        "+ first parse_query (Lark build)": [
            sys.executable,
            "-c",
            "import ruscope.cli, collectors.config, cosmoscore.sql, "
            "collectors.replay; cosmoscore.sql.parse_query('SELECT * FROM c')",
        ],
    }
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(runs):
        for name, command in commands.items():
            best[name] = min(best[name], timed(lambda c=command: subprocess.run(c, check=True, env=os.environ)))
    return best


PROFILED = ("/collectors/",)
PROFILED_CALLS = {  # heavy callees outside collectors/, by (file suffix, function)
    ("~", "<built-in method posix.fsync>"),
    ("pyarrow/parquet/core.py", "write_table"),
    ("pandas/core/frame.py", "__init__"),
    ("pandas/core/frame.py", "fillna"),
}


def profile(bench: Bench, top: int) -> None:
    """Where the in-process replay's time goes: cProfile of one run (collectors/ functions and their heavy
    non-SDK callees, by cumulative time)."""
    import cProfile
    import pstats

    gc.collect()
    profiler = cProfile.Profile()
    profiler.runcall(bench.replay)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = max(entry[3] for entry in stats.values())
    print(
        f"\ncProfile of one in-process replay: {total:.3f} s under the profiler; collectors/ functions and their "
        f"heavy non-SDK callees, by cumulative time"
    )
    print(f"{'cum s':>7} {'share':>6} {'own s':>7} {'calls':>6}  function")
    rows = sorted(stats.items(), key=lambda kv: -kv[1][3])
    shown = [
        (key, entry)
        for key, entry in rows
        if any(part in key[0] for part in PROFILED)
        or any(key[0].endswith(file) and key[2] == func for file, func in PROFILED_CALLS)
    ]
    for (file, line, func), (_, calls, own, cum, _) in shown[:top]:
        where = "/".join(Path(file).parts[-2:]) if file != "~" else "builtins"
        print(f"{cum:>7.3f} {cum / total:>6.1%} {own:>7.3f} {calls:>6}  {where}:{line} {func}")


IMPORTS = (
    "collectors.replay",
    "pandas",
    "pyarrow",
    "collectors.config",
    "pydantic",
    "collectors.replay.routing",
    "cosmoscore.sql",
    "ruscope.cli",
    "typer",
    "tqdm",
    "azure.cosmos",
)


def import_breakdown() -> None:
    """`python -X importtime` of the CLI's modules: cumulative ms of the big ones (one run, indicative)."""
    command = [sys.executable, "-X", "importtime", "-c", "import ruscope.cli, collectors.config, collectors.replay"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    cumulative = {}
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            cumulative.setdefault(parts[2], int(parts[1]) / 1000)
    print(
        "CLI imports, python -X importtime, cumulative ms (nested: each counted where first imported): "
        + ", ".join(f"{name} {cumulative[name]:.0f}" for name in IMPORTS if name in cumulative)
    )


def print_table(
    best: dict[str, float], runs: int, work: tuple[int, Counter[str], int], imports: dict[str, float]
) -> None:
    items, requests, executions = work
    print(
        f"\nreplay overhead: {len(queries())} queries ({executions} executions), {sum(requests.values())} requests "
        f"({', '.join(f'{k} {v}' for k, v in sorted(requests.items()))}), {items} items; best of {runs}, alternating"
    )
    print(
        f"{'measurement':<12} {'replay s':>9} {'bare s':>9} {'overhead s':>11} {'overhead':>9} {'target':>8}  verdict"
    )
    for label, replay_name, bare_name, target in (
        ("CLI", "cli replay", "cli bare", TARGET),
        ("in-process", "in-process replay", "in-process bare", None),
    ):
        replay_s, bare_s = best[replay_name], best[bare_name]
        over = replay_s / bare_s - 1
        verdict = "-" if target is None else ("ok" if over <= target else "MISS")
        print(
            f"{label:<12} {replay_s:>9.3f} {bare_s:>9.3f} {replay_s - bare_s:>11.3f} {over:>9.1%} "
            f"{f'<= {target:.0%}' if target else '-':>8}  {verdict}"
        )
    print(
        "  CLI: `ruscope replay --config F --store TMP` vs `python bench_replay.py --bare F`, each a fresh process "
        "(interpreter, imports, one client, 50 queries); in-process: replay() vs the same loop in this process"
    )
    base = imports["python -c pass"]
    print(
        "fresh-interpreter start, best of the runs: "
        + ", ".join(
            f"{name} {secs:.3f} s" + ("" if name == "python -c pass" else f" (+{secs - base:.3f})")
            for name, secs in imports.items()
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="always print the cProfile of one replay")
    parser.add_argument("--top", type=int, default=25, help="rows of the profile")
    parser.add_argument("--bare", metavar="TOML", help=argparse.SUPPRESS)  # the subprocess bare loop
    args = parser.parse_args()
    if args.bare:
        bare_main(args.bare)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench_point_ops import KEY, free_port, start

    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    port = free_port()
    emulator = start(
        [sys.executable, "-m", "emulator", "--no-throttling", "--monitor-port", "0", "--port", str(port)], port
    )
    scratch = Path(tempfile.mkdtemp(prefix="bench_replay_"))
    try:
        url = f"http://127.0.0.1:{port}/"
        started = time.perf_counter()
        populate(url, KEY)
        print(
            f"populated {ORDERS:,} orders and {CHATS:,} chats through the SDK in {time.perf_counter() - started:.1f} s"
        )
        data = workload(url)
        toml = scratch / "ruscope.toml"
        toml.write_text(to_toml(data), encoding="utf-8")
        bench = Bench(data, KEY, toml, scratch)
        work = check_same_work(bench)
        best = measure(bench, args.runs)
        imports = import_seconds(args.runs)
        print_table(best, args.runs, work, imports)
        if args.profile or best["cli replay"] / best["cli bare"] - 1 > TARGET:
            import_breakdown()
            profile(bench, args.top)
    finally:
        emulator.terminate()
        emulator.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
