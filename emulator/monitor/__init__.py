"""The local Azure Monitor stand-in: what the metrics and logs collectors talk to when the account is the emulator.

The real clients (`azure.monitor.querymetrics.MetricsClient`, `azure.monitor.query.LogsQueryClient`) refuse
plain HTTP with a bearer token (azure-monitor.md §4.1), so the stand-in is served over HTTPS with a local
CA (`tls`), on its own port next to the Cosmos DB API (`emulator.rest.server`); `app.MonitorApp` routes `/v1/...`
to the Log Analytics API (`logs`, with the KQL subset in `kql` over the tables in `tables`) and everything
else to `metrics:getBatch` (`metrics`). Both answer from the engine's per-minute `History`: they compute
from the emulator's accounting and state, they never invent values, and they refuse (400) what per-minute
aggregates cannot answer exactly.
"""
