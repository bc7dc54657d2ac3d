"""What a stretch of requests cost (one test of an application's suite, one tagged run of any SDK): RU,
requests and partitions in all and per operation, and the budget of a `ru_budget` marker held against it.

Rows are the emulator's request records as plain mappings (`operation`, `resource_type`, `database`,
`container`, `pkrange_id`, `status`, `request_charge`); the partitions are the physical partitions its
document requests reached (database, container, pkrange), so a point read is one and a fan-out query is as
many as it probed. `requests` counts the document requests (items, queries, feeds: resource type `docs`)
and `metadata` the others (the SDK's own reads of the account, containers and routing map, which depend on
what its caches held when the test started, not on the test): RU counts both, as the service charges both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

THROTTLED = 429


@dataclass(frozen=True)
class OperationCost:
    requests: int = 0
    ru: float = 0.0


@dataclass(frozen=True)
class RequestCost:
    ru: float = 0.0
    requests: int = 0
    partitions: int = 0
    throttled: int = 0
    metadata: int = 0  # requests for other resources than documents (account, containers, pkranges)
    operations: dict[str, OperationCost] = field(default_factory=dict)  # "Query", "Read", "Create", ...


def summarize_requests(rows: Iterable[Mapping[str, Any]]) -> RequestCost:
    ru, count, throttled, metadata = 0.0, 0, 0, 0
    reached: set[tuple[str, str, str]] = set()
    per_op: dict[str, tuple[int, float]] = {}
    for row in rows:
        charge = float(row.get("request_charge") or 0.0)
        ru += charge
        is_document = row.get("resource_type") == "docs"
        count += int(is_document)
        metadata += int(not is_document)
        throttled += int(row.get("status") == THROTTLED)
        op = str(row.get("operation") or "")
        op = op if is_document else f"{op} {row.get('resource_type')}"  # "ReadFeed pkranges": the SDK's own
        n, total = per_op.get(op, (0, 0.0))
        per_op[op] = (n + 1, total + charge)
        if is_document and row.get("pkrange_id"):
            reached.add((str(row.get("database")), str(row.get("container")), str(row.get("pkrange_id"))))
    operations = {op: OperationCost(n, round(total, 2)) for op, (n, total) in sorted(per_op.items())}
    return RequestCost(round(ru, 2), count, len(reached), throttled, metadata, operations)


def over_budget(
    cost: RequestCost,
    *,
    max_ru: float | None = None,
    max_partitions: int | None = None,
    max_requests: int | None = None,
) -> list[str]:
    """Each limit `cost` breaks, said with both figures; empty when it holds."""
    problems = []
    if max_ru is not None and cost.ru > max_ru + 0.005:
        problems.append(f"{cost.ru:.2f} RU, over its budget of {max_ru:g} RU")
    if max_partitions is not None and cost.partitions > max_partitions:
        problems.append(f"reached {cost.partitions} physical partitions, over its budget of {max_partitions}")
    if max_requests is not None and cost.requests > max_requests:
        problems.append(f"{cost.requests} document requests, over its budget of {max_requests}")
    return problems


def operations_text(cost: RequestCost) -> str:
    """`Query 12.40 RU (3 requests), Read 2.00 RU (2 requests)`: where the RU went."""
    return ", ".join(
        f"{op} {c.ru:.2f} RU ({c.requests} request{'' if c.requests == 1 else 's'})"
        for op, c in cost.operations.items()
        if op
    )
