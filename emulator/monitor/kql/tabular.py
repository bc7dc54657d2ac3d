"""A whole query's statements bound in order: every table or `let` name a tabular expression names is
resolved through one function (`bind`), so the main query, each `let` body and each join's right side
is planned the same way, over its own reads.

Kusto's rules (azure-monitor.md §7b R58): a `let` binds a name to a calculation, not to its value, so each
reference evaluates it again (here: reads again, lazily); a `let` body sees the `let`s before it and
the tables, not its own name (Kusto.Language binds the body before adding the name), and a `let` name
is looked up before the tables, so it shadows a table of that name; declaring one name twice is an
error. A table is read as `table` reads it, narrowed by the leading `where` of the expression naming it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

from emulator.monitor.kql.ast import Query, semantic
from emulator.monitor.kql.evaluate import check_answer, plan, run
from emulator.monitor.kql.shape import Planned, Tick

TableReader = Callable[[Query], Planned]  # a log table named by `query.table`, read as `query` narrows it


def bind(query: Query, table: TableReader, now: dt.datetime, tick: Tick) -> Planned:
    """The query's answer planned: its `let`s bound in order, then its body (KqlError on a refusal)."""
    bound: dict[str, Planned] = {}

    def resolve(expression: Query) -> Planned:
        base = bound[expression.table] if expression.table in bound else table(expression)
        shape = dataclasses.replace(base.shape, columns=dict(base.shape.columns), stages=[])
        plan(expression.operators, shape, now, resolve, final=False)
        return Planned(shape, lambda: run(shape, base.rows(), tick))

    for name, body in query.lets:
        if name in bound:
            raise semantic(f"A variable with the name '{name}' has already been declared.")
        bound[name] = resolve(body)
    answer = resolve(Query(query.table, query.operators))
    check_answer(answer.shape)
    return answer
