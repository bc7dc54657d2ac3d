"""Config problems as users read them: one line each, located in the file by section, index and the
entry's `name`, with the closest known key for a typo. Pure: the validation error and the parsed TOML in,
text out (`collectors.config` raises it as a ConfigError)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError


def format_validation_error(path: Path, exc: ValidationError, data: Any = None, *, root: type[BaseModel]) -> str:
    """One line per problem: `file: queries.0 (orders).contianer: Extra inputs are not permitted; did you
    mean 'container'?`. A list entry is named by its `name` too (indexes shift as a file is edited); a typo
    gets the closest known key; a value no member of a union takes is one line, not one per member. Rules
    across sections (`Config`'s validator) have no location of their own: their messages start with it."""
    lines: list[str] = []
    for loc, message in _one_per_location(exc, data, root):
        where = config_location(loc, data)
        lines += [
            f"{path}: {where}: {line}" if where else f"{path}: {_located(line, data)}" for line in message.splitlines()
        ]
    return "\n".join(dict.fromkeys(lines))


def _one_per_location(exc: ValidationError, data: Any, root: type[BaseModel]) -> list[tuple[tuple[Any, ...], str]]:
    """(location in the file, message) per problem; the members of a union (locations that go on past
    the value in the file, e.g. `partition_key.str`, `partition_key.int`) become one problem."""
    found: dict[tuple[Any, ...], list[str]] = {}
    for error in exc.errors(include_url=False):
        message = error["msg"].removeprefix("Value error, ")
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            message += _suggestion(loc, root)
        elif error["type"] != "missing":
            loc = _in_file(loc, data)
        found.setdefault(loc, []).append(message)
    return [
        (loc, messages[0] if len(messages) == 1 else f"{toml_type(_value_at(loc, data))} is not a valid value here")
        for loc, messages in found.items()
    ]


def config_location(loc: tuple[Any, ...], data: Any) -> str:
    """`queries.0 (orders-of-a-tenant).container`: a list index names its entry's `name` when it has one."""
    parts, node = [], data
    for part in loc:
        node = _child(node, part)
        name = node.get("name") if isinstance(part, int) and isinstance(node, dict) else None
        parts.append(f"{part} ({name})" if isinstance(name, str) and name else str(part))
    return ".".join(parts)


def _located(line: str, data: Any) -> str:
    """A rule's own message (`queries.1.name: ...`) with its location named the same way."""
    head, sep, rest = line.partition(": ")
    if not sep or " " in head or "." not in head:
        return line
    loc = tuple(int(part) if part.isdigit() else part for part in head.split("."))
    return f"{config_location(loc, data)}: {rest}"


_MISSING = object()


def _child(node: Any, part: Any) -> Any:
    if isinstance(node, dict) and isinstance(part, str):
        return node.get(part, _MISSING)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _MISSING


def _in_file(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """The location cut where the file ends (pydantic goes on with a union member's name)."""
    node = data
    for n, part in enumerate(loc):
        node = _child(node, part)
        if node is _MISSING:
            return loc[:n]
    return loc


def _value_at(loc: tuple[Any, ...], data: Any) -> Any:
    node = data
    for part in loc:
        node = _child(node, part)
    return node


def toml_type(value: Any) -> str:
    """A value's type as a TOML file spells it."""
    kinds = {dict: "a table", list: "an array", str: "a string", bool: "a boolean", int: "an integer"}
    return next((kind for t, kind in kinds.items() if isinstance(value, t)), f"a {type(value).__name__}")


def _suggestion(loc: tuple[Any, ...], root: type[BaseModel]) -> str:
    """The hint for an unknown key close to a known one of its section: "; did you mean 'container'?"."""
    model: type[BaseModel] | None = root
    for part in loc[:-1]:
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part)
        model = _model_in(field.annotation) if field is not None else None
    if model is None:
        return ""
    known = [*model.model_fields, *getattr(model, "older_names", ())]
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (itself, in a list or optional)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in get_args(annotation) if (m := _model_in(arg)) is not None), None)
