"""The ruscope emulator: a local Cosmos DB (NoSQL API) that the unmodified azure-cosmos SDK talks to.

The engine (partitioning, items, SQL, RU model, throttling, accounting) is importable and usable
in-process; `emulator.http` is a thin layer that only translates the REST protocol.
"""
