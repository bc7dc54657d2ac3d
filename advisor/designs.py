"""Candidate partition-key designs: a single path, a synthetic template, a hierarchical list of paths.

A design is parsed from its config spelling and checked against the sample before anything is measured,
so a typo is one clear error rather than a container full of undefined keys:

- `"/sessionId"`: a single path (kind Hash, version 2).
- `["/tenantId", "/sessionId"]`: a hierarchical key of 2 or 3 levels (kind MultiHash, version 2; H1 in
  docs/reference/ru-cost-model.md: at most 3 levels).
- `"{tenantId}-{createdAt:yyyy-MM}"`: a synthetic key the application computes and stores in `/pk` (or the
  path the `[advisor] synthetic_path` names, e.g. `/partitionKey`).
  Template syntax: literal text with `{property}` or `{property:format}` fields; `property` is a
  document property (dots for nested ones: `{user.region}`); `format` formats a date property (an ISO 8601
  string or epoch seconds) with the .NET tokens the guides use: `yyyy`, `MM`, `dd`, `HH`, `mm` (minutes),
  other characters kept as they are. A field without a format is the value as text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cosmoscore.keys import extract_key, split_path
from cosmoscore.limits import Limits

SINGLE, SYNTHETIC, HIERARCHICAL = "single", "synthetic", "hierarchical"
SYNTHETIC_PATH = "/pk"  # where a synthetic design's computed value lives
_FIELD = re.compile(r"\{([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?::([^{}]*))?\}")
_TOKENS = (("yyyy", "%Y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"), ("mm", "%M"))
_PERIOD_DAYS = {"%M": 1 / 1440, "%H": 1 / 24, "%d": 1.0, "%m": 31.0, "%Y": 366.0}  # finest token -> a key's life


class DesignError(ValueError):
    """A candidate design that cannot be measured, with the reason in words."""


@dataclass(frozen=True)
class Design:
    """One candidate: `paths` are the container's key paths; `template` only for a synthetic design."""

    name: str
    kind: str
    paths: tuple[str, ...]
    template: str = ""

    @property
    def properties(self) -> tuple[str, ...]:
        """The document properties the key is made of (dotted), in order."""
        if self.kind == SYNTHETIC:
            return tuple(m.group(1) for m in _FIELD.finditer(self.template))
        return tuple(p.strip("/").replace("/", ".") for p in self.paths)

    @property
    def levels(self) -> int:
        return len(self.paths)

    def definition(self) -> dict[str, Any]:
        """The `partitionKey` definition the SDK and ARM accept."""
        kind = "MultiHash" if self.kind == HIERARCHICAL else "Hash"
        return {"paths": list(self.paths), "kind": kind, "version": 2}

    def key_of(self, doc: Mapping[str, Any]) -> tuple[Any, ...]:
        """The key value(s) a document gets under this design (the synthetic value as a 1-tuple)."""
        if self.kind == SYNTHETIC:
            return (render_template(self.template, doc),)
        return extract_key(doc, [split_path(p) for p in self.paths])  # a missing path: undefined, as the engine

    def stored(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """The document as it would be written: a synthetic design adds its computed key (`/pk`)."""
        if self.kind != SYNTHETIC:
            return dict(doc)
        return {**doc, self.synthetic_property: render_template(self.template, doc)}

    @property
    def synthetic_property(self) -> str:
        """The property a synthetic design's value is stored in ("pk" for `/pk`)."""
        return self.paths[0][1:]

    def key_life_days(self) -> float | None:
        """How long one key keeps receiving writes when the template ends in a time bucket (a month: 31
        days), else None (a key grows for ever)."""
        formats = [m.group(2) for m in _FIELD.finditer(self.template) if m.group(2)] if self.kind == SYNTHETIC else []
        spans = [_PERIOD_DAYS[code] for f in formats for token, code in _TOKENS if token in f]
        return min(spans) if spans else None


def property_value(doc: Mapping[str, Any], dotted: str) -> Any:
    """A (nested) property's value, None when absent (Cosmos DB then keys the document as undefined)."""
    value: Any = doc
    for step in dotted.split("."):
        if not isinstance(value, Mapping) or step not in value:
            return None
        value = value[step]
    return value


def as_datetime(value: Any) -> dt.datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value, dt.UTC)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    raise DesignError(f"cannot read {value!r} as a date")


