"""A full disk: delta-rs' worker threads panic ("Already shut down"); the command prints one line per failure."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ruscope.panics import without_panics
from store import EXECUTIONS, store_location, write_frame
from tests.store.test_store import T0, executions

ROOT = Path(__file__).resolve().parents[2]
HEADER = "thread 'tokio-rt-worker' (4242) panicked at /cargo/object_store-0.13.2/src/buffered.rs:369:41:\n"


def filtered(text: str) -> str:
    return b"".join(without_panics(text.encode().splitlines(keepends=True))).decode()


@pytest.mark.parametrize(
    "report",
    [
        f"\n{HEADER}Already shut down\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        f"\n{HEADER}Already shut down\nstack backtrace:\nnote: Some details are omitted, run with `RUST_BACKTRACE=full`\n",
        f"\n{HEADER}Already shut down\nstack backtrace:\n   0:     0x7f - <unknown>\n  18:     0x7f - start_thread\n"
        "                               at ./nptl/pthread_create.c:442:8\n",
        f"\n{HEADER}Already shut down\n",  # a second panic: no note after it
        f"\n{HEADER}assertion `left == right` failed\n  left: 1\n right: 2\n",
    ],
)
def test_a_panic_report_is_dropped_and_the_lines_around_it_kept(report: str) -> None:
    text = f"ruscope: before\n\nan empty line above\n{report}ruscope: after\n"
    assert filtered(text) == "ruscope: before\n\nan empty line above\nruscope: after\n"


def full_disk(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG, as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_compact_on_a_full_disk_prints_one_line_and_no_panic(tmp_path: Path) -> None:
    store = tmp_path / "store"
    for i in range(3):
        ids = tuple(f"r{i}-e{j}" for j in range(3000))
        frame = executions(f"r{i}", ids, T0)
        frame["sql"] = [f"SELECT * FROM c WHERE c.id = '{x}' -- {os.urandom(20).hex()}" for x in ids]
        write_frame(store_location(store), EXECUTIONS, frame, run_id=f"r{i}", part="a")
    largest = max(p.stat().st_size for p in store.rglob("*.parquet"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUST_BACKTRACE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "ruscope", "compact", "--store", str(store)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: full_disk(largest + 10_000),  # room for the parts, not for their compaction
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "ruscope: executions: not compacted: DeltaError: Failed to parse parquet: External: Generic LocalFileSystem "
        "error: Unable to copy data to file: File too large (os error 27)"
    ]
    assert len(pd.read_parquet(next(store.rglob("*.parquet")))) == 3000  # the parts are as they were


def test_python_stderr_stays_a_terminal_and_child_output_passes(tmp_path: Path) -> None:
    import pty

    script = (
        "import os, sys; from ruscope import panics; before = sys.stderr.isatty(); panics.install(); "
        "print('ruscope: from python', sys.stderr.isatty() == before, file=sys.stderr); "
        "os.write(2, b'from fd 2\\n'); os.write(2, b\"\\nthread 'w' (1) panicked at x.rs:1:2:\\nAlready shut down\\n\")"
    )
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=follower,
        timeout=60,
    )
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert done.returncode == 0
    assert output.replace(b"\r\n", b"\n") == b"ruscope: from python True\nfrom fd 2\n"
