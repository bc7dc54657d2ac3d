"""The HTTP/1.1 side of the emulator's servers: one asyncio protocol per connection, parsed with `httptools`.

No client can make a server hoard memory or connections, and no header can break the wire:
- an oversized URL is a 414 and oversized headers a 431, answered before a `Request` exists (so before any
  authentication, routing or cache sees them); bodies past `max_body_bytes` are a 413;
- requests are queued as parsed and answered one by one; while a connection's write buffer is above its high
  mark, reading pauses and queued requests wait, so pipelined reads a client never reads cost at most the
  buffer and one response (asyncio's `pause_writing`/`resume_writing` flow control);
- a request that does not arrive whole within `request_timeout_s` is answered 408 and closed; a keep-alive
  connection idle (or not reading its answers) for `idle_timeout_s` is closed;
- at `max_connections` the longest-idle keep-alive connection is closed for a new one; when all are busy,
  the new connection gets a 503 with a JSON body and is closed;
- the `Host` header must name the server (DNS rebinding): an IP literal, `localhost`, the bound host, this
  machine's name or one of `allowed_hosts`, else a 400;
- an app may name work to do before a request is answered (`prepare`: parsing a large query) that runs on one
  worker thread while the event loop goes on serving other connections; the connection answers it after;
- header values are rendered printable ASCII: anything else is percent-encoded (UTF-8), so a name in any script
  survives and no CR/LF can start a header of its own; a response that fails to render is a 500 JSON, logged.
The references give no figure for URL or header sizes: the defaults fit the longest legitimate request
(three 1,023-byte ids percent-encoded in a path; a session token for a thousand partitions) with room to spare.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
import socket
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from http import HTTPStatus
from string import printable, whitespace
from typing import NamedTuple, Protocol, cast
from urllib.parse import quote

import httptools
import orjson

from emulator.rest import offloop
from emulator.rest.request import Request

log = logging.getLogger("ruscope.emulator")

_REASONS = {s.value: s.phrase.encode() for s in HTTPStatus}
_HEADER_SAFE = "".join(c for c in printable if c not in whitespace) + " "  # printable ASCII, space kept
_LOCAL_NAMES = frozenset({"localhost"})


@dataclass(frozen=True)
class TransportLimits:
    """What one server accepts from its clients; every field is configurable (tests shrink them)."""

    max_url_bytes: int = 16 * 1024  # request target; 414 beyond
    max_header_bytes: int = 64 * 1024  # all header names and values of one request; 431 beyond
    max_body_bytes: int = 8 * 1024 * 1024  # 413 beyond; an item stops at 2 MB anyway (ru-cost-model.md P17)
    request_timeout_s: float = 30.0  # from a request's first byte to its last; 408 and close beyond
    idle_timeout_s: float = 120.0  # keep-alive with nothing to read, or a client not reading its answers
    max_connections: int = 512  # per server, and at most a quarter of the process's file descriptors
    write_buffer_high: int = 4 * 1024 * 1024  # pause reading above this many unsent response bytes
    write_buffer_low: int = 1024 * 1024  # resume below this
    allowed_hosts: tuple[str, ...] = ()  # host names served besides IP literals, localhost and the bound host


class App(Protocol):
    """What the server serves: one parsed request in, (status, headers, body bytes) out. An app may also have
    `prepare(request) -> Callable[[], object] | None`: pure work (no state changes) to run off the event loop
    before `handle`, which then finds its results cached; and `executor()`, the threads to run it on (default:
    `offloop.executor`); and `close()`, called when the server stops (to cancel work still running)."""

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]: ...


def header_value(value: str) -> str:
    """A header value as printable ASCII: other characters percent-encoded as UTF-8 (no CR/LF, no Latin-1)."""
    if value.isascii() and value.isprintable():
        return value
    return quote(value, safe=_HEADER_SAFE)


def render(status: int, headers: dict[str, str], body: bytes, keep_alive: bool) -> bytes:
    """One HTTP/1.1 response as a single buffer."""
    lines = [b"HTTP/1.1 %d %s" % (status, _REASONS.get(status, b"Status"))]
    lines += [f"{header_value(k)}: {header_value(v)}".encode("ascii") for k, v in headers.items()]
    lines.append(b"content-length: %d" % len(body))
    if not keep_alive:
        lines.append(b"connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def error_response(status: int, code: str, message: str) -> bytes:
    """A refusal of the transport itself (the connection closes after it), in the service's JSON shape."""
    body = orjson.dumps({"code": code, "message": message})
    return render(status, {"content-type": "application/json"}, body, False)


