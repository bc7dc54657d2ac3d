"""The emulator holding the query benchmark's data: populated in-process, then served over HTTP.

Writing 500,000 items through the engine API takes seconds where the SDK would take minutes, and the
data is the same. The parent (bench_query.py) reads this process's memory from /proc/<pid>/status at
each handshake line, so the figures are the emulator's own, not the load generator's:
  stdout "idle"              after imports; waits for a line on stdin, then populates
  stdout "ready URL BYTES"   populated, its heap settled as `ruscope emulator` settles it
                             (`emulator.rest.server.settle_heap`), and serving (BYTES: stored size, system
                             properties included); serves until stdin closes
  stdout "gc MAX COUNT SUM"  on the way out: the garbage collector's pauses while serving (worst and
                             total milliseconds, and how many), timed with `gc.callbacks`
Run standalone: python benchmarks/query_server.py [--items 20000]  (then press Enter)
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from typing import Any

import orjson

from emulator.engine.facade import Context, ThroughputSpec
from emulator.rest.server import open_engine, settle_heap, start_in_thread

DATABASE, CONTAINER = "bench", "items"
TENANTS, CATEGORIES, DOC_BYTES = 1_000, 20, 1_000
THROUGHPUT = 60_000  # manual RU/s: ceil(60,000 / 6,000) = 10 physical partitions (P6)


def make_doc(i: int) -> dict[str, Any]:
    """Item i, the same in the server and the baseline; orjson.dumps of it is DOC_BYTES long.

    Fields come from a multiplicative hash of i, so category and n are independent and every
    document owns its strings (a shared padding object would understate memory).
    """
    h = (i * 2_654_435_761) & 0xFFFFFFFF
    doc: dict[str, Any] = {
        "id": f"item{i:07d}",
        "pk": f"tenant{(h >> 7) % TENANTS:04d}",
        "n": h % 1_000,
        "category": f"cat{(h >> 17) % CATEGORIES}",
        "flag": bool(h >> 31),
        "price": (h >> 12) % 100_000 / 100,
        "tags": [f"t{h % 7}", f"t{h % 11}"],
    }
    room = DOC_BYTES - len(orjson.dumps(doc)) - len(',"pad":""')
    doc["pad"] = (f"{h:08x}" * (room // 8 + 1))[:room]
    return doc


def populate(items: int) -> tuple[Any, int]:
    """An engine with `items` documents in DATABASE/CONTAINER; returns it and the stored bytes."""
    engine = open_engine(throttling=False)
    ctx = Context()
    engine.create_database(ctx, {"id": DATABASE})
    body = {"id": CONTAINER, "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}
    engine.create_container(ctx, DATABASE, body, ThroughputSpec(THROUGHPUT))
    started = time.perf_counter()
    for i in range(items):
        doc = make_doc(i)
        engine.create_item(ctx, DATABASE, CONTAINER, doc, [doc["pk"]])
        if (i + 1) % 100_000 == 0:
            print(f"  populated {i + 1:,} items in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    gc.collect()
    stored = sum(r.size for r in engine.container(DATABASE, CONTAINER).ranges)
    return engine, stored


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=500_000)
    args = parser.parse_args()
    print("idle", flush=True)
    sys.stdin.readline()
    engine, stored = populate(args.items)
    settle_heap()
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    running = start_in_thread(engine, port=0)
    print(f"ready {running.url} {stored}", flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
    running.stop()
    gc.callbacks.remove(pauses)
    print(
        f"gc {max(pauses.durations, default=0.0):.1f} {len(pauses.durations)} {sum(pauses.durations):.1f}", flush=True
    )


class GcPauses:
    """Each garbage collection's duration in milliseconds (a `gc.callbacks` entry): the server's stalls."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.durations.append((time.perf_counter() - self._started) * 1000)


if __name__ == "__main__":
    main()
