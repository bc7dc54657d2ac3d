"""The change feed in latest-version mode: which items a read returns, the current version of every item
created or changed after a point, in the order of its last write, one physical partition per request
(cosmos-wire-protocol.md W29); `emulator.engine.feeds` serves and charges the pages.

A change's position is its item's write sequence (`StoredItem.seq`), one counter for the whole account,
kept across restarts: every range's changes are in ascending order of it, a child range created by a
split holds its parent's items with their positions, so a position read from the parent is where its
children continue (the SDK carries the parent's etag to each child). Deletes are not changes in this mode
(an item deleted is no longer in the feed), as the service documents. A page costs about the point reads
of its documents (ru-cost-model.md Q19), an empty poll the feed's minimum page charge.
"""

from __future__ import annotations

import heapq

from cosmoscore.epk import FULL_RANGE, EpkRange
from emulator.engine import errors
from emulator.engine.model import Container, PkRange, StoredItem

DEFAULT_PAGE_ITEMS = 100  # W29 (ASSUMPTION): a page without x-ms-max-item-count; the service picks its own


def ranges_read(coll: Container, scope: EpkRange, pkrange_id: str | None) -> list[PkRange]:
    """The ranges a request reads: its pkrange (410/1002 once split), else those the scope overlaps."""
    if pkrange_id is not None:
        rng = coll.range_by_id(pkrange_id)
        if rng is None:
            raise errors.range_gone()
        return [rng]
    if scope.is_point:
        return [coll.range_for(scope.min)]
    return list(coll.routing.overlapping(scope))


def changes(
    ranges: list[PkRange], scope: EpkRange, after: int | None, since_ts: int | None, limit: int
) -> list[StoredItem]:
    """Up to `limit` items in the ranges written after position `after`, in write order, within the scope."""
    whole = scope == FULL_RANGE
    found: list[StoredItem] = []
    streams = [rng.written_after(after or 0) for rng in ranges]
    for item in streams[0] if len(streams) == 1 else heapq.merge(*streams, key=_seq):
        if since_ts is not None and item.doc.get("_ts", 0) <= since_ts:  # the start time is exclusive (W29)
            continue
        if not whole and not scope.contains(item.epk):
            continue
        found.append(item)
        if len(found) >= limit:
            break
    return found


def _seq(item: StoredItem) -> int:
    return item.seq
