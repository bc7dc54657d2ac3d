"""The shop's container, as the application creates it, and its sample documents."""

from __future__ import annotations

from typing import Any

CONTAINER = "orders"
PARTITION_KEY = "/tenantId"
THROUGHPUT = 12_000  # RU/s: two physical partitions on the service (and on the emulator)
INDEXING_POLICY: dict[str, Any] = {
    "compositeIndexes": [[{"path": "/tenantId", "order": "ascending"}, {"path": "/createdAt", "order": "descending"}]]
}


def documents(count: int = 1_200, tenants: int = 12) -> list[dict[str, Any]]:
    """Deterministic orders spread over `tenants` tenants."""
    return [
        {
            "id": f"o{n}",
            "tenantId": f"t{n % tenants}",
            "total": (n * 37) % 500 / 10,
            "status": ("open", "paid", "shipped")[n % 3],
            "createdAt": f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:00:00Z",
        }
        for n in range(count)
    ]
