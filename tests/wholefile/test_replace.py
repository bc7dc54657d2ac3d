"""A file replaced whole or not at all: the old file stays intact on any failure and no temp file is left."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from wholefile import temp_path, write_whole

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes and RLIMIT_FSIZE are POSIX")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _left(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask, so only the helper's own mode can keep a file private."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_bytes_replace_the_file_and_nothing_else_is_left(tmp_path: Path) -> None:
    path = tmp_path / "report.csv"
    write_whole(path, b"first\n")
    write_whole(path, b"second\n")
    assert path.read_bytes() == b"second\n" and _left(tmp_path) == ["report.csv"]


def test_a_writer_streams_the_content_into_the_open_file(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    write_whole(path, lambda out: out.writelines(b"%d\n" % i for i in range(10_000)))
    assert path.read_bytes().splitlines() == [b"%d" % i for i in range(10_000)]


def test_the_temp_file_is_hidden_beside_the_file(tmp_path: Path) -> None:
    assert temp_path(tmp_path / "snapshot.jsonl") == tmp_path / ".snapshot.jsonl.tmp"


@posix_only
@pytest.mark.usefixtures("open_umask")
def test_private_is_0600_and_otherwise_the_umask_decides(tmp_path: Path) -> None:
    write_whole(tmp_path / "key.pem", b"secret", private=True)
    write_whole(tmp_path / "report.csv", b"rows")
    assert _mode(tmp_path / "key.pem") == 0o600 and _mode(tmp_path / "report.csv") == 0o666


@posix_only
@pytest.mark.usefixtures("open_umask")
def test_a_temp_file_left_by_an_interrupted_run_is_replaced_with_the_private_mode(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    temp_path(path).write_bytes(b"half of an earlier key, and more bytes than the new one")
    os.chmod(temp_path(path), 0o644)  # the mode given at creation does not apply to an existing file
    write_whole(path, b"new key", private=True)
    assert path.read_bytes() == b"new key" and _mode(path) == 0o600 and _left(tmp_path) == ["key.pem"]


def test_a_writer_that_fails_midway_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "history.gz"
    path.write_bytes(b"the old history")

    def half(out: BinaryIO) -> None:
        out.write(b"x" * 100_000)  # past the write buffer: part of it is on disk already
        raise ValueError("the writer broke")

    with pytest.raises(ValueError, match="the writer broke"):  # as it came: the caller maps its own errors
        write_whole(path, half, private=True, fsync=True, fsync_dir=True)
    assert path.read_bytes() == b"the old history" and _left(tmp_path) == ["history.gz"]


def test_a_full_disk_is_the_os_error_itself(tmp_path: Path) -> None:
    path = tmp_path / "report.csv"
    path.write_bytes(b"old")

    def full(out: BinaryIO) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OSError) as caught:
        write_whole(path, full)
    assert caught.value.errno == errno.ENOSPC
    assert path.read_bytes() == b"old" and _left(tmp_path) == ["report.csv"]


def test_a_failed_rename_removes_the_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "out"
    (path / "inside").mkdir(parents=True)  # a non-empty directory cannot be renamed over
    with pytest.raises(OSError):
        write_whole(path, b"data")
    assert _left(tmp_path) == ["out"] and _left(path) == ["inside"]


@posix_only
def test_a_file_size_limit_mid_write_leaves_the_old_file(tmp_path: Path) -> None:
    """The real failure, not a simulated one: RLIMIT_FSIZE cuts the write short, then refuses it (EFBIG)."""
    path = tmp_path / "snapshot.jsonl"
    path.write_bytes(b"the old snapshot")
    code = (
        "import errno, resource, sys\n"
        "from pathlib import Path\n"
        "from wholefile import write_whole\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
        "try:\n"
        "    write_whole(Path(sys.argv[1]), lambda out: out.write(b'x' * 200_000), private=True, fsync=True)\n"
        "except OSError as exc:\n"
        "    sys.exit(0 if exc.errno == errno.EFBIG else 1)\n"
        "sys.exit(2)\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert path.read_bytes() == b"the old snapshot" and _left(tmp_path) == ["snapshot.jsonl"]


def test_durable_fsyncs_the_whole_file_then_renames_then_fsyncs_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        what = "directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else os.fstat(fd).st_size
        calls.append(("fsync", what))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        calls.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_whole(tmp_path / "a", b"12345", fsync=True, fsync_dir=True)
    assert calls == [("fsync", 5), ("replace", "a"), ("fsync", "directory")]  # the bytes flushed before the fsync
    calls.clear()
    write_whole(tmp_path / "b", b"12345", fsync=True)
    assert calls == [("fsync", 5), ("replace", "b")]
    calls.clear()
    write_whole(tmp_path / "c", b"12345")
    assert calls == [("replace", "c")]
