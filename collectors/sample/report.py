"""What a sample read says about itself: how many documents, what it cost, why it stopped, and the bias
it can measure against the container (`bias_lines`): each feed range's share of the sample against its
share of the documents, the `_ts` windows it covers, and the total-variation distance over its cells (half
the summed gaps between the sample's and the documents' shares: 0% is a proportional sample, 100% one that
holds none of the documents' cells)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collectors.sample.plan import Cell, RangePlan

UNMEASURED = (
    "not measured: which documents of a window were taken (its first, in the feed's order), and updates "
    "(_ts is a document's last write, so an updated document counts at its update)"
)


@dataclass(frozen=True)
class Stratum:
    """One cell of the sample: a `_ts` window of a feed range (None, None: the whole range)."""

    range_index: int
    lo: int | None
    hi: int | None
    documents: float  # in the container: its count, or its range's statistics spread evenly (`counted` False)
    counted: bool
    quota: int
    sampled: int


@dataclass(frozen=True)
class SampleReport:
    path: Path
    documents: int
    request_charge: float  # every response's x-ms-request-charge, metadata reads included
    partitions_covered: int  # feed ranges (physical partitions) with at least one sampled document
    partitions: int
    stopped_by: str  # "end" (everything read), "max_documents" or "budget"
    per_partition: tuple[int, ...] = ()  # documents sampled from each feed range, in EPK order of the SDK
    range_documents: tuple[int | None, ...] = ()  # each feed range's documents (counted, else statistics)
    strata: tuple[Stratum, ...] = ()
    sampled_ts: tuple[int, int] | None = None  # the sample's own _ts span

    @staticmethod
    def of(
        path: Path, cells: Sequence[Cell], taken: Sequence[Sequence[dict[str, Any]]], plans: Sequence[RangePlan], *,
        request_charge: float, stopped_by: str,
    ) -> SampleReport:  # fmt: skip
        """The report on the cells' documents `taken` (one list per cell)."""
        per = [0] * len(plans)
        for cell, docs in zip(cells, taken, strict=True):
            per[cell.range_index] += len(docs)
        strata = tuple(
            Stratum(c.range_index, c.window.lo, c.window.hi, c.weight, c.counted, c.quota, len(docs))
            for c, docs in zip(cells, taken, strict=True)
        )
        stamps = [d["_ts"] for docs in taken for d in docs if isinstance(d.get("_ts"), int | float)]
        span = (int(min(stamps)), int(max(stamps))) if stamps else None
        covered = sum(1 for n in per if n)
        ranges = tuple(p.documents for p in plans)
        return SampleReport(
            path, sum(per), request_charge, covered, len(plans), stopped_by, tuple(per), ranges, strata, span
        )

    def line(self) -> str:
        return (
            f"{self.path}: {self.documents} document(s) from {self.partitions_covered}/{self.partitions} "
            f"physical partition(s), {self.request_charge:.1f} RU (stopped by {self.stopped_by})"
        )

    def range_shares(self) -> list[tuple[float, float | None]]:
        """Each feed range's (share of the sample, share of the documents; None: its count is unknown)."""
        known = sum(n for n in self.range_documents if n is not None)
        return [
            (n_sampled / self.documents if self.documents else 0.0, None if n is None else (n / known if known else 0.0))
            for n_sampled, n in zip(self.per_partition, self.range_documents, strict=True)
        ]  # fmt: skip

    def total_variation(self) -> float | None:
        """Half the summed gaps between the cells' shares of the sample and of the documents (None: no
        documents or nothing sampled)."""
        whole = sum(s.documents for s in self.strata)
        if not whole or not self.documents:
            return None
        return sum(abs(s.sampled / self.documents - s.documents / whole) for s in self.strata) / 2

    def bias_lines(self) -> list[str]:
        """The sample's bias it can measure, and what it cannot, in plain words (module docstring)."""
        if not self.partitions:
            return []
        shares = self.range_shares()
        parts = [f"#{i} {s:.1%} vs {'unknown' if d is None else f'{d:.1%}'}" for i, (s, d) in enumerate(shares)]
        gaps = [abs(s - d) for s, d in shares if d is not None]
        gap = f" (largest gap {100 * max(gaps):.1f} pts)" if gaps else ""
        lines = [f"sample vs documents per feed range: {', '.join(parts)}{gap}"]
        lines.append(self._windows_line())
        uncounted = {s.range_index for s in self.strata if not s.counted and s.documents}
        tv = self.total_variation()
        if tv is not None:
            whole = "; an uncounted range as one cell, so its time bias is not in it" if uncounted else ""
            lines.append(f"total variation over feed ranges x _ts windows: {tv:.1%} (0% is proportional{whole})")
        if uncounted:
            lines.append(
                f"{len(uncounted)} of {self.partitions} feed range(s) not counted by _ts window within the plan's "
                "share of the budget: read over even time windows, or without a _ts span in the feed's order"
            )
        unknown = sum(1 for n in self.range_documents if n is None)
        if unknown:
            lines.append(
                f"{unknown} feed range(s) without partition statistics: their share of the documents is a guess"
            )
        return [*lines, UNMEASURED]

    def _windows_line(self) -> str:
        holding = [s for s in self.strata if s.documents > 0 and s.lo is not None]
        if not holding:
            return "_ts windows: none (the plan read no _ts span: each range in the feed's order, oldest writes first)"
        sampled = sum(1 for s in holding if s.sampled)
        span = (
            f"the documents' _ts {_utc(min(s.lo or 0 for s in holding))} to {_utc(max(s.hi or 1 for s in holding) - 1)}"
        )
        mine = f", the sample's {_utc(self.sampled_ts[0])} to {_utc(self.sampled_ts[1])}" if self.sampled_ts else ""
        return f"_ts windows: {sampled} of {len(holding)} holding documents are in the sample; {span}{mine}"


def _utc(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
