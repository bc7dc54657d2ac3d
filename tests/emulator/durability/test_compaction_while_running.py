"""The journal is folded into the snapshot while the emulator serves, once it passes a size
(`--compact-journal-mb`), instead of growing until a restart; a kill -9 after that loses nothing."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

from emulator.durability.journal import JOURNAL, SNAPSHOT
from emulator.rest.auth import WELL_KNOWN_KEY
from tests.emulator.child import free_port, start_emulator

AT_BYTES = 20_000
WRITES = 300


def _compacted(journal: Path, snapshot: Path) -> bool:
    size = snapshot.stat().st_size if snapshot.exists() else 0
    return size >= AT_BYTES and journal.stat().st_size < max(AT_BYTES, size) + 2_000


def test_the_journal_is_compacted_while_running(tmp_path: Path) -> None:
    port = free_port()
    extra = ("--history-checkpoint-s", "0.2", "--compact-journal-mb", str(AT_BYTES / 1024 / 1024))
    proc = start_emulator(tmp_path, port, extra=extra)
    journal, snapshot = tmp_path / JOURNAL, tmp_path / SNAPSHOT
    try:
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
        c = client.create_database("d").create_container("c", PartitionKey("/k"))
        for i in range(WRITES):
            c.upsert_item({"id": str(i), "k": f"k{i % 5}", "pad": "x" * 100})
        # folded in while running; after that, a journal is compacted once it is past the snapshot's size too,
        # at the next checkpoint (every 0.2 s here): wait for the one after the last write
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not _compacted(journal, snapshot):
            time.sleep(0.1)
        assert snapshot.stat().st_size >= AT_BYTES, "the journal was not compacted while running"
        assert journal.stat().st_size < max(AT_BYTES, snapshot.stat().st_size) + 2_000
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    proc = start_emulator(tmp_path, port)
    try:
        c = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY).get_database_client("d")
        ids = {d["id"] for d in c.get_container_client("c").read_all_items()}
        assert ids == {str(i) for i in range(WRITES)}
    finally:
        proc.kill()
        proc.wait()
