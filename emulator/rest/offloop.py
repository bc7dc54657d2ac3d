"""Work a request needs before it is answered (parsing and compiling a large query), done on one worker
thread while the event loop goes on serving other connections (measured: a 400 KB IN list or OR chain held
the one serving thread 0.3-0.5 s). The work is pure: it only fills the SQL engine's caches, which
are thread-safe, and its failures are left for the request itself to report, in its own words.

glibc gives the worker thread its own malloc arena and keeps what the work freed there; the arena is
trimmed after each piece of work, so preparing large queries does not keep the server's memory up.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

log = logging.getLogger("ruscope.emulator")

_EXECUTOR: list[ThreadPoolExecutor] = []  # one worker for every server in the process, made when first needed


def executor() -> ThreadPoolExecutor:
    if not _EXECUTOR:
        _EXECUTOR.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="ruscope-prepare"))
    return _EXECUTOR[0]


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


def _trim() -> None:
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
