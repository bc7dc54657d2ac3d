"""Resource-id links: a request addressed by `_self` (`dbs/{dbRid}/colls/{collRid}/docs/{docRid}`) names
the same resources as its name link. azure-cosmos uses them for items passed as dicts (`_get_document_link`
takes the item's `_self`) and signs them with the lower-cased rid of the target (cosmos-wire-protocol.md §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cosmoscore.epk import UNDEFINED
from emulator.auth import is_rid_link
from emulator.engine.model import Container
from emulator.engine.state import State

if TYPE_CHECKING:
    from emulator.engine.facade import Engine


def named_path(engine: Engine, segments: list[str], key: Sequence[Any] | None) -> list[str]:
    """A path as the name path it stands for (unchanged unless it is addressed by resource ids)."""
    if not is_rid_link(segments):
        return segments
    with engine.metering.lock:
        return named_segments(engine.state, segments, key)


def named_segments(state: State, segments: list[str], key: Sequence[Any] | None) -> list[str]:
    """The name path of a rid path; a rid that names nothing stays as it is (the operation answers 404)."""
    db = next((d for d in state.databases.values() if d.rid == segments[1]), None)
    if db is None:
        return segments
    named = [*segments[:1], db.id, *segments[2:]]
    if len(segments) < 4 or segments[2] != "colls":
        return named
    coll = next((c for c in db.containers.values() if c.rid == segments[3]), None)
    if coll is None:
        return named
    named[3] = coll.id
    if len(segments) == 6 and segments[4] == "docs" and key is not None:
        named[5] = _item_id(coll, tuple(key) or (UNDEFINED,), segments[5]) or segments[5]
    return named


def _item_id(coll: Container, key: tuple[Any, ...], doc_rid: str) -> str | None:
    """The id of the document with `_rid` `doc_rid` in its logical partition (given by the key header)."""
    try:
        epk = coll.epk(key)
    except (ValueError, TypeError):  # a key the operation itself will refuse with the service's 400
        return None
    lp = coll.range_for(epk).logical.get(epk)
    if lp is None:
        return None
    return next((item_id for item_id, item in lp.items.items() if item.doc.get("_rid") == doc_rid), None)
