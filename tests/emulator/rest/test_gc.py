"""A loaded state is frozen out of the garbage collector's reach (measured: full collections at 500,000
documents stalled every client 2.3-2.8 s). Checked in a child process: freezing is process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import gc, json, sys
from cosmoscore.keys import key_from_json
from emulator.engine.facade import Context
from emulator.engine.heap import GC_FULL_EVERY
from emulator.rest.server import open_engine

data_dir = sys.argv[1]
engine = open_engine(data_dir, throttling=False)
ctx = Context()
engine.create_database(ctx, {"id": "d"})
engine.create_container(ctx, "d", {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}})
for i in range(2000):
    engine.create_item(ctx, "d", "c", {"id": str(i), "k": str(i % 7), "n": [i]}, key_from_json([str(i % 7)]))
engine.close()
before = gc.get_freeze_count()
engine = open_engine(data_dir, settle=True)
tracked = {id(o) for o in gc.get_objects()}
print(json.dumps({"before": before, "frozen": gc.get_freeze_count(), "threshold": gc.get_threshold(),
                  "full_every": GC_FULL_EVERY, "engine_tracked": id(engine) in tracked}))
"""


def test_open_engine_settles_a_loaded_state(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["before"] == 0 and facts["frozen"] > 2000  # the 2,000 documents and their structures
    assert facts["threshold"][2] == facts["full_every"] >= 100
    assert not facts["engine_tracked"]  # the engine itself is frozen, not traversed by collections


INDEX_CHILD = """
import gc, json, sys
from emulator.engine import heap
from emulator.engine.query.budget import QuerySettings
from emulator.engine.facade import Context, Engine, QuerySpec, ThroughputSpec
from emulator.engine.query.range_index import IndexSettings

engine = Engine(throttling=False, query_settings=QuerySettings(index=IndexSettings(min_documents=0, max_share=1.0, build_budget_ms=1e9)))
ctx = Context()
engine.create_database(ctx, {"id": "d"})
engine.create_container(ctx, "d", {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}},
                        ThroughputSpec(400))
for i in range(3000):
    engine.create_item(ctx, "d", "c", {"id": str(i), "k": str(i % 7), "n": i})
if sys.argv[1] == "settled":
    heap.settle()
before = gc.get_freeze_count()
rng = engine.container("d", "c").ranges[0]
engine.query_page(ctx, "d", "c", QuerySpec("SELECT * FROM c WHERE c.n < 10", {}, pkrange_id=rng.id))
index = rng.indexes.paths[("n",)]
tracked = {id(o) for o in gc.get_objects()}
print(json.dumps({"ready": index.ready, "grew": gc.get_freeze_count() - before,
                  "index_tracked": id(index.ordered[3]._lists) in tracked}))
"""


def test_a_completed_index_is_frozen_where_the_heap_is_settled_and_only_there() -> None:
    facts = {}
    for mode in ("settled", "unsettled"):
        done = subprocess.run(
            [sys.executable, "-c", INDEX_CHILD, mode], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
        )
        facts[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["settled"]["ready"] and facts["unsettled"]["ready"]
    assert facts["settled"]["grew"] > 0 and not facts["settled"]["index_tracked"]  # out of full collections' reach
    assert facts["unsettled"]["grew"] == 0 and facts["unsettled"]["index_tracked"]  # a test process frees it
