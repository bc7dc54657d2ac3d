"""The composition root: the `ruscope` command wires config, collectors, store, advisor, dashboard and
emulator together. No library module imports this package (`tests/test_layering.py`).

- `cli`: the typer app (every command registered, in `--help` order) and `main`; `__main__`: `python -m`;
- one module per command group: `collect` (replay, storage, metrics, logs, collect), `report`,
  `maintenance` (compact, store migrate, store check, store repair), `advise` (the `[advisor]` section's values handed to
  `advisor.pipeline`, the live sample, the advice stored);
- `options` (config loading, store and accounts, exit codes), `launch` (signals, ports, Streamlit
  flags) and `panics` (Rust panic reports kept out of the error output): what the commands share;
- `demo/`: `ruscope demo` (the emulator, the chat workload's day, every collector and the dashboard).

A command only parses, loads and calls: what it computes belongs to a library package (collectors,
analysis, advisor, workloads), so a test or a benchmark imports that, never this package.
"""
