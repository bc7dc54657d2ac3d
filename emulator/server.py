"""Serving the emulator over HTTP: blocking (`ruscope emulator`) or on a background thread (tests, demo).

Networking is asyncio (uvloop when available) with the `httptools` parser; each response is written
in one piece, the way the SDK's floor was measured (cosmos-wire-protocol.md, performance note). An
ASGI server was tried first: its per-request task and split header/body writes cost more than the
whole engine call and missed the 1.5x-of-null-server target, so this module keeps only the glue.
The engine is synchronous; one event loop serialises requests, so no request waits on a lock.
Any `App` (one `handle(request)` method) can be served: `CosmosApp` is the Cosmos DB REST API; the
Azure Monitor stand-in is another.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Protocol

import httptools

from emulator.auth import WELL_KNOWN_KEY
from emulator.engine import Engine
from emulator.history import History
from emulator.http import CosmosApp
from emulator.journal import Journal
from emulator.request import Request

log = logging.getLogger("ruscope.emulator")

_MAX_BODY = 8 * 1024 * 1024  # bodies past this are refused before parsing; items stop at 2 MB anyway
HISTORY_FILE = "history.jsonl.gz"  # the metrics history in the data directory (emulator.history_store)
_REASONS = {s.value: s.phrase.encode() for s in HTTPStatus}


class App(Protocol):
    """What the server serves: one parsed request in, (status, headers, body bytes) out."""

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]: ...


def open_engine(data_dir: str | Path | None = None, *, fsync: bool = False, **engine_kwargs: object) -> Engine:
    """An engine, durable in `data_dir` when given (replayed, then compacted; its metrics history loaded,
    and saved again by `Engine.close`)."""
    journal = Journal(data_dir, fsync=fsync) if data_dir else None
    if data_dir and "history" not in engine_kwargs:
        engine_kwargs["history"] = History.open(Path(data_dir) / HISTORY_FILE)
    engine = Engine(journal=journal, **engine_kwargs)  # type: ignore[arg-type]
    if journal is not None:
        journal.compact(engine.snapshot_entries())
    return engine


def render(status: int, headers: dict[str, str], body: bytes, keep_alive: bool) -> bytes:
    """One HTTP/1.1 response as a single buffer."""
    lines = [b"HTTP/1.1 %d %s" % (status, _REASONS.get(status, b"Status"))]
    lines += [f"{k}: {v}".encode("latin-1") for k, v in headers.items()]
    lines.append(b"content-length: %d" % len(body))
    if not keep_alive:
        lines.append(b"connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class _Connection(asyncio.Protocol):
    """One client connection: parse requests with httptools, answer each from the app."""

    def __init__(self, app: App, scheme: str) -> None:
        self.app = app
        self.scheme = scheme
        # an app may decode requests its own way (the monitor stand-in keeps the query string)
        self.make_request: type[Request] = getattr(app, "request_type", Request)
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self._reset()

    def _reset(self) -> None:
        self.url = b""
        self.headers: dict[bytes, bytes] = {}
        self.body: list[bytes] = []
        self.size = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._write_and_close(400, b'{"code":"BadRequest","message":"Malformed HTTP request."}')

    def on_message_begin(self) -> None:
        self._reset()

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size <= _MAX_BODY:
            self.body.append(body)

    def on_message_complete(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        if self.size > _MAX_BODY:
            self._write_and_close(413, b'{"code":"RequestEntityTooLarge","message":"Request size is too large"}')
            return
        method = self.parser.get_method().decode()
        request = self.make_request(method, self.url.decode("latin-1"), self.headers, b"".join(self.body), self.scheme)
        status, headers, body = self.app.handle(request)
        keep_alive = self.parser.should_keep_alive()
        self.transport.write(render(status, headers, body, keep_alive))
        if not keep_alive:
            self.transport.close()

    def _write_and_close(self, status: int, body: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(render(status, {"content-type": "application/json"}, body, False))
            self.transport.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket bound now, so port 0 (a free port) is race-free; OSError if taken."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvloop is in requirements; plain asyncio also works
        return asyncio.new_event_loop()


@dataclass
class RunningEmulator:
    """An emulator serving on a background thread of this process."""

    engine: Engine
    url: str
    key: str
    _loop: asyncio.AbstractEventLoop
    _stop: asyncio.Event
    _thread: threading.Thread
    _servers: list[asyncio.AbstractServer] = field(default_factory=list)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)


@dataclass(frozen=True)
class Listener:
    """Another app served by the same loop on its own socket (the Azure Monitor stand-in over TLS)."""

    app: App
    sock: socket.socket
    tls: ssl.SSLContext | None = None


async def _serve(
    app: App, sock: socket.socket, stop: asyncio.Event, tls: ssl.SSLContext | None, *also: Listener
) -> None:
    loop = asyncio.get_running_loop()
    servers = [
        await loop.create_server(functools.partial(_Connection, a, "https" if t else "http"), sock=s, ssl=t)
        for a, s, t in ((app, sock, tls), *((x.app, x.sock, x.tls) for x in also))
    ]
    try:
        await stop.wait()
    finally:
        for server in servers:
            server.close()
            await server.wait_closed()


def serve(
    engine: Engine,
    *,
    host: str = "127.0.0.1",
    port: int = 8081,
    key: str = WELL_KNOWN_KEY,
    tls: ssl.SSLContext | None = None,
    app: App | None = None,
    also: tuple[Listener, ...] = (),
) -> None:
    """Serve until SIGINT/SIGTERM (`app`: instead of the engine's Cosmos DB API; `also`: more apps on
    their own sockets, e.g. the monitor stand-in); the journal is compacted on the way out."""
    app = app or CosmosApp(engine, key)
    sock = bind(host, port)
    loop = _new_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        loop.run_until_complete(_serve(app, sock, stop, tls, *also))
    finally:
        loop.close()
        engine.close()


def start_in_thread(
    engine: Engine,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    key: str = WELL_KNOWN_KEY,
    tls: ssl.SSLContext | None = None,
    app: App | None = None,
) -> RunningEmulator:
    """Start serving on a background thread (port 0: a free port) and return once it accepts requests;
    `app` serves instead of the engine's Cosmos DB API."""
    app = app or CosmosApp(engine, key)
    sock = bind(host, port)
    loop = _new_loop()
    stop = asyncio.Event()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_until_complete(_serve(app, sock, stop, tls))
        except Exception:
            log.exception("the emulator stopped on an error")
        finally:
            loop.close()

    thread = threading.Thread(target=run, daemon=True, name="ruscope-emulator")
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the emulator did not start")
    bound = sock.getsockname()[1]
    scheme = "https" if tls else "http"
    return RunningEmulator(engine, f"{scheme}://{host}:{bound}/", key, loop, stop, thread)
