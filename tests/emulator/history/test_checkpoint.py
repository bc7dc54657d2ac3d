"""The metrics history survives an unclean exit: the server checkpoints it while running (every
`--history-checkpoint-s`, 60 s by default), so a kill -9 loses at most what came after the last checkpoint."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

from cosmoscore.monitor.metrics import TOTAL_REQUESTS
from emulator.history.aggregates import History
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import HISTORY_FILE
from tests.emulator.child import free_port, read_until, start_emulator

WRITES = 30


def _requests(path: Path) -> float:
    """Requests the saved history holds for container d/c (0 when there is no file yet)."""
    if not path.exists():
        return 0.0
    history = History.open(path)
    return sum(p.value for p in history.series("d", "c", TOTAL_REQUESTS, 0, time.time() + 3600))


def test_kill_9_keeps_the_history_up_to_the_last_checkpoint(tmp_path: Path) -> None:
    port = free_port()
    proc = start_emulator(tmp_path, port, extra=("--history-checkpoint-s", "0.3"))
    path = tmp_path / HISTORY_FILE
    try:
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
        c = client.create_database("d").create_container("c", PartitionKey("/k"))
        for i in range(WRITES):
            c.upsert_item({"id": str(i), "k": f"k{i % 5}"})
        deadline = time.monotonic() + 10
        while _requests(path) < WRITES and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _requests(path) >= WRITES  # the upserts at least, though the process never shut down
    proc = start_emulator(tmp_path, port)  # the restarted emulator loads it, and saves it again on its way out
    try:
        read_until(proc, "listening on")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _requests(path) >= WRITES
