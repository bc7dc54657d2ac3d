"""The local Azure Monitor stand-in: what the metrics collector talks to when the account is the emulator.

The real clients (`azure.monitor.querymetrics.MetricsClient`) refuse plain HTTP with a bearer token
(azure-monitor.md §4.1), so the stand-in is served over HTTPS with a local CA (`tls`), on its own port
next to the Cosmos DB API (`emulator.server`). `metrics` answers `metrics:getBatch` from the engine's
per-minute `History`: it computes from the emulator's accounting, it never invents values.
"""
