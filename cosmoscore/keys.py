"""Partition key values: paths, extraction from documents, and their JSON spellings.

A key is a tuple of components, one per path of the container's partition key definition (1 for Hash,
2-3 for MultiHash). A missing path is the undefined value, spelled `{}` in JSON (the SDK's header
`[{}]`, cosmos-wire-protocol.md §1.3). One module holds these conversions so the emulator, the
collectors' routing prediction and the advisor read keys the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from cosmoscore.epk import UNDEFINED, Undefined

Key = tuple[Any, ...]


def split_path(path: str) -> list[str]:
    """`/a/b` -> ["a", "b"]. A segment in double or single quotes is one property name, `/` included
    (`/"a/b"` -> ["a/b"]), as the SDK reads a path when it extracts a key (`_base.ParsePaths`), so the key
    it sends and the one read here from the same document agree (cosmos-wire-protocol.md W82). ValueError
    for a path that leaves a quote open or runs on after one (`/"a"b`); a missing leading `/` is forgiven,
    as configs and the advisor may write one."""
    segments: list[str] = []
    path = path if path.startswith("/") else "/" + path
    i = 0
    while i < len(path):
        if path[i] != "/":
            raise ValueError(f"invalid path {path!r}: expected '/' at position {i}")
        i += 1
        if i < len(path) and path[i] in "\"'":
            end = _closing_quote(path, i)
            segments.append(path[i + 1 : end])
            i = end + 1
            continue
        end = path.find("/", i)
        end = len(path) if end == -1 else end
        if path[i:end].strip():
            segments.append(path[i:end].strip())
        i = end
    return segments


def _closing_quote(path: str, start: int) -> int:
    """The position of the quote closing the one at `start` (a quote after a backslash does not close it)."""
    end = path.find(path[start], start + 1)
    while end != -1 and path[end - 1] == "\\":
        end = path.find(path[start], end + 1)
    if end == -1:
        raise ValueError(f"invalid path {path!r}: the quote at position {start} is not closed")
    return end


def key_paths(definition: dict[str, Any]) -> list[list[str]]:
    """The split paths of a partition key definition (`{"paths": [...], "kind": ...}`)."""
    return [split_path(p) for p in definition.get("paths", [])]


def extract_key(doc: Any, paths: Sequence[Sequence[str]]) -> Key:
    """The partition key of a document; a path that is missing, or that resolves to an object, is the
    undefined value, as the service and the SDK read it (the SDK then sends `[{}]`: W82)."""
    return tuple(_walk(doc, path) for path in paths)


def _walk(doc: Any, path: Iterable[str]) -> Any:
    for seg in path:
        if not isinstance(doc, dict) or seg not in doc:
            return UNDEFINED
        doc = doc[seg]
    return UNDEFINED if isinstance(doc, dict) else doc


def is_key_component(value: Any) -> bool:
    """Strings, numbers, booleans, null and undefined may be key components; objects and arrays not."""
    return value is None or isinstance(value, (str, int, float, bool, Undefined))


def key_to_json(key: Sequence[Any]) -> list[Any]:
    """A key as a JSON list (undefined as `{}`), the shape of the partition key header."""
    return [{} if c is UNDEFINED else c for c in key]


def key_from_json(components: Sequence[Any]) -> Key:
    """The inverse of `key_to_json`."""
    return tuple(UNDEFINED if c == {} else c for c in components)


def key_json(key: Sequence[Any]) -> str:
    """A logical key as the header spells it: `["a"]`, `["t1","u1"]`, `[{}]` for undefined."""
    return orjson.dumps(key_to_json(key)).decode()


def key_text(value: Any) -> str:
    """The one spelling of a partition key in the store, reports and pages: compact JSON (`["a","b"]`, no
    spaces, non-ASCII as is), from a key's JSON text in any spelling (`["a", "b"]`) or its components. Text
    that is not JSON, and "" (no key), come back unchanged, so a pivot joins every row of one key."""
    if value is None:
        return ""
    if isinstance(value, str):
        if not value.strip():
            return value
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
