"""Time to live: when an item expires, and the schedule that deletes expired items (cosmos-wire-protocol.md
W54-W57).

A container without `defaultTtl` never expires items; `-1` expires only the items that carry their own
`ttl`; `n > 0` expires an item `n` seconds after its last write (`_ts`), unless its own `ttl` says otherwise
(`-1`: never). The service deletes expired items in the background and never returns them once expired;
the emulator deletes them, journaled like any delete and charged to no request, before any operation on
their container reads it (`State.coll`) and on the server's checkpoint, so nothing expired is ever seen.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from cosmoscore.keys import key_to_json
from emulator.engine import errors

if TYPE_CHECKING:  # the state holds an Expiry per container (emulator.engine.model)
    from emulator.engine.model import Container
    from emulator.engine.state import State

NEVER = -1
MAX_TTL = 2_147_483_647  # concepts-limits "Maximum TTL value": an int32 of seconds (W54)


def time_to_live(default_ttl: Any, item_ttl: Any) -> int | None:
    """Seconds from the last write to expiry, or None: never (W54, W55). An invalid value is refused when
    written (`check_item_ttl`); one from an older journal counts as absent."""
    if default_ttl is None:
        return None  # "If missing (or set to null), items aren't expired automatically"; item ttl ignored
    chosen = item_ttl if is_ttl(item_ttl) else default_ttl
    if not is_ttl(chosen) or chosen == NEVER:
        return None
    return int(chosen)


def is_ttl(value: Any) -> bool:
    """-1 or a nonzero positive int32: the only time-to-live values the service takes (W88)."""
    return isinstance(value, int) and not isinstance(value, bool) and (value == NEVER or 0 < value <= MAX_TTL)


def check_default_ttl(value: Any) -> None:
    """A container's `defaultTtl`: absent or null (off), -1 or n > 0; else the service's 400 (W88)."""
    if value is not None and not is_ttl(value):
        raise errors.invalid_ttl("defaultTtl", _text(value))


def check_item_ttl(default_ttl: Any, doc: dict[str, Any]) -> None:
    """An item's `ttl` where its container has a `defaultTtl` (elsewhere it is ignored, W55): -1 or n > 0,
    null included among the refused; else the service's 400 at write time (W88)."""
    if default_ttl is not None and "ttl" in doc and not is_ttl(doc["ttl"]):
        raise errors.invalid_ttl("ttl", _text(doc["ttl"]))


def _text(value: Any) -> str:
    """A value as the service's message quotes it: a string as is, anything else as JSON (`null`, `1.5`)."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def expires_at(doc: dict[str, Any], default_ttl: Any) -> int | None:
    """The epoch second from which the item is expired (its `_ts` + its time to live), or None."""
    seconds = time_to_live(default_ttl, doc.get("ttl"))
    return None if seconds is None else int(doc["_ts"]) + seconds


@dataclass(order=True)
class Due:
    at: int
    epk: str = field(compare=False)
    item_id: str = field(compare=False)
    ts: int = field(compare=False)  # the write it was scheduled for: a later write reschedules the item


@dataclass
class Expiry:
    """A container's items that will expire, soonest first; an entry whose item was written again since
    (another `_ts`) or deleted is skipped when it falls due."""

    heap: list[Due] = field(default_factory=list)

    def schedule(self, epk: str, doc: dict[str, Any], default_ttl: Any) -> None:
        at = expires_at(doc, default_ttl)
        if at is not None:
            heapq.heappush(self.heap, Due(at, epk, doc["id"], int(doc["_ts"])))

    def rebuild(self, items: Iterable[tuple[str, dict[str, Any]]], default_ttl: Any) -> None:
        """Every item again (the container's `defaultTtl` changed)."""
        self.heap = []
        for epk, doc in items:
            at = expires_at(doc, default_ttl)
            if at is not None:
                self.heap.append(Due(at, epk, doc["id"], int(doc["_ts"])))
        heapq.heapify(self.heap)

    def due(self, now: int) -> list[Due]:
        """The entries expired at `now` (W56: from `_ts` + ttl on), taken off the schedule."""
        taken: list[Due] = []
        while self.heap and self.heap[0].at <= now:
            taken.append(heapq.heappop(self.heap))
        return taken


def sweep(state: State, coll: Container) -> int:
    """Delete the container's items whose time to live has run out (journaled like any delete, charged to
    no request: the service's background deletion, W56) before anything reads them; how many."""
    now, deleted = state.now(), 0
    with state.lock:
        for due in coll.expiry.due(now):
            lp = coll.range_for(due.epk).logical.get(due.epk)
            item = lp.items.get(due.item_id) if lp else None
            if lp is None or item is None or int(item.doc["_ts"]) != due.ts:
                continue  # deleted, or written again since (and rescheduled then)
            at = expires_at(item.doc, coll.props.get("defaultTtl"))
            if at is None or at > now:
                continue  # the container's defaultTtl changed since
            entry = {"op": "delete", "db": coll.db_id, "coll": coll.id, "key": key_to_json(lp.key), "id": due.item_id}
            state.commit(entry)
            state.apply_delete(entry)
            deleted += 1
    if deleted and state.on_expired is not None:
        state.on_expired(coll)
    return deleted


def sweep_all(state: State) -> int:
    """Every container's expired items (the server's checkpoint: storage falls without any request)."""
    with state.lock:
        colls = [c for db in state.databases.values() for c in db.containers.values() if c.expiry.heap]
        return sum(sweep(state, c) for c in colls)
