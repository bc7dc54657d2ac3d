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
import time
from dataclasses import dataclass, field
from pathlib import Path

from emulator.durability.journal import Journal
from emulator.engine import heap
from emulator.engine.facade import Engine
from emulator.history.aggregates import CHECKPOINT_S, History
from emulator.rest.app import CosmosApp
from emulator.rest.auth import WELL_KNOWN_KEY
from emulator.rest.transport import App, Connection, ConnectionStats, Registry, TransportLimits, served_names

log = logging.getLogger("ruscope.emulator")

HISTORY_FILE = "history.jsonl.gz"  # the metrics history in the data directory (emulator.history.on_disk)
INDEX_SLICE_MS = 10.0  # ours: index building between requests, in slices no request waits longer than
INDEX_IDLE_S = 0.2  # how often to look for index builds when there are none
COMPACT_JOURNAL_AT = 16 * 1024 * 1024  # ours: a journal this large (and past the snapshot) is folded in


def open_engine(
    data_dir: str | Path | None = None,
    *,
    fsync: bool = False,
    settle: bool = False,
    **engine_kwargs: object,
) -> Engine:
    """An engine, durable in `data_dir` when given (replayed, then compacted; its metrics history loaded,
    saved by the server every `CHECKPOINT_S` when changed and by `Engine.close`). `settle`: freeze the loaded state out of the garbage collector's
    reach (`settle_heap`; the `ruscope emulator` process does, test processes with many engines do not)."""
    journal = Journal(data_dir, fsync=fsync) if data_dir else None
    if data_dir and "history" not in engine_kwargs:
        engine_kwargs["history"] = History.open(Path(data_dir) / HISTORY_FILE)
    engine = Engine(journal=journal, **engine_kwargs)  # type: ignore[arg-type]
    if journal is not None:
        journal.compact(engine.snapshot_entries())
    if settle:
        settle_heap()
    return engine


def settle_heap() -> None:
    """Keep full garbage collections from stalling the server (`emulator.engine.heap.settle`): everything alive
    now is frozen, full collections are spaced out, and indexes built later are frozen when complete."""
    heap.settle()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket bound now, so port 0 (a free port) is race-free; OSError if taken."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    return sock


def listening_url(sock: socket.socket, tls: ssl.SSLContext | None) -> str:
    """The URL a bound socket serves (`http://127.0.0.1:PORT/`); "" on a wildcard address, which names no
    host a client could be sent to."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        return ""
    url_host = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{url_host}:{port}/"


def _advertise(main: Listener) -> None:
    """Tell the app the URL it listens on (the account read's regional endpoint), where it asks to know."""
    advertise = getattr(main.app, "advertise", None)
    if advertise is not None:
        advertise(listening_url(main.sock, main.tls))


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
    _registry: Registry | None = None

    def stop(self) -> None:
        """Stop serving and wait for the thread; a second call does nothing (a test may stop one early)."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def connection_stats(self) -> list[ConnectionStats]:
        """Each open connection as flow control sees it, read on the loop (for tests)."""
        registry = self._registry
        if registry is None:
            return []

        async def read() -> list[ConnectionStats]:
            return [conn.stats() for conn in registry.live]

        return asyncio.run_coroutine_threadsafe(read(), self._loop).result(10)


@dataclass(frozen=True)
class Listener:
    """An app served by the loop on its own socket (the Azure Monitor stand-in over TLS), with its limits."""

    app: App
    sock: socket.socket
    tls: ssl.SSLContext | None = None
    limits: TransportLimits = field(default_factory=TransportLimits)
    registry: Registry = field(init=False)  # its connections, bounded by `limits`

    def __post_init__(self) -> None:
        host = self.sock.getsockname()[0]
        object.__setattr__(self, "registry", Registry(self.limits, served_names(host, self.limits.allowed_hosts)))


async def _sweep(registries: list[Registry]) -> None:
    """Close connections past their deadlines (request and idle timeouts), forever."""
    interval = min(r.interval() for r in registries)
    while True:
        await asyncio.sleep(interval)
        now = time.monotonic()
        for registry in registries:
            registry.sweep(now)


async def _build_indexes(engine: Engine) -> None:
    """Finish the partitions' index builds in slices between requests (a slice delays a request at most
    INDEX_SLICE_MS), so a query's first probe of a path is served from the index soon, not queries later."""
    while True:
        busy = engine.build_indexes(INDEX_SLICE_MS)
        await asyncio.sleep(0.0 if busy else INDEX_IDLE_S)  # busy: other callbacks (requests) run first


