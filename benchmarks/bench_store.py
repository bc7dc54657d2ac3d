"""The Delta store at the dashboard's scale: read times before and after `compact`, and append throughput.

Run by hand: `.venv/bin/python benchmarks/bench_store.py [--runs 730] [--writers 4]`. It builds, in a temporary
directory it removes afterwards, a store of 1,000,000 `requests` rows and 100,000 `executions` rows over 730
runs (one commit per run per table, an hour apart: about 30 days), then prints:

- reading `executions` and one day of `requests` through `read_table`, before and after `compact`, as a ratio
  to a bare `pyarrow.parquet.read_table` of ONE file holding the same rows (measured in the same run; the
  target after compaction is within 1.5x);
- append throughput of many small commits from concurrent writer processes (rows/s, commits/s).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from store import EXECUTIONS, REQUESTS, compact, read_table, store_location, write_arrow

START = dt.datetime(2026, 10, 1, 14, tzinfo=dt.UTC)  # 730 hourly runs end at 23:00: the last day is whole


def fake_rows(schema: pa.Schema, n: int, run_id: str, start: dt.datetime, rng: np.random.Generator) -> pa.Table:
    """Plausible values per type, generated vectorised: RU charges, statuses, ids, short strings."""
    seconds = np.sort(rng.uniform(0, 600, n))
    times = pa.array(np.datetime64(start.replace(tzinfo=None), "us") + (seconds * 1e6).astype("timedelta64[us]"))
    columns: dict[str, pa.Array] = {}
    for field in schema:
        if field.name == "run_id":
            columns[field.name] = pa.array([run_id] * n)
        elif field.name == "time":
            columns[field.name] = times.cast(field.type)
        elif pa.types.is_string(field.type):
            columns[field.name] = pa.array(rng.choice([f"{field.name}-{i}" for i in range(12)], n))
        elif pa.types.is_integer(field.type):
            columns[field.name] = pa.array(rng.integers(0, 500 if field.name != "seq" else 10**9, n), field.type)
        elif pa.types.is_floating(field.type):
            columns[field.name] = pa.array(np.round(rng.gamma(2.0, 3.0, n), 2))
        else:
            columns[field.name] = pa.array(rng.random(n) < 0.1)
    if "seq" in columns:
        columns["seq"] = pa.array(np.arange(n), pa.int64())
    if "execution_id" in columns:
        columns["execution_id"] = pa.array([f"{run_id}-{i}" for i in range(n)])
    return pa.table(columns, schema=schema)


def build(store: Path, runs: int, requests: int, executions: int) -> None:
    rng = np.random.default_rng(7)
    for n in range(runs):
        run_id, start = f"r{n:04d}", START + dt.timedelta(hours=n)
        write_arrow(
            store_location(store),
            REQUESTS,
            fake_rows(REQUESTS.schema, requests // runs, run_id, start, rng),
            run_id=run_id,
            part="p000",
        )
        write_arrow(
            store_location(store),
            EXECUTIONS,
            fake_rows(EXECUTIONS.schema, executions // runs, run_id, start, rng),
            run_id=run_id,
            part="p000",
        )


def best(fn: Callable[[], object], repeat: int = 5) -> float:
    """The median of `repeat` timings (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def baseline_file(tmp: Path, name: str, data: pa.Table) -> Path:
    path = tmp / f"{name}.parquet"
    pq.write_table(data, path)
    return path


def measure_reads(store: Path, tmp: Path, label: str) -> None:
    day = last_day(store)  # `since` the last day is one day: what the dashboard's "last 24 h" reads
    one_day = read_table(store_location(store), "requests", since=day)
    day_file = baseline_file(
        tmp, "requests_day", pa.Table.from_pandas(one_day, schema=REQUESTS.schema, preserve_index=False)
    )
    all_file = baseline_file(
        tmp,
        "executions",
        pa.Table.from_pandas(
            read_table(store_location(store), "executions"), schema=EXECUTIONS.schema, preserve_index=False
        ),
    )
    for what, ours, bare in (
        (
            "executions (all)",
            lambda: read_table(store_location(store), "executions"),
            lambda: pq.read_table(all_file).to_pandas(),
        ),
        (
            f"requests ({day})",
            lambda: read_table(store_location(store), "requests", since=day),
            lambda: pq.read_table(day_file).to_pandas(),
        ),
    ):
        t_ours, t_bare = best(ours), best(bare)
        print(
            f"  {label:<16} {what:<24} read_table {t_ours * 1000:8.1f} ms   bare pyarrow {t_bare * 1000:7.1f} ms   ratio {t_ours / t_bare:5.2f}x"
        )


def last_day(store: Path) -> dt.date:
    newest = read_table(store_location(store), "requests", columns=["time"])["time"].max()
    return dt.date(newest.year, newest.month, newest.day)


def writer(store: str, w: int, commits: int, rows: int) -> None:
    rng = np.random.default_rng(w)
    for n in range(commits):
        data = fake_rows(REQUESTS.schema, rows, f"w{w}", START + dt.timedelta(minutes=n), rng)
        write_arrow(store_location(store), REQUESTS, data, run_id=f"w{w}", part=f"p{n:04d}")


def measure_appends(tmp: Path, writers: int, commits: int, rows: int) -> None:
    store = tmp / "appends"
    t0 = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")  # delta-rs' tokio runtime does not survive a fork
    procs = [spawn.Process(target=writer, args=(str(store), w, commits, rows)) for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        raise SystemExit(f"a writer failed: exit codes {[p.exitcode for p in procs]}")
    elapsed = time.perf_counter() - t0
    stored = len(read_table(store_location(store), "requests", columns=["seq"]))
    total = writers * commits
    print(
        f"  {writers} writers x {commits} commits x {rows} rows: {elapsed:.1f} s, {total / elapsed:.1f} commits/s, "
        f"{total * rows / elapsed:,.0f} rows/s; stored {stored:,} of {total * rows:,} rows"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=730)
    parser.add_argument("--writers", type=int, default=4)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_store_"))
    try:
        store = tmp / "store"
        t0 = time.perf_counter()
        build(store, args.runs, 1_000_000, 100_000)
        print(
            f"built {args.runs} runs (1,000,000 requests, 100,000 executions; {2 * args.runs} commits) in {time.perf_counter() - t0:.1f} s"
        )
        measure_reads(store, tmp, "before compact")
        t0 = time.perf_counter()
        for report in compact(store_location(store), retention_hours=0):
            print(f"  compact: {report.line()}")
        print(f"  compact took {time.perf_counter() - t0:.1f} s")
        measure_reads(store, tmp, "after compact")
        print("append throughput (small commits, concurrent processes):")
        measure_appends(tmp, args.writers, 50, 20)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
