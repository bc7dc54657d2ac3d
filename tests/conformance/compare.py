"""How conformance rows are compared, by every runner (in-process engine, the SDK replay)."""

from __future__ import annotations

import json
from typing import Any


def normalize(value: Any) -> Any:
    """JSON round trip, with integral doubles as ints (2.0 and 2 are one JSON number)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


def canonical(rows: list) -> list:
    return normalize(json.loads(json.dumps(rows)))
