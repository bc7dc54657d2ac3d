"""`ruscope demo`: the wiring of one command that runs everything on the embedded emulator.

- `run`: the steps (`run_demo`, `prepare`): the demo directory, the engine, the build of its data, the
  dashboard, until Ctrl+C;
- `collect`: the servers (Cosmos DB API, monitor stand-in), the clock, and the real collectors, alerts and
  advisor run against the demo's account;
- `dashboard`: Streamlit as a child process beside the emulator.

The traffic itself is a workload (`workloads.chat.generator`, `workloads.chat.history`); a new demo step
goes in `run.build` and calls the product's own code, as a user's command would.
"""
