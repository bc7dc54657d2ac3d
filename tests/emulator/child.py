"""An emulator in a child process (`python -m emulator`) on a free port, for the tests that must kill it,
restart it, or limit what it may write: one way to start it and to know that it listens, and one way to
read what a child process printed up to a line."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_emulator(
    data_dir: Path,
    port: int,
    *,
    preexec_fn: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
    timeout_s: float = 30,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[bytes]:
    """`python -m emulator --data-dir DATA_DIR` on `port` (no monitor stand-in), once it accepts connections;
    its stdout and stderr together in `.stdout`. AssertionError with its output when it exits or never listens."""
    args = [
        sys.executable,
        "-m",
        "emulator",
        "--port",
        str(port),
        "--monitor-port",
        "0",
        "--data-dir",
        str(data_dir),
        *extra,
    ]
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=preexec_fn,
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"emulator did not start: {proc.communicate()[0].decode()}")


def read_until(proc: subprocess.Popen[bytes], text: str, timeout: float = 60) -> str:
    """stdout up to the first line holding `text` (what was printed so far if it never came); read from
    the descriptor, since a buffered readline would hide lines already read from select()."""
    assert proc.stdout is not None
    seen, deadline = b"", time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while text.encode() not in seen and time.monotonic() < deadline:
            if selector.select(deadline - time.monotonic()):
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                seen += chunk
    return seen.decode()
