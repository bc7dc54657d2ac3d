"""What a document must be and what the service adds to it: the checks of an item and its partition key
(the service's 400s and 413), the system properties stamped on a write, and whether a conditional patch's
filter predicate holds over a stored item. Pure functions of the container, the limits and the document."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from cosmoscore.epk import UNDEFINED
from cosmoscore.indexing import SYSTEM_PROPERTIES
from cosmoscore.keys import Key, is_key_component, key_to_json
from cosmoscore.limits import Limits, key_value_bytes, nesting_depth
from cosmoscore.sql import Query, execute
from emulator.engine import errors, ttl
from emulator.engine.model import Container, StoredItem
from emulator.engine.query.sql import guarded, parse


def checked_document(
    coll: Container, doc: Any, key: Sequence[Any] | None, limits: Limits
) -> tuple[dict[str, Any], Key]:
    """Validate a document; returns it with its partition key (400 when `key` is given and differs)."""
    if not isinstance(doc, dict):
        raise errors.bad_request("The request payload is invalid: a document must be a JSON object.")
    item_id = doc.get("id")
    if item_id is None:
        raise errors.bad_request("The input content is invalid because the required properties - 'id; ' - are missing")
    if not isinstance(item_id, str) or not item_id:
        raise errors.bad_request("The input content is invalid because the property 'id' must be a non-empty string.")
    if len(item_id.encode()) > limits.max_id_bytes or any(ch in item_id for ch in "/\\?#"):
        raise errors.bad_request("The id is invalid: at most 1,023 bytes and none of '/', '\\', '?', '#'.")
    ttl.check_item_ttl(coll.props.get("defaultTtl"), doc)
    own = coll.extract_key(doc)
    if not all(is_key_component(c) for c in own):
        raise errors.bad_request("The partition key value of the document must be a string, number, boolean or null.")
    check_key_size(own, limits)
    if key is not None:
        given = checked_key(coll, key, limits, full=True)
        if given != own and key_to_json(given) != key_to_json(own):
            raise errors.bad_request(
                "PartitionKey extracted from document doesn't match the one specified in the header",
                PARTITION_KEY_MISMATCH,
            )
    return doc, own


def checked_key(coll: Container, key: Sequence[Any], limits: Limits, *, full: bool) -> Key:
    """A key (or, not `full`, a hierarchical prefix) that fits the container's definition: a point operation
    with fewer (or any operation with more) components than the definition's paths is the service's
    400/1001 PartitionKeyMismatch (cosmos-wire-protocol.md W84)."""
    key = tuple(key)
    if not key:  # no value (the SDK's empty header): the undefined key of a one-path definition
        if coll.kind == "MultiHash":
            raise errors.bad_request("The partition key header must be a JSON array of the key's components.")
        key = (UNDEFINED,)
    levels = len(coll.key_paths)
    if (full and len(key) != levels) or len(key) > levels:
        raise errors.bad_request(
            "Partition key provided either doesn't correspond to definition in the collection or doesn't match "
            f"partition key field values specified in the document. (expected {levels} component(s), "
            f"got {key_to_json(key)!r})",
            PARTITION_KEY_MISMATCH,
        )
    if not all(is_key_component(c) for c in key):
        raise errors.bad_request(f"Partition key {key_to_json(key)!r} is invalid.")
    check_key_size(key, limits)
    return key


PARTITION_KEY_MISMATCH = 1001  # the substatus of a key that does not fit the definition or the document


def check_key_size(key: Key, limits: Limits) -> None:
    """Partition key values are at most 2,048 bytes (cosmos-errors-and-stats.md §2.5: 400)."""
    if key_value_bytes(key) > limits.max_partition_key_bytes:
        raise errors.bad_request(
            f"The partition key value is too large: at most {limits.max_partition_key_bytes} bytes."
        )


def stamp(coll: Container, doc: dict[str, Any], rid: str, ts: int, limits: Limits) -> StoredItem:
    """Add the system properties and measure the persisted size (413 past the item limit). `rid`: the item's
    own, kept by a replace or an upsert of it (an item's `_rid` and `_self` stay fixed for its life, so a
    `_self` kept from an earlier response still addresses it), or a new one for a new item."""
    stored = {k: v for k, v in doc.items() if k not in SYSTEM_PROPERTIES}
    stored.update(
        {
            "_rid": rid,
            "_self": f"{coll.self_link}docs/{rid}/",
            "_etag": f'"{uuid.uuid4()}"',
            "_attachments": "attachments/",
            "_ts": ts,
        }
    )
    if nesting_depth(doc, limits.max_document_depth + 1) - 1 > limits.max_document_depth:
        raise errors.bad_request(
            f"The document nests objects or arrays deeper than {limits.max_document_depth} levels."
        )
    size = len(orjson.dumps(stored))
    if size > limits.max_item_bytes:
        raise errors.too_large()
    return StoredItem(stored, size)


def filter_predicate(condition: Any) -> Query:
    """A conditional patch's predicate (`FROM c WHERE c.x = 1`, cosmos-wire-protocol.md W27) as the query that
    selects the item when it holds; a predicate that is not one is the service's 400 with the SQL error."""
    if not isinstance(condition, str) or not condition.strip():
        raise errors.bad_request("The patch condition must be a filter predicate such as 'FROM c WHERE c.x = 1'.")
    return parse(f"SELECT VALUE 1 {condition}")


def predicate_holds(predicate: Query, doc: dict[str, Any]) -> bool:
    return bool(guarded(lambda: execute(predicate, [doc]).rows))
