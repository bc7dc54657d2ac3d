"""A full disk or a file-size limit: every write the client saw confirmed survives, none that failed does.

The emulator runs as a child process with `--data-dir` under `RLIMIT_FSIZE` (SIGXFSZ ignored, as Python
does anyway) or on a small tmpfs; the real SDK writes until the journal refuses (503), then space returns.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError

from emulator.rest.auth import WELL_KNOWN_KEY
from tests.emulator.child import free_port, start_emulator

PAD = "x" * 400  # each journal line is about 0.6 KB


def _start(data_dir: Path, port: int, fsize: int | None = None) -> subprocess.Popen[bytes]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if fsize is not None:  # soft limit only: the test raises it again with prlimit, as "space returns"
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.RLIM_INFINITY))

    # COLUMNS: a traceback, if any, is not wrapped
    return start_emulator(data_dir, port, preexec_fn=limit, env={"COLUMNS": "1000"}, timeout_s=60)


def _container(port: int, create: bool = False) -> ContainerProxy:
    client = CosmosClient(f"http://127.0.0.1:{port}/", credential=WELL_KNOWN_KEY)
    if create:
        return client.create_database("d").create_container("c", PartitionKey("/k"))
    return client.get_database_client("d").get_container_client("c")


def _write(c: ContainerProxy, item_id: str) -> CosmosHttpResponseError | None:
    try:
        c.create_item({"id": item_id, "k": "k", "pad": PAD})
    except CosmosHttpResponseError as exc:
        return exc
    return None


def _fill(c: ContainerProxy, limit: int = 500) -> tuple[list[str], CosmosHttpResponseError]:
    """Write until the emulator refuses; the ids confirmed and the refusal."""
    confirmed = []
    for i in range(limit):
        error = _write(c, f"a{i}")
        if error is not None:
            return confirmed, error
        confirmed.append(f"a{i}")
    raise AssertionError("the journal never filled up")


def _ids(c: ContainerProxy) -> list[str]:
    return sorted(d["id"] for d in c.read_all_items())


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def _assert_refused(error: CosmosHttpResponseError, journal: Path, cause: str) -> None:
    assert error.status_code == 503
    assert error.error.code == "ServiceUnavailable"
    assert f"could not write its journal {journal}: {cause}" in error.message
    assert "The write was not applied" in error.message


def _after_space_returns(data_dir: Path, port: int, confirmed: list[str]) -> None:
    """Restart without a limit: exactly the confirmed writes, and new writes work and last."""
    proc = _start(data_dir, port)
    try:
        c = _container(port)
        assert _ids(c) == sorted(confirmed)
        assert _write(c, "later") is None
    finally:
        _kill(proc)
    proc = _start(data_dir, port)
    try:
        assert _ids(_container(port)) == sorted([*confirmed, "later"])
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


def test_file_size_limit_fails_the_write_and_keeps_every_confirmed_one(tmp_path: Path) -> None:
    port = free_port()
    proc = _start(tmp_path, port, fsize=16_000)
    try:
        c = _container(port, create=True)
        confirmed, error = _fill(c)
        _assert_refused(error, tmp_path / "journal.jsonl", "the file-size limit was reached (File too large)")
        for i in range(3):  # still full: each write fails whole, none is applied in memory
            assert _write(c, f"failed{i}") is not None
        assert _ids(c) == sorted(confirmed)
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert _write(c, "after") is None  # space is back: this write is not glued to a partial line
        confirmed.append("after")
    finally:
        _kill(proc)  # no shutdown save: the journal alone must hold every confirmed write
    assert (tmp_path / "journal.jsonl").read_bytes().endswith(b"\n")
    _after_space_returns(tmp_path, port, confirmed)


def test_a_failed_save_at_shutdown_names_the_file_and_loses_nothing(tmp_path: Path) -> None:
    port = free_port()
    proc = _start(tmp_path, port)
    try:
        c = _container(port, create=True)
        confirmed = [f"s{i}" for i in range(20)]  # a 12 KB snapshot
        assert all(_write(c, i) is None for i in confirmed)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    proc = _start(tmp_path, port, fsize=16_000)
    try:
        c = _container(port)
        more = [f"m{i}" for i in range(10)]  # 6 KB of journal; the snapshot would be 18 KB
        assert all(_write(c, i) is None for i in more)
        confirmed += more
    finally:
        proc.send_signal(signal.SIGTERM)
        output = " ".join(proc.communicate(timeout=30)[0].decode().split())
    assert proc.returncode == 2  # one line, as every refusal of the command
    assert f"cannot save {tmp_path / 'snapshot.jsonl'}: the file-size limit was reached" in output
    assert "cannot listen" not in output and "Traceback" not in output
    assert not list(tmp_path.glob(".*.tmp"))  # the temp snapshot removed
    _after_space_returns(tmp_path, port, confirmed)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 256 KB tmpfs (root and a kernel that allows the mount), else the test is skipped."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip() or 'mount failed'}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_fails_the_write_as_such_and_the_next_write_after_space_returns_lasts(small_tmpfs: Path) -> None:
    data_dir, filler = small_tmpfs / "data", small_tmpfs / "filler"
    port = free_port()
    proc = _start(data_dir, port)
    try:
        c = _container(port, create=True)
        stats = os.statvfs(small_tmpfs)
        filler.write_bytes(b"\0" * max(0, stats.f_bavail * stats.f_frsize - 16_384))
        confirmed, error = _fill(c)
        _assert_refused(error, data_dir / "journal.jsonl", "the disk is full (No space left on device)")
        assert _write(c, "failed") is not None
        filler.unlink()
        assert _write(c, "after") is None
        confirmed.append("after")
    finally:
        _kill(proc)
    _after_space_returns(data_dir, port, confirmed)
