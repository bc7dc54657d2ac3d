"""Feeds: the documents of a logical partition, a hierarchical prefix, a pkrange, an EPK sub-range or
the whole container, in (EPK, id) order, one physical partition per page at most, as the gateway serves
them (cosmos-wire-protocol.md §1.7 path A); and the change feed of the same scopes, in write order
(`emulator.engine.changefeed`). Pages are charged like point reads of their items (ru-cost-model.md Q19).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cosmoscore.costmodel import CostModel
from cosmoscore.epk import FULL_RANGE, EpkRange, prefix_range
from cosmoscore.keys import key_json
from emulator.engine import changefeed, errors
from emulator.engine.items import Items
from emulator.engine.metering import Context, Meter, Metering
from emulator.engine.model import Container, PkRange, StoredItem
from emulator.engine.results import ChangeFeedStart, ChangePage, FeedCursor, FeedPage
from emulator.engine.state import State


class Feeds:
    def __init__(self, state: State, metering: Metering, cost: CostModel, items: Items, consistency: str) -> None:
        self.state = state
        self.metering = metering
        self.cost = cost
        self.items = items
        self.consistency = consistency

    def read_feed(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        *,
        key: Sequence[Any] | None = None,
        pkrange_id: str | None = None,
        epk_range: EpkRange | None = None,
        max_items: int = -1,
        cursor: FeedCursor | None = None,
        intended_rid: str | None = None,
    ) -> FeedPage:
        """One page of documents: of a key (or prefix), a pkrange, an EPK sub-range, or everything."""
        with self.metering.metered(ctx, "ReadFeed", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            scope = self._scope(coll, meter, key, epk_range)
            items, rng, next_cursor = self._page(coll, meter, scope, pkrange_id, max_items, cursor)
            if rng is not None:
                consistency = ctx.consistency or self.consistency
                sizes = [item.size for item in items]  # measured once, when stored
                self.metering.consume(coll, rng, meter, self.cost.feed_page_ru(sizes, consistency))
            docs = [item.doc for item in items]
            lsn = rng.lsn if rng is not None else None
            return FeedPage(docs, meter.charge, rng.id if rng else "", lsn, next_cursor, coll.rid)

    def read_changes(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        start: ChangeFeedStart,
        *,
        key: Sequence[Any] | None = None,
        pkrange_id: str | None = None,
        epk_range: EpkRange | None = None,
        max_items: int = -1,
        intended_rid: str | None = None,
    ) -> ChangePage:
        """One page of the change feed (emulator.engine.changefeed) of a pkrange, a key, an EPK sub-range or
        the container: the changes after `start`; none is the service's 304."""
        with self.metering.metered(ctx, "ReadFeed", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            scope = self._scope(coll, meter, key, epk_range)
            ranges = changefeed.ranges_read(coll, scope, pkrange_id)
            for rng in ranges:
                self.metering.admit(coll, rng, meter)
            position = self.state.writes
            limit = max_items if max_items > 0 else changefeed.DEFAULT_PAGE_ITEMS
            changed = changefeed.changes(
                ranges, scope, position if start.now else start.after, start.since_ts, limit + 1
            )
            etag = changed[limit - 1].seq if len(changed) > limit else position
            changed = changed[:limit]
            served = ranges[0]
            consistency = ctx.consistency or self.consistency
            self.metering.consume(coll, served, meter, self.cost.feed_page_ru([i.size for i in changed], consistency))
            if not changed:
                meter.status = 304
            docs = [{**item.doc, "_lsn": item.seq} for item in changed]
            return ChangePage(docs, etag, meter.charge, served.id, served.lsn, coll.rid)

    def _scope(self, coll: Container, meter: Meter, key: Sequence[Any] | None, epk_range: EpkRange | None) -> EpkRange:
        """The EPK range a feed reads: a key's point (or a hierarchical prefix's range), a sub-range, or all."""
        if key is None:
            return FULL_RANGE if epk_range is None else epk_range
        key = self.items.checked_key(coll, key, full=False)
        epk = coll.epk(key)
        scope = EpkRange.point(epk) if len(key) == len(coll.key_paths) else EpkRange(*prefix_range(epk))
        meter.partition_key = key_json(key) if scope.is_point else ""
        return scope

    def _page(
        self,
        coll: Container,
        meter: Meter,
        scope: EpkRange,
        pkrange_id: str | None,
        max_items: int,
        cursor: FeedCursor | None,
    ) -> tuple[list[StoredItem], PkRange | None, FeedCursor | None]:
        """Serve ranges in EPK order, one range per page at most; returns the items, the range and where to resume."""
        after = cursor.after if cursor else None
        start = max(scope.min, cursor.start) if cursor and cursor.start is not None else scope.min
        if pkrange_id is not None:
            rng = coll.range_by_id(pkrange_id)
            if rng is None:
                raise errors.range_gone()
            candidates = [rng]
        elif scope.is_point:
            candidates = [coll.range_for(scope.min)]
        else:
            candidates = coll.routing.overlapping(EpkRange(start, scope.max))
        for index, rng in enumerate(candidates):
            self.metering.admit(coll, rng, meter)
            items, last = _collect(rng, scope, after, max_items)
            if last is not None:
                return items, rng, FeedCursor(last[0], last)
            is_last = index == len(candidates) - 1 or pkrange_id is not None or scope.is_point
            if items or is_last:
                return items, rng, None if is_last else FeedCursor(candidates[index + 1].min)
        return [], None, None


def _collect(
    rng: PkRange, scope: EpkRange, after: tuple[str, ...] | None, max_items: int
) -> tuple[list[StoredItem], tuple[str, str] | None]:
    """Documents of a range within the scope in (EPK, id) order, after a cursor.

    Returns the page and, when more documents remain, the (EPK, id) of its last document.
    """
    items: list[StoredItem] = []
    limit = max_items if max_items and max_items > 0 else math.inf
    last: tuple[str, str] | None = None
    for epk in sorted(rng.logical):
        if not scope.contains(epk):
            continue
        lp = rng.logical[epk]
        for item_id in sorted(lp.items):
            if after is not None and (epk, item_id) <= after:
                continue
            if len(items) >= limit:
                return items, last
            items.append(lp.items[item_id])
            last = (epk, item_id)
    return items, None
