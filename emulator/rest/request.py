"""A Cosmos DB REST request and what the protocol reads from it: headers, JSON body, partition key,
throughput, a query page's spec. Malformed parts are the service's 400s."""

from __future__ import annotations

import uuid
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote

import orjson

from cosmoscore.epk import EpkRange
from cosmoscore.keys import Key
from emulator.engine import errors
from emulator.engine.metering import Context
from emulator.engine.query.service import QuerySpec
from emulator.engine.results import ChangeFeedStart, ThroughputSpec, autoscale_increment
from emulator.rest import wire

TAG_HEADER = "x-ruscope-tag"  # a client's label for its requests (a test run, a test), kept in the request log

PK_HEADER = "x-ms-documentdb-partitionkey"
ACTIVITY_ID_CHARS = 36  # a GUID's text (cosmos-errors-and-stats.md §1.6: one GUID per operation, its retries reuse it)


class Request:
    """The parts of an HTTP request the protocol cares about (header names lower-case bytes)."""

    __slots__ = ("method", "path", "segments", "headers", "body", "scheme")

    def __init__(
        self, method: str, target: str, headers: dict[bytes, bytes], body: bytes, scheme: str = "http"
    ) -> None:
        self.method = method
        self.path = target.split("?", 1)[0]
        self.segments = [unquote(s) for s in self.path.split("/") if s]
        self.headers = headers
        self.body = body
        self.scheme = scheme

    def header(self, name: str) -> str | None:
        value = self.headers.get(name.encode())
        return None if value is None else value.decode("latin-1")

    def flag(self, name: str) -> bool:
        return (self.headers.get(name.encode()) or b"").lower() == b"true"

    def json(self) -> Any:
        try:
            return orjson.loads(self.body) if self.body else None
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"The request body is not valid JSON: {exc}") from None

    def json_header(self, name: str) -> Any:
        raw = self.headers.get(name.encode())
        if raw is None:
            return None
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise errors.bad_request(f"The {name} header is not valid JSON: {raw.decode('latin-1')!r}") from None

    def int_header(self, name: str, default: int) -> int:
        raw = self.header(name)
        if raw is None:
            return default
        try:
            return int(raw)
        except ValueError:
            raise errors.bad_request(f"{name} must be an integer, not {raw!r}.") from None

    def is_query(self) -> bool:
        """A POST the SDK marks as a query (header or content type), not a create."""
        content_type = self.header("content-type") or ""
        return self.flag("x-ms-documentdb-isquery") or content_type.startswith("application/query+json")

    def change_feed_start(self) -> ChangeFeedStart:
        """Where a change feed read starts (W29): `If-None-Match` holds the etag to continue after, or `*`
        for now; `If-Modified-Since` an HTTP date changes must be written after; neither, the start."""
        etag, since = self.header("if-none-match"), self.header("if-modified-since")
        since_ts = None
        if since is not None:
            try:
                since_ts = int(parsedate_to_datetime(since).timestamp())
            except (TypeError, ValueError):
                raise errors.bad_request(f"If-Modified-Since must be an HTTP date, not {since!r}.") from None
        if etag is None:
            return ChangeFeedStart(since_ts=since_ts)
        if etag.strip() == "*":
            return ChangeFeedStart(now=True, since_ts=since_ts)
        position = etag.strip().strip('"')
        if not position.isdigit():
            raise errors.bad_request(
                f"The change feed continuation (If-None-Match) {etag!r} is not one this service issued."
            )
        return ChangeFeedStart(after=int(position), since_ts=since_ts)

    def epk_range(self) -> EpkRange | None:
        start, end = self.header("x-ms-start-epk"), self.header("x-ms-end-epk")
        return EpkRange(start, end) if start is not None and end is not None else None

    def context(self) -> Context:
        return Context(
            activity_id=guid_sized(self.header("x-ms-activity-id")) or str(uuid.uuid4()),
            correlated_activity_id=guid_sized(self.header("x-ms-cosmos-correlated-activityid")) or "",
            consistency=self.header("x-ms-consistency-level"),
            if_match=self.header("if-match"),
            if_none_match=self.header("if-none-match"),
            user_agent=self.header("user-agent") or "",
            tag=self.header(TAG_HEADER) or "",
        )


def guid_sized(value: str | None) -> str | None:
    """An activity id cut to a GUID's length: it is echoed and kept in the request log, so a longer value is
    truncated rather than refused (the request itself is still served; the echo shows what was kept)."""
    return None if value is None else value[:ACTIVITY_ID_CHARS]


def required_key(raw: Any) -> Key:
    """The partition key header (JSON-decoded) of a point operation, which must have one."""
    key = wire.partition_key(raw)
    if key is None:
        raise errors.bad_request("PartitionKey value must be supplied for this operation.")
    return key


def throughput(request: Request) -> ThroughputSpec | None:
    manual = request.header("x-ms-offer-throughput")
    if manual is not None:
        try:
            return ThroughputSpec(int(manual))
        except ValueError:
            raise errors.bad_request(f"x-ms-offer-throughput must be an integer, not {manual!r}.") from None
    autopilot = request.json_header("x-ms-cosmos-offer-autopilot-settings")
    if autopilot is not None:
        maximum = autopilot.get("maxThroughput") if isinstance(autopilot, dict) else None
        if not isinstance(maximum, int):
            raise errors.bad_request("x-ms-cosmos-offer-autopilot-settings needs an integer maxThroughput.")
        try:
            return ThroughputSpec(maximum, autoscale=True, increment_percent=autoscale_increment(autopilot))
        except ValueError as exc:
            raise errors.bad_request(f"x-ms-cosmos-offer-autopilot-settings: {exc}") from None
    return None


def query_spec(request: Request, body: Any, raw_key: Any) -> QuerySpec:
    """A query page request; `body` and `raw_key` are its JSON-decoded body and partition key header."""
    text, params = wire.query_text_and_parameters(body)
    max_items = request.header("x-ms-max-item-count")
    return QuerySpec(
        sql=text,
        parameters=params,
        partition_key=wire.partition_key(raw_key),
        pkrange_id=request.header("x-ms-documentdb-partitionkeyrangeid"),
        epk_range=request.epk_range(),
        max_items=None if max_items is None else request.int_header("x-ms-max-item-count", -1),
        cursor=wire.query_cursor(request.header("x-ms-continuation")),
        query_metrics=request.flag("x-ms-documentdb-populatequerymetrics"),
        index_metrics=request.flag("x-ms-cosmos-populateindexmetrics"),
        intended_rid=request.header("x-ms-cosmos-intended-collection-rid"),
    )


def check_size(request: Request, limit: int) -> None:
    if len(request.body) > limit:
        raise errors.too_large()
