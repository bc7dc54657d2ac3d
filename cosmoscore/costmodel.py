"""The RU cost model: what every emulated request charges, from published numbers.

Each constant cites its row in docs/reference/ru-cost-model.md (R1.., W1.., Q1.., C1..), where the
original Microsoft page or measurement is named. Every constant is a field of `CostModel`, so a config
(or a calibration against real `x-ms-request-charge` values) can change it. Functions here are pure:
sizes and term counts in, RU out.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass

# Table R3 (understand-request-unit-consumption.md, 2026): item size KB -> (read RU, write RU).
_R3_TABLE: tuple[tuple[float, float, float], ...] = (
    (1, 1.00, 4.95),
    (2, 1.04, 6.29),
    (4, 1.14, 6.67),
    (8, 1.33, 7.04),
    (16, 1.67, 9.52),
    (32, 2.19, 11.23),
    (64, 4.76, 22.67),
    (128, 9.95, 48.19),
    (256, 20.28, 98.29),
    (512, 40.95, 184.57),
    (1024, 145.90, 625.00),
    (2048, 291.80, 1250.00),
)

STRONG_LEVELS = frozenset({"Strong", "BoundedStaleness"})


@dataclass(frozen=True)
class CostModel:
    """Constants of the RU model (ru-cost-model.md §3); defaults are the documented values."""

    profile: str = "table2026"  # or "legacy" (§2.1: read = max(1, KB/10), write = 5 + 0.45 KB)
    size_table: tuple[tuple[float, float, float], ...] = _R3_TABLE  # R3
    write_base_1kb: float = 5.0  # W1: the size term of a 1 KB write
    ru_per_index_term: float = 0.2  # W1, W2, W4
    terms_per_indexed_leaf: float = 2.0  # k_t, FIT to W8 (5-leaf create measured 7.05)
    ru_per_patch_op: float = 0.4  # W3
    full_reindex_on_replace: bool = False  # §2.3: replace = 2 x create (W5/W10) when on
    strong_read_multiplier: float = 2.0  # C1, C2
    query_min_per_partition: float = 2.5  # Q3 ("about 2.5 RUs" per physical partition checked)
    query_nonempty_partition: float = 0.3  # FIT: partitions returning data measure 2.83-2.98 (Q7, Q9)
    query_per_loaded_doc: float = 0.04  # FIT (§3.3)
    query_per_loaded_kb: float = 0.004  # FIT (§3.3)
    query_per_output_doc: float = 0.02  # FIT (§3.3, Q16)
    query_per_output_kb: float = 0.02  # FIT (§3.3, Q16)
    # Q11: a filter + ORDER BY without the composite index serving both, 44.28 RU against 8.86 RU with it
    query_order_without_composite: float = 5.0
    feed_min_per_page: float = 1.0  # Q19: a feed page costs about the point reads of its documents
    # ASSUMPTION (cosmos-errors-and-stats.md §2.4 shows small charges on metadata reads; no published rule)
    metadata_read_ru: float = 1.0
    metadata_write_ru: float = 1.0
    query_plan_ru: float = 0.0  # cosmos-wire-protocol.md §7.3: the gateway's plan charge is unverified
    refused_query_ru: float = 0.0  # ditto for the 400/1004 first attempt
    throttled_ru: float = 0.0  # cosmos-errors-and-stats.md §1.1: "Emulator: 0 is safe" for 429s
    # M2: a failed request (400, 412, 449) is still charged; a 404 point read was captured at 1 RU
    # (cosmos-errors-and-stats.md §1.1, layout B). ASSUMPTION: a write refused after its lookup (404, 409,
    # 412) costs this factor times the point read of what it examined.
    refused_write_read_factor: float = 1.0

    # -- point operations -------------------------------------------------------------------

    def read_ru(self, size_bytes: int, consistency: str | None = None) -> float:
        """Point read: R1-R3, doubled under Strong/BoundedStaleness (C1)."""
        return self._kappa(consistency) * self.read_size_ru(size_bytes)

    def read_size_ru(self, size_bytes: int) -> float:
        kb = size_bytes / 1024
        if self.profile == "legacy":
            return max(1.0, kb / 10)
        return _interpolate(self.size_table, kb, 1)

    def refused_write_ru(self, examined_bytes: int) -> float:
        """A write refused after looking its item up (404 absent, 409 exists, 412 etag): that read (M2)."""
        return self.refused_write_read_factor * self.read_size_ru(examined_bytes)

    def write_base(self, size_bytes: int) -> float:
        """Wbase(s) = 5.0 * Wtab(s) / 4.95: the size term of a write (W1 scaled by R3's shape)."""
        kb = size_bytes / 1024
        if self.profile == "legacy":
            return self.write_base_1kb + 0.45 * max(0.0, kb - 1)
        first_write = self.size_table[0][2]
        return self.write_base_1kb * _interpolate(self.size_table, kb, 2) / first_write

    def index_terms(self, indexed_leaves: int) -> float:
        """T = k_t * L (§3.2)."""
        return self.terms_per_indexed_leaf * indexed_leaves

    def create_ru(self, size_bytes: int, indexed_leaves: int) -> float:
        """Create: Wbase + 0.2 per indexed term (W1: 1 KB with 10 terms = 7.0)."""
        return self.write_base(size_bytes) + self.ru_per_index_term * self.index_terms(indexed_leaves)

    def delete_ru(self, size_bytes: int, indexed_leaves: int) -> float:
        """Delete: the size term plus the removed terms (W4)."""
        return self.create_ru(size_bytes, indexed_leaves)

    def replace_ru(self, old_size: int, new_size: int, changed_leaves: int, old_leaves: int, new_leaves: int) -> float:
        """Replace: delete old + insert new + the changed terms removed and added (W2: 10.8 RU)."""
        if self.full_reindex_on_replace:
            return self.create_ru(old_size, old_leaves) + self.create_ru(new_size, new_leaves)
        changed_terms = self.index_terms(changed_leaves)
        return self.write_base(old_size) + self.write_base(new_size) + self.ru_per_index_term * 2 * changed_terms

    def patch_ru(
        self, old_size: int, new_size: int, changed_leaves: int, old_leaves: int, new_leaves: int, ops: int
    ) -> float:
        """Patch: the replace charge plus a base per patch operation (W3: 11.6 RU)."""
        replace = self.replace_ru(old_size, new_size, changed_leaves, old_leaves, new_leaves)
        return replace + self.ru_per_patch_op * ops

    # -- queries and feeds ------------------------------------------------------------------

    def query_page_ru(
        self, first: bool, nonempty: bool, loaded_docs: int, loaded_bytes: int, output_docs: int, output_bytes: int
    ) -> float:
        """One page of a partition's result: the per-partition terms on its first page, the document terms
        for the share this page carries, so paging does not change the total (M2)."""
        fixed = self.query_min_per_partition + (self.query_nonempty_partition if nonempty else 0.0)
        return (
            (fixed if first else 0.0)
            + self.query_per_loaded_doc * loaded_docs
            + self.query_per_loaded_kb * loaded_bytes / 1024
            + self.query_per_output_doc * output_docs
            + self.query_per_output_kb * output_bytes / 1024
        )

    def query_shape_factor(self, order_without_composite: bool) -> float:
        """m_shape (§3.3): Q11's factor for a filter + ORDER BY that lacks its composite index, else 1."""
        return self.query_order_without_composite if order_without_composite else 1.0

    def feed_page_ru(self, sizes: list[int], consistency: str | None = None) -> float:
        """A read-feed page costs about the point reads of its documents (Q19)."""
        total = sum(self.read_size_ru(s) for s in sizes)
        return self._kappa(consistency) * max(self.feed_min_per_page, total)

    def consistency_multiplier(self, consistency: str | None) -> float:
        return self._kappa(consistency)

    def _kappa(self, consistency: str | None) -> float:
        return self.strong_read_multiplier if consistency in STRONG_LEVELS else 1.0


def normalized_ru(consumed: Mapping[str, float], budgets: Mapping[str, float]) -> float:
    """Normalized RU consumption: the max over ranges of consumed / budget (ru-cost-model.md P11).

    Azure Monitor's `NormalizedRUConsumption` is this per second: one hot range shows 100% while the
    container's total is low, which is why the dashboard splits it by `PartitionKeyRangeId`.
    """
    return max((consumed.get(pk, 0.0) / budget for pk, budget in budgets.items() if budget > 0), default=0.0)


def _interpolate(table: tuple[tuple[float, float, float], ...], kb: float, column: int) -> float:
    """Piecewise-linear interpolation of one column of the size table; flat below the first row."""
    sizes = [row[0] for row in table]
    if kb <= sizes[0]:
        return table[0][column]
    if kb >= sizes[-1]:
        last, prev = table[-1], table[-2]
        slope = (last[column] - prev[column]) / (last[0] - prev[0])
        return last[column] + slope * (kb - last[0])
    i = bisect.bisect_left(sizes, kb)
    lo, hi = table[i - 1], table[i]
    frac = (kb - lo[0]) / (hi[0] - lo[0])
    return lo[column] + frac * (hi[column] - lo[column])
