"""Partition splits: raising throughput past P x 10,000 RU/s halves the leftmost ranges (P7), and a
partition past its storage limit splits on a logical-key boundary (P8). Logical partitions move whole."""

from __future__ import annotations

from cosmoscore.layout import midpoint, ranges_to_split, required_range_count, storage_split_point
from cosmoscore.limits import Limits
from emulator.engine.model import Container, PkRange


def split_for_throughput(coll: Container, throughput: int, limits: Limits) -> None:
    target = required_range_count(throughput, limits)
    for rng in [coll.ranges[i] for i in ranges_to_split(len(coll.ranges), target)]:
        split(coll, rng, midpoint(rng.min, rng.max, coll.hash_version))


def split_for_storage(coll: Container, rng: PkRange, limits: Limits) -> None:
    if rng.size <= limits.physical_partition_max_bytes:
        return
    cut = storage_split_point(sorted((lp.epk, lp.size) for lp in rng.logical.values()))
    if cut is not None:
        split(coll, rng, cut)


def split(coll: Container, parent: PkRange, cut: str) -> None:
    """Replace a range by two children at `cut`; each child names its ancestry in `parents` (P5)."""
    coll.range_version += 1
    children = []
    for lo, hi in ((parent.min, cut), (cut, parent.max)):
        child = PkRange(str(coll.next_range_id), lo, hi, [*parent.parents, parent.id], lsn=parent.lsn)
        coll.next_range_id += 1
        coll.range_log.append((coll.range_version, child.id))
        children.append(child)
    for epk, lp in parent.logical.items():
        child = children[0] if epk < cut else children[1]
        child.logical[epk] = lp
        child.size += lp.size
        child.docs += len(lp.items)
    for child in children:
        child.rebuild_write_order()
    parent.indexes.clear()  # the children index what their queries probe
    coll.ranges.remove(parent)
    coll.ranges.extend(children)
    coll.gone.add(parent.id)
    coll.reindex_ranges()