def served_names(bound_host: str, allowed: tuple[str, ...]) -> frozenset[str]:
    """The host names (lower case) a server answers to, besides IP literals."""
    names = {bound_host, socket.gethostname(), *allowed}
    return frozenset(n.lower().rstrip(".") for n in names if n) | _LOCAL_NAMES


def host_allowed(host: bytes | None, names: frozenset[str]) -> bool:
    """Whether a `Host` header names this server: an IP literal cannot be rebound, a name must be known.
    A request without one (HTTP/1.0 tools) is let through: browsers, the rebinding vector, always send it."""
    if host is None:
        return True
    text = host.decode("latin-1").strip().lower()
    if text.startswith("["):  # [v6]:port
        return _is_ip(text[1 : text.find("]")] if "]" in text else text[1:])
    name = text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    return _is_ip(name) or name.rstrip(".") in names


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


class ConnectionStats(NamedTuple):
    """One connection as flow control and the deadlines see it."""

    buffered: int  # response bytes not yet sent
    paused: bool  # reading paused until the client reads its answers
    queued: int  # requests parsed and waiting for their answer
    receiving: bool  # a request begun and not yet whole


def descriptor_share() -> int:
    """A quarter of the soft file-descriptor limit: the Cosmos endpoint and the monitor stand-in together
    stay within half, so the journal, the history and the loop itself can always open files."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(1, soft // 4) if soft != resource.RLIM_INFINITY else 1 << 20


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing a connection that was just refused."""


class Registry:
    """The live connections of one server: the connection cap and the timeouts' sweep."""

    def __init__(self, limits: TransportLimits, names: frozenset[str]) -> None:
        self.limits = limits
        self.names = names
        self.live: set[Connection] = set()
        self.cap = min(limits.max_connections, descriptor_share())

    def make_room(self) -> bool:
        """Whether a new connection fits: at the cap, the longest-idle keep-alive connection is closed for it
        (idle connections cannot lock clients out); False when every connection is busy."""
        if len(self.live) < self.cap:
            return True
        idle = [conn for conn in self.live if conn.idle()]
        if not idle:
            return False
        oldest = min(idle, key=lambda conn: conn.since)
        self.live.discard(oldest)
        if oldest.transport is not None:
            oldest.transport.close()
        return True

    def sweep(self, now: float) -> None:
        """Close every connection past its deadline."""
        for conn in list(self.live):
            conn.expire(now)

    def interval(self) -> float:
        """How often to sweep: a quarter of the shortest timeout, between 20 ms and 1 s."""
        shortest = min(self.limits.request_timeout_s, self.limits.idle_timeout_s)
        return max(0.02, min(1.0, shortest / 4))


