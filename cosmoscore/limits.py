"""Service limits the emulator enforces, each citing docs/reference/ru-cost-model.md.

All are fields of `Limits` so tests (and users who want to see a split today) can shrink them.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 1024**3


@dataclass(frozen=True)
class Limits:
    logical_partition_max_bytes: int = 20 * GB  # P1: a logical partition holds at most 20 GB
    physical_partition_max_bytes: int = 50 * GB  # P2, P8: a physical partition splits past 50 GB
    max_ru_per_partition: int = 10_000  # P2, P7: a physical partition serves at most 10,000 RU/s
    manual_ru_per_partition_at_creation: int = 6_000  # P6: ceil(RU / 6,000) partitions at creation
    autoscale_ru_per_partition_at_creation: int = 10_000  # P6: autoscale max / shared database
    max_item_bytes: int = 2 * 1024 * 1024  # P17: item <= 2 MB (413 beyond)
    max_id_bytes: int = 1023  # P17
    max_partition_key_bytes: int = 2048  # P17 (large partition keys)
    max_hierarchy_levels: int = 3  # H1
    default_throughput: int = 400  # cosmos-errors-and-stats.md §2.6: the long-standing minimum, 400 RU/s
    min_throughput: int = 400  # P9: manual minimum (the GB and history terms are not modelled)
