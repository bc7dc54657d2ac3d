"""The Azure Monitor stand-in and `ruscope metrics` at scale: 30 days x 1 minute x 100 pkranges.

Run by hand: `.venv/bin/python benchmarks/bench_monitor.py [--days 30] [--pkranges 100] [--reads 20000]`
(`--days 1` is a quick check). In a temporary directory it removes afterwards, it prints:

(a) the stand-in producing the history: an in-process `Engine` on a `SimulatedClock` with a container of
    `--pkranges` physical partitions (600,000 RU/s at the default 6,000 RU/s per partition at creation), one
    point read per partition per minute through the engine's domain API (every read metered and recorded
    in `History` exactly as a served request is): reads/s and the total time;
(b) `ruscope metrics` collecting it all (first run: a backfill of the whole history) into a Delta store, in a
    child process (its peak RSS is the collector's peak memory): once over real HTTPS against the stand-in
    served by this process (end to end: the stand-in's own answering time is in it), and once through an
    in-process azure-core transport replaying the very response bodies the stand-in sent (the collector's
    own cost); then a second run over HTTPS that finds nothing new;
(c) the bare decode of the same bodies, in a child process: the real `MetricsClient.query_resources` through
    the same replaying transport (pipeline, JSON, the SDK's models), every point's time and value read once;
(d) recording overhead on the point-read path: point reads with the real `History` against a no-op one,
    in-process through the engine and through the real azure-cosmos SDK over HTTP (bench_point_ops' path),
    interleaved, medians of 5.

(e) the rollup (`store.rollup`, what `ruscope collect` runs after each pass) of what (b) collected over
    HTTPS, in a child process: every point of the `--days` at once (a first rollup, as after a backfill),
    then, after a 5-minute increment of new points is committed, the incremental rollup of it.

Targets: collection <= 2x the bare decode, peak memory <= 1.5 GB, recording overhead <= 5%; the rollup of
the collected days <= 5% of the time it took to collect them (issue 27: `--days 1` is one new day).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.response import HTTPResponse

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS  # noqa: E402

RESOURCE = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/localhost"
ENDPOINT = "https://westeurope.metrics.monitor.azure.com"  # what the replaying transport pretends to be
START = 1_800_000_000.0 - 1_800_000_000.0 % 86400  # a midnight: days and PT5M intervals align
METRICS = [NORMALIZED_RU, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS]  # what the stand-in computes
GB = 1024**3


# -- (a) the history -------------------------------------------------------------------------------------------


def make_engine(pkranges: int, clock: Any, history: Any = None, throttling: bool = True) -> tuple[Any, list[str]]:
    """An engine with database t, container c of `pkranges` partitions and one document per partition
    (`throttling` off for the point-read rates, as bench_point_ops runs the emulator)."""
    from emulator.engine.facade import Context, Engine, ThroughputSpec

    ctx = Context()
    engine = Engine(clock=clock, throttling=throttling, **({"history": history} if history is not None else {}))
    engine.create_database(ctx, {"id": "t"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(ctx, "t", body, ThroughputSpec(6_000 * pkranges))  # P6: ceil(RU / 6,000) ranges
    coll = engine.container("t", "c")
    keys: dict[str, str] = {}
    i = 0
    while len(keys) < len(coll.ranges):
        key = f"k{i}"
        keys.setdefault(coll.range_for(coll.epk((key,))).id, key)
        i += 1
    for key in keys.values():
        engine.create_item(ctx, "t", "c", {"id": "doc", "k": key, "payload": "x" * 900}, [key])
    return engine, list(keys.values())


def produce(days: int, pkranges: int) -> tuple[Any, Any, float]:
    """The history, produced through the engine on the simulated clock: per minute, one read per partition,
    spread over the minute. Returns the engine, its clock and the seconds it took."""
    from emulator.engine.clock import SimulatedClock
    from emulator.engine.facade import Context

    ctx = Context()
    clock = SimulatedClock(START)
    engine, keys = make_engine(pkranges, clock)
    step = 60.0 / len(keys)
    t0 = time.perf_counter()
    for minute in range(days * 1440):
        for i, key in enumerate(keys):
            clock.set(START + minute * 60 + i * step)  # set, not advanced: float steps would drift a read
            engine.read_item(ctx, "t", "c", "doc", [key])  # into the minute before
    clock.set(START + days * 86400)
    return engine, clock, time.perf_counter() - t0


# -- serving and recording the bodies ---------------------------------------------------------------------------


def request_key(url: str) -> str:
    """What identifies a metrics request: its query parameters, sorted (the body is always our one resource)."""
    return query_key({k: [v] for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)})


def query_key(query: dict[str, list[str]]) -> str:
    return json.dumps(sorted((k.lower(), v[-1]) for k, v in query.items()))


class Recording:
    """Wraps the stand-in's `MetricsApp`: every 200 body it sends is saved under its request's key."""

    def __init__(self, app: Any, folder: Path) -> None:
        self.app, self.folder = app, folder
        self.request_type = app.request_type
        self.index: dict[str, str] = {}
        self.seconds = 0.0  # the stand-in's own time answering

    def handle(self, request: Any) -> tuple[int, dict[str, str], bytes]:
        t0 = time.perf_counter()
        status, headers, body = self.app.handle(request)
        self.seconds += time.perf_counter() - t0
        if status == 200:
            name = f"{len(self.index):05d}.json"
            (self.folder / name).write_bytes(body)
            self.index[query_key(request.query)] = name
        return status, headers, body


class Replay(BaseAdapter):
    """A `requests` adapter answering each metrics request with the body recorded for it (no socket), so the
    real azure-core pipeline (`RequestsTransport(session=...)`) and the SDK's models do all their work."""

    def __init__(self, folder: Path, in_order: bool = False) -> None:
        super().__init__()
        self.folder, self.in_order = folder, in_order
        self.index: dict[str, str] = json.loads((folder / "index.json").read_text())
        self.names = sorted(self.index.values())
        self.served = 0

    def send(self, request: Any, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        name = self.names[self.served] if self.in_order else self.index.get(request_key(request.url))
        if name is None:
            status, body = 404, b'{"error": {"code": "NotRecorded", "message": "no body recorded for this request"}}'
        else:
            status, body = 200, (self.folder / name).read_bytes()
            self.served += 1
        headers = {"content-type": "application/json; charset=utf-8", "content-length": str(len(body))}
        raw = HTTPResponse(body=io.BytesIO(body), headers=headers, status=status, preload_content=False)
        response = requests.Response()
        response.url, response.request, response.raw = request.url, request, raw
        response.status_code, response.headers = status, CaseInsensitiveDict(headers)
        return response

    def close(self) -> None:
        pass


def replay_transport(folder: Path, in_order: bool = False) -> Any:
    from azure.core.pipeline.transport import RequestsTransport

    session = requests.Session()
    session.mount("https://", Replay(folder, in_order))
    return RequestsTransport(session=session, session_owner=False)


# -- child processes: (b) and (c) -------------------------------------------------------------------------------


def peak_rss() -> int:
    """This process's peak RSS since its exec (VmHWM): ru_maxrss would count the parent it was forked from."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child_collect(args: argparse.Namespace) -> dict[str, Any]:
    """`ruscope metrics` as the CLI runs it (`run_collector`), over HTTPS or through the replaying transport."""
    from collectors.config import parse_config
    from collectors.metrics import MetricsCollector
    from collectors.registry import run_collector
    from store import store_location

    account = {"name": "local", "endpoint": "http://127.0.0.1:1/", "database": "t", "monitor_resource": RESOURCE}
    monitor: dict[str, Any] = {"endpoint": args.endpoint, "backfill_hours": args.days * 24, "metrics": METRICS}
    options: dict[str, Any] = {}
    if args.ca:
        monitor["ca_bundle"] = args.ca
    if args.recorded:
        options["transport"] = replay_transport(Path(args.recorded))
    config = parse_config({"accounts": [account], "monitor": monitor}, Path("bench.toml"))
    lines: list[str] = []
    t0 = time.perf_counter()
    summary = run_collector(
        MetricsCollector(client_options=options),
        config,
        store=store_location(args.store),
        clock=lambda: args.now,
        out=lines.append,
        err=lines.append,
    )
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "rss": peak_rss(), "exit": summary.exit_code, "lines": lines}


def child_rollup(args: argparse.Namespace) -> dict[str, Any]:
    """(e): the first rollup of the collected store, then a 5-minute increment of every series' points
    committed (the next pass's) and rolled up; the seconds of each."""
    import pandas as pd

    from store import read_table, rollup, store_location, write_frame

    location = store_location(args.store)
    t0 = time.perf_counter()
    first = rollup(location)
    whole = time.perf_counter() - t0
    stored = read_table(location, "metrics")
    latest = stored[stored["time"] == stored["time"].max()]
    increments = []
    for step in range(1, 4):  # three passes, 5 minutes of every series each
        fresh = pd.concat(
            [latest.assign(time=latest["time"] + pd.Timedelta(minutes=5 * (step - 1) + m)) for m in range(1, 6)]
        ).drop(columns=["run_id"])
        write_frame(location, "metrics", fresh, run_id=f"bench-{step}", part="m")
        t0 = time.perf_counter()
        again = rollup(location)
        increments.append({"seconds": time.perf_counter() - t0, "points": again.points, "line": again.line()})
    return {"seconds": whole, "points": first.points, "cells": first.cells, "increments": increments}


def child_decode(args: argparse.Namespace) -> dict[str, Any]:
    """The SDK alone on the same bodies: `query_resources` per recorded body, every point's time and value read."""
    from azure.core.credentials import AccessToken
    from azure.monitor.querymetrics import MetricsClient

    class Token:
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            return AccessToken("bench", int(time.time()) + 3600)

    folder = Path(args.recorded)
    count = len(json.loads((folder / "index.json").read_text()))
    client = MetricsClient(ENDPOINT, Token(), transport=replay_transport(folder, in_order=True), retry_total=0)  # type: ignore[arg-type]
    points = 0
    end = dt.datetime.fromtimestamp(args.now, dt.UTC)
    t0 = time.perf_counter()
    for _ in range(count):
        results = client.query_resources(
            resource_ids=[RESOURCE],
            metric_namespace="Microsoft.DocumentDB/databaseAccounts",
            metric_names=[NORMALIZED_RU],
            timespan=(end - dt.timedelta(days=1), end),
            granularity=dt.timedelta(minutes=1),
            filter="PartitionKeyRangeId eq '*'",
            max_results=1000,
        )
        for result in results:
            for metric in result.metrics:
                for series in metric.timeseries:
                    for point in series.data:
                        if point.timestamp is not None and (
                            point.maximum is not None or point.total is not None or point.count is not None
                        ):
                            points += 1
    return {"seconds": time.perf_counter() - t0, "rss": peak_rss(), "points": points, "bodies": count}


def run_child(role: str, **options: Any) -> dict[str, Any]:
    command = [sys.executable, __file__, "--role", role]
    for name, value in options.items():
        command += [f"--{name}", str(value)]
    env = {**os.environ, "RUSCOPE_MONITOR_TOKEN": "bench-token"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{role} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- (d) recording overhead on the point-read path --------------------------------------------------------------


def noop_history() -> Any:
    from emulator.history.aggregates import History

    class NoopHistory(History):
        """Records nothing: the point-read path without the stand-in's accounting."""

        def record(self, *args: Any, **kwargs: Any) -> None:
            return None

    return NoopHistory()


def engine_reads(history: Any, reads: int) -> float:
    """Seconds for `reads` point reads through the engine in-process (real clock), after a warm-up."""
    from emulator.engine.facade import Context

    ctx = Context()
    engine, keys = make_engine(1, time.time, history, throttling=False)
    key = keys[0]
    for _ in range(500):
        engine.read_item(ctx, "t", "c", "doc", [key])
    t0 = time.perf_counter()
    for _ in range(reads):
        engine.read_item(ctx, "t", "c", "doc", [key])
    return time.perf_counter() - t0


def child_serve(args: argparse.Namespace) -> dict[str, Any]:
    """An emulator over HTTP (the Cosmos API) with the real or a no-op History, until stdin closes."""
    from emulator.history.aggregates import History
    from emulator.rest.server import start_in_thread

    engine, _ = make_engine(1, time.time, noop_history() if args.noop else History(), throttling=False)
    running = start_in_thread(engine, port=args.port)
    sys.stdin.read()
    running.stop()
    return {}


def sdk_reads(noop: bool, reads: int) -> float:
    """Seconds for `reads` point reads through the real azure-cosmos SDK against an emulator process."""
    from azure.cosmos import CosmosClient
    from bench_point_ops import KEY, free_port, wait_for

    port = free_port()
    command = [sys.executable, __file__, "--role", "serve", "--port", str(port)] + (["--noop", "1"] if noop else [])
    proc = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        wait_for(port)
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=KEY, consistency_level="Eventual")
        container = client.get_database_client("t").get_container_client("c")
        key = "k0"  # one partition: the first key tried is the document's
        for _ in range(300):
            container.read_item("doc", key)
        t0 = time.perf_counter()
        for _ in range(reads):
            container.read_item("doc", key)
        return time.perf_counter() - t0
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=20)


def overhead(reads: int, sdk_reads_n: int) -> None:
    print("(d) recording overhead on the point-read path (medians of 5, interleaved):")
    for label, fn, n in (
        ("engine in-process", lambda noop: engine_reads(noop_history() if noop else None, reads), reads),
        ("azure-cosmos SDK over HTTP", lambda noop: sdk_reads(noop, sdk_reads_n), sdk_reads_n),
    ):
        real, none = [], []
        for _ in range(5):
            none.append(fn(True))
            real.append(fn(False))
        t_real, t_none = statistics.median(real), statistics.median(none)
        ratio = t_real / t_none
        print(
            f"    {label:<27} no-op History {n / t_none:>9,.0f} reads/s   History {n / t_real:>9,.0f} reads/s   "
            f"ratio {ratio:5.3f}   target <= 1.05: {'pass' if ratio <= 1.05 else 'MISS'}"
        )


# -- the parent -------------------------------------------------------------------------------------------------


def collection(args: argparse.Namespace, tmp: Path) -> None:
    from emulator.monitor.metrics import MetricsApp
    from emulator.monitor.tls import ensure_certificates
    from emulator.rest.server import start_in_thread

    engine, clock, seconds = produce(args.days, args.pkranges)
    reads = args.days * 1440 * args.pkranges
    print(
        f"(a) stand-in: {args.days} day(s) x 1440 min x {args.pkranges} pkranges = {reads:,} NormalizedRU points, "
        f"produced through the engine on the simulated clock in {seconds:.1f} s ({reads / seconds:,.0f} reads/s); "
        f"process RSS {peak_rss() / GB:.2f} GB"
    )
    bodies = tmp / "bodies"
    bodies.mkdir()
    certs = ensure_certificates(tmp / "tls")
    recording = Recording(MetricsApp(engine), bodies)
    running = start_in_thread(engine, app=recording, tls=certs.server_context())
    now = clock.now
    try:
        https = run_child(
            "collect", endpoint=running.url.rstrip("/"), ca=certs.ca, store=tmp / "store-https", days=args.days, now=now
        )
        (bodies / "index.json").write_text(json.dumps(recording.index))
        size = sum(p.stat().st_size for p in bodies.glob("0*.json"))
        served = recording.seconds
        again = run_child(
            "collect", endpoint=running.url.rstrip("/"), ca=certs.ca, store=tmp / "store-https", days=args.days, now=now
        )
    finally:
        running.stop()
    del engine, recording
    decode = run_child("decode", recorded=bodies, now=now)
    replay = run_child(
        "collect", endpoint=ENDPOINT, recorded=bodies, store=tmp / "store-replay", days=args.days, now=now
    )
    print(
        f"    the stand-in answered {len(json.loads((bodies / 'index.json').read_text()))} getBatch requests "
        f"({size / 1e6:,.0f} MB of JSON) in {served:.1f} s of its own time"
    )
    print(
        f"(c) bare decode (MetricsClient on the same bodies): {decode['seconds']:.1f} s, {decode['points']:,} points, "
        f"peak RSS {decode['rss'] / GB:.2f} GB"
    )
    for label, result in (
        ("(b) ruscope metrics, replayed bodies (in-process azure-core transport)", replay),
        ("    ruscope metrics, over HTTPS from the stand-in (end to end)", https),
        ("    ruscope metrics again over HTTPS (nothing new)", again),
    ):
        ratio = result["seconds"] / decode["seconds"]
        print(
            f"{label}: {result['seconds']:.1f} s = {ratio:.2f}x the bare decode; peak RSS {result['rss'] / GB:.2f} GB; exit {result['exit']}"
        )
        for line in result["lines"]:
            print(f"        {line}")
    ratio = replay["seconds"] / decode["seconds"]
    print(f"    target collection <= 2x bare decode (replayed): {ratio:.2f}x  {'pass' if ratio <= 2 else 'MISS'}")
    worst = max(replay["rss"], https["rss"], again["rss"])
    print(f"    target peak memory <= 1.5 GB: {worst / GB:.2f} GB  {'pass' if worst <= 1.5 * GB else 'MISS'}")
    rolled = run_child("rollup", store=tmp / "store-https")
    share = rolled["seconds"] / https["seconds"]
    print(
        f"(e) rollup of the {args.days} collected day(s): {rolled['points']:,} points -> {rolled['cells']:,} cells in "
        f"{rolled['seconds']:.2f} s = {share:.1%} of collecting them over HTTPS "
        f"(target <= 5%: {'pass' if share <= 0.05 else 'MISS'})"
    )
    for n, step in enumerate(rolled["increments"], 1):
        print(
            f"    increment {n} (5 minutes of every series committed, then rolled up): {step['seconds']:.2f} s; {step['line']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--pkranges", type=int, default=100)
    parser.add_argument("--reads", type=int, default=20_000, help="point reads per measurement in (d), in-process")
    parser.add_argument("--sdk-reads", type=int, default=2_000, help="point reads per measurement in (d), SDK")
    parser.add_argument("--skip", choices=["collect", "overhead"], help="leave a part out")
    parser.add_argument("--role", help=argparse.SUPPRESS)
    for hidden in ("endpoint", "ca", "store", "recorded", "port", "noop"):
        parser.add_argument(f"--{hidden}", help=argparse.SUPPRESS)
    parser.add_argument("--now", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role:
        if args.port:
            args.port = int(args.port)
        roles = {"collect": child_collect, "decode": child_decode, "serve": child_serve, "rollup": child_rollup}
        print(json.dumps(roles[args.role](args)))
        return
    tmp = Path(tempfile.mkdtemp(prefix="bench_monitor_"))
    try:
        if args.skip != "collect":
            collection(args, tmp)
        if args.skip != "overhead":
            overhead(args.reads, args.sdk_reads)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
