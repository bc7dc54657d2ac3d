"""`ruscope demo` against its target: from an empty directory to the dashboard answering, at most 3 minutes
on this machine (a first-time user waits no longer), and the history generation alone in simulated minutes
per wall second.

Run by hand: `.venv/bin/python benchmarks/bench_demo.py [--size full|small] [--skip-command]`.

1. History alone: the demo's engine in this process (no journal, no HTTP, no collectors) on a simulated
   clock, the containers created, the older conversations loaded, then `size.history_minutes` minutes
   driven (`workloads.chat.history.drive_history`).
2. The command: `ruscope demo --no-browser` in a child process from an empty temporary directory (free
   ports), timed until the dashboard's /_stcore/health answers; its own progress lines are printed, then
   it is stopped with SIGTERM (and must exit 0).
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from emulator.engine.clock import SimulatedClock
from emulator.engine.facade import Engine
from workloads.chat import generator as gen
from workloads.chat import history

TARGET_S = 180.0


def bench_history(size: gen.Size) -> None:
    start = (time.time() // 60) * 60 - size.history_minutes * 60
    clock = SimulatedClock(start - 4 * 3600)
    engine = Engine(limits=history.DEMO_LIMITS, clock=clock)
    history.create_containers(engine)
    began = time.perf_counter()
    documents = history.load_backfill(engine, clock, gen.DEFAULT_SEED, size, start)
    loaded = time.perf_counter() - began
    report = history.drive_history(engine, clock, gen.DEFAULT_SEED, size, start)
    print(f"load: {documents:,} documents in {loaded:.1f} s ({documents / loaded:,.0f} documents/s)")
    print(
        f"history: {report.minutes} simulated minutes in {report.wall_seconds:.1f} s = "
        f"{report.minutes_per_second:.0f} simulated minutes per wall second "
        f"({report.writes:,} writes, {report.reads:,} reads, {report.throttled:,} throttled)"
    )


def bench_command(size: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="ruscope-bench-demo-") as folder:
        command = [sys.executable, "-m", "ruscope", "demo", "--no-browser", "--dir", str(Path(folder) / "demo")]
        command += ["--size", size, "--port", str(port), "--cosmos-port", "0", "--monitor-port", "0"]
        began = time.perf_counter()
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            for line in process.stdout:  # type: ignore[union-attr]
                print(f"  | {line.rstrip()}")
                if "dashboard ready" in line:
                    break
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as answer:
                healthy = answer.read() == b"ok"
            elapsed = time.perf_counter() - began
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(60)
    verdict = "within" if healthy and elapsed <= TARGET_S else "OVER"
    print(f"ruscope demo --no-browser ({size}): empty directory to the dashboard answering in {elapsed:.1f} s; ")
    print(f"  target <= {TARGET_S:.0f} s: {verdict} ({elapsed / TARGET_S:.0%} of it); SIGTERM exit code {code}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(gen.SIZES), default="full")
    parser.add_argument("--skip-command", action="store_true", help="only the history generation")
    args = parser.parse_args()
    bench_history(gen.SIZES[args.size])
    if not args.skip_command:
        bench_command(args.size)


if __name__ == "__main__":
    main()