def format_date(value: Any, fmt: str) -> str:
    """`fmt` in .NET tokens (`yyyy-MM`) applied to an ISO string or epoch seconds."""
    pattern = fmt.replace("%", "%%")
    for token, code in _TOKENS:
        pattern = pattern.replace(token, code)
    return as_datetime(value).strftime(pattern)


def render_template(template: str, doc: Mapping[str, Any]) -> str:
    """The synthetic key of one document (`{tenantId}-{createdAt:yyyy-MM}` -> `contoso-2026-11`)."""

    def field(match: re.Match[str]) -> str:
        value = property_value(doc, match.group(1))
        if match.group(2):
            return format_date(value, match.group(2)) if value is not None else ""
        return "" if value is None else str(value)

    return _FIELD.sub(field, template)


def _name_of(spec: str | Sequence[str]) -> str:
    return spec if isinstance(spec, str) else ",".join(spec)


def parse_design(
    spec: str | Sequence[str],
    name: str | None = None,
    limits: Limits | None = None,
    *,
    synthetic_path: str = SYNTHETIC_PATH,
) -> Design:
    """A design from its config spelling (see the module docstring); raises `DesignError` in words.
    `synthetic_path`: where a synthetic template's value is stored (`/pk` unless the config names another)."""
    levels_max = (limits or Limits()).max_hierarchy_levels
    label = name or _name_of(spec)
    if isinstance(spec, str):
        if "{" in spec or "}" in spec:
            return _synthetic(spec, label, _path(synthetic_path))
        return Design(label, SINGLE, (_path(spec),))
    paths = tuple(_path(p) for p in spec)
    if not paths:
        raise DesignError(f"design {label!r}: a hierarchical key needs at least one path")
    if len(paths) > levels_max:
        raise DesignError(
            f"design {label!r}: {len(paths)} levels, a hierarchical partition key has at most {levels_max} "
            "(H1, docs/reference/ru-cost-model.md)"
        )
    if len(set(paths)) != len(paths):
        raise DesignError(f"design {label!r}: a path appears twice")
    return Design(label, SINGLE if len(paths) == 1 else HIERARCHICAL, paths)


def _path(path: Any) -> str:
    if not isinstance(path, str) or not re.fullmatch(r"(/[A-Za-z_$][\w$]*)+", path):
        raise DesignError(f"{path!r} is not a partition key path (expected /property or /a/b)")
    return path


def _synthetic(template: str, label: str, path: str = SYNTHETIC_PATH) -> Design:
    stripped = _FIELD.sub("", template)
    if "{" in stripped or "}" in stripped:
        raise DesignError(f"design {label!r}: unbalanced or malformed field in template {template!r}")
    fields = list(_FIELD.finditer(template))
    if not fields:
        raise DesignError(f"design {label!r}: template {template!r} has no {{property}} field")
    if path.count("/") != 1:
        raise DesignError(f"design {label!r}: the synthetic key's path {path!r} must be a top-level property")
    return Design(label, SYNTHETIC, (path,), template)


def validate_design(design: Design, docs: Sequence[Mapping[str, Any]]) -> None:
    """Refuse an empty sample and a property that no sample document has (a typo, most likely)."""
    if not docs:
        raise DesignError("the document sample is empty: nothing to measure a design on")
    for prop in design.properties:
        if all(property_value(doc, prop) is None for doc in docs):
            known = sorted({k for doc in docs[:200] for k in doc})
            raise DesignError(
                f"design {design.name!r}: property {prop!r} is absent from every sample document "
                f"(properties seen: {', '.join(known)})"
            )
    if design.kind == SYNTHETIC:
        for doc in docs[:1000]:
            try:
                design.key_of(doc)
            except (ValueError, TypeError) as err:
                raise DesignError(f"design {design.name!r}: document {doc.get('id')!r}: {err}") from err
