"""Resource-id links: a request addressed by `_self` (`dbs/{dbRid}/colls/{collRid}/docs/{docRid}`) names
the same resources as its name link. azure-cosmos uses them for items passed as dicts (`_get_document_link`
takes the item's `_self`) and signs them with the lower-cased rid of the target (cosmos-wire-protocol.md §4).
Here the path is read and rewritten; the engine resolves the rids (`Engine.names_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cosmoscore.epk import UNDEFINED
from emulator.engine.facade import Engine
from emulator.rest.auth import is_rid_link


def named_path(engine: Engine, segments: list[str], key: Sequence[Any] | None) -> list[str]:
    """A path as the name path it stands for (unchanged unless it is addressed by resource ids); a rid that
    names nothing stays as it is (the operation answers 404). `key`: the request's partition key header,
    which a document rid needs (documents are found in their logical partition)."""
    if not is_rid_link(segments):
        return segments
    coll_rid = segments[3] if len(segments) >= 4 and segments[2] == "colls" else None
    doc_rid = segments[5] if coll_rid and len(segments) == 6 and segments[4] == "docs" and key is not None else None
    components = None if key is None else tuple(key) or (UNDEFINED,)  # `[]`: the undefined key
    names = engine.names_of(segments[1], coll_rid, doc_rid, components)
    if names.database is None:
        return segments
    named = [*segments[:1], names.database, *segments[2:]]
    if names.container is not None:
        named[3] = names.container
        if doc_rid is not None:
            named[5] = names.item or doc_rid
    return named
