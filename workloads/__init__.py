"""Example workloads: data generators, example configs, and the traffic they make on the emulator.

`workloads.chat`: the AI-chat widget of the partition-key guides, which `ruscope demo` loads: `generator`
(pure data: no I/O, no clock, no emulator), `history` (a day of that traffic driven through the engine's
domain API on a simulated clock) and `ruscope.toml`.

To add a workload: a sub-package with a pure, seeded generator module, its example `ruscope.toml`, and (if a
demo or a benchmark drives it) a module that writes the generator's output through `emulator.engine`.
Workloads never import the collectors' or the dashboard's code (`tests/test_layering.py`).
"""
