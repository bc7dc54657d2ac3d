"""The process side of the commands: stop signals, whether a port can be listened on, and the Streamlit
flags that hold from any directory. `ruscope.cli` and the demo (`ruscope.demo.dashboard`) share them."""

from __future__ import annotations

import signal
import socket
import sys
import threading
from pathlib import Path

from ruscope.options import echo


def stop_on_signals() -> threading.Event:
    """SIGINT/SIGTERM set an event: the collector finishes the request in flight, flushes, and exits 0."""
    stop = threading.Event()

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():  # a second Ctrl+C: stop now
            raise KeyboardInterrupt
        echo("ruscope: stopping after the current request (again to abort)", err=True)
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return stop


def listen_problem(host: str, port: int) -> str | None:
    """Why the dashboard could not listen on host:port, said before Streamlit starts (its own message is
    just "Port N is not available"); None when a bind succeeds. SO_REUSEADDR, as the server sets it, so a
    port in TIME_WAIT is not reported as taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(infos[0][4])
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return f"cannot listen on {host}:{port}: {reason}; pick another port with --port (e.g. --port {port + 1})"
    return None


DASHBOARD_APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"  # installed beside ruscope


def streamlit_command(host: str, port: int, app_file: Path = DASHBOARD_APP) -> list[str]:
    """The dashboard's process: Streamlit running `app_file` with `streamlit_flags`, under `python -P`, which
    keeps the working directory off `sys.path` (`-m` would put it first). Otherwise a folder there named like
    one of ruscope's packages, such as the demo's own `store/`, shadows it: `cd ruscope-demo && ruscope
    dashboard --store store` failed with "cannot import name 'StoreLocation' from 'store'"."""
    return [sys.executable, "-P", "-m", "streamlit", "run", str(app_file), *streamlit_flags(host, port)]


def streamlit_flags(host: str, port: int) -> list[str]:
    """Streamlit reads `.streamlit/config.toml` from the working directory only, so the settings that must
    hold from any directory are flags: loopback, headless, no usage statistics, no deploy button."""
    settings = {
        "server.address": host,
        "server.port": str(port),
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "minimal",
        "theme.base": "light",
    }
    return [part for name, value in settings.items() for part in (f"--{name}", value)]
