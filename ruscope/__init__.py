"""The composition root: the `ruscope` command (`cli.py`) wires config, collectors, store, dashboard and
emulator together. No library module imports this package."""
