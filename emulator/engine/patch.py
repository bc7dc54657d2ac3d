"""Partial document update (`patch_item`): the operations the service supports, applied to a copy.

Operation semantics follow the service's partial-update docs: add, set, replace, remove, incr, move;
at most 10 operations per request; the partition key paths may not be touched.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from emulator.engine import errors

MAX_OPERATIONS = 10  # the service's per-request limit on patch operations
INT64_MIN, INT64_MAX = (
    -(2**63),
    2**63 - 1,
)  # the integer range numbers keep exactly (cosmos-sql-semantics §1.9 "Numbers")


def apply_patch(doc: dict[str, Any], operations: Any, key_paths: list[list[str]]) -> dict[str, Any]:
    """Return a patched copy of `doc`; 400 with the failing operation named on bad input."""
    if not isinstance(operations, list) or not operations:
        raise errors.bad_request("A patch request needs a non-empty 'operations' list.")
    if len(operations) > MAX_OPERATIONS:
        raise errors.bad_request(f"A patch request can have at most {MAX_OPERATIONS} operations.")
    new = copy.deepcopy(doc)
    for index, op in enumerate(operations):
        if not isinstance(op, dict) or not isinstance(op.get("op"), str) or not isinstance(op.get("path"), str):
            raise errors.bad_request(f"Patch operation {index} needs 'op' and 'path'.")
        path = _pointer(op["path"])
        if any(path[: len(kp)] == kp for kp in key_paths) or path in (["id"],):
            raise errors.bad_request(
                f"Patch operation {index}: '{op['path']}' (the id or partition key) cannot be changed."
            )
        _apply_one(new, op["op"].lower(), path, op, index)
    return new


def _pointer(path: str) -> list[str]:
    if not path.startswith("/") or path == "/":
        raise errors.bad_request(f"Patch path {path!r} must be a JSON pointer such as /a/b.")
    return [seg.replace("~1", "/").replace("~0", "~") for seg in path[1:].split("/")]


def _parent(doc: Any, path: list[str], index: int, create: bool = False) -> Any:
    node = doc
    for seg in path[:-1]:
        if isinstance(node, dict):
            if seg not in node:
                if not create:
                    raise errors.bad_request(f"Patch operation {index}: path segment '{seg}' does not exist.")
                node[seg] = {}
            node = node[seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            node = node[int(seg)]
        else:
            raise errors.bad_request(f"Patch operation {index}: path segment '{seg}' does not exist.")
    return node


def _apply_one(doc: dict[str, Any], kind: str, path: list[str], op: dict[str, Any], index: int) -> None:
    if kind == "move":
        source = _pointer(op.get("from", ""))
        value = _remove(doc, source, index)
        _set(doc, path, value, index, insert=False)
        return
    if kind == "remove":
        _remove(doc, path, index)
        return
    if "value" not in op:
        raise errors.bad_request(f"Patch operation {index} ({kind}) needs a 'value'.")
    value = op["value"]
    if kind in ("add", "set"):
        _set(doc, path, value, index, insert=kind == "add")
    elif kind == "replace":
        parent = _parent(doc, path, index)
        if not _exists(parent, path[-1]):
            raise errors.bad_request(f"Patch operation {index}: cannot replace '{'/'.join(path)}', it does not exist.")
        _set(doc, path, value, index, insert=False)
    elif kind == "incr":
        _increment(doc, path, value, index)
    else:
        raise errors.bad_request(
            f"Patch operation {index}: unknown op '{kind}' (add, set, replace, remove, incr, move)."
        )


def _exists(parent: Any, seg: str) -> bool:
    if isinstance(parent, dict):
        return seg in parent
    return isinstance(parent, list) and seg.isdigit() and int(seg) < len(parent)


def _set(doc: dict[str, Any], path: list[str], value: Any, index: int, *, insert: bool) -> None:
    parent = _parent(doc, path, index, create=True)
    seg = path[-1]
    if isinstance(parent, dict):
        parent[seg] = value
    elif isinstance(parent, list) and (seg == "-" or (seg.isdigit() and int(seg) <= len(parent))):
        position = len(parent) if seg == "-" else int(seg)
        if insert or position == len(parent):
            parent.insert(position, value)
        else:
            parent[position] = value
    else:
        raise errors.bad_request(f"Patch operation {index}: cannot write at '/{'/'.join(path)}'.")


def _remove(doc: dict[str, Any], path: list[str], index: int) -> Any:
    parent = _parent(doc, path, index)
    seg = path[-1]
    if not _exists(parent, seg):
        raise errors.bad_request(f"Patch operation {index}: cannot remove '/{'/'.join(path)}', it does not exist.")
    return parent.pop(seg if isinstance(parent, dict) else int(seg))


def _increment(doc: dict[str, Any], path: list[str], value: Any, index: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise errors.bad_request(f"Patch operation {index}: incr needs a number.")
    parent = _parent(doc, path, index, create=True)
    current = parent.get(path[-1], 0) if isinstance(parent, dict) else None
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise errors.bad_request(f"Patch operation {index}: incr target '/{'/'.join(path)}' is not a number.")
    parent[path[-1]] = _incremented(current, value, index, path)


def _incremented(current: int | float, value: int | float, index: int, path: list[str]) -> int | float:
    """The sum as the service stores it: an integer within int64, else a double; a sum that overflows
    to Infinity has no JSON form (it would be kept in memory but saved as null), so it is refused."""
    total: int | float = current + value
    if isinstance(total, int) and not INT64_MIN <= total <= INT64_MAX:
        total = float(total)
    if not math.isfinite(total):
        raise errors.bad_request(f"Patch operation {index}: incr of '/{'/'.join(path)}' overflows a double.")
    return total
