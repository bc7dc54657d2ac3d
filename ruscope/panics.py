"""Keeping Rust panic reports out of the command's error output: a line per failure, never a panic.

Why: delta-rs' object store panics on a worker thread when a write fails half-way (a full disk: object_store's
buffered upload reports "Already shut down" after the file system's "File too large"). The panic is caught
inside delta-rs and the write fails with a proper error, which the command reports in its one line; but Rust's
panic hook has already written its report to file descriptor 2 (with a stack backtrace when RUST_BACKTRACE is
set), and Python cannot replace that hook. So the command's fd 2 is a pipe read by a thread that forwards
every line to the real stderr but a panic report: `thread '<name>' (<id>) panicked at <file>:<line>:<col>:`,
the message, then the backtrace frames and the closing `note:` line, and the blank line before it. Python's
own `sys.stderr` writes to the real stderr directly, so it is still a terminal when it was one (the
collectors' progress bar asks) and no line of ours waits on the thread.

`install()` once at the start of a command, `uninstall()` before the process is replaced (`os.execve`);
both are idempotent, and an exit undoes it after forwarding what is left.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TextIO

PANIC = re.compile(rb"^thread '[^']*'(?: \(\d+\))? panicked at ")
FRAME = re.compile(rb"^\s+(?:\d+: |at )")
NOTE = re.compile(rb"^note: ")
JOIN_SECONDS = 2.0

_lock = threading.Lock()


def without_panics(lines: Iterable[bytes]) -> Iterator[bytes]:
    """`lines` (each with its newline) without Rust panic reports: the header, the message's first line and
    its indented continuation, `stack backtrace:` and its frames, the `note:` line, the blank line before."""
    held: bytes | None = None  # a blank line, kept until the next line says whether a panic report follows
    state = _NORMAL
    for line in lines:
        if PANIC.match(line):
            held, state = None, _MESSAGE_START
            continue
        state = _next_state(state, line)
        if state == _ENDED:  # the report's last line
            state = _NORMAL
            continue
        if state != _NORMAL:
            continue
        if held is not None:
            yield held
            held = None
        if line.strip() == b"":
            held = line
        else:
            yield line
    if held is not None:
        yield held


_NORMAL, _MESSAGE_START, _MESSAGE, _FRAMES, _ENDED = range(5)


def _next_state(state: int, line: bytes) -> int:
    """Where `line` leaves a panic report in progress (`_NORMAL`: the line is not part of one)."""
    if state == _NORMAL:
        return _NORMAL
    if NOTE.match(line):
        return _ENDED
    if line.rstrip() == b"stack backtrace:" or (state == _FRAMES and FRAME.match(line)):
        return _FRAMES
    if state == _MESSAGE_START or (state == _MESSAGE and line[:1].isspace() and line.strip()):
        return _MESSAGE
    return _NORMAL


@dataclass(frozen=True)
class _Installed:
    real: int  # a duplicate of the real stderr
    pump: threading.Thread
    python_stderr: TextIO  # the sys.stderr it replaced


_installed: list[_Installed] = []


def install() -> None:
    """Route fd 2 through the filter, and Python's own `sys.stderr` straight to the real stderr (so that it
    is still a terminal when it was one: progress bars and colours); no-op if installed already."""
    with _lock:
        if _installed or sys.stderr is None:
            return
        try:
            real = os.dup(2)
        except OSError:  # no fd 2 at all
            return
        read_end, write_end = os.pipe()
        original = sys.stderr
        original.flush()
        sys.stderr = io.TextIOWrapper(
            io.FileIO(real, "w", closefd=False),
            encoding=original.encoding,
            errors=original.errors,
            line_buffering=True,
            write_through=True,
        )
        os.dup2(write_end, 2)
        os.close(write_end)
        pump = threading.Thread(target=_pump, args=(read_end, real), name="rust-panic-filter", daemon=True)
        pump.start()
        _installed.append(_Installed(real, pump, original))
    atexit.register(uninstall)


def uninstall() -> None:
    """Give fd 2 and `sys.stderr` back, after forwarding what the pipe still holds."""
    with _lock:
        if not _installed:
            return
        installed = _installed.pop()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    sys.stderr = installed.python_stderr
    os.dup2(installed.real, 2)  # closes the pipe's last write end: the pump reads to its end and stops
    installed.pump.join(JOIN_SECONDS)
    os.close(installed.real)


def _pump(read_end: int, real: int) -> None:
    try:
        for line in without_panics(_lines(read_end)):
            os.write(real, line)
    except OSError:
        pass
    finally:
        os.close(read_end)


def _lines(fd: int) -> Iterator[bytes]:
    """The pipe's lines as they arrive (a partial last line at the end)."""
    buffer = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line + b"\n"
    if buffer:
        yield buffer
