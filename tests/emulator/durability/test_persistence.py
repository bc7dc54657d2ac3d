"""`--data-dir`: a restart, even after kill -9, loses no acknowledged write."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from azure.cosmos import CosmosClient, PartitionKey

from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.server import open_engine
from tests.emulator.child import free_port, start_emulator


def test_kill_9_then_restart_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    port = free_port()
    proc = start_emulator(tmp_path, port)
    try:
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
        c = client.create_database("d").create_container("c", PartitionKey("/k"), offer_throughput=18_000)
        for i in range(40):
            c.upsert_item({"id": str(i), "k": f"k{i % 5}", "v": i})
        c.delete_item("3", "k3")
        c.patch_item("4", "k4", [{"op": "set", "path": "/v", "value": "patched"}])
        c.replace_throughput(45_000)  # 3 -> 5 partitions, journaled like any write
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    proc = start_emulator(tmp_path, port)
    try:
        client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
        c = client.get_database_client("d").get_container_client("c")
        ids = sorted(int(d["id"]) for d in c.read_all_items())
        assert ids == [i for i in range(40) if i != 3]
        assert c.read_item("4", "k4")["v"] == "patched"
        assert c.get_throughput().offer_throughput == 45_000
        assert len(list(c.read_feed_ranges())) == 5
    finally:
        proc.send_signal(signal.SIGTERM)  # a clean stop compacts the journal
        assert proc.wait(timeout=20) == 0
    assert (tmp_path / "snapshot.jsonl").stat().st_size > 0
    assert (tmp_path / "journal.jsonl").stat().st_size == 0


def test_snapshot_round_trip_keeps_layout_and_items(tmp_path: Path) -> None:
    engine = open_engine(tmp_path)
    from emulator.engine.facade import Context, ThroughputSpec

    ctx = Context()
    engine.create_database(ctx, {"id": "d"})
    engine.create_container(
        ctx, "d", {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}, ThroughputSpec(18_000)
    )
    for i in range(30):
        engine.create_item(ctx, "d", "c", {"id": str(i), "k": f"k{i}"}, [f"k{i}"])
    offer = engine.offers[engine.container("d", "c").offer_rid]
    engine.replace_offer(ctx, offer.rid, 45_000)
    layout = [(r.id, r.min, r.max, r.docs) for r in engine.container("d", "c").ranges]
    engine.close()
    again = open_engine(tmp_path)
    assert [(r.id, r.min, r.max, r.docs) for r in again.container("d", "c").ranges] == layout
    again.close()
