"""The SQL engine (`cosmoscore.sql`) as the service runs it: its compile and run errors become the service's
400 (`Message: {"errors":[...]}`), wherever a query is parsed (the query service, the index reads, the
catalog's resource queries)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from cosmoscore.sql import Query, SqlError, parse_query
from emulator.engine import errors


def sql_error(exc: SqlError, prefix: str = "") -> errors.CosmosError:
    """A query compile/run error as the service's 400 body (`Message: {"errors":[...]}`)."""
    return errors.CosmosError(400, f"{prefix}Message: {exc.to_service_message()}")


def parse(text: str) -> Query:
    try:
        return parse_query(text)
    except SqlError as exc:
        raise sql_error(exc) from None


T = TypeVar("T")


def guarded(call: Callable[[], T]) -> T:
    """Run a step of the SQL engine; its errors become the service's 400."""
    try:
        return call()
    except SqlError as exc:
        raise sql_error(exc) from None
