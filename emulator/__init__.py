"""The ruscope emulator: a local Cosmos DB (NoSQL API) that the unmodified azure-cosmos SDK talks to.

Cosmos knowledge itself (SQL, EPK hashing, routing, layout, limits, the RU cost model) lives in `cosmoscore`.
Importing this package loads nothing else; its parts, each a sub-package with its own docstring:
- `engine`: the account without any wire format: `engine.facade.Engine`, the domain API the advisor and
  the demo call in-process, over its services (catalog, items, feeds, `engine.query`) and what they share
  (state, model, metering, throttle, accounting, splits, results, errors, a simulated clock);
- `rest`: the Cosmos DB REST protocol in front of the engine (`rest.app.CosmosApp`, request decoding, wire
  shaping, tokens, auth, `_self` links) and the HTTP/1.1 server that carries it and the stand-in;
- `history`: the per-minute aggregates metering records and the Azure Monitor stand-in computes from;
- `durability`: `--data-dir`: the journal and snapshot, their checksummed lines, lenient salvage; it
  imports nothing of the engine, which journals through it;
- `monitor`: the Azure Monitor stand-in (metrics and Log Analytics, with its KQL subset in `monitor.kql`);
- `cli`: `ruscope emulator` / `python -m emulator`; `repair`: `--repair` / `python -m emulator.repair DIR`
  (salvage rewritten through the engine's state, so it sits above both).

Sub-packages depend downwards only, in this order (tests/test_layering.py): `durability`, `history` (its
file is written like the journal's), `engine`, `rest`, `monitor` (served by `rest`'s server); each imports
only those before it.

How to add an operation: write it in the engine service it belongs to (or a new one) as a method that
opens `metering.metered(...)`, resolves its container and partition through `state`, calls
`metering.admit` before any work on a partition, charges with `metering.consume` (or `meter.charge`),
journals mutations with `state.commit` before applying them, and returns an `engine.results` value;
expose it on `engine.facade.Engine`; then route it in `rest.app.CosmosApp.dispatch`, decoding in
`rest.request` and shaping in `rest.wire`.
"""
