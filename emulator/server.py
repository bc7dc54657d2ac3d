"""Starting the emulator: blocking (`ruscope emulator`) or on a background thread (tests, demo).

uvicorn serves the ASGI app on one event loop, so engine calls are serialised without contention;
a socket bound before start-up makes port 0 (a free port) race-free.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from emulator.auth import WELL_KNOWN_KEY
from emulator.engine import Engine
from emulator.http import CosmosApp
from emulator.journal import Journal

log = logging.getLogger("ruscope.emulator")


def open_engine(data_dir: str | Path | None = None, *, fsync: bool = False, **engine_kwargs: object) -> Engine:
    """An engine, durable in `data_dir` when given (replayed, then compacted)."""
    journal = Journal(data_dir, fsync=fsync) if data_dir else None
    engine = Engine(journal=journal, **engine_kwargs)  # type: ignore[arg-type]
    if journal is not None:
        journal.compact(engine.snapshot_entries())
    return engine


def bind(host: str, port: int) -> socket.socket:
    """A listening socket; a clear OSError if the port is taken."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def _config(app: CosmosApp) -> uvicorn.Config:
    return uvicorn.Config(
        app, loop="uvloop", http="httptools", lifespan="off", access_log=False, log_level="warning",
        timeout_keep_alive=120,
    )


def serve(engine: Engine, *, host: str = "127.0.0.1", port: int = 8081, key: str = WELL_KNOWN_KEY) -> None:
    """Serve until SIGINT/SIGTERM; the journal is compacted on the way out."""
    sock = bind(host, port)
    server = uvicorn.Server(_config(CosmosApp(engine, key)))
    try:
        server.run(sockets=[sock])
    finally:
        engine.close()


@dataclass
class RunningEmulator:
    """An emulator serving on a background thread of this process."""

    engine: Engine
    url: str
    key: str
    _server: uvicorn.Server
    _thread: threading.Thread

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def start_in_thread(engine: Engine, *, host: str = "127.0.0.1", port: int = 0,
                    key: str = WELL_KNOWN_KEY) -> RunningEmulator:
    """Start serving on a free port (port 0) and return once requests are accepted."""
    sock = bind(host, port)
    server = uvicorn.Server(_config(CosmosApp(engine, key)))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="ruscope-emulator")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the emulator did not start")
        time.sleep(0.01)
    bound_port = sock.getsockname()[1]
    return RunningEmulator(engine, f"http://{host}:{bound_port}/", key, server, thread)
