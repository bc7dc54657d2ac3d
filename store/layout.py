"""The store's layouts on disk: telling today's Delta tables from the Parquet parts of the layout before them.

Before Delta Lake, a table was a directory of parts `STORE/<table>/date=YYYY-MM-DD/<run_id>-<part>.parquet`
with no `_delta_log`. Delta Lake names its data files `part-<n>-<uuid>-c<n>[.<codec>].parquet` in the same
partition directories, so an old part is a `.parquet` file there with any other name. Why refuse rather than
read both: a store half in each layout would show some runs and silently hide others, and a write would put
new rows in a table the old reader never sees. So a table with old parts and no Delta log, or a store whose
migration has not finished (its `_migrating` marker), refuses every read and write with one line naming
`ruscope store migrate`. An old-named file that turns up inside a Delta table afterwards (a file an older
ruscope wrote, or one the migration could not read and left) is not part of the table: readers say so in a
warning and go on.

Only a local store can be inspected so; an `az://` store is taken to be in the Delta layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from store.location import StoreLocation
from store.records import TABLES

DELTA_LOG = "_delta_log"
MIGRATING = "_migrating"  # at the store's root while `ruscope store migrate` has work left
DELTA_FILE = re.compile(r"part-\d+-[0-9a-fA-F-]+-c\d+(\.[A-Za-z0-9]+)*\.parquet")
CHECKPOINT = re.compile(r"\d+\.checkpoint(\.\d+\.\d+)?\.parquet")
PARTITION = re.compile(r"date=(\d{4}-\d{2}-\d{2})")
MIGRATE_HINT = "ruscope store migrate"


class StoreLayoutError(RuntimeError):
    """The store is (partly) in the Parquet layout of ruscope before Delta Lake: migrate it first."""


def old_parts(root: Path, table: str, since: str | None = None) -> Iterator[Path]:
    """The old-layout part files of `table` under `root` (partitions dated `since` or later), in order."""
    directory = root / table
    if not directory.is_dir():
        return
    for partition in sorted(directory.iterdir()):
        match = PARTITION.fullmatch(partition.name)
        if not match or not partition.is_dir() or (since is not None and match.group(1) < since):
            continue
        for path in sorted(partition.iterdir()):
            if path.suffix == ".parquet" and not path.name.startswith(".") and not DELTA_FILE.fullmatch(path.name):
                yield path


def is_delta(root: Path, table: str) -> bool:
    return (root / table / DELTA_LOG).is_dir()


def refuse_old_layout(location: StoreLocation) -> None:
    """StoreLayoutError (one line naming the command) if the store still needs `ruscope store migrate`."""
    root = location.local
    if root is None:
        return
    if (root / MIGRATING).exists():
        raise StoreLayoutError(
            f"store {root}: its migration to Delta Lake has not finished; run `{MIGRATE_HINT} --store {root}` to finish it"
        )
    for table in TABLES:
        if not is_delta(root, table) and next(old_parts(root, table), None) is not None:
            raise StoreLayoutError(
                f"store {root}: table {table!r} holds Parquet parts of the layout before Delta Lake; "
                f"convert the store once with `{MIGRATE_HINT} --store {root}`"
            )


def stray_parts(location: StoreLocation, table: str, since: str | None) -> list[Path]:
    """Parquet files inside a Delta table's directory that cannot be the table's (old-layout parts in its
    partitions, anything but a checkpoint in its log, files at its top), for the reader's warning."""
    root = location.local
    if root is None or not is_delta(root, table):
        return []
    log_dir, top = root / table / DELTA_LOG, root / table
    foreign = [p for p in log_dir.glob("*.parquet") if not CHECKPOINT.fullmatch(p.name)]
    foreign += [p for p in top.glob("*.parquet") if not p.name.startswith(".")]
    return [*foreign, *old_parts(root, table, since)]
