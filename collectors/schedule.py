"""Intervals for `ruscope collect --every`: `30s`, `5m`, `1h`, `1h30m`."""

from __future__ import annotations

import re

_PART = re.compile(r"(\d+)([smh])")
_SECONDS = {"s": 1, "m": 60, "h": 3600}


def parse_interval(text: str) -> float:
    """Seconds in an interval such as `5m` or `1h30m` (at least one second)."""
    cleaned = text.strip().lower()
    if not cleaned or _PART.sub("", cleaned):
        raise ValueError(f"{text!r} is not an interval; use e.g. 30s, 5m, 1h or 1h30m")
    seconds = sum(int(n) * _SECONDS[unit] for n, unit in _PART.findall(cleaned))
    if seconds < 1:
        raise ValueError("the interval must be at least one second")
    return float(seconds)