class Connection(asyncio.Protocol):
    """One client connection: requests parsed, queued, answered in order under flow control and deadlines."""

    def __init__(self, app: App, scheme: str, registry: Registry) -> None:
        self.app, self.scheme, self.registry, self.limits = app, scheme, registry, registry.limits
        # an app may decode requests its own way (the monitor stand-in keeps the query string)
        self.make_request: type[Request] = getattr(app, "request_type", Request)
        self.prepare: Callable[[Request], Callable[[], object] | None] | None = getattr(app, "prepare", None)
        self.executor: Callable[[], Executor] = getattr(app, "executor", offloop.executor)  # where `prepare` runs
        self.preparing: Request | None = None  # on the worker thread now
        self.prepared: Request | None = None  # ready to be answered
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.queue: deque[tuple[Request, bool] | bytes] = deque()  # (request, keep-alive), or a final refusal
        self.receiving = self.in_head = self.write_paused = self.refused = False
        self.since = time.monotonic()  # when the current deadline's clock started
        self.head_bytes = self.head_chunks = 0  # header bytes as parsed; bytes received while in a header
        self._reset()

    def _reset(self) -> None:
        self.url = b""
        self.headers: dict[bytes, bytes] = {}
        self.body: list[bytes] = []
        self.size = 0

    # -- asyncio callbacks ----------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        tcp = cast(asyncio.Transport, transport)  # a stream server's transport (asyncio's, uvloop's or TLS)
        self.transport = tcp
        if not self.registry.make_room():
            message = f"The emulator is serving its maximum of {self.registry.cap} busy connections."
            tcp.write(error_response(503, "ServiceUnavailable", message))
            tcp.close()
            return
        self.registry.live.add(self)
        tcp.set_write_buffer_limits(self.limits.write_buffer_high, self.limits.write_buffer_low)

    def connection_lost(self, exc: Exception | None) -> None:
        self.registry.live.discard(self)
        self.queue.clear()

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return
        if self.in_head:
            self.head_chunks += len(data)  # httptools gathers a header before calling back: bound it here
        try:
            self.parser.feed_data(data)
            if self.in_head and self.head_chunks > self.limits.max_url_bytes + self.limits.max_header_bytes:
                self._refuse(431, "RequestHeaderFieldsTooLarge", "The request headers are too large.")
        except _Refused:
            pass
        except httptools.HttpParserCallbackError as exc:
            if not isinstance(exc.__context__, _Refused):  # a bug of ours: one 500, never a dead connection
                self._fail(exc.__context__ or exc)
        except httptools.HttpParserError:
            self._close_after(error_response(400, "BadRequest", "Malformed HTTP request."))
        except httptools.HttpParserUpgrade:
            self._close_after(b"")  # no protocol upgrades: what was asked before is answered, then close
        self._answer()

    def pause_writing(self) -> None:
        self.write_paused, self.since = True, time.monotonic()
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.write_paused, self.since = False, time.monotonic()
        self._answer()
        if not self.write_paused and self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    # -- httptools callbacks --------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._reset()
        self.receiving = self.in_head = True
        self.head_bytes = self.head_chunks = 0
        self.since = time.monotonic()

    def on_url(self, url: bytes) -> None:
        self.url += url
        if len(self.url) > self.limits.max_url_bytes:
            self._refuse(414, "RequestUriTooLong", f"The request URL is longer than {self.limits.max_url_bytes} bytes.")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_bytes += len(name) + len(value)
        if self.head_bytes > self.limits.max_header_bytes:
            message = f"The request headers are larger than {self.limits.max_header_bytes} bytes."
            self._refuse(431, "RequestHeaderFieldsTooLarge", message)
        self.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self.in_head = False
        host = self.headers.get(b"host")
        if not host_allowed(host, self.registry.names):
            name = (host or b"").decode("latin-1")[:200]
            message = f"The Host {name!r} is not served by this emulator (allow it with --allow-host)."
            self._refuse(400, "BadRequest", message)

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size <= self.limits.max_body_bytes:
            self.body.append(body)

    def on_message_complete(self) -> None:
        self.receiving = False
        self.since = time.monotonic()
        if self.size > self.limits.max_body_bytes:
            self._refuse(413, "RequestEntityTooLarge", "Request size is too large")
        method = self.parser.get_method().decode()
        request = self.make_request(method, self.url.decode("latin-1"), self.headers, b"".join(self.body), self.scheme)
        self.queue.append((request, self.parser.should_keep_alive()))

    # -- answering ------------------------------------------------------------------------------------

    def _refuse(self, status: int, code: str, message: str) -> None:
        self._close_after(error_response(status, code, message))
        raise _Refused

    def _close_after(self, last: bytes) -> None:
        """Queue the last bytes this connection sends (a refusal), read nothing more."""
        self.queue.append(last)
        self.receiving = self.in_head = False
        self.refused = True

    def _fail(self, exc: BaseException) -> None:
        log.error("could not read a request: %s: %s", type(exc).__name__, str(exc).replace("\n", " ")[:300])
        log.debug("traceback", exc_info=exc)
        self._close_after(error_response(500, "InternalServerError", "The emulator failed; see its log."))

    def _answer(self) -> None:
        """Answer queued requests in order until the queue is empty or the write buffer is full."""
        transport = self.transport
        while self.queue and not self.write_paused and transport is not None and not transport.is_closing():
            item = self.queue[0]
            if isinstance(item, bytes):  # a refusal: the last thing this connection sends
                self.queue.clear()
                transport.write(item)
                transport.close()
                return
            request, keep_alive = item
            if self.prepared is not request and self._begin_preparing(request):
                return  # answered once prepared (`_prepared`), in order: later requests wait behind it
            self.queue.popleft()
            self.prepared = None
            transport.write(self._respond(request, keep_alive))
            if not keep_alive:
                transport.close()
        if not self.queue:
            self.since = time.monotonic()

    def _begin_preparing(self, request: Request) -> bool:
        """Whether `request` is being prepared off the event loop (begun now, or already)."""
        if self.preparing is not None:
            return True
        work = self.prepare(request) if self.prepare is not None else None
        if work is None:
            return False
        self.preparing = request
        future = asyncio.get_running_loop().run_in_executor(self.executor(), offloop.run_quietly, work)
        future.add_done_callback(lambda _: self._prepared(request))
        return True

    def _prepared(self, request: Request) -> None:
        self.preparing, self.prepared = None, request
        self._answer()

    def _respond(self, request: Request, keep_alive: bool) -> bytes:
        try:
            status, headers, body = self.app.handle(request)
            answer = render(status, headers, body, keep_alive)
            return answer[: len(answer) - len(body)] if request.method == "HEAD" else answer  # HEAD: no body
        except Exception as exc:  # a bug costs one request a 500 JSON, never the connection or a "malformed request"
            text = str(exc).replace("\n", " ")[:300]  # one line: a recursion error's traceback is thousands
            log.error("could not answer %s %s: %s: %s", request.method, request.path[:200], type(exc).__name__, text)
            log.debug("traceback", exc_info=exc)
            body = orjson.dumps({"code": "InternalServerError", "message": "The emulator failed; see its log."})
            return render(500, {"content-type": "application/json"}, body, keep_alive)

    def expire(self, now: float) -> None:
        """Close the connection when its deadline passed: 408 for a half-sent request, silence when idle."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if self.receiving and not self.write_paused:  # a paused connection waits on its client's reading
            if now - self.since > self.limits.request_timeout_s:
                transport.write(error_response(408, "RequestTimeout", "The request did not arrive in time."))
                transport.close()
        elif now - self.since > self.limits.idle_timeout_s:
            transport.close()

    def idle(self) -> bool:
        """Between requests with nothing left to send: a keep-alive connection that can be closed safely."""
        transport = self.transport
        return not (self.receiving or self.queue or self.write_paused) and (
            transport is None or transport.get_write_buffer_size() == 0
        )

    def stats(self) -> ConnectionStats:
        """What flow control and the deadlines see of this connection (for tests)."""
        buffered = self.transport.get_write_buffer_size() if self.transport is not None else 0
        return ConnectionStats(buffered, self.write_paused, len(self.queue), self.receiving)
