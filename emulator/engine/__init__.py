"""The engine: the emulated account without any wire format, usable in-process (the advisor, the demo history
and tests call it directly; `emulator.rest` translates the REST protocol to it).

- `facade`: `Engine`, the one object callers hold: the domain API (dicts, tuple keys, `results` values,
  `errors.CosmosError`) over the services below; every operation takes a `metering.Context` first;
- the services: `catalog` (databases, containers, offers, the routing map), `items` (point operations),
  `feeds` (read feeds), `query` (query pages, plans and `run`'s SDK-like fan-out: a sub-package),
  `users` (users and permissions, `Engine.users`, with `userlog` their journal entries and snapshot);
- what they share: `state` (the resources, changed only by journaled entries; its appliers and snapshot),
  `model` (the resource records), `metering` (one lock, one request record per operation, 429s) with
  `throttle` and `accounting` (the request log), `sampler` (storage change-points handed to
  `emulator.history`), `splits`, `patch`, `unique` (unique key policies, enforced on every write), `ttl` (expiry), `results`, `errors`, `clock`
  (a simulated clock) and `heap`
  (keeping long-lived state out of full garbage collections).

How to add an operation: write it in the service it belongs to (or a new one) as a method that opens
`metering.metered(...)`, resolves its container and partition through `state`, calls `metering.admit`
before any work on a partition, charges with `metering.consume` (or `meter.charge`), journals mutations
with `state.commit` before applying them, and returns a `results` value; expose it on `facade.Engine`;
then route it in `emulator.rest` (see its docstring).
"""
