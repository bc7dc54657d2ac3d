"""The dashboard as a child process (for `ruscope demo`, which keeps the emulator serving beside it).

`ruscope dashboard` execs Streamlit instead (so a supervisor's signals reach it); both use the same
flags and the same port check (`ruscope.launch`).
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from ruscope.launch import dashboard_environment, streamlit_command


def start_dashboard(store: Path, *, host: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """Streamlit on `store`, its output in `log` (the demo's terminal keeps the demo's own lines)."""
    env = dashboard_environment(os.environ, str(store.resolve()))  # no [pricing]: the list price example
    command = streamlit_command(host, port)
    with log.open("ab") as sink:
        return subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout_s: float = 90.0) -> bool:
    """Whether `url`/_stcore/health answered "ok" before the timeout (False at once if the process ended)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"{url.rstrip('/')}/_stcore/health", timeout=2) as answer:
                if answer.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    return False


def stop_process(process: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not ended within the timeout."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
