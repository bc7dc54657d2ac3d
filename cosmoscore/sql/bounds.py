"""The engine's limits: the service's documented ones (docs/reference/cosmos-sql-semantics.md §7) and the
emulator's own caps where the service documents none. One mutable settings object, `LIMITS`, read at
parse, compile and run time, so tests and embedders can shrink or raise any of them (`configure`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SqlLimits:
    # cosmos-sql-semantics.md §7: "Query text length 512 KB" (SC3020 names the limit in characters)
    max_query_chars: int = 512 * 1024
    # cosmos-sql-semantics.md §7: "JOINs per query 10; can be raised through support"
    max_joins: int = 10
    # cosmos-sql-semantics.md §7: "UDFs per query 10" (SC3005)
    max_udf_calls: int = 10
    # Our cap (the service documents none): expression nesting, so compiling and running stay within the
    # interpreter's recursion limit. Long AND/OR chains are balanced first and do not count against it.
    max_expression_depth: int = 128
    # cosmos-sql-semantics.md §7: values in an IN list have "no documented limit beyond query size"; the
    # text limit bounds them already. Kept configurable for embedders.
    max_in_items: int = 1_000_000
    # cosmos-sql-semantics.md §3 (REPLICATE): "the result may be at most 10,000 characters"
    max_replicate_chars: int = 10_000
    # Our cap: a string a query builds (CONCAT, REPLACE, ||) may not exceed an item's 2 MB
    # (cosmos-errors-and-stats.md: "Item over 2 MB"); beyond it the value is undefined, checked before building
    max_string_chars: int = 2 * 1024 * 1024
    # Our cap: the string length RegexMatch runs the (backtracking) `re` engine on; beyond it the query is
    # a 400. Patterns with nested quantifiers or quantified alternations are refused outright (they
    # backtrack exponentially); this bounds the polynomial cases that remain.
    max_regex_input_chars: int = 32_768


LIMITS = SqlLimits()


def configure(**changes: Any) -> SqlLimits:
    """Replace some limits (by field name) for the whole process; returns the previous settings."""
    global LIMITS
    previous = LIMITS
    LIMITS = dataclasses.replace(LIMITS, **changes)
    return previous


def current() -> SqlLimits:
    return LIMITS
