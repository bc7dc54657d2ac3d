"""The SDK's feed ranges as EPK ranges, for the routing prediction of `cosmoscore.routing`.

`read_feed_ranges()` answers dicts (`{"Range": {"min", "max", ...}}`); the replay collector turns them
into sorted `EpkRange`s and labels them `min..max` in its rows. The routing rule and its classes live in
`cosmoscore.routing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cosmoscore.epk import MAX_EPK, EpkRange


def feed_ranges_of(raw: Iterable[Mapping[str, Any]]) -> list[EpkRange]:
    """The SDK's feed-range dicts as EPK ranges sorted by their start."""
    out = []
    for item in raw:
        rng = item.get("Range", item)
        out.append(EpkRange(str(rng.get("min", "")), str(rng.get("max", MAX_EPK))))
    return sorted(out, key=lambda r: r.min)


def label(rng: EpkRange) -> str:
    """How a feed range is named in the store: `min..max`."""
    return f"{rng.min}..{rng.max}"
