"""`join`: two tabular expressions' rows merged on equal keys, with Kusto's flavors (azure-monitor.md §7b
R56, R57).

- `innerunique`, the default: the left side de-duplicated on the key, then an inner join. Which left row
  of a key is kept, Kusto leaves open ("two possible outputs and both are correct"): the stand-in keeps
  the first in its read order (tables are read container by container, minute by minute). A `where`
  right after it on left columns only is applied before the de-duplication, as Kusto's optimizer does
  (`left_filters`);
- `inner`: a row per (left, right) match; `leftouter`, `rightouter`, `fullouter`: those and every
  left, right, or either row no row of the other side matches, with nulls for the other side's columns;
  `leftsemi`, `leftanti` (aliases `anti`, `leftantisemi`): the left rows with, or without, a match, the
  left's columns only; `rightsemi`, `rightanti` (alias `rightantisemi`): the same of the right rows.
- Columns: the left's, then the right's (both sides' keys kept), a right name already taken suffixed
  with the smallest free number (`ActivityId1`), Kusto.Language's rule.
- A row without a match has nulls in the other side's columns, the empty string in its string columns
  (Kusto's strings are never null). Rows come in the left's order, an outer join's unmatched right rows
  last, a right semi or anti join's by key (Kusto promises no order).
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
from emulator.monitor.kql.ast import Col, Join, Operator, not_supported, semantic
from emulator.monitor.kql.expr import PER_MINUTE, Column, Row, Scope, columns_in, compile_expr
from emulator.monitor.kql.shape import Resolve, Shape, Tick

# Kusto's flavors, an alias to the flavor it names (the join operator's page)
FLAVORS = {
    **{f: f for f in ("innerunique", "inner", "leftouter", "rightouter", "fullouter", "leftsemi", "rightsemi")},
    **dict.fromkeys(("leftanti", "anti", "leftantisemi"), "leftanti"),
    **dict.fromkeys(("rightanti", "rightantisemi"), "rightanti"),
}
_LEFT_ONLY, _RIGHT_ONLY = {"leftsemi", "leftanti"}, {"rightsemi", "rightanti"}  # one side's columns only
Key = Callable[[Row], tuple[Any, ...] | None]  # None: a key that matches nothing
Nulls = list[tuple[str, str, Any]]  # (right column, output column, its value in a row without a match)


def plan_join(join: Join, shape: Shape, resolve: Resolve, now: dt.datetime) -> None:
    """Check the join (flavor, sides, keys), plan its right side and add the stage to `shape`."""
    flavor = _flavor(join.kind)
    if shape.weighted:
        raise _weighted("left")
    right = resolve(join.right)
    if right.shape.weighted:
        raise _weighted("right")
    left_key, right_key = _keys(join.keys, shape.columns, right.shape.columns, now)
    left_blank = {name: _null(column) for name, column in shape.columns.items()}  # a right row's unmatched left
    right_nulls: Nulls = []
    if flavor in _RIGHT_ONLY:
        shape.columns = dict(right.shape.columns)
    elif flavor not in _LEFT_ONLY:
        shape.columns, names = joined_columns(shape.columns, right.shape.columns)
        right_nulls = [(name, out, _null(right.shape.columns[name])) for name, out in names]
    shape.resolution = max(shape.resolution, right.shape.resolution)
    if flavor in _RIGHT_ONLY:
        shape.stages.append(_right_only_stage(flavor == "rightsemi", left_key, right_key, right.rows))
    else:
        shape.stages.append(_stage(flavor, left_key, right_key, right.rows, (left_blank, right_nulls)))


def _null(column: Column) -> Any:
    return "" if column.type == "string" else None  # Kusto's strings are never null


def left_filters(join: Join, after: list[Operator], left: dict[str, Column]) -> list[Operator]:
    """The `where`s right after an innerunique join that name left columns only, taken out of `after`:
    Kusto applies them to the left side before its de-duplication, so the rows they keep are the ones
    joined (the innerunique page: with such a filter it "will always give the second result")."""
    pushed: list[Operator] = []
    while join.kind in (None, "innerunique") and after and after[0].kind == "where":
        if not columns_in(after[0].expr) <= left.keys():
            break
        pushed.append(after.pop(0))
    return pushed


def _flavor(kind: str | None) -> str:
    if kind is None:
        return "innerunique"
    if kind not in FLAVORS:
        raise semantic(f"'join' operator: kind must be one of {', '.join(FLAVORS)}, not '{kind}'", "SEM0025")
    return FLAVORS[kind]


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
    flavor: str, left_key: Key, right_key: Key, right_rows: Callable[[], Iterator[Row]], nulls: tuple[Row, Nulls]
) -> Callable[[Iterator[Row], Tick], Iterator[Row]]:
    """Every flavor but the right semi and anti ones: the left rows stream, each with its matches."""
    left_blank, right_nulls = nulls
    outer_left, outer_right = flavor in ("leftouter", "fullouter"), flavor in ("rightouter", "fullouter")

    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        table, unkeyed = _materialize(right_rows(), right_key, tick)
        matched: set[tuple[Any, ...]] = set()  # the keys a left row was joined on (innerunique: its first)
        for row in rows:
            key = left_key(row)
            matches = table.get(key, ()) if key is not None else ()
            if flavor in _LEFT_ONLY:
                if bool(matches) == (flavor == "leftsemi"):
                    yield row
                continue
            if flavor == "innerunique" and key in matched:
                continue
            if key is not None and matches:
                matched.add(key)
            elif outer_left:
                yield _merged(row, None, right_nulls)
            for match in matches:
                yield _merged(row, match, right_nulls)
        if outer_right:  # the right rows no left row matched, the left's columns null
            unmatched = (m for k, ms in table.items() if k not in matched for m in ms)
            for match in (*unmatched, *unkeyed):
                yield _merged(left_blank, match, right_nulls)

    return stage


def _right_only_stage(
    semi: bool, left_key: Key, right_key: Key, right_rows: Callable[[], Iterator[Row]]
) -> Callable[[Iterator[Row], Tick], Iterator[Row]]:
    """rightsemi / rightanti: the right rows a left row matches, or none does; read once the left is."""

    def stage(rows: Iterator[Row], tick: Tick) -> Iterator[Row]:
        table, unkeyed = _materialize(right_rows(), right_key, tick)
        hit = {key for key in map(left_key, rows) if key is not None and key in table}
        for key, matches in table.items():
            if (key in hit) == semi:
                yield from matches
        if not semi:
            yield from unkeyed

    return stage


def _materialize(rows: Iterator[Row], key: Key, tick: Tick) -> tuple[dict[tuple[Any, ...], list[Row]], list[Row]]:
    """The right side's rows by key, and those whose key is null (they match nothing), at most MAX_ROWS."""
    table: dict[tuple[Any, ...], list[Row]] = {}
    unkeyed: list[Row] = []
    for count, row in enumerate(rows):
        tick()
        if count >= MAX_ROWS:
            raise not_supported(
                f"'join': its right side has more than {MAX_ROWS} rows, more than the ruscope stand-in holds in "
                "memory (narrow it with where, or summarize it)"
            )
        k = key(row)
        if k is None:
            unkeyed.append(row)
        else:
            table.setdefault(k, []).append(row)
    return table, unkeyed


def _merged(left: Row, right: Row | None, nulls: Nulls) -> Row:
    """`left` with `right`'s columns under their output names (no match, None: each column's null)."""
    row = dict(left)
    for name, out, null in nulls:
        row[out] = right.get(name) if right is not None else null
    return row
