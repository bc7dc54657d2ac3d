"""Per-physical-partition RU/s budgets with one-second windows.

A partition key range that has spent its budget (provisioned RU/s / P, ru-cost-model.md P4) within
the current second answers 429 with the time left until the window resets (P12). The clock is the
engine's, so a simulated clock throttles exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Throttle:
    """Tracks RU consumed per (container, pkrange) in the current one-second window."""

    enabled: bool = True
    _windows: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    def retry_after_ms(self, key: tuple[str, str], budget: float, now: float) -> int | None:
        """None when the range may serve a request now, else milliseconds until its window resets."""
        if not self.enabled:
            return None
        second, spent = self._windows.get(key, (-1, 0.0))
        if second != math.floor(now) or spent < budget:
            return None
        return max(1, math.ceil((second + 1 - now) * 1000))

    def consume(self, key: tuple[str, str], ru: float, now: float) -> None:
        second = math.floor(now)
        current, spent = self._windows.get(key, (second, 0.0))
        self._windows[key] = (second, spent + ru if current == second else ru)
