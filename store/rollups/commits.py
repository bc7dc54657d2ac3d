"""A rollup's commit: the rows it replaces in one commit carrying the versions it reached (`replace_rows`), run
again from the winner's result when another one committed first (`until_committed`), and the run id its rows
carry. Shared by the metrics' rollup (`increment`) and the derived tables' refresh (`derived`)."""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from typing import TypeVar

import pandas as pd
from deltalake import CommitProperties, Transaction, write_deltalake
from deltalake.exceptions import CommitFailedError

from store.conform import arrow_of_frame
from store.delta import DATE, MERGED, created, open_table, with_date
from store.location import StoreLocation, create_private_dirs
from store.records import Table

ATTEMPTS = 10
T = TypeVar("T")


def new_run_id(prefix: str) -> str:
    return f"{prefix}-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{random.getrandbits(32):08x}"


def until_committed(once: Callable[[], T], attempts: int = ATTEMPTS) -> T:
    """`once()`, again (after a short random wait) while another writer's commit beat it."""
    for attempt in range(attempts):
        try:
            return once()
        except CommitFailedError:  # another rollup committed first: start again from its result
            if attempt + 1 == attempts:
                raise
            time.sleep(random.uniform(0.01, 0.05 * (attempt + 1)))
    raise AssertionError("unreachable")


def replace_rows(
    location: StoreLocation,
    record: Table,
    fresh: pd.DataFrame,
    run_id: str,
    predicate: str | None,
    transactions: list[Transaction] | None,
) -> None:
    """In one commit, the rows of `record`'s table matching `predicate` (which names their date partitions)
    replaced with `fresh`, or with no predicate `fresh` appended (an empty append records `transactions`);
    the commit carries `transactions` (the versions a rollup reached) and is not retried by delta-rs: a race
    lost is the caller's to run again (`until_committed`)."""
    create_private_dirs(location)
    table = open_table(location, record.name) or created(location, record)
    properties = CommitProperties(app_transactions=transactions, max_commit_retries=0)
    data = with_date(record, arrow_of_frame(record, fresh.assign(run_id=run_id), run_id))
    if predicate is None:
        write_deltalake(
            table, data, mode="append", partition_by=[DATE], storage_options=location.options(),
            commit_properties=properties,
        )  # fmt: skip
        return
    write_deltalake(
        table,
        data,
        mode="overwrite",
        predicate=predicate,
        partition_by=[DATE],
        storage_options=location.options(),
        writer_properties=MERGED,
        commit_properties=properties,
    )
