"""The sample's plan, pure: which documents each (feed range, `_ts` window) cell contributes.

A cell's weight is its documents: the window's COUNT(1) when the plan counted it, else its range's count
(the partition statistics') spread evenly over the range's windows. The sample is allotted to the cells
by weight with the largest-remainder rule, so the quotas add up to the sample and each is within one
document of its exact proportional share.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Window:
    """`lo <= _ts < hi` (both None: the whole range, read in the feed's order)."""

    lo: int | None
    hi: int | None
    documents: int | None = None  # its COUNT(1); None: not counted


@dataclass(frozen=True)
class RangePlan:
    """One feed range: its documents (the windows' counts when `counted`, else the statistics'; None:
    unknown) and its `_ts` windows."""

    documents: int | None
    windows: tuple[Window, ...]
    counted: bool = False


@dataclass(frozen=True)
class Cell:
    """One window of one feed range, its weight (documents) and its quota of the sample."""

    range_index: int
    window: Window
    weight: float
    quota: int
    counted: bool

    @staticmethod
    def for_plans(plans: Sequence[RangePlan], max_documents: int) -> list[Cell]:
        """Every range's windows as cells, the sample allotted to them by weight (module docstring)."""
        known = [p.documents for p in plans if p.documents is not None]
        guess = sum(known) / len(known) if known else 1.0  # a range without statistics: the mean range
        shape = [
            (i, w, float(w.documents or 0) if p.counted else (guess if p.documents is None else p.documents) / len(p.windows), p.counted)
            for i, p in enumerate(plans)
            for w in p.windows
        ]  # fmt: skip
        quotas = allot(max_documents, [weight for _, _, weight, _ in shape])
        return [Cell(i, w, weight, q, counted) for (i, w, weight, counted), q in zip(shape, quotas, strict=True)]


def allot(total: int, weights: Sequence[float]) -> list[int]:
    """`total` split in proportion to `weights` by the largest-remainder rule (all 0 when they add up to 0)."""
    whole = sum(weights)
    if whole <= 0:
        return [0] * len(weights)
    exact = [total * w / whole for w in weights]
    quotas = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (quotas[i] - exact[i], i))
    for i in by_remainder[: total - sum(quotas)]:
        quotas[i] += 1
    return quotas


def window_edges(lo: int, hi: int, windows: int) -> list[int]:
    """Edges of up to `windows` windows of equal time covering `lo <= _ts <= hi` (whole seconds)."""
    span = hi + 1 - lo
    return sorted({lo + span * i // max(windows, 1) for i in range(max(windows, 1) + 1)})


def windows_for(share: int, most: int) -> int:
    """Windows for a range whose share of the sample is `share` documents: no window averages under one."""
    return max(1, min(most, share))


def _within(inner: tuple[str, str], outer: Mapping[str, Any]) -> bool:
    """Whether the pkrange EPK bounds `inner` lie in the feed range `outer` (EPKs compare as strings)."""
    lo, hi = str(outer.get("min", "")), str(outer.get("max", "FF"))
    return lo <= inner[0] and inner[1] <= hi


def range_documents(
    ranges: Sequence[Mapping[str, Any]],
    statistics: Sequence[Mapping[str, Any]],
    bounds: Mapping[str, tuple[str, str]],
) -> list[int | None]:
    """Each feed range's `documentCount` from the partition statistics: the pkranges within it, summed
    (None: no statistics matched it)."""
    counts: list[int | None] = []
    for feed_range in ranges:
        outer = feed_range.get("Range", {})
        found = [int(s.get("documentCount") or 0) for s in statistics if str(s.get("id")) in bounds and _within(bounds[str(s.get("id"))], outer)]  # fmt: skip
        counts.append(sum(found) if found else None)
    return counts
