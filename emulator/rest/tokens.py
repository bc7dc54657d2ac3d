"""Continuation tokens: the resume points of read feeds and query pages as opaque strings, and back.

The SDK never parses them (cosmos-wire-protocol.md §4); a token the emulator did not write, or one of the wrong
shape, is the service's 400, never a 500 and never a silently empty or restarted page.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from cosmoscore.epk import MAX_EPK
from emulator.engine import errors
from emulator.engine.results import FeedCursor, QueryCursor

MALFORMED_CONTINUATION = (  # the service's text, Azure/azure-cosmos-dotnet-v3#3416 (and -v2#252, #660)
    "The continuation token specified in the request is malformed. Re-run the query without it and iterate."
)
MAX_CONTINUATION_CHARS = 16 * 1024  # ours are under 200 characters; a longer one is not ours
_EPK = re.compile(r"[0-9A-F]{0,256}")  # hash EPKs: 32 hex characters a level (splits may go deeper)


def encode_continuation(state: dict[str, Any]) -> str:
    """A token as printable ASCII JSON: ids in any script travel \\u-escaped, so the header survives as is."""
    return json.dumps(state, separators=(",", ":"), ensure_ascii=True)


def _malformed() -> errors.CosmosError:
    return errors.bad_request(MALFORMED_CONTINUATION)


def _is_epk(value: Any) -> bool:
    """An EPK as the engine writes them (upper-case hex), below the end of the key space."""
    return isinstance(value, str) and _EPK.fullmatch(value) is not None and value < MAX_EPK


def decode_continuation(token: str | None, required: frozenset[str], optional: frozenset[str] = frozenset()) -> Any:
    """A continuation token's state: a JSON object with exactly our keys; 400 when it is not one of ours."""
    if not token:
        return None
    if len(token) > MAX_CONTINUATION_CHARS:
        raise _malformed()
    try:
        state = orjson.loads(token)
    except orjson.JSONDecodeError:
        raise _malformed() from None
    if not isinstance(state, dict) or not required <= state.keys() <= required | optional:
        raise _malformed()
    return state


def feed_token(cursor: FeedCursor) -> str:
    state: dict[str, Any] = {"from": cursor.start}
    if cursor.after is not None:
        state["after"] = list(cursor.after)
    return encode_continuation(state)


def feed_cursor(token: str | None) -> FeedCursor | None:
    """A read feed's resume point: `{"from": <epk>, "after": [<epk>, <id>]}` ("after" optional)."""
    state = decode_continuation(token, frozenset({"from"}), frozenset({"after"}))
    if state is None:
        return None
    start, after = state["from"], state.get("after")
    if not _is_epk(start):
        raise _malformed()
    if after is not None and not (
        isinstance(after, list) and len(after) == 2 and _is_epk(after[0]) and isinstance(after[1], str)
    ):
        raise _malformed()
    return FeedCursor(start, None if after is None else tuple(after))


def query_token(cursor: QueryCursor) -> str:
    return encode_continuation({"min": cursor.start, "offset": cursor.offset})


def query_cursor(token: str | None) -> QueryCursor | None:
    """A query's resume point: `{"min": <epk of its target> | null, "offset": <rows already returned>}`."""
    state = decode_continuation(token, frozenset({"min", "offset"}))
    if state is None:
        return None
    start, offset = state["min"], state["offset"]
    if (start is not None and not _is_epk(start)) or type(offset) is not int or offset < 0:
        raise _malformed()
    return QueryCursor(start, offset)
