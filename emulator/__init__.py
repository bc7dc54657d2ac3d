"""The ruscope emulator: a local Cosmos DB (NoSQL API) that the unmodified azure-cosmos SDK talks to.

Layout (Cosmos knowledge itself, SQL, EPK hashing, routing, layout, limits, the RU cost model, lives in
`cosmoscore`):
- engine side, no wire format: `engine` (the `Engine` facade, the domain API the advisor and the demo
  call in-process), `state` (resources and the journal appliers and snapshot), `catalog` (databases,
  containers, offers, the routing map), `items` (point operations), `feeds` (read feeds), `querying`
  (query pages, plans and `run_query`'s SDK-like fan-out) with `queries` (its pure helpers), `budget`
  (the per-page execution budget, `QuerySettings`), `range_index` (per-partition equality/range
  indexes) and `index_reads` (what a query reads through them; builds finished between requests),
  `heap` (keeping long-lived state out of full garbage collections), `splits`,
  `metering` (request records, 429s) with `throttle`, `accounting` and `history` (per-minute
  aggregates for the Azure Monitor stand-in, saved by `history_store`), `journal`, `model`, `patch`,
  `results` (what operations answer) and `errors`;
- REST layer: `http` (`CosmosApp`: routing and auth), `request` (decoding headers and bodies), `wire`
  (bodies, headers, continuation and session tokens, plans, the gateway's 400/1004 refusal), `auth`;
- `server` serves any `App` (one `handle(request)` method, and optionally `prepare(request)`: pure work run
  off the event loop first, `offloop`) over HTTP/1.1 (`transport`); `cli` is `ruscope emulator`.

How to add an operation: write it in the service it belongs to (or a new one) as a method that opens
`metering.metered(...)`, resolves its container and partition through `state`, calls `metering.admit`
before any work on a partition, charges with `metering.consume` (or `meter.charge`), journals mutations
with `state.commit` before applying them, and returns an `emulator.engine.results` value; expose it on
`Engine`; then route it in `http.CosmosApp.dispatch`, decoding in `request` and shaping in `wire`.
"""
