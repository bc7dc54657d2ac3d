"""`join`: two tabular expressions' rows merged on equal keys, with Kusto's flavors (azure-monitor.md §7b
R56, R57).

- `innerunique`, the default: the left side de-duplicated on the key, then an inner join. Which left row
  of a key is kept, Kusto leaves open ("two possible outputs and both are correct"): the stand-in keeps
  the first in its read order (tables are read container by container, minute by minute);
- `inner`: a row per (left, right) match; `leftouter`: every left row, with nulls where nothing matches;
  `leftsemi` and `leftanti` (aliases `anti`, `leftantisemi`): the left rows with, or without, a match,
  the left's columns only. The right and full flavors are valid KQL the stand-in does not evaluate.
- Columns: the left's, then the right's (both sides' keys kept), a right name already taken suffixed
  with the smallest free number (`ActivityId1`), Kusto.Language's rule.
- A `leftouter` row without a match has nulls in the right's columns, the empty string in its string
  columns (Kusto's strings are never null).
- Keys are equal values. A key column must exist on both sides with one type (`on A`), or be `$left.A ==
  $right.B` of comparable types (int and long compare). A null string stands for Kusto's empty string
  (its strings are never null) and matches it; any other null matches nothing (a null equals nothing,
  itself included, the null-values page): the stand-in's reading, the join pages say nothing of nulls.
- Weighted rows (per-minute cells) on either side are refused: which requests of a cell match, and how
  often, is not determined by what the stand-in records; summarized sides are ordinary rows and exact.
The right side is read whole into memory (at most `MAX_ROWS` rows, the budget checked per row), once
per run; the left side streams through.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

from emulator.monitor.budget import MAX_ROWS
from emulator.monitor.kql.ast import Col, Join, not_supported, semantic
from emulator.monitor.kql.expr import PER_MINUTE, Column, Row, Scope, compile_expr
from emulator.monitor.kql.shape import Resolve, Shape, Tick

FLAVORS = {"innerunique", "inner", "leftouter", "leftsemi", "leftanti", "anti", "leftantisemi"}
REFUSED = {"rightouter", "fullouter", "rightsemi", "rightanti", "rightantisemi"}  # valid, not evaluated
_LEFT_ONLY = {"leftsemi", "leftanti", "anti", "leftantisemi"}
_ANTI = {"leftanti", "anti", "leftantisemi"}
Key = Callable[[Row], tuple[Any, ...] | None]  # None: a key that matches nothing


def plan_join(join: Join, shape: Shape, resolve: Resolve, now: dt.datetime) -> None:
    """Check the join (flavor, sides, keys), plan its right side and add the stage to `shape`."""
    flavor = _flavor(join.kind)
    if shape.weighted:
        raise _weighted("left")
    right = resolve(join.right)
    if right.shape.weighted:
        raise _weighted("right")
    left_key, right_key = _keys(join.keys, shape.columns, right.shape.columns, now)
    renames: list[tuple[str, str, Any]] = []  # (right column, output column, its value without a match)
    if flavor not in _LEFT_ONLY:
        shape.columns, names = joined_columns(shape.columns, right.shape.columns)
        renames = [(name, out, "" if right.shape.columns[name].type == "string" else None) for name, out in names]
    shape.resolution = max(shape.resolution, right.shape.resolution)
    shape.stages.append(_stage(flavor, left_key, right_key, right.rows, renames))


def _flavor(kind: str | None) -> str:
    if kind is None:
        return "innerunique"
    if kind in REFUSED:
        raise not_supported(
            f"join kind={kind} is not evaluated by the ruscope stand-in; it evaluates {', '.join(sorted(FLAVORS))}"
        )
    if kind not in FLAVORS:
        every = ", ".join(sorted(FLAVORS | REFUSED))
        raise semantic(f"'join' operator: kind must be one of {every}, not '{kind}'", "SEM0025")
    return kind


def _weighted(side: str) -> Exception:
    return not_supported(
        f"'join' of a log table's rows ({side} side): {PER_MINUTE}, so which requests match, and how often, "
        "is not determined (summarize each side first, e.g. by the join keys)"
    )


def _keys(
    pairs: tuple[tuple[str, str], ...], left: dict[str, Column], right: dict[str, Column], now: dt.datetime
) -> tuple[Key, Key]:
    """Each side's key function, after Kusto's checks (messages of Kusto.Language's binder)."""
    left_parts, right_parts = [], []
    for left_name, right_name in pairs:
        if left_name == right_name and (left_name not in left or right_name not in right):
            raise semantic(f"'join' operator: the column '{left_name}' must exist on both sides of the join.")
        a = compile_expr(Col(left_name), Scope(left, now, "join"))  # the unknown or unbacked column's error
        b = compile_expr(Col(right_name), Scope(right, now, "join"))
        if left_name == right_name and a.type != b.type:
            message = f"the common column '{left_name}' must have the same type on both sides of the join."
            raise semantic(f"'join' operator: {message}", "SEM0025")
        if _promoted(a.type) != _promoted(b.type):
            raise semantic(f"'join' operator: inconsistent data types for join keys: ({a.type}, {b.type})", "SEM0025")
        left_parts.append((a.fn, a.type == "string"))
        right_parts.append((b.fn, b.type == "string"))
    return _key(left_parts), _key(right_parts)


def _promoted(kind: str) -> str:
    return "long" if kind == "int" else kind


def _key(parts: list[tuple[Callable[[Row], Any], bool]]) -> Key:
    def key(row: Row) -> tuple[Any, ...] | None:
        values = []
        for fn, text in parts:
            value = fn(row)
            if value is None:
                if not text:
                    return None
                value = ""
            values.append(value)
        return tuple(values)

    return key


def joined_columns(
    left: dict[str, Column], right: dict[str, Column]
) -> tuple[dict[str, Column], list[tuple[str, str]]]:
    """The left's columns, then the right's, each right name already taken renamed (Kusto.Language's
    `MakeColumnNamesUnique`: every original name is reserved, a repeat gets the next free suffix: [c, c,
    c1] is [c, c2, c1]); with each right column's (name, output name)."""
    last_suffix = dict.fromkeys([*left, *right], 0)
    columns, renames = dict(left), []
    for name, column in right.items():
        out = name
        if name in left:
            suffix = last_suffix[name] + 1
            while f"{name}{suffix}" in last_suffix:
                suffix += 1
            out, last_suffix[name] = f"{name}{suffix}", suffix
            last_suffix[out] = 0
        columns[out] = column
        renames.append((name, out))
    return columns, renames


def _stage(
    flavor: str,
    left_key: Key,
    right_key: Key,
    right_rows: Callable[[], Iterator[Row]],
    renames: list[tuple[str, str, Any]],
) -> Callable[[Iterator[Row], Tick], Iterator[Row]]:
    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        table = _materialize(right_rows(), right_key, tick)
        kept: set[tuple[Any, ...]] = set()  # innerunique: the keys whose (first) left row was joined
        for row in rows:
            key = left_key(row)
            matches = table.get(key, ()) if key is not None else ()
            if flavor in _LEFT_ONLY:
                if bool(matches) != (flavor in _ANTI):
                    yield row
                continue
            if flavor == "innerunique":
                if key is None or not matches or key in kept:
                    continue
                kept.add(key)
            if not matches and flavor == "leftouter":
                yield _merged(row, None, renames)
            for match in matches:
                yield _merged(row, match, renames)

    return stage


def _materialize(rows: Iterator[Row], key: Key, tick: Tick) -> dict[tuple[Any, ...], list[Row]]:
    """The right side's rows by key (a null key matches nothing: not kept), at most MAX_ROWS of them."""
    table: dict[tuple[Any, ...], list[Row]] = {}
    for count, row in enumerate(rows):
        tick()
        if count >= MAX_ROWS:
            raise not_supported(
                f"'join': its right side has more than {MAX_ROWS} rows, more than the ruscope stand-in holds in "
                "memory (narrow it with where, or summarize it)"
            )
        k = key(row)
        if k is not None:
            table.setdefault(k, []).append(row)
    return table


def _merged(left: Row, right: Row | None, renames: list[tuple[str, str, Any]]) -> Row:
    row = dict(left)
    for name, out, unmatched in renames:
        row[out] = right.get(name) if right is not None else unmatched
    return row
