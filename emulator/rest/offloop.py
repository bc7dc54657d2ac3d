"""Work a request needs before it is answered (parsing and compiling a large query), done on one worker
thread while the event loop goes on serving other connections (measured: a 400 KB IN list or OR chain held
the one serving thread 0.3-0.5 s). The work is pure: it only fills the SQL engine's caches, which
are thread-safe, and its failures are left for the request itself to report, in its own words.

glibc gives the worker thread its own malloc arena and keeps what the work freed there; the arena is
trimmed after each piece of work, so preparing large queries does not keep the server's memory up. And
glibc raises its mmap threshold each time a large buffer is freed (up to 32 MB), after which large answers
come from the heap and stay there: the threshold is pinned at `MMAP_THRESHOLD`, so a buffer that large is
always its own mapping, returned to the system when freed (measured: RSS stayed 150 MB up after a
$batch of ten 8 MB monitor answers).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("ruscope.emulator")

_EXECUTOR: list[ThreadPoolExecutor] = []  # one worker for every server in the process, made when first needed


def executor() -> ThreadPoolExecutor:
    if not _EXECUTOR:
        _EXECUTOR.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="ruscope-prepare"))
    return _EXECUTOR[0]


_PAUSES = [0, 0]  # pieces of work running with the collector paused; whether it was enabled before the first
_PAUSE_LOCK = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large piece of work runs (a monitor query): its full
    collections traverse everything the work holds and stop every thread, the event loops' too (measured:
    0.2-0.5 s pauses during a batch of heavy queries). Reference counting frees as always; cycles wait for
    the collector, which runs again when the last such piece of work ends."""
    with _PAUSE_LOCK:
        if _PAUSES[0] == 0:
            _PAUSES[1] = int(gc.isenabled())
            gc.disable()
        _PAUSES[0] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSES[0] -= 1
            if _PAUSES[0] == 0 and _PAUSES[1]:
                gc.enable()


def run_quietly(work: Callable[[], object]) -> None:
    """Run one piece of preparation; a failure is logged at debug level (answering the request says why)."""
    try:
        work()
    except Exception:  # noqa: BLE001
        log.debug("preparing a request failed; answering it will say why", exc_info=True)
    finally:
        _trim()


def _load_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


_MALLOC_TRIM = _load_trim()
MMAP_THRESHOLD = 1024 * 1024
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter


def _pin_mmap_threshold() -> None:
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt if name else None
    except (OSError, AttributeError):  # not glibc
        return
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


_pin_mmap_threshold()


def _trim() -> None:
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
