"""Replace a file whole: write a temp file beside it, then rename it over the old one."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

PRIVATE_MODE = 0o600
_SHARED_MODE = 0o666  # before the umask, as open() creates a file
# O_CLOEXEC: no child process inherits the file; O_BINARY: no CR LF translation on Windows.
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

Writer = Callable[[BinaryIO], object]
"""Writes the whole content to the binary file it is given (and does not close it)."""


def temp_path(path: Path) -> Path:
    """Where `path` is written before the rename: beside it (a rename does not cross file systems), hidden
    from a listing or a glob of the real files."""
    return path.with_name(f".{path.name}.tmp")


def write_whole(
    path: Path, content: bytes | Writer, *, private: bool = False, fsync: bool = False, fsync_dir: bool = False
) -> None:
    """Replace `path` with `content`, or leave it as it was.

    `content` is the bytes, or a callable that writes them to the open file (to stream a large file). On any
    failure, an OSError or whatever the writer raises, the temp file is removed and the exception propagates
    as it came. `private`: the file is 0600, also when the temp file was left by an interrupted run with a
    wider mode (the mode given at creation does not apply to an existing file). `fsync`: the bytes are on
    disk before the rename, so a power cut cannot leave `path` naming an empty or partial file. `fsync_dir`:
    the directory is fsynced after the rename, so the rename itself survives a power cut.
    """
    temp = temp_path(path)
    try:
        with _open(temp, private=private) as out:
            if callable(content):
                content(out)
            else:
                out.write(content)
            if fsync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    if fsync_dir:
        fsync_directory(path.parent)


def _open(path: Path, *, private: bool) -> io.BufferedWriter:
    fd = os.open(path, _FLAGS, PRIVATE_MODE if private else _SHARED_MODE)
    try:
        if private and os.name == "posix":
            os.fchmod(fd, PRIVATE_MODE)
        return open(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def fsync_directory(path: Path) -> None:
    """Make a rename (or a file created) in `path` durable (POSIX; Windows has no directory handle to fsync)."""
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
