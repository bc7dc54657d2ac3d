"""Calibration points of ru-cost-model.md §4, checked on the pure model."""

from __future__ import annotations

import pytest

from cosmoscore.costmodel import CostModel, normalized_ru
from cosmoscore.layout import (
    even_boundaries,
    initial_range_count,
    key_space_share,
    midpoint,
    ranges_to_split,
    required_range_count,
    storage_split_point,
)
from cosmoscore.limits import Limits

KB = 1024
model = CostModel()


def test_point_read_by_size_and_consistency() -> None:
    assert model.read_ru(1 * KB) == pytest.approx(1.00)  # T1
    assert model.read_ru(300) == pytest.approx(1.00)
    assert model.read_ru(1 * KB, "Strong") == pytest.approx(2.00)  # T2
    assert model.read_ru(1 * KB, "BoundedStaleness") == pytest.approx(2.00)
    assert model.read_ru(8 * KB) == pytest.approx(1.33)  # T3
    assert model.read_ru(64 * KB) == pytest.approx(4.76)
    assert model.read_ru(512 * KB) == pytest.approx(40.95)
    assert 7.5 <= model.read_ru(100 * KB) <= 10.5  # T4
    assert CostModel(profile="legacy").read_ru(100 * KB) == pytest.approx(10.0)


def test_writes() -> None:
    assert model.create_ru(1 * KB, indexed_leaves=5) == pytest.approx(7.00)  # T5: 10 terms
    assert CostModel().create_ru(1 * KB, indexed_leaves=0) == pytest.approx(5.0)  # T6: indexing none
    assert model.replace_ru(1 * KB, 1 * KB, changed_leaves=1, old_leaves=5, new_leaves=5) == pytest.approx(10.80)  # T9
    assert model.patch_ru(1 * KB, 1 * KB, 1, 5, 5, ops=2) == pytest.approx(11.60)  # T10
    assert model.delete_ru(1 * KB, indexed_leaves=5) == pytest.approx(7.00)  # T11
    ratio = model.replace_ru(KB, KB, 1, 5, 5) / model.create_ru(KB, 5)
    assert 1.5 <= ratio <= 2.0  # T12
    full = CostModel(full_reindex_on_replace=True)
    assert full.replace_ru(KB, KB, 1, 5, 5) == pytest.approx(2 * full.create_ru(KB, 5))


def test_write_cost_rises_with_size_and_leaves() -> None:  # T14
    sizes = [model.create_ru(s * KB, 5) for s in (1, 2, 16, 128, 1024)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert model.create_ru(KB, 3) < model.create_ru(KB, 4) < model.create_ru(KB, 20)


def test_query_partition_charges() -> None:
    # one partition's whole result on one page: the per-partition terms and every document term
    one_doc = model.query_page_ru(True, True, loaded_docs=1, loaded_bytes=KB, output_docs=1, output_bytes=KB)
    assert one_doc == pytest.approx(2.884)  # §5 reference value; T15 band 2.3-3.2
    assert model.consistency_multiplier("Strong") * one_doc == pytest.approx(2 * 2.884)  # T16
    empty_fanout = sum(model.query_page_ru(True, False, 0, 0, 0, 0) for _ in range(10))
    assert empty_fanout == pytest.approx(25.0)  # T17


def test_bounded_query_points() -> None:
    # T34 (Q8): a bounded query that loads and returns one 9,963 B document: 3.19 RU measured
    q8 = model.query_page_ru(True, True, loaded_docs=1, loaded_bytes=9_963, output_docs=1, output_bytes=9_963)
    assert 2.9 <= q8 <= 3.4
    # T35 (Q11): the same filter + ORDER BY without the composite index serving both, 44.28 / 8.86
    assert model.query_shape_factor(True) == pytest.approx(44.28 / 8.86, abs=0.01)
    assert model.query_shape_factor(False) == 1.0
    assert CostModel(query_order_without_composite=1.0).query_shape_factor(True) == 1.0  # configurable


def test_feed_page_costs_like_point_reads() -> None:  # Q19
    assert model.feed_page_ru([KB] * 5) == pytest.approx(5.0)
    assert model.feed_page_ru([]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("throughput", "autoscale", "expected"),
    [(400, False, 1), (6_000, False, 1), (18_000, False, 3), (150_000, False, 25), (250_000, True, 25)],
)
def test_partitions_at_creation(throughput: int, autoscale: bool, expected: int) -> None:  # T23
    assert initial_range_count(throughput, autoscale, Limits()) == expected


def test_scaling_3_partitions_to_45k_splits_unevenly() -> None:  # T24
    ranges = even_boundaries(3)
    target = required_range_count(45_000, Limits())
    assert target == 5
    split = ranges_to_split(len(ranges), target)
    result: list[tuple[str, str]] = []
    for i, (lo, hi) in enumerate(ranges):
        if i in split:
            mid = midpoint(lo, hi)
            result += [(lo, mid), (mid, hi)]
        else:
            result.append((lo, hi))
    shares = sorted(key_space_share(lo, hi) for lo, hi in result)
    assert shares == pytest.approx([1 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 3], abs=1e-9)


def test_budget_and_normalized_ru() -> None:
    assert 18_000 / initial_range_count(18_000, False, Limits()) == 6_000  # T25
    assert normalized_ru({"0": 6_000, "1": 8_000}, {"0": 10_000, "1": 10_000}) == pytest.approx(0.80)  # T26


def test_storage_split_point_keeps_logical_partitions_whole() -> None:
    assert storage_split_point([("0A", 100)]) is None
    cut = storage_split_point([("0A", 40), ("1B", 40), ("2C", 40), ("3D", 40)])
    assert cut in ("1B", "2C")
    assert storage_split_point([("0A", 10), ("1B", 90)]) == "1B"
