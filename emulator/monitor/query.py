"""Decoding a `metrics:getBatch` request: query parameters, the OData-like filter, times and grains.

Round brackets in a filter's names and values are spelled `%2528` / `%2529`, as the metrics SDK documents
(azure-monitor.md §7b R5, R13): decoded here, and refused when written as is.

Kept apart from the computation so every refusal is the service's 400 shape
(`{"error": {"code": "BadRequest", "message": ...}}`, azure-monitor.md §3.2) before any work is done.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from cosmoscore.monitor.metrics import GRAIN_MINUTES as INTERVALS  # PT1M emitted, coarser ones aggregated
from emulator.rest.request import Request

AGGREGATIONS = ("Average", "Count", "Maximum", "Minimum", "Total")  # MetricAggregationType, less NONE
DEFAULT_TOP = 10  # azure-monitor.md §2.2: the service returns 10 series by default when splitting
_RESOURCE = re.compile(
    r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/Microsoft\.DocumentDB/databaseAccounts/([^/]+)/?$",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\s*(?:(\()|(\))|'((?:[^']|'')*)'|([^\s()']+))")


class MonitorError(Exception):
    """An error response in Azure's ARM shape."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def bad_request(message: str) -> MonitorError:
    return MonitorError(400, "BadRequest", message)


def authenticate(request: Request) -> None:
    """Any bearer token passes (azure-monitor.md §3.3); none is a 401 without `WWW-Authenticate`, so the
    SDK's bearer policy raises instead of attempting a claims challenge. Shared by the metrics and logs APIs."""
    header = request.header("authorization") or ""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise MonitorError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")


class MonitorRequest(Request):
    """A `Request` that keeps its query string (the Cosmos API never reads one; this API is all in it)."""

    __slots__ = ("query", "answer")

    def __init__(
        self, method: str, target: str, headers: dict[bytes, bytes], body: bytes, scheme: str = "http"
    ) -> None:
        super().__init__(method, target, headers, body, scheme)
        self.query = parse_qs(target.partition("?")[2], keep_blank_values=True)
        self.answer: tuple[int, dict[str, str], bytes] | None = None  # computed off the event loop (MonitorApp)

    def param(self, name: str) -> str | None:
        """A query parameter by case-insensitive name (the service ignores the case of names)."""
        for key, values in self.query.items():
            if key.lower() == name.lower():
                return values[-1]
        return None


@dataclass
class Filter:
    """`A eq 'a1' and (B eq 'b1' or B eq 'b2') and C eq '*'`: values per dimension, in filter order;
    every dimension named is a split of the result, `*` meaning all its values."""

    values: dict[str, list[str]] = field(default_factory=dict)

    def matches(self, dims: dict[str, str], only: tuple[str, ...] | None = None) -> bool:
        """Whether `dims` hold a wanted value of every dimension the filter pins (of those in `only`, when
        given: a container matches a filter on its database and name whatever it pins of its series)."""
        for name, wanted in self.values.items():
            if only is not None and name not in only:
                continue
            if "*" not in wanted and dims.get(name, "").casefold() not in {w.casefold() for w in wanted}:
                return False
        return True

    def exact(self, name: str) -> list[str] | None:
        """The values a dimension is pinned to, or None when it is free or `*`."""
        wanted = self.values.get(name)
        return None if wanted is None or "*" in wanted else wanted