def compact_journal(engine: Engine, at_bytes: int) -> bool:
    """Fold the journal into a new snapshot while serving once it holds `at_bytes` or more (and at least
    the snapshot's size, so the work stays proportional to what was written); whether it did. Requests
    wait while the state is written: a pause proportional to the state, once per `at_bytes` of writes."""
    journal = engine.state.journal
    if journal is None or journal.size() < max(at_bytes, journal.snapshot_size()):
        return False
    with engine.metering.lock:  # no write between its journal line and its effect on the state
        journal.compact(engine.state.snapshot_entries())
    return True


async def _checkpoint(engine: Engine, every_s: float, compact_at: int) -> None:
    """Every `every_s`, on a worker thread: save the metrics history when it changed (the documents are
    journaled as they are written; the history's file is what a kill -9 would otherwise lose), and fold
    the journal into the snapshot once it holds `compact_at` bytes (it grew until a restart)."""
    while True:
        await asyncio.sleep(every_s)
        try:
            await asyncio.to_thread(engine.expire)  # expired items leave the storage metrics without a request
            await asyncio.to_thread(engine.history.checkpoint)
            await asyncio.to_thread(compact_journal, engine, compact_at)
        except OSError as exc:  # datadir.SaveFailed names the file; the next checkpoint tries again
            log.error("could not checkpoint the data directory: %s", exc)


async def _serve(
    stop: asyncio.Event,
    engine: Engine,
    *listeners: Listener,
    checkpoint_s: float | None = CHECKPOINT_S,
    compact_at: int = COMPACT_JOURNAL_AT,
) -> None:
    loop = asyncio.get_running_loop()
    servers = []
    for x in listeners:
        factory = functools.partial(Connection, x.app, "https" if x.tls else "http", x.registry)
        servers.append(await loop.create_server(factory, sock=x.sock, ssl=x.tls))
    sweeper = loop.create_task(_sweep([x.registry for x in listeners]))
    builder = loop.create_task(_build_indexes(engine))
    saver = loop.create_task(_checkpoint(engine, checkpoint_s, compact_at)) if checkpoint_s else None
    try:
        await stop.wait()
    finally:
        if saver is not None:
            saver.cancel()
        builder.cancel()
        sweeper.cancel()
        for x in listeners:  # work still running off the loop (a monitor query) ends at its next check
            close = getattr(x.app, "close", None)
            if close is not None:
                close()
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
    limits: TransportLimits | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM (`app`: instead of the engine's Cosmos DB API; `also`: more apps on
    their own sockets, e.g. the monitor stand-in); the journal is compacted on the way out."""
    main = Listener(app or CosmosApp(engine, key), bind(host, port), tls, limits or TransportLimits())
    _advertise(main)
    loop = _new_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        loop.run_until_complete(_serve(stop, engine, main, *also))
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
    limits: TransportLimits | None = None,
    checkpoint_s: float | None = CHECKPOINT_S,
    compact_at: int = COMPACT_JOURNAL_AT,
) -> RunningEmulator:
    """Start serving on a background thread (port 0: a free port) and return once it accepts requests;
    `app` serves instead of the engine's Cosmos DB API; `limits` bound what clients may send and hold;
    `checkpoint_s`: how often the metrics history is saved when changed and the journal, once `compact_at`
    bytes, compacted (None: only by `Engine.close`)."""
    main = Listener(app or CosmosApp(engine, key), bind(host, port), tls, limits or TransportLimits())
    _advertise(main)
    loop = _new_loop()
    stop = asyncio.Event()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_until_complete(_serve(stop, engine, main, checkpoint_s=checkpoint_s, compact_at=compact_at))
        except Exception:
            log.exception("the emulator stopped on an error")
        finally:
            loop.close()

    thread = threading.Thread(target=run, daemon=True, name="ruscope-emulator")
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the emulator did not start")
    bound = main.sock.getsockname()[1]
    scheme = "https" if tls else "http"
    url_host = f"[{host}]" if ":" in host else host
    return RunningEmulator(engine, f"{scheme}://{url_host}:{bound}/", key, loop, stop, thread, main.registry)
