"""The partition-key advisor against its target: four designs x 200,000 documents x 10,000 query
executions in at most 60 s and 4 GB on this machine.

Run by hand: `.venv/bin/python benchmarks/bench_advisor.py [--small]`.

- Documents: query-log rows of the AI-chat generator (`workloads/chat/generator.py`, seed
  `DEFAULT_SEED`: deterministic), the first N turns of 40 days of 40 tenants (contoso asks half).
- Workload: the `[[queries]]` of `workloads/chat/ruscope.toml` on the query-log containers (the
  `messages` one reads another document type), `{month}` filled with the data's last month; the 10,000
  executions are shared among them by `rate_per_s` (the count is each query's weight).
- Designs: `/tenantId`, `{tenantId}-{createdAt:yyyy-MM}`, `["/tenantId", "/sessionId"]`, `/status`.
- Measured: `advisor.verdict.advise` (every design measured, judged and ranked) in a child process, its
  wall time and its peak memory (`ru_maxrss` of that process, sample generation included). The baseline,
  in another child: the bare engine loading the same documents once into a `/tenantId` container: the
  advisor's floor is four of those.

`measure_design` runs each distinct workload query once per design and weights its RU by its execution
count: executions of the same query on an unchanged container charge the same RU (the cost model is
deterministic), so the figures are those of the 10,000 executions. `--literal` also runs every one of
the 10,000 executions on the first design and checks that their total equals the weighted one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from advisor.designs import parse_design
from advisor.measure import (
    Workload,
    WorkloadQuery,
    load_container,
    measure_design,
    measure_designs,
    measure_query,
    order_by_indexes,
)
from advisor.verdict import judge, rank_verdicts
from emulator.engine.facade import Context, Engine, ThroughputSpec
from workloads.chat import generator as gen

TARGET_S, TARGET_GB = 60.0, 4.0
DESIGNS: tuple[Any, ...] = ("/tenantId", "{tenantId}-{createdAt:yyyy-MM}", ["/tenantId", "/sessionId"], "/status")
CONFIG = Path(__file__).resolve().parent.parent / "workloads" / "chat" / "ruscope.toml"
LOG_CONTAINERS = {"query-logs", "query-logs-by-month", "chat-data", "query-logs-by-status"}
UNTIL = 1_796_860_800.0  # 2026-12-10 00:00 UTC: fixed, so the data does not depend on today
SIZES = {"full": (200_000, 10_000), "small": (20_000, 1_000)}


def sample_docs(count: int) -> list[dict[str, Any]]:
    """The first `count` query-log rows of 40 days of 40 tenants, deterministic."""
    size = gen.Size("bench", 40, 0, 0.0, backfill_days=40, backfill_turns_per_hour=1.2 * count / 400)
    docs = []
    for turn in gen.backfill_turns(gen.DEFAULT_SEED, gen.build_tenants(40), size, UNTIL):
        docs.append(gen.query_log_doc(turn))
        if len(docs) == count:
            return docs
    raise SystemExit(f"the generator gave {len(docs):,} documents, fewer than {count:,}")


def chat_workload(executions: int, month: str) -> Workload:
    """The chat config's query-log queries, `executions` shared by `rate_per_s` (each count is its weight)."""
    queries = [q for q in tomllib.loads(CONFIG.read_text())["queries"] if q["container"] in LOG_CONTAINERS]
    total = sum(q.get("rate_per_s", 1.0) for q in queries)
    counts = [int(executions * q.get("rate_per_s", 1.0) / total) for q in queries]
    counts[max(range(len(queries)), key=lambda i: queries[i].get("rate_per_s", 1.0))] += executions - sum(counts)
    built = []
    for q, count in zip(queries, counts, strict=True):
        params = {
            k: v.replace("{month}", month) if isinstance(v, str) else v for k, v in q.get("parameters", {}).items()
        }
        built.append(WorkloadQuery(q["name"], q["sql"], params, float(count)))
    return Workload(queries=tuple(built), growth_gb_per_day=1.0, scale=1.0, entity_property=None)


def run_advisor(count: int, executions: int, workers: int) -> dict[str, Any]:
    """`advisor.verdict.advise`'s steps (measure, judge, rank), the designs measured one by one
    (`workers` 1, as `advise` does today) or by `measure_designs` in `workers` processes."""
    began = time.perf_counter()
    docs = sample_docs(count)
    workload = chat_workload(executions, str(docs[-1]["month"]))
    generated = time.perf_counter()
    designs = [parse_design(spec) for spec in DESIGNS]
    if workers == 1:
        measures = [measure_design(d, docs, workload) for d in designs]
    else:
        measures = measure_designs(designs, docs, workload, workers=workers)
    verdicts = rank_verdicts([judge(m, docs, workload) for m in measures])
    done = time.perf_counter()
    result: dict[str, Any] = {
        "generate_s": generated - began,
        "advise_s": done - generated,
        "executions": int(sum(q.weight for q in workload.queries)),
        "queries": len(workload.queries),
        "ranking": [(v.rank, v.design.name, round(v.measure.workload_ru, 2), list(v.flags)) for v in verdicts],
    }
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest worker
    result["maxrss_kb"] = own + (0 if workers == 1 else min(workers, len(designs)) * worker)  # an upper bound
    return result


