"""ruscope collectors: config models, the collector framework and the collectors (the only code importing
azure.* clients). They write the store (the top-level `store` package).

- `config/`: `ruscope.toml` as pydantic models (`extra="forbid"`, located errors, read-only SQL); one
  account (`[cosmos]`) or many (`[[accounts]]`), both seen as `Config.all_accounts()` (`Account` values);
  its sections `[monitor]` (`monitor`), `[alerts]` (`alerts`), `[advisor]` (`advisor`), and the error
  lines (`errors`).
- The framework: `run.py` (a `Run`: run id, clock, stop event, budget, the pending segment that
  `run.record(record)` journals to, sealing, progress bar, summary and exit code), `registry.py` (the
  `Collector` protocol, `REGISTERED`, `run_collector`), `credentials.py` (`account_credential(account)`: the
  key in the variable its `key_env` names, else a token credential; `token_credential()`:
  DefaultAzureCredential, for Azure Monitor), `errors.py` (`describe_error`: one line for a Cosmos DB or
  azure-core error, never a trace or a key), `fleet.py` (`collect_fleet`: every account as its own run,
  `[fleet] parallelism` at a time, one failure never stopping the others; docs/fleet.md has the recipes),
  `client.py` (`fetch_client`: the one CosmosClient set-up, with hooks that see every HTTP exchange).
- The storage collector: `storage.py` (per container: partition statistics, quota, split lineage, the
  largest logical keys -> the `partitions` and `logical_keys` tables).
- The replay collector: `replay/` (its `fetch_*`, `execution_record`, the walk over the queries), with
  `capture` (every HTTP request the SDK sends, as a `RequestRecord`), `routing` (the SDK's feed ranges as
  EPK ranges for `cosmoscore.routing`'s prediction) and `summary` (each query's closing line, counted by
  analysis' one rule of a logical execution).
- The Azure Monitor collectors: `metrics.py` (platform metrics; `getbatch.py` reads its answers beyond the
  SDK's model and narrows a capped query) and `logs/` (Log Analytics; its KQL in
  `logs/queries.py`), both naming what they ask through `cosmoscore.monitor`; `sample.py` (a container's
  documents for the advisor); `alerts.py` (the `[alerts]` rules after a collect).

To add a query: a `[[queries]]` entry in the config, nothing else.

To add a collector: a module `collectors/<name>.py` (a package when it has parts) with its `fetch_*`
functions (network) and pure record builders, a record class per new table in `store/records.py`, and an
object `COLLECTOR` with `name`, `budget(config)` and `collect(config, run, options)` (see
`registry.Collector`); add the module to `registry.REGISTERED` and `ruscope collect` runs it after the others, once per account. `collect` works on
one account, `config.account(options.account)` (its endpoint, databases, `monitor_resource`, queries, and
`account.name` for every row's `account` column), builds records and hands them to `run.record(...)`,
counts items with `run.count(failed=...)`, calls `run.check()` between requests (raises `Stopped` on a
signal, `BudgetReached` past the budget) and `run.seal(every=SEAL_SECONDS)` between items, and reports per
item with `run.out` / `run.err`; it never raises for one failed item (`describe_error` gives the line).
`run_collector` recovers, creates the run, and finishes it.

Pending segments: `run.record` appends each record as a JSON line to the run's locked local segment
before returning, so a kill -9 loses nothing recorded; sealing commits the rows to the store's tables
with an app transaction keyed by run id and part, exactly once. Every run (a fleet: once, before its
accounts start) begins with `recover()`, which commits the segments of killed runs and skips locked ones
(a concurrent run, here or in another process), so runs and collectors on many hosts share one store.
"""
