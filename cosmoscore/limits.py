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
    # concepts-limits "Maximum length of database or container name": 255 (cosmos-wire-protocol.md W87)
    max_name_chars: int = 255
    max_partition_key_bytes: int = 2048  # P17 (large partition keys)
    max_hierarchy_levels: int = 3  # H1
    default_throughput: int = 400  # cosmos-errors-and-stats.md §2.6: the long-standing minimum, 400 RU/s
    min_throughput: int = 400  # P9: manual minimum (the GB and history terms are not modelled)
    # concepts-limits: 1,000,000 RU/s per container or database without a support ticket;
    # the service's refusal is captured in pagopa-archive/io-infrastructure-live-new#582
    max_throughput: int = 1_000_000
    # concepts-limits: "maximum level of nesting for embedded objects / arrays" 128;
    # deeper documents are refused with a 400 instead of failing later at serialisation
    max_document_depth: int = 128
    # transactional-batch "Limitations": at most 100 operations and a 2 MB payload (cosmos-wire-protocol.md W23)
    max_batch_operations: int = 100
    max_batch_bytes: int = 2 * 1024 * 1024


def nesting_depth(value: object, stop_after: int) -> int:
    """Levels of objects/arrays in a JSON value (a scalar is 0), counted iteratively so no document can
    exhaust the stack; counting stops once past `stop_after`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > stop_after:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def key_value_bytes(key: tuple[object, ...]) -> int:
    """The size a partition key value counts against `max_partition_key_bytes`: its strings' UTF-8 bytes
    (numbers 8, other components 1)."""
    return sum(len(c.encode()) if isinstance(c, str) else 8 if isinstance(c, (int, float)) else 1 for c in key)
