"""Write the shop's sample documents as JSON Lines, for `ruscope check --sample` (its ruscope.toml):

    python -m workloads.shop.sample orders.jsonl

The same documents the application's own suite creates (`schema.documents`), so the gate and the suite
measure one data set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workloads.shop.schema import documents


def write_sample(path: Path, count: int = 1_200) -> int:
    """Write `count` orders to `path`; how many were written."""
    rows = documents(count)
    path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows), encoding="utf-8")
    return len(rows)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "orders.jsonl")
    print(f"{write_sample(target)} orders written to {target}")
