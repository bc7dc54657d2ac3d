"""Unique keys: a container's `uniqueKeyPolicy`, checked when the container is created and enforced on every
write (cosmos-wire-protocol.md W50-W53).

Each unique key is a set of paths whose values, together, no two items of one logical partition may share
(the partition key is implicitly part of every unique key); a missing value counts as null, so only one
item may lack it. The check reads the logical partition's items, so a write costs time in proportion to its
logical partition only in a container that has a policy; the others pay nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cosmoscore.epk import UNDEFINED
from cosmoscore.keys import extract_key, split_path

MAX_UNIQUE_KEYS = 10  # W51: "a maximum of 10 unique key constraints or combinations" per container
MAX_PATHS_PER_KEY = 16  # W51: "up to 16 path values ... in each unique key"

Paths = tuple[tuple[str, ...], ...]


def parse_policy(policy: Any) -> tuple[Paths, ...]:
    """The unique keys' split paths; ValueError says what is wrong (W51) so the create is a 400."""
    if policy is None:
        return ()
    if not isinstance(policy, Mapping) or not isinstance(policy.get("uniqueKeys", []), list):
        raise ValueError("uniqueKeyPolicy must be an object with a 'uniqueKeys' array.")
    keys = policy.get("uniqueKeys", [])
    if len(keys) > MAX_UNIQUE_KEYS:
        raise ValueError(f"A container can have at most {MAX_UNIQUE_KEYS} unique keys, not {len(keys)}.")
    parsed: list[Paths] = []
    for number, key in enumerate(keys, 1):
        paths = key.get("paths") if isinstance(key, Mapping) else None
        if not isinstance(paths, list) or not paths or len(paths) > MAX_PATHS_PER_KEY:
            raise ValueError(f"Unique key {number} needs 'paths': 1 to {MAX_PATHS_PER_KEY} paths.")
        for path in paths:
            if not isinstance(path, str) or not path.startswith("/") or "*" in path or path.endswith("/?"):
                raise ValueError(f"Unique key {number} has an invalid path {path!r}: a rooted path like /name/first.")
        parsed.append(tuple(tuple(split_path(p)) for p in paths))
    return tuple(parsed)


def signature(doc: Mapping[str, Any], paths: Paths) -> str:
    """The values of one unique key in `doc`, comparable across items (a missing value is null, W52)."""
    values = [None if v is UNDEFINED else v for v in extract_key(doc, [list(p) for p in paths])]
    return json.dumps(values, sort_keys=True, separators=(",", ":"))


def violates(keys: Sequence[Paths], doc: Mapping[str, Any], others: Iterable[Mapping[str, Any]]) -> bool:
    """Whether `doc` shares every value of some unique key with another item of its logical partition (one
    with a different id and `_rid`: an item never conflicts with the version it replaces, even under a new id,
    cosmos-wire-protocol.md W86)."""
    if not keys:
        return False
    mine = [signature(doc, paths) for paths in keys]
    for other in others:
        if other.get("id") == doc.get("id") or ("_rid" in doc and other.get("_rid") == doc["_rid"]):
            continue
        if any(signature(other, paths) == sig for paths, sig in zip(keys, mine)):
            return True
    return False
