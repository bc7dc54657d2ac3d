"""The data directory's files on disk: private permissions, whole writes, and the errors storage raises.

A write to the journal either lands whole or not at all: `write_all` checks every byte was taken (a
full disk or a file-size limit, `RLIMIT_FSIZE`, gives a short write first and `ENOSPC`/`EFBIG` next)
and the caller truncates back to the last good offset, raising `JournalFull`. The engine answers the
request with **503 ServiceUnavailable**, substatus 0, the short gateway body (layout C,
docs/reference/cosmos-errors-and-stats.md §1.1 and §1.4 "503"). 503 is the service's own status for
"cannot serve this now"; the official HTTP status list has no 507. The Python SDK retries a 503 once
after 500 ms, reads and writes alike (§1.4 row 7): safe here, as the failed write was not applied.

Saving at shutdown (snapshot, history) fails as `SaveFailed`, an `OSError` naming the file and the
cause, so the command line can say "cannot save" instead of a traceback.

The directory is created 0700 and every file in it 0600: the journal holds the users' documents.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
_PORTABLE_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)  # O_BINARY: no CR LF on Windows


class JournalFull(OSError):
    """A journal append the disk could not hold, cut back to the last good line: nothing was written. The
    engine answers the request with the service's 503 (`emulator.engine.state`)."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))
        self.path, self.cause = path, cause


class SaveFailed(OSError):
    """Saving a data-directory file failed; the message names the file, the cause and what is kept."""

    def __init__(self, path: Path, cause: OSError, kept: str = "") -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))
        self.message = f"cannot save {path}: {reason(cause)}" + (f"; {kept}" if kept else "")

    def __str__(self) -> str:
        return self.message


def reason(exc: OSError) -> str:
    """The cause in words, a full disk named as such."""
    if exc.errno == errno.ENOSPC:
        return "the disk is full (No space left on device)"
    if exc.errno == errno.EFBIG:
        return "the file-size limit was reached (File too large)"
    return exc.strerror or str(exc)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` or raise (after a short write, the next write raises the cause)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def make_dir(path: Path) -> None:
    """Create the data directory (and parents) private to the user; an existing one is left as it is."""
    if not path.is_dir():
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        os.chmod(path, DIR_MODE)  # mkdir's mode is masked by the umask; this one is exact


def open_private(path: Path, flags: int) -> int:
    """Open (or create) a data file as 0600, also tightening one created before that rule."""
    fd = os.open(path, flags | _PORTABLE_FLAGS, FILE_MODE)
    try:
        if os.name == "posix":
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd
