"""The dashboard at scale (30 days x 1 minute x 100 pkranges): time to the first rendered page, cold and warm, and peak memory.

Run by hand: `.venv/bin/python benchmarks/bench_dashboard.py [--small] [--root DIR] [--store DIR] [--keep]`
(`--small` is a quick check: 3 days, 20 pkranges, 72 runs; `--repeat N` child processes per measurement,
the median printed, default 3). In a temporary directory it removes afterwards
(unless `--store` names one to reuse or `--keep`), it builds a store of:

- `metrics`: 30 days x 1 minute x 100 pkranges of NormalizedRUConsumption (4.3 million points, one commit
  per day) with the container's ProvisionedThroughput, TotalRequestUnits and TotalRequests by StatusCode
  per minute (what a real month has beside them: the Cost page bills them, Throttling counts their 429s), and a daily `partitions` snapshot of the 100 pkranges with their EPK bounds;
- `executions` and `requests`: 730 hourly runs of 50 queries over two containers (single, targeted,
  fan-out, one per feed range), about 100,000 executions and 1 million requests, each execution's RU the
  sum of its requests'; compacted (`ruscope compact`: the metrics rolled up, the span cells refreshed) as a
  store that has lived 30 days would be.

Then, each in a child process of its own (a fresh Streamlit cache, and its peak RSS is that measurement's):

- the baseline: `store.read_table` of the columns the page reads (Query costs: executions, the latest run's
  requests from its start, as the page reads them; Hot partitions: metrics and partitions; every other page:
  the capacity report's tables), nothing else;
- every page of `dashboard/app.py` (`--only TITLE` for some) through Streamlit's AppTest: the first run
  (cold: an empty cache) and a second run (warm: what a widget change costs), with the libraries imported.

Targets: warm <= 2 s, cold <= 3x the baseline read, peak memory <= 2 GB. `--root DIR` runs the
pages of another checkout (e.g. `git worktree add /tmp/base <commit>`) against the same store.

`--browser` instead starts `ruscope dashboard` on the store and opens every page in headless Chromium (the
browser test's helpers, tests/e2e/browser.py), twice: the time from navigation until the page's script has
finished and every figure on it is drawn, cold (the first visit) and warm (the second, a reload: the browser
loads Streamlit's page again, about 1 s on this machine before any of ours), then clicked (a third visit by
the sidebar's link, as a user moves between pages: no reload), and the server's
peak memory (`--screenshots DIR`: each page's first visit saved there, to look at). Targets (issue 27):
cold <= 2 s, warm <= 1 s, peak <= 1 GB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import pkgutil
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from analysis.load.stored import DERIVATION as SPAN_DERIVATION  # noqa: E402  (the span cells `compact` refreshes)
from store import EXECUTIONS, PARTITIONS, REQUESTS, TABLES, compact, read_table, store_location, write_arrow  # noqa: E402

METRICS = TABLES["metrics"]
GB = 1024**3
sys.path[:0] = [str(ROOT / "tests" / "e2e")]  # the browser test's helpers: Chromium, a running dashboard, the pages
from browser import DRAWN_FIGURES_JS, dashboard_pages, descendants, find_chromium, running_dashboard  # noqa: E402

PAGES = {page.title: page.file for page in dashboard_pages()}  # every page of dashboard/app.py
SCOPE = ["account", "database", "container"]
BASELINE = {  # the columns the pages read: the same columns, read by the store alone
    "Query costs": [
        ("executions", ["run_id", "time", "database", "container", "query_name", "repeat", "execution_id", "mode",
                        "feed_range", "sql", "status", "error", "total_ru", "pages", "round_trips", "items",
                        "pkranges", "routing_observed", "routing_predicted", "routing_mismatch", "throttled",
                        "retrieved_documents", "output_documents", *SCOPE], None),
        ("requests", ["run_id", "time", "database", "container", "query_name", "execution_id", "request_kind",
                      "pkrange_id", "request_charge", "index_hit_ratio", "index_utilization", *SCOPE], "latest"),
    ],
    "Hot partitions": [
        ("metrics", ["time", "metric", "aggregation", "pkrange_id", "value", *SCOPE], None),
        ("partitions", ["time", "run_id", "pkrange_id", "parents", "min_epk", "max_epk", "size_kb", *SCOPE], None),
    ],
}  # fmt: skip
# every other page reads (a part of) the capacity report's tables: their columns, the tables the store holds
REPORT_BASELINE = [
    ("executions", None, None), ("requests", ["time", "pkrange_id", "request_charge", "status", *SCOPE], None),
    ("metrics", ["time", "metric", "aggregation", "pkrange_id", "value", "grain", "region", *SCOPE], None),
    ("partitions", None, None),
]  # fmt: skip


# -- the store -------------------------------------------------------------------------------------------------


def catalogue(big: int, small: int) -> list[dict]:
    """50 queries: on `orders` (`big` pkranges) single, targeted and fan-out ones; on `customers` (`small`)."""
    queries = []
    for i in range(30):
        queries.append(dict(container="orders", reach=[i * 7 % big], pages=5, repeats=3 if i < 21 else 2, mode="as-is"))
    for i in range(10):
        queries.append(dict(container="orders", reach=[i % big, (i + 33) % big, (i + 66) % big], pages=3, repeats=2,
                            mode="as-is"))  # fmt: skip
    queries.append(dict(container="orders", reach=list(range(big)), pages=1, repeats=3, mode="as-is"))
    queries.append(dict(container="orders", reach=list(range(big)), pages=1, repeats=3, mode="as-is"))
    for i in range(6):
        queries.append(dict(container="customers", reach=[i % small], pages=3, repeats=2, mode="as-is"))
    queries.append(dict(container="customers", reach=list(range(small)), pages=2, repeats=2, mode="as-is"))
    queries.append(dict(container="customers", reach=list(range(small)), pages=2, repeats=2, mode="per-feed-range"))
    for n, query in enumerate(queries):
        query["name"] = f"q{n:02d}-{query['container']}"
        query["base_ru"] = 2.5 + (n % 7) * 1.3
    return queries


def run_template(big: int, small: int) -> tuple[dict, dict]:
    """One run's executions and requests as columns; a run is this template with its own ids, times and RU."""
    ex: dict[str, list] = {k: [] for k in ("query", "container", "repeat", "mode", "feed_range", "eid", "offset",
                                           "pkranges", "routing", "pages", "round_trips", "n_req")}  # fmt: skip
    rq: dict[str, list] = {k: [] for k in ("query", "container", "eid", "kind", "pkrange", "ru", "exec_index")}
    offset = 0.0
    for q in catalogue(big, small):
        total = big if q["container"] == "orders" else small
        routing = "single" if len(q["reach"]) == 1 else "fan-out" if len(q["reach"]) == total else "targeted"
        for repeat in range(q["repeats"]):
            parts = [[pk] for pk in q["reach"]] if q["mode"] == "per-feed-range" else [q["reach"]]
            for n, reach in enumerate(parts):
                eid = f"{q['name']}-{repeat}-{n}"
                kinds = [] if routing == "single" or len(parts) > 1 else [("refused", ""), ("query_plan", "")]
                kinds += [("page", str(pk)) for pk in reach for _ in range(q["pages"])]
                for kind, pk in kinds:
                    rq["query"].append(q["name"])
                    rq["container"].append(q["container"])
                    rq["eid"].append(eid)
                    rq["kind"].append(kind)
                    rq["pkrange"].append(pk)
                    rq["ru"].append(q["base_ru"] / q["pages"] if kind == "page" else 1.0)
                    rq["exec_index"].append(len(ex["eid"]))
                ex["query"].append(q["name"])
                ex["container"].append(q["container"])
                ex["repeat"].append(repeat)
                ex["mode"].append(q["mode"])
                ex["feed_range"].append(f"range{n}" if q["mode"] == "per-feed-range" else "")
                ex["eid"].append(eid)
                ex["offset"].append(offset)
                ex["pkranges"].append(",".join(str(pk) for pk in sorted(reach)))
                ex["routing"].append("single" if len(parts) > 1 else routing)
                ex["pages"].append(q["pages"] * len(reach))
                ex["round_trips"].append(len(kinds))
                ex["n_req"].append(len(kinds))
                offset += 0.5
    return ex, rq


def run_tables(ex: dict, rq: dict, run: int, start: dt.datetime, rng: np.random.Generator) -> tuple[pa.Table, pa.Table]:
    """One run's executions and requests: the template with this run's ids, times, RU (drifting) and failures."""
    run_id = f"r{run:04d}"
    n_ex, n_rq = len(ex["eid"]), len(rq["eid"])
    exec_index = np.asarray(rq["exec_index"])
    drift = 1.0 + 0.3 * (np.asarray([int(q[1:3]) % 5 for q in ex["query"]]) == 0) * run / 730  # some queries grow
    charge = np.round(np.asarray(rq["ru"]) * drift[exec_index] * rng.lognormal(0, 0.05, n_rq), 2)
    total = np.round(np.bincount(exec_index, weights=charge, minlength=n_ex), 2)
    failed = rng.random(n_ex) < 0.005
    throttled = np.where(rng.random(n_ex) < 0.01, rng.integers(1, 4, n_ex), 0)
    ex_times = np.datetime64(start.replace(tzinfo=None), "us") + (np.asarray(ex["offset"]) * 1e6).astype(
        "timedelta64[us]"
    )
    eids = [f"{run_id}-{e}" for e in ex["eid"]]
    items = np.asarray(ex["pages"]) * 10
    common = {"account": "bench", "database": "shop"}
    executions = {
        "run_id": [run_id] * n_ex, "time": ex_times, **{k: [v] * n_ex for k, v in common.items()},
        "container": ex["container"], "query_name": ex["query"], "execution_id": eids, "repeat": ex["repeat"],
        "mode": ex["mode"], "feed_range": ex["feed_range"],
        "sql": [f"SELECT * FROM c WHERE c.q = '{q}'" for q in ex["query"]], "partition_key": [""] * n_ex,
        "status": np.where(failed, "error", "ok"), "error": np.where(failed, "error: 503 ServiceUnavailable", ""),
        "total_ru": total, "pages": ex["pages"], "round_trips": ex["round_trips"], "items": items,
        "pkranges": ex["pkranges"], "pkrange_count": [len(p.split(",")) for p in ex["pkranges"]],
        "routing_predicted": ex["routing"], "routing_observed": ex["routing"], "routing_mismatch": [False] * n_ex,
        "retrieved_documents": items * 3, "output_documents": items, "throttled": throttled,
        "retry_after_ms_total": throttled * 100.0, "duration_ms": total * 2.0, "rate_per_s": [1.0] * n_ex,
    }  # fmt: skip
    rq_times = ex_times[exec_index]
    requests = {
        "run_id": [run_id] * n_rq, "time": rq_times, **{k: [v] * n_rq for k, v in common.items()},
        "container": rq["container"], "query_name": rq["query"], "execution_id": [eids[i] for i in exec_index],
        "seq": np.arange(n_rq), "request_kind": rq["kind"], "method": ["POST"] * n_rq,
        "resource": ["dbs/shop/colls/c/docs"] * n_rq, "pkrange_id": rq["pkrange"],
        "status": np.where(np.asarray(rq["kind"]) == "refused", 400, 200), "substatus": [0] * n_rq,
        "request_charge": charge, "item_count": [10] * n_rq, "duration_ms": charge * 2.0, "activity_id": ["a"] * n_rq,
        "correlated_activity_id": [""] * n_rq, "retry_after_ms": [None] * n_rq,
        "retrieved_document_count": [30] * n_rq, "retrieved_document_size": [30_000] * n_rq,
        "output_document_count": [10] * n_rq, "output_document_size": [10_000] * n_rq,
        "index_hit_ratio": [0.33] * n_rq, "index_utilization": [None] * n_rq,
    }  # fmt: skip
    return _table(EXECUTIONS.schema, executions), _table(REQUESTS.schema, requests)


def _table(schema: pa.Schema, columns: dict) -> pa.Table:
    """The columns as a table of `schema`; a nullable column the benchmark does not set (one a later schema
    added, such as a shared database's throughput) is null."""
    rows = len(next(iter(columns.values())))
    missing = [f.name for f in schema if f.name not in columns and not f.nullable]
    if missing:
        raise KeyError(f"the benchmark sets no value for required columns {missing}")
    arrays = {
        f.name: pa.array(columns[f.name]).cast(f.type) if f.name in columns else pa.nulls(rows, f.type) for f in schema
    }
    return pa.table(arrays, schema=schema)


RU_S_PER_RANGE = 6_000.0  # the provisioned RU/s over the ranges (`partitions_day`'s throughput_share)
AVERAGE_OF_PEAK = 0.4  # a minute's average RU/s as a share of its busiest second's (NormalizedRUConsumption)
RU_PER_REQUEST = 10.0


def metric_day(day: dt.datetime, pkranges: int, rng: np.random.Generator) -> pa.Table:
    """A day of per-minute NormalizedRUConsumption (Maximum) per pkrange (a daily wave, two hot ranges) and
    the container's series a real month has beside it: ProvisionedThroughput (Maximum), TotalRequestUnits
    (Total: the ranges' average RU/s over the minute) and TotalRequests (Count) by StatusCode, 2% of a
    minute's requests answered 429 when a range spent its whole budget in it."""
    from cosmoscore.monitor.metrics import NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS

    minutes = np.arange(1440)
    base = 20 + 15 * np.sin(minutes / 1440 * 2 * np.pi)
    hot = np.zeros(pkranges)
    hot[[3 % pkranges, 17 % pkranges]] = 55
    per_range = np.clip(base[None, :] + hot[:, None] + rng.normal(0, 5, (pkranges, 1440)), 0, 100)
    values = per_range.ravel()
    ru = np.round((per_range / 100 * RU_S_PER_RANGE * AVERAGE_OF_PEAK).sum(axis=0) * 60, 1)
    requests = np.round(ru / RU_PER_REQUEST)
    throttled = np.where(per_range.max(axis=0) >= 100, np.round(requests * 0.02), 0.0)
    series = [  # metric, aggregation, status code, unit, values per minute
        (PROVISIONED, "Maximum", None, "Count", np.full(1440, RU_S_PER_RANGE * pkranges)),
        (TOTAL_REQUEST_UNITS, "Total", None, "Count", ru),
        (TOTAL_REQUESTS, "Count", "200", "Count", requests - throttled),
        (TOTAL_REQUESTS, "Count", "429", "Count", throttled),
    ]
    start = np.datetime64(day.replace(tzinfo=None), "us")
    n, m = values.size, len(series) * 1440
    columns = {
        "run_id": [f"m{day:%Y%m%d}"] * (n + m), "account": ["bench"] * (n + m), "database": ["shop"] * (n + m),
        "container": ["orders"] * (n + m), "physical_partition_id": [None] * (n + m),
        "operation_type": [None] * (n + m), "grain": ["PT1M"] * (n + m), "region": [None] * (n + m),
        "time": start + np.tile(minutes, pkranges + len(series)).astype("timedelta64[m]"),
        "metric": [NORMALIZED_RU] * n + [name for name, *_ in series for _ in minutes],
        "aggregation": ["Maximum"] * n + [agg for _, agg, *_ in series for _ in minutes],
        "pkrange_id": [*np.repeat(np.arange(pkranges).astype(str), 1440), *([None] * m)],
        "status_code": [None] * n + [code for _, _, code, *_ in series for _ in minutes],
        "value": np.concatenate([np.round(values, 1), *(v for *_, v in series)]),
        "unit": ["Percent"] * n + [unit for *_, unit, _ in series for _ in minutes],
    }  # fmt: skip
    return _table(METRICS.schema, columns)


def partitions_day(day: dt.datetime, pkranges: int) -> pa.Table:
    """One storage snapshot: each pkrange's size and EPK bounds (the occupied space 00..3F split evenly)."""
    bounds = [f"{round(i * 0x40 / pkranges * 2**24):08X}" for i in range(pkranges + 1)]
    columns = {
        "run_id": [f"s{day:%Y%m%d}"] * pkranges, "time": [day] * pkranges, "account": ["bench"] * pkranges,
        "database": ["shop"] * pkranges, "container": ["orders"] * pkranges,
        "pkrange_id": [str(i) for i in range(pkranges)], "parents": [""] * pkranges,
        "size_kb": [1_000_000 + 10_000 * i for i in range(pkranges)], "document_count": [100_000] * pkranges,
        "sampled_distinct_keys": [None] * pkranges, "quota_collection_kb": [None] * pkranges,
        "usage_collection_kb": [None] * pkranges, "throughput_ru": [RU_S_PER_RANGE * pkranges] * pkranges,
        "throughput_share": [RU_S_PER_RANGE] * pkranges, "usage_documents_kb": [None] * pkranges,
        "min_epk": ["" if i == 0 else bounds[i] for i in range(pkranges)],
        "max_epk": ["FF" if i == pkranges - 1 else bounds[i + 1] for i in range(pkranges)],
    }  # fmt: skip
    return _table(PARTITIONS.schema, columns)


def build(store: Path, *, days: int, pkranges: int, runs: int) -> None:
    rng = np.random.default_rng(11)
    end = dt.datetime.now(dt.UTC).replace(minute=0, second=0, microsecond=0)
    first_day = (end - dt.timedelta(days=days)).replace(hour=0)
    for d in range(days):
        day = first_day + dt.timedelta(days=d)
        write_arrow(
            store_location(store), METRICS, metric_day(day, pkranges, rng), run_id=f"m{day:%Y%m%d}", part="p000"
        )
        write_arrow(
            store_location(store), PARTITIONS, partitions_day(day, pkranges), run_id=f"s{day:%Y%m%d}", part="p000"
        )
    ex, rq = run_template(pkranges, 8)
    for run in range(runs):
        executions, requests = run_tables(ex, rq, run, end - dt.timedelta(hours=runs - run), rng)
        write_arrow(store_location(store), EXECUTIONS, executions, run_id=f"r{run:04d}", part="p000")
        write_arrow(store_location(store), REQUESTS, requests, run_id=f"r{run:04d}", part="p000")
    for _ in compact(store_location(store), retention_hours=0, derived=(SPAN_DERIVATION,)):
        pass


# -- measurements (each in a child process) --------------------------------------------------------------------


def peak_rss() -> int:
    """This process's peak RSS since its exec (VmHWM): ru_maxrss would count the parent it was forked from."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_baseline(store: Path, page: str) -> dict:
    """The page's reads by the store alone: its tables' columns; a run's requests from that run's start on."""
    import pandas  # noqa: F401  (imported before timing, as in a running server)

    t0 = time.perf_counter()
    rows, frames = 0, {}
    for table, columns, runs in BASELINE.get(page, REPORT_BASELINE):
        since, run_ids = None, None
        if runs == "latest":
            executions = frames["executions"]
            run_ids = (executions["run_id"].iloc[executions["time"].argmax()],)
            since = executions.loc[executions["run_id"].eq(run_ids[0]), "time"].min()
        frames[table] = read_table(store_location(store), table, columns=columns, since=since, run_ids=run_ids)
        rows += len(frames[table])
    return {"seconds": time.perf_counter() - t0, "rows": rows, "peak": peak_rss()}


def child_page(store: Path, root: Path, page: str) -> dict:
    view = root / "dashboard" / PAGES[page]
    if not view.exists():
        return {"absent": True}
    sys.path[:0] = [str(root)]
    os.chdir(root)
    os.environ["RUSCOPE_STORE"] = str(store)
    import pandas  # noqa: F401  (the libraries a running server has imported: the cache is what is cold)
    import plotly.graph_objects  # noqa: F401
    from streamlit.testing.v1 import AppTest

    for package in ("analysis", "dashboard", "store"):  # ruscope's own modules, as a server has them
        module = importlib.import_module(package)
        for found in pkgutil.iter_modules(module.__path__, f"{package}."):
            if found.name not in ("dashboard.app",):
                importlib.import_module(found.name)

    app = AppTest.from_file(str(root / "dashboard" / "app.py"), default_timeout=900)
    app.switch_page(PAGES[page])
    seconds = []
    for _ in range(2):
        t0 = time.perf_counter()
        app.run()
        seconds.append(time.perf_counter() - t0)
        if app.exception:
            return {"error": app.exception[0].message}
    charts = sum(len(e.proto.spec) for e in app.get("plotly_chart"))
    return {"cold": seconds[0], "warm": seconds[1], "peak": peak_rss(), "chart_bytes": charts}


LOADED = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
ALL_DRAWN = f"() => ({DRAWN_FIGURES_JS})() === document.querySelectorAll('.js-plotly-plot').length"


def server_peak(pid: int) -> int:
    """The peak RSS (VmHWM) of the largest process of `pid`'s tree: the Streamlit server."""
    peaks = []
    for child in {pid, *descendants(pid)}:
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        peaks += [int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:")]
    return max(peaks, default=0)


def browser_timings(store: Path, tmp: Path, shots: Path | None = None) -> dict[str, dict[str, float]]:
    """Every page in headless Chromium on a fresh `ruscope dashboard`: the time from navigation until its
    script finished and every figure it placed is drawn, the first visit (cold: nothing cached), the second
    (warm, by its URL) and the third (clicked in the sidebar); and the server's peak memory."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium is not installed: make browser")
    workdir = tmp / "browser"
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, float]] = {}
    with running_dashboard(store, workdir, timeout=120) as dashboard, sync_playwright() as playwright:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=args)
        tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        try:
            for visit in ("cold", "warm", "clicked"):
                for page in dashboard_pages():
                    t0 = time.perf_counter()
                    if visit == "clicked":  # as a user moves between pages: the sidebar's link, no reload
                        tab.locator(f'[data-testid="stSidebarNav"] a[href$="/{page.url_path}"]').first.click()
                        tab.wait_for_timeout(50)  # the click's rerun starts before the state is looked at
                    else:
                        tab.goto(f"{dashboard.url}/{page.url_path}")
                    tab.wait_for_selector(LOADED, timeout=900_000)
                    tab.wait_for_function(ALL_DRAWN, timeout=900_000)
                    results.setdefault(page.title, {})[visit] = time.perf_counter() - t0
                    if shots is not None and visit == "cold":  # what it drew, to look at (not timed)
                        shots.mkdir(parents=True, exist_ok=True)
                        tab.screenshot(path=str(shots / f"{page.url_path or 'overview'}.png"), full_page=True)
        finally:
            browser.close()
        results["server"] = {"peak": float(server_peak(dashboard.process.pid))}
    return results


def report_browser(store: Path, tmp: Path, shots: Path | None = None) -> None:
    timings = browser_timings(store, tmp, shots)
    peak = timings.pop("server")["peak"]
    print("pages in headless Chromium (navigation until the script finished and every figure is drawn):")
    for title, got in timings.items():
        print(
            f"  {title:15s} cold {got['cold']:6.2f} s ({verdict(got['cold'] <= 2)} <= 2 s)   "
            f"warm {got['warm']:6.2f} s ({verdict(got['warm'] <= 1)} <= 1 s)   "
            f"clicked {got['clicked']:6.2f} s ({verdict(got['clicked'] <= 1)} <= 1 s)"
        )
    print(f"  dashboard server peak memory {peak / GB:.2f} GB (target <= 1 GB: {verdict(peak <= GB)})")


def measure(what: str, store: Path, root: Path, page: str, repeat: int) -> dict:
    """The median of `repeat` child processes' numbers (a shared machine's noise), each a fresh cache."""
    command = [sys.executable, __file__, "--child", what, "--store", str(store), "--root", str(root), "--page", page]
    runs = []
    for _ in range(repeat):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if "error" in runs[-1] or runs[-1].get("absent"):
            return runs[-1]
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def verdict(ok: bool) -> str:
    return "pass" if ok else "MISS"


def report(store: Path, root: Path, repeat: int, only: list[str] | None = None) -> None:
    print(f"pages of {root} (medians of {repeat} child processes each)")
    for page in only or PAGES:
        base = measure("baseline", store, root, page, repeat)
        got = measure("page", store, root, page, repeat)
        print(f"{page}:")
        print(
            f"  baseline read_table of its columns: {base['seconds']:.2f} s ({base['rows']:,} rows), peak {base['peak'] / GB:.2f} GB"
        )
        if got.get("absent"):
            print(f"  {PAGES[page]}: not present")
            continue
        if "error" in got:
            print(f"  the page failed: {got['error']}")
            continue
        ratio = got["cold"] / base["seconds"]
        print(f"  cold {got['cold']:.2f} s = {ratio:.1f}x the baseline (target <= 3x: {verdict(ratio <= 3)})")
        print(f"  warm {got['warm']:.2f} s (target <= 2 s: {verdict(got['warm'] <= 2)})")
        print(f"  peak memory {got['peak'] / GB:.2f} GB (target <= 2 GB: {verdict(got['peak'] <= 2 * GB)})")
        print(f"  figures sent per run: {got['chart_bytes'] / 1e6:.2f} MB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="3 days, 20 pkranges, 72 runs: a quick check")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose dashboard to measure")
    parser.add_argument("--store", type=Path, help="build the store here (or reuse the one already there)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary store")
    parser.add_argument("--repeat", type=int, default=3, help="child processes per measurement (the median)")
    parser.add_argument("--browser", action="store_true", help="time every page in headless Chromium, not AppTest")
    parser.add_argument("--screenshots", type=Path, help="--browser: save each page's first visit here (PNG)")
    parser.add_argument("--only", action="append", choices=list(PAGES), help="AppTest: only this page (repeatable)")
    parser.add_argument("--child", choices=["baseline", "page"], help=argparse.SUPPRESS)
    parser.add_argument("--page", choices=list(PAGES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run = (
            child_baseline(args.store, args.page)
            if args.child == "baseline"
            else child_page(args.store, args.root.resolve(), args.page)
        )
        print(json.dumps(run))
        return
    tmp = None if args.store else Path(tempfile.mkdtemp(prefix="bench_dashboard_"))
    store = args.store or tmp / "store"
    try:
        if not (store / "executions").exists():
            days, pkranges, runs = (3, 20, 72) if args.small else (30, 100, 730)
            t0 = time.perf_counter()
            build(store, days=days, pkranges=pkranges, runs=runs)
            counts = {
                t: len(read_table(store_location(store), t, columns=["time"]))
                for t in ("metrics", "executions", "requests")
            }
            print(f"built {days} days, {pkranges} pkranges, {runs} runs in {time.perf_counter() - t0:.0f} s: "
                  + ", ".join(f"{n:,} {t}" for t, n in counts.items()))  # fmt: skip
        if args.browser:
            report_browser(store, Path(tempfile.mkdtemp(prefix="bench_dashboard_browser_")), args.screenshots)
        else:
            report(store, args.root.resolve(), args.repeat, args.only)
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp is not None:
            print(f"kept {store}")


if __name__ == "__main__":
    main()
