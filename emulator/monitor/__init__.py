"""The local Azure Monitor stand-in: what the metrics and logs collectors talk to when the account is the emulator.

The real clients (`azure.monitor.querymetrics.MetricsClient`, `azure.monitor.query.LogsQueryClient`) refuse
plain HTTP with a bearer token (azure-monitor.md §4.1), so the stand-in is served over HTTPS with a local
CA (`tls`), on its own port next to the Cosmos DB API (`emulator.rest.server`); `app.MonitorApp` routes `/v1/...`
to the Log Analytics API (`logs`, with the KQL subset in `kql` over the tables in `tables`, the
aggregated ones in `aggregated`) and everything
else to `metrics:getBatch` (`metrics`: which metrics it serves in `definitions`, a shared-throughput
database's own series in `shared`, an account's regions in `regions`). Both answer from the engine's
per-minute `History`: they compute from the emulator's accounting and state, they never invent values, and they refuse (400) what per-minute
aggregates cannot answer exactly.

No request can stall or exhaust the emulator: the service's limits are enforced with its errors
(`cosmoscore.monitor.metrics.MAX_RESOURCE_IDS` and the others: 400; a body past `app.MAX_BODY_BYTES`: 413),
every request is computed on the stand-in's worker threads (`app.MonitorApp.prepare`) within a `budget.Budget`
(Log Analytics' result caps, answered as a `PartialError`, and its `Prefer: wait` deadline, a 504), reading
the history one minute at a time so the Cosmos DB endpoint records and serves meanwhile; a stopping server
cancels it. A new loop over rows or points calls its budget's `check`.
"""
