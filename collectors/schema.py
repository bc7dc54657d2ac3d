"""The store's table declarations, kept importable here for older importers: they live in
`collectors.store.records` (import them from `collectors.store`)."""

from collectors.store.records import EXECUTIONS, REQUESTS, TABLES, UTC_TIME, Table

__all__ = ["EXECUTIONS", "REQUESTS", "TABLES", "UTC_TIME", "Table"]
