"""Continuation tokens: the resume points of read feeds and query pages as opaque strings, and back.

The SDK never parses them (cosmos-wire-protocol.md §4), but applications persist them and send them back later:
a query's token has the gateway's composite form (W76), so one the service itself wrote is read too; a token of
the wrong shape is the service's 400 (W77), never a 500 and never a silently empty or restarted page.
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


def encode_continuation(state: Any) -> str:
    """A token as printable ASCII JSON: ids in any script travel \\u-escaped, so the header survives as is."""
    return json.dumps(state, separators=(",", ":"), ensure_ascii=True)


def _malformed() -> errors.CosmosError:
    return errors.bad_request(MALFORMED_CONTINUATION)


def _is_epk(value: Any) -> bool:
    """An EPK as the engine writes them (upper-case hex), below the end of the key space."""
    return isinstance(value, str) and _EPK.fullmatch(value) is not None and value < MAX_EPK


def _parsed(token: str) -> Any:
    """A token's JSON; 400 when it is too long to be one of ours or not JSON."""
    if len(token) > MAX_CONTINUATION_CHARS:
        raise _malformed()
    try:
        return orjson.loads(token)
    except orjson.JSONDecodeError:
        raise _malformed() from None


def decode_continuation(token: str | None, required: frozenset[str], optional: frozenset[str] = frozenset()) -> Any:
    """A continuation token's state: a JSON object with exactly our keys; 400 when it is not one of ours."""
    if not token:
        return None
    state = _parsed(token)
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
    """The gateway's composite token (W76): the range being read and its backend token, which counts the
    rows of the range returned so far (`#TRC:`) as the service's does; null when the range is not begun."""
    inner: str | None = f"+RID:~#RT:1#TRC:{cursor.offset}" + ("" if cursor.at is None else f"#EPK:{cursor.at}")
    if not cursor.offset and cursor.at is None:
        inner = None
    return encode_continuation([{"token": inner, "range": {"min": cursor.start, "max": cursor.end}}])


def query_cursor(token: str | None) -> QueryCursor | None:
    """A query's resume point from a token in the service's form: `[{"token", "range": {"min", "max"}}]`, or
    the single object; the backend token null (the range not begun), a count of rows, or the service's
    `+RID:…#RT:1#TRC:<rows>#…` (W76). Anything else is the service's 400 (W77)."""
    if not token:
        return None
    state = _parsed(token)
    entries = state if isinstance(state, list) else [state]
    if len(entries) != 1 or not isinstance(entries[0], dict) or not {"range"} <= entries[0].keys() <= _ENTRY:
        raise _malformed()
    start, end = _token_range(entries[0]["range"])
    offset, at = _backend_position(entries[0].get("token"))
    if at is not None and not start < at < end:
        raise _malformed()
    return QueryCursor(start, end, offset, at)


_ENTRY = frozenset({"token", "range"})
_DIGITS = re.compile(r"[0-9]{1,12}")


def _token_range(value: Any) -> tuple[str, str]:
    """A token's `{"min", "max"}`: EPKs as the service writes them, the end possibly the key space's."""
    if not isinstance(value, dict) or value.keys() != {"min", "max"}:
        raise _malformed()
    start, end = value["min"], value["max"]
    if not _is_epk(start) or not (_is_epk(end) or end == MAX_EPK) or not start < end:
        raise _malformed()
    return start, end


def _backend_position(inner: Any) -> tuple[int, str | None]:
    """From the backend token (None: the range not begun): the rows already returned (`#TRC:`, as the
    service counts them) and, ours, where in the range the target begins (`#EPK:`, one per IN key)."""
    if inner is None:
        return 0, None
    if not isinstance(inner, str):
        raise _malformed()
    if _DIGITS.fullmatch(inner):
        return int(inner), None
    fields = inner.split("#")
    counts = [f[4:] for f in fields if f.startswith("TRC:")]
    at = [f[4:] for f in fields if f.startswith("EPK:")]
    if len(counts) != 1 or not _DIGITS.fullmatch(counts[0]) or len(at) > 1 or (at and not _is_epk(at[0])):
        raise _malformed()
    return int(counts[0]), at[0] if at else None
