"""Which leaf values of a document the indexing policy covers: the L of the write-cost model.

Write RU grows with indexed terms (ru-cost-model.md W1, W6); excluded paths and `indexingMode: none`
lower it. Paths follow the policy syntax: `/*` (everything below), `/a/?` (the scalar at /a),
`/a/[]/b/?` (array elements); the most precise matching rule wins, as the service documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SYSTEM_PROPERTIES = frozenset({"_rid", "_self", "_etag", "_attachments", "_ts"})
DEFAULT_POLICY: dict[str, Any] = {
    "indexingMode": "consistent",
    "automatic": True,
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": '/"_etag"/?'}],
}


@dataclass(frozen=True)
class PathRule:
    segments: tuple[str, ...]  # property names, "[]" for array elements, "*" wildcard last
    terminal: str  # "*" (subtree) or "?" (scalar)
    included: bool

    def matches(self, leaf: tuple[str, ...]) -> bool:
        if self.terminal == "?":
            return len(leaf) == len(self.segments) and _segments_match(self.segments, leaf)
        return len(leaf) >= len(self.segments) and _segments_match(self.segments, leaf[: len(self.segments)])

    @property
    def precision(self) -> tuple[int, int]:
        return len(self.segments), 1 if self.terminal == "?" else 0


def _segments_match(pattern: tuple[str, ...], leaf: tuple[str, ...]) -> bool:
    return all(p == s or (p == "[]" and s.isdigit()) for p, s in zip(pattern, leaf))


def parse_path(path: str, included: bool) -> PathRule:
    """Turn an indexing-policy path such as `/address/"city"/?` into a rule."""
    parts = [p.strip('"') for p in path.strip().strip("/").split("/") if p]
    if not parts or parts[-1] not in ("*", "?"):
        raise ValueError(f"index path {path!r} must end in /* or /?")
    return PathRule(tuple(parts[:-1]), parts[-1], included)


LEGACY_INDEX_KINDS = frozenset({"Range", "Hash", "Spatial"})


def normalize_policy(policy: Any) -> dict[str, Any]:
    """A policy as the service stores it: the legacy root path `/` of older samples and SDKs is `/*`, and
    the per-path `indexes` list (Range/Hash kinds, precision) is accepted and dropped, as the current
    service indexes every included path with range indexes (ru-cost-model.md W7). ValueError if invalid."""
    if not isinstance(policy, dict):
        raise ValueError("an indexing policy must be a JSON object")
    out = dict(policy)
    for side in ("includedPaths", "excludedPaths"):
        entries = policy.get(side)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError(f"{side} must be a list of objects with a 'path'")
        out[side] = [_normalized_path(entry) for entry in entries]
    return out


ETAG_EXCLUSION: dict[str, str] = {"path": '/"_etag"/?'}


def complete_policy(policy: dict[str, Any]) -> dict[str, Any]:
    """A (normalized) policy completed as the service stores and returns it: `indexingMode` consistent and
    `automatic` true when left out, the root `/*` included when no included path is given, and the `_etag`
    exclusion always among the excluded paths (ru-cost-model.md W7, cosmos-wire-protocol.md W81). A policy
    with indexing off (`none`) is kept as given beyond its defaults: it indexes no path."""
    out: dict[str, Any] = {"indexingMode": "consistent", "automatic": True} | policy
    if str(out["indexingMode"]).lower() == "none":
        return out
    included = list(out.get("includedPaths") or [{"path": "/*"}])
    excluded = list(out.get("excludedPaths") or [])
    if not any(_same_path(e.get("path"), ETAG_EXCLUSION["path"]) for e in excluded):
        excluded.append(dict(ETAG_EXCLUSION))
    return out | {"includedPaths": included, "excludedPaths": excluded}


def _same_path(path: Any, other: str) -> bool:
    """Two policy paths naming the same rule (`/"_etag"/?` and `/_etag/?` do)."""
    if not isinstance(path, str):
        return False
    try:
        return parse_path(path, False) == parse_path(other, False)
    except ValueError:
        return False


def _normalized_path(entry: dict[str, Any]) -> dict[str, Any]:
    indexes = entry.get("indexes", [])
    if not isinstance(indexes, list) or any(
        not isinstance(i, dict) or i.get("kind") not in LEGACY_INDEX_KINDS for i in indexes
    ):
        raise ValueError(f"invalid indexes {indexes!r}: each needs a kind of Range, Hash or Spatial")
    path = entry.get("path")
    if not isinstance(path, str):
        raise ValueError(f"an index path must be a string, not {path!r}")
    return {k: v for k, v in entry.items() if k != "indexes"} | {"path": "/*" if path.strip() == "/" else path}


Composite = tuple[tuple[tuple[str, ...], bool], ...]  # ((path segments, descending), ...)


def parse_composite(entry: Any) -> Composite:
    """One `compositeIndexes` entry: `[{"path": "/a", "order": "ascending"}, ...]`."""
    if not isinstance(entry, list) or len(entry) < 2:
        raise ValueError("a composite index needs a list of at least two paths")
    out = []
    for part in entry:
        if not isinstance(part, dict) or not isinstance(part.get("path"), str):
            raise ValueError("a composite index path must be an object with a 'path' string")
        segments = tuple(p.strip('"') for p in part["path"].strip().strip("/").split("/") if p)
        order = str(part.get("order", "ascending")).lower()
        if order not in ("ascending", "descending") or not segments or segments[-1] in ("*", "?"):
            raise ValueError(f"invalid composite index path {part!r}")
        out.append((segments, order == "descending"))
    return tuple(out)


@dataclass(frozen=True)
class IndexPolicy:
    mode: str
    rules: tuple[PathRule, ...]
    composites: tuple[Composite, ...] = ()
    _verdicts: dict[tuple[str, ...], bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, policy: dict[str, Any] | None) -> IndexPolicy:
        policy = policy or DEFAULT_POLICY
        mode = str(policy.get("indexingMode", "consistent")).lower()
        rules = [parse_path(p["path"], True) for p in policy.get("includedPaths", [{"path": "/*"}])]
        rules += [parse_path(p["path"], False) for p in policy.get("excludedPaths", [])]
        composites = tuple(parse_composite(c) for c in policy.get("compositeIndexes", []) or [])
        return cls(mode, tuple(rules), composites)

    def serves_order_by(self, items: Composite) -> bool:
        """A multi-key ORDER BY needs a composite index on the same paths in the same order, with every
        direction identical or every one inverted (cosmos-sql-semantics §2, §8.3)."""
        if len(items) < 2:
            return True
        for composite in self.composites:
            if [p for p, _ in composite] != [p for p, _ in items]:
                continue
            same = [d for _, d in composite] == [d for _, d in items]
            inverted = [not d for _, d in composite] == [d for _, d in items]
            if same or inverted:
                return True
        return False

    def is_indexed(self, leaf: tuple[str, ...]) -> bool:
        """True when the most precise matching rule includes this path (memoised: paths repeat)."""
        verdict = self._verdicts.get(leaf)
        if verdict is None:
            verdict = self._decide(leaf)
            if len(self._verdicts) < 100_000:  # bounded: array indexes make paths unbounded
                self._verdicts[leaf] = verdict
        return verdict

    def _decide(self, leaf: tuple[str, ...]) -> bool:
        """The most precise matching rule wins; ties go to exclusion."""
        if self.mode == "none":
            return False
        best: PathRule | None = None
        for rule in self.rules:
            if rule.matches(leaf) and (
                best is None
                or rule.precision > best.precision
                or (rule.precision == best.precision and not rule.included)
            ):
                best = rule
        return best is not None and best.included


def leaves(doc: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every scalar in a document with its path; array elements are numbered segments."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if not prefix and key in SYSTEM_PROPERTIES:
                continue
            yield from leaves(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from leaves(value, (*prefix, str(i)))
    else:
        yield prefix, doc


def indexed_leaves(doc: dict[str, Any], policy: IndexPolicy) -> dict[tuple[str, ...], Any]:
    """The indexed leaf values of a document (the model's L is their count)."""
    if policy.mode == "none":
        return {}
    return {path: value for path, value in leaves(doc) if policy.is_indexed(path)}


def changed_leaf_count(old: dict[tuple[str, ...], Any], new: dict[tuple[str, ...], Any]) -> int:
    """Leaves whose indexed value changed, appeared or disappeared between two versions."""
    return sum(1 for path in old.keys() | new.keys() if old.get(path, _MISSING) != new.get(path, _MISSING))


_MISSING = object()
