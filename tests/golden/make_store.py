"""Regenerate the golden store (tests/golden/store): the collected store of tests/collected.py on a fixed
day, compacted, so its numbers never move. Run after a change to the collectors or the store's schema, and
review the diff of the golden files the tests compare against:

    .venv/bin/python -m tests.golden.make_store
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from pathlib import Path

from store import store_location
from store.maintenance import compact
from tests.collected import build_collected_store

GOLDEN_STORE = Path(__file__).resolve().parent / "store"
GOLDEN_START = dt.datetime(2026, 5, 1, 8, tzinfo=dt.UTC).timestamp()  # minute 0 of the two hours


def main() -> None:
    shutil.rmtree(GOLDEN_STORE, ignore_errors=True)
    with tempfile.TemporaryDirectory() as work:
        build_collected_store(GOLDEN_STORE, Path(work), start=GOLDEN_START)
    compact(store_location(GOLDEN_STORE), retention_hours=0)
    files = [path for path in GOLDEN_STORE.rglob("*") if path.is_file()]
    print(f"{GOLDEN_STORE}: {len(files)} files, {sum(path.stat().st_size for path in files) / 1024:.0f} KB")


if __name__ == "__main__":
    main()