def parse_filter(text: str | None, dimensions: tuple[str, ...], metric: str) -> Filter:
    """The filter over `dimensions` (matched case-insensitively, returned with their canonical case)."""
    result = Filter()
    if not text or not text.strip():
        return result
    tokens = _tokens(text)
    pos = 0

    def take() -> tuple[str, str]:
        nonlocal pos
        if pos >= len(tokens):
            raise bad_request(f"Invalid filter {text!r}: unexpected end.")
        pos += 1
        return tokens[pos - 1]

    def term() -> tuple[str, str]:
        kind, name = take()
        if kind == "(":
            found = disjunction()
            if take()[0] != ")":
                raise bad_request(f"Invalid filter {text!r}: missing ')'.")
            return found
        op, value = take(), take()
        if kind != "word" or op != ("word", "eq") or value[0] != "str":
            raise bad_request(f"Invalid filter {text!r}: expected <dimension> eq '<value>'.")
        canonical = {d.lower(): d for d in dimensions}.get(name.lower())
        if canonical is None:
            raise bad_request(
                f"Metric: {metric} does not support requested dimension combination: {name}, "
                f"supported ones are: {','.join(dimensions)}"
            )
        return canonical, value[1]

    def disjunction() -> tuple[str, str]:
        nonlocal pos
        name, value = term()
        values = [value]
        while pos < len(tokens) and tokens[pos] == ("word", "or"):
            pos += 1
            other, value = term()
            if other != name:
                raise bad_request(f"Invalid filter {text!r}: 'or' is only allowed between values of one dimension.")
            values.append(value)
        result.values.setdefault(name, []).extend(values)
        return name, value

    disjunction()
    while pos < len(tokens):
        if tokens[pos] != ("word", "and"):
            raise bad_request(f"Invalid filter {text!r}: expected 'and' at {tokens[pos][1]!r}.")
        pos += 1
        disjunction()
    return result


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            raise bad_request(f"Invalid filter {text!r}.")
        opening, closing, string, word = match.groups()
        if opening:
            out.append(("(", "("))
        elif closing:
            out.append((")", ")"))
        elif string is not None:
            out.append(("str", _unbracketed(string.replace("''", "'"), text)))
        else:
            out.append(("word", word.lower() if word.lower() in ("and", "or", "eq") else _unbracketed(word, text)))
        pos = match.end()
    return out


def _unbracketed(value: str, text: str) -> str:
    """A name or value of the filter with its round brackets decoded: the filter spells them `%2528` and
    `%2529`, and a bracket written as is inside a quoted value is refused (azure-monitor.md §7b R5, R13)."""
    if "(" in value or ")" in value:
        raise bad_request(
            f"Invalid filter {text!r}: a round bracket in a dimension name or value must be written %2528 or %2529."
        )
    return value.replace("%2528", "(").replace("%2529", ")")


def parse_time(value: str, name: str) -> float:
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise bad_request(f"Invalid {name} {value!r}: expected an ISO 8601 time.") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.timestamp()


def parse_interval(value: str | None) -> tuple[str, int]:
    text = (value or "PT1M").upper()
    minutes = INTERVALS.get(text)
    if minutes is None:
        raise bad_request(f"Invalid interval {value!r}: supported time grains are {', '.join(INTERVALS)}.")
    return text, minutes


def parse_resource(resource_id: object) -> tuple[str, str]:
    """(subscription, account name) of a Cosmos DB account's ARM id."""
    match = _RESOURCE.match(resource_id) if isinstance(resource_id, str) else None
    if match is None:
        raise bad_request(
            f"Invalid resource id {resource_id!r}: expected "
            "/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.DocumentDB/databaseAccounts/<name>."
        )
    return match.group(1), match.group(3)


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def aggregations(metric: str, supported: tuple[str, ...], text: str | None) -> list[str]:
    """The requested aggregations (the metric's default when none), each one the metric supports."""
    if not text:
        return [supported[0]]
    canonical = {a.lower(): a for a in AGGREGATIONS}
    out = []
    for raw in (a.strip() for a in text.split(",") if a.strip()):
        name = canonical.get(raw.lower())
        if name is None or name not in supported:
            raise bad_request(
                f"Aggregation {raw} is not supported for metric {metric}; supported: {', '.join(supported)}"
            )
        out.append(name)
    return out


def order(orderby: str | None, aggregations: list[str]) -> tuple[str, bool]:
    if not orderby:
        return aggregations[0].lower(), True
    name, _, direction = orderby.strip().partition(" ")
    if name.lower() not in {a.lower() for a in aggregations} or direction.strip().lower() not in ("", "asc", "desc"):
        raise bad_request(f"Invalid orderby {orderby!r}: '<one of the requested aggregations> asc|desc'.")
    return name.lower(), direction.strip().lower() != "asc"


def rank(points: list[dict[str, object]], key: str) -> float:
    values = [float(v) for p in points if isinstance(v := p.get(key), int | float)]
    if not values:
        return -math.inf
    if key in ("total", "count"):
        return sum(values)
    if key == "minimum":
        return min(values)
    return max(values) if key == "maximum" else sum(values) / len(values)


def positive_int(text: str | None, name: str) -> int:
    try:
        value = int(text or "")
    except ValueError:
        raise bad_request(f"Invalid {name} {text!r}: expected a positive integer.") from None
    if value < 1:
        raise bad_request(f"Invalid {name} {text!r}: expected a positive integer.")
    return value
