"""`ruscope dashboard` answers only the host names it is served under (DNS rebinding): a forged `Host`
header gets a 403 for the page and for the WebSocket upgrade the data flows over; loopback names and each
`--allow-host` are answered. Plain HTTP against a started dashboard (no browser needed)."""

from __future__ import annotations

import base64
import http.client
import os
from pathlib import Path

from ruscope.launch import allowed_hosts, exposure_warning
from tests.e2e.browser import HOST, running_dashboard

FOREIGN = ["evil.example", "evil.example:8501", "127.0.0.1.evil.example", "localhost@evil.example", ""]


def status(port: int, host: str, *, websocket: bool = False) -> int:
    """The status of GET / (or the WebSocket upgrade of /_stcore/stream) sent with `Host: host`."""
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        connection.putrequest("GET", "/_stcore/stream" if websocket else "/", skip_host=True)
        connection.putheader("Host", host)
        if websocket:
            for name, value in {
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
                "Sec-WebSocket-Protocol": "streamlit",
            }.items():
                connection.putheader(name, value)
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


def test_a_foreign_host_is_refused_for_the_page_and_the_websocket(tmp_path: Path) -> None:
    options = ["--allow-host", "dash.example"]
    with running_dashboard(tmp_path / "store", tmp_path, options=options) as dashboard:
        port = dashboard.port
        for host in FOREIGN:
            assert status(port, host) == 403, host
            assert status(port, host, websocket=True) == 403, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", "dash.example", f"dash.example.:{port}"):
            assert status(port, host) == 200, host
            assert status(port, host, websocket=True) == 101, host
        dashboard.process.terminate()
        dashboard.process.wait(timeout=30)
    assert "ruscope: warning" not in dashboard.output()  # loopback: nothing to warn about


def test_the_names_answered_and_the_warning_beyond_loopback() -> None:
    assert allowed_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "::1"]
    assert allowed_hosts("0.0.0.0", ["Dash.Example"]) == ["localhost", "127.0.0.1", "::1", "dash.example"]
    assert allowed_hosts("192.0.2.7") == ["localhost", "127.0.0.1", "::1", "192.0.2.7"]
    assert exposure_warning("127.0.0.1") is None and exposure_warning("localhost") is None
    assert exposure_warning("::1") is None
    wide = exposure_warning("0.0.0.0")
    assert wide is not None and "no login" in wide and "--allow-host NAME" in wide
    named = exposure_warning("0.0.0.0", ["dash.example"])
    assert named is not None and "--allow-host" not in named