def run_literal(count: int, executions: int) -> dict[str, Any]:
    docs = sample_docs(count)
    workload = chat_workload(executions, str(docs[-1]["month"]))
    design = parse_design(DESIGNS[0])
    return literal_check(design, docs, workload, measure_design(design, docs, workload))


def literal_check(design: Any, docs: list[dict[str, Any]], workload: Workload, measured: Any) -> dict[str, Any]:
    """Every execution run on its own on a fresh container of `design`: total RU against the weighted one."""
    engine = Engine(throttling=False)
    indexes = order_by_indexes(workload.queries)
    coll = load_container(engine, design, docs, workload.throughput, composite_indexes=indexes)
    began = time.perf_counter()
    total = 0.0
    for query in workload.queries:
        for _ in range(int(query.weight)):
            total += measure_query(engine, coll, design, query).request_charge
    weighted = sum(q.request_charge * q.weight for q in measured.queries)
    return {"seconds": time.perf_counter() - began, "total_ru": total, "weighted_ru": weighted}


def run_baseline(count: int) -> dict[str, Any]:
    docs = sample_docs(count)
    engine = Engine(throttling=False)
    ctx = Context()
    engine.create_database(ctx, {"id": "bench"})
    pk = {"paths": ["/tenantId"], "kind": "Hash", "version": 2}
    engine.create_container(ctx, "bench", {"id": "logs", "partitionKey": pk}, ThroughputSpec(18_000))
    began = time.perf_counter()
    for doc in docs:
        engine.create_item(ctx, "bench", "logs", doc, upsert=True)
    return {"load_s": time.perf_counter() - began, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def in_child(*args: str) -> tuple[dict[str, Any], float]:
    """This script in a child process (its own peak memory), its JSON answer and its wall time."""
    began = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, *args], check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1]), time.perf_counter() - began


def report_advisor(label: str, res: dict[str, Any], wall: float, base_load_s: float) -> None:
    peak = res["maxrss_kb"] / 1024**2
    ok = wall <= TARGET_S and peak <= TARGET_GB
    print(
        f"{label}: sample generated in {res['generate_s']:.1f} s, measured + judged + ranked in {res['advise_s']:.1f} s"
    )
    print(f"  wall {wall:.1f} s (child process, start to exit) against <= {TARGET_S:.0f} s ({wall / TARGET_S:.0%});")
    print(
        f"  peak memory {peak:.2f} GB against <= {TARGET_GB:.0f} GB ({peak / TARGET_GB:.0%}): {'within' if ok else 'OVER'}"
    )
    print(f"  measuring / (4 x baseline load): {res['advise_s'] / (4 * base_load_s):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="20,000 documents x 1,000 executions")
    parser.add_argument("--literal", action="store_true", help="also run every execution on the first design")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for measure_designs")
    parser.add_argument("--child", choices=["advisor", "baseline", "literal"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    count, executions = SIZES["small" if args.small else "full"]
    if args.child:
        run = {"advisor": lambda: run_advisor(count, executions, args.workers), "baseline": lambda: run_baseline(count)}
        run["literal"] = lambda: run_literal(count, executions)
        print(json.dumps(run[args.child]()))
        return
    size = ["--small"] if args.small else []
    base, _ = in_child("--child", "baseline", *size)
    print(f"baseline: the bare engine loads {count:,} documents into one container in {base['load_s']:.1f} s")
    print(f"  ({count / base['load_s']:,.0f} documents/s), peak {base['maxrss_kb'] / 1024**2:.2f} GB")
    one, one_wall = in_child("--child", "advisor", "--workers", "1", *size)
    print(f"advisor: {len(DESIGNS)} designs x {count:,} documents x {one['executions']:,} query executions")
    print(f"  ({one['queries']} distinct queries, each run once per design and weighted by its execution count)")
    for rank, name, ru, flags in one["ranking"]:
        print(f"  #{rank} {name}: {ru} RU per execution; flags: {', '.join(flags) or 'none'}")
    report_advisor("one design after another (advise today)", one, one_wall, base["load_s"])
    if args.workers > 1:
        par, par_wall = in_child("--child", "advisor", "--workers", str(args.workers), *size)
        same = "the same ranking and RU" if par["ranking"] == one["ranking"] else "A DIFFERENT RESULT"
        report_advisor(f"measure_designs, {args.workers} processes ({same})", par, par_wall, base["load_s"])
    if args.literal:
        lit, _ = in_child("--child", "literal", *size)
        print(f"literal: {one['executions']:,} executions one by one on {DESIGNS[0]} in {lit['seconds']:.1f} s:")
        print(f"  total {lit['total_ru']:,.2f} RU, weighted (measure_design) {lit['weighted_ru']:,.2f} RU")


if __name__ == "__main__":
    main()
