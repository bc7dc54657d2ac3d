"""The process side of the commands: stop signals, whether a port can be listened on, and the Streamlit
flags that hold from any directory (with the host names the dashboard answers). `ruscope.cli` and the demo (`ruscope.demo.dashboard`) share them."""

from __future__ import annotations

import signal
import socket
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dashboard.environment import ANY_STORE_ENV, CHECK_REPORT_ENV, PRICING_ENV, STORE_ENV
from emulator.cli import is_loopback
from ruscope.options import echo

if TYPE_CHECKING:
    from collectors.config.pricing import PricingSettings


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


def dashboard_environment(
    base: Mapping[str, str],
    store: str,
    *,
    any_store: bool = False,
    pricing: PricingSettings | None = None,
    check_report: Path | None = None,
) -> dict[str, str]:
    """The Streamlit process's environment (`dashboard.environment`): `base` (the caller's), the store, and
    only what this start says: --allow-any-store, and the config's `[pricing]` as JSON (prices, reservations
    held, account names; no key or secret is in it), and the check report to show (--check-report, absolute).
    None is inherited from `base`, so a dashboard started without a config prices at Microsoft's list price
    example and says so."""
    own = (ANY_STORE_ENV, PRICING_ENV, CHECK_REPORT_ENV)
    env = {k: v for k, v in base.items() if k not in own} | {STORE_ENV: store}
    if any_store:
        env[ANY_STORE_ENV] = "1"
    if pricing is not None:
        env[PRICING_ENV] = pricing.model_dump_json()
    if check_report is not None:
        env[CHECK_REPORT_ENV] = str(check_report.resolve())  # Streamlit runs in another directory
    return env


DASHBOARD_APP = Path(__file__).resolve().parent.parent / "dashboard" / "serve.py"  # installed beside ruscope
WILDCARDS = ("0.0.0.0", "::", "[::]", "")


def allowed_hosts(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The host names the dashboard answers (its Host check, `dashboard.host_guard`): loopback's, the
    address it listens on (unless a wildcard: the names it is reached by are then only the `extra` given)
    and `extra` (`--allow-host`)."""
    from dashboard.host_guard import LOOPBACK_NAMES  # lazily: it imports Streamlit, which every command would pay

    names = [*LOOPBACK_NAMES, *([] if host in WILDCARDS else [host.strip("[]")]), *extra]
    return list(dict.fromkeys(name.strip().lower() for name in names if name.strip()))


def exposure_warning(host: str, extra: Sequence[str] = ()) -> str | None:
    """A warning when the dashboard listens beyond loopback: it has no login, so whoever reaches it reads the
    store; None on loopback."""
    if is_loopback(host):
        return None
    line = (
        f"warning: listening on {host or '*'}: the dashboard has no login, so anyone who can reach it reads the store"
    )
    if host in WILDCARDS and not extra:
        line += "; name the host it is reached by with --allow-host NAME (only loopback names are answered now)"
    return line


def streamlit_command(host: str, port: int, app_file: Path = DASHBOARD_APP, *, allow: Sequence[str] = ()) -> list[str]:
    """The dashboard's process: Streamlit running `app_file` with `streamlit_flags`, under `python -P`, which
    keeps the working directory off `sys.path` (`-m` would put it first). Otherwise a folder there named like
    one of ruscope's packages, such as the demo's own `store/`, shadows it: `cd ruscope-demo && ruscope
    dashboard --store store` failed with "cannot import name 'StoreLocation' from 'store'"."""
    return [sys.executable, "-P", "-m", "streamlit", "run", str(app_file), *streamlit_flags(host, port, allow=allow)]


def streamlit_flags(host: str, port: int, *, allow: Sequence[str] = ()) -> list[str]:
    """Streamlit reads `.streamlit/config.toml` from the working directory only, so the settings that must
    hold from any directory are flags: loopback, headless, no usage statistics, no deploy button, and the host
    names answered (`server.allowedHosts`: Streamlit checks the WebSocket's, `dashboard.host_guard` every
    request's)."""
    settings = {
        "server.address": host,
        "server.port": str(port),
        "server.headless": "true",
        "browser.gatherUsageStats": "false",
        "client.toolbarMode": "minimal",
        "theme.base": "light",
    }
    flags = [part for name, value in settings.items() for part in (f"--{name}", value)]
    return flags + [part for name in allowed_hosts(host, allow) for part in ("--server.allowedHosts", name)]
