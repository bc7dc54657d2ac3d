"""Durability for `--data-dir`: what the emulator keeps on disk, how it reads it back, and how damage is repaired.

- `journal`: the append-only journal of mutations and the compacted snapshot (`Journal`, `replay_dir`,
  `write_snapshot`); the engine's `state` journals every mutation through it before applying it;
- `lines`: one checksummed, sequence-numbered line of either file (`encode`, `read`, `Damaged`);
- `datadir`: the directory's files: private permissions, whole writes, `JournalFull` (a write the disk could
  not hold, which the engine answers with the service's 503);
- `salvage`: lenient readers that apply every intact line and list what was lost (`Lost`), which
  `emulator.repair` (`ruscope emulator --repair`) rewrites through the engine's state.

It imports nothing of the engine: the engine journals through it, and the repair, which needs both, sits
above them at `emulator.repair`.

How to add a file to the data directory: name it next to `JOURNAL`/`SNAPSHOT` (or in the module that owns
it, as `emulator.rest.server.HISTORY_FILE`), create it through `datadir` (0600 in a 0700 directory), write
it whole (`wholefile.write_whole`, as `write_snapshot` does), and teach `emulator.repair` what to keep aside
when it cannot be read.
"""
