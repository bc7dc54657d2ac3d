"""The dashboard answers only the host names it is served under: a request whose `Host` header names
another host is refused with a 403, for the page and its files as for the WebSocket the data flows over.

Why: a page on another site can point its own name at 127.0.0.1 (DNS rebinding); the browser then sends that
page's requests to the dashboard as same-origin, with the other site's name in `Host`, and would let the page
read the store. A name the user did not serve the dashboard under is never a legitimate visitor.

The names come from Streamlit's `server.allowedHosts` option, which `ruscope dashboard` sets (loopback names,
the `--host` given, each `--allow-host`; `ruscope.launch.allowed_hosts`). Streamlit's own check of that option
covers only the WebSocket handshake (added in 1.61, streamlit/streamlit#16147; Streamlit has run on Starlette,
not Tornado, since 1.57), so `HostGuard` is the ASGI middleware `dashboard/serve.py` puts in front of every
request through `st.App(..., middleware=...)`, Streamlit's supported hook. With the option empty (Streamlit
started by hand), only loopback names are served.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any
from urllib.parse import urlsplit

import streamlit as st
from starlette.responses import PlainTextResponse

HOSTS_OPTION = "server.allowedHosts"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

Asgi = Callable[..., Any]


def host_name(header: str | None) -> str | None:
    """The host name of a `Host` header (`name`, `name:port`, `[v6]:port`), lowercased, without a
    trailing dot; None for a missing or malformed header (userinfo, a path, a bad port)."""
    if not header:
        return None
    try:
        parts = urlsplit(f"//{header}")
        _ = parts.port  # a port that is not a number in range is malformed
    except ValueError:
        return None
    if parts.hostname is None or parts.username is not None or parts.path or parts.query or parts.fragment:
        return None
    return parts.hostname.rstrip(".")


def host_allowed(header: str | None, allowed: Collection[str]) -> bool:
    """Whether a `Host` header names one of the `allowed` host names (ports are not compared)."""
    name = host_name(header)
    return name is not None and name in {entry.strip().lower().strip("[]").rstrip(".") for entry in allowed}


def served_hosts() -> list[str]:
    """The names the dashboard is served under: Streamlit's `server.allowedHosts`, else loopback's."""
    configured = [name for name in st.get_option(HOSTS_OPTION) or [] if name.strip()]
    return configured or list(LOOPBACK_NAMES)


class HostGuard:
    """ASGI middleware: a request (HTTP or WebSocket) for a host not in `hosts()` is refused with a 403."""

    def __init__(self, app: Asgi, hosts: Callable[[], Collection[str]] = served_hosts) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: dict[str, Any], receive: Asgi, send: Asgi) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"host"), None)
        if host_allowed(header, self.hosts()):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # closed before it is accepted: the server answers the upgrade 403
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = (header or "")[:200]
        message = (
            f"The host {shown!r} is not served by this dashboard (allow it with ruscope dashboard --allow-host).\n"
        )
        await PlainTextResponse(message, status_code=403)(scope, receive, send)
