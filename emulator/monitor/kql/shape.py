"""What an operator sees of a table (`Shape`) and a tabular expression ready to run (`Planned`): shared by
`evaluate`, which plans and runs operators, `join`, and `tabular`, which resolves names to tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from emulator.monitor.kql.ast import Query
from emulator.monitor.kql.expr import Column, Row

WEIGHT = "$weight"  # the hidden request count of a weighted table's row (None: not known)
Tick = Callable[[], None]  # the request's budget check (raises past its deadline), called per row
Stage = Callable[[Iterator[Row], Tick], Iterator[Row]]


@dataclass
class Shape:
    """A table as an operator sees it: ordered typed columns; `weighted` while rows are aggregates."""

    columns: dict[str, Column]
    weighted: bool
    weight_known: bool = True
    resolution: int = 60  # seconds: the rows' TimeGenerated are whole multiples of it (bins are, too)
    stages: list[Stage] = field(default_factory=list)


@dataclass(frozen=True)
class Planned:
    """A tabular expression checked and ready: its result's shape, and its rows, read anew (lazily) at
    each call, as Kusto evaluates a `let` name again at each reference."""

    shape: Shape
    rows: Callable[[], Iterator[Row]]


Resolve = Callable[[Query], Planned]  # a tabular expression (its table or `let` name, its operators) planned
