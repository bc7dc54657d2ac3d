"""ruscope collectors: config models, the collectors (the only code importing azure.* clients), the store, the CLI.

- `config.py`: `ruscope.toml` as pydantic models (`extra="forbid"`, located errors, read-only SQL).
- `replay.py`: replays the configured queries with the real SDK; every HTTP request and every execution
  becomes a row (`requests`, `executions`); `routing.py` predicts which partitions a query should reach.
- `schema.py` declares the store's tables once; `store.py` writes and reads them (atomic Parquet parts).
- `cli.py`: thin commands (`replay`, `collect`, `dashboard`, `emulator`).

To add a query: a `[[queries]]` entry in the config, nothing else. To add a collector: a module with a
`fetch_*` function (network), pure `*_row`/`*_frame` builders, a table in `schema.py`, and a call in
`cli.collect` so `ruscope collect` runs it with the others.
"""
