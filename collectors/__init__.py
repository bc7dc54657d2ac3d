"""ruscope collectors: config models, the collector framework, the collectors (the only code importing
azure.* clients) and the store.

- `config.py`: `ruscope.toml` as pydantic models (`extra="forbid"`, located errors, read-only SQL).
- The framework: `run.py` (a `Run`: run id, clock, stop event, budget, the pending segment that
  `run.record(record)` journals to, sealing, progress bar, summary and exit code), `registry.py` (the
  `Collector` protocol, `REGISTERED`, `run_collector`), `credentials.py` (`cosmos_credential()`: COSMOS_KEY
  or a token credential; `token_credential()`: DefaultAzureCredential, for Azure Monitor), `errors.py`
  (`describe_error`: one line for a Cosmos DB or azure-core error, never a trace or a key).
- The replay collector: `replay.py` (its `fetch_*`, `execution_record`, the walk over the queries),
  `capture.py` (every HTTP request the SDK sends, as a `RequestRecord`), `routing.py` (the SDK's feed
  ranges as EPK ranges for `cosmoscore.routing`'s prediction).
- `store/`: the tables as typed records (`records.py`), pending segments (`pending.py`), Parquet parts
  and the reader (`parquet.py`); `from collectors.store import read_table, list_runs, StoreWarning, ...`.

To add a query: a `[[queries]]` entry in the config, nothing else.

To add a collector: a module `collectors/<name>.py` with its `fetch_*` functions (network) and pure record
builders, a record class per new table in `store/records.py`, and an object `COLLECTOR` with `name`,
`budget(config)` and `collect(config, run, options)` (see `registry.Collector`); add the module to
`registry.REGISTERED` and `ruscope collect` runs it after the others. `collect` builds records and hands
them to `run.record(...)`, counts items with `run.count(failed=...)`, calls `run.check()` between
requests (raises `Stopped` on a signal, `BudgetReached` past the budget) and `run.seal(every=SEAL_SECONDS)`
between items, and reports per item with `run.out` / `run.err`; it never raises for one failed item
(`describe_error` gives the line). `run_collector` recovers, creates the run, and finishes it.

Pending segments: `run.record` appends each record as a JSON line to
`STORE/_pending/<run_id>-<part>/<table>.jsonl` before returning, so a kill -9 loses nothing recorded.
The segment holds an exclusive `fcntl.flock` on `STORE/_pending/<run_id>-<part>.lock` for its lifetime;
sealing writes `STORE/<table>/date=YYYY-MM-DD/<run_id>-<part>.parquet` and removes the segment. Every run
starts with `recover()`, which seals the segments of killed runs (their locks died with them) exactly once
and skips locked ones (a concurrent run, here or in another process). A line that does not fit its table
is set aside in `STORE/_pending/_damaged/<segment>-<table>.jsonl`, reported once, and the segment's valid
rows are stored.
"""
