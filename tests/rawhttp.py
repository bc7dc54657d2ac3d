"""Signed raw REST requests for what the SDK never sends (malformed JSON, mismatched keys)."""

from __future__ import annotations

import http.client
import json
import socket
from email.utils import formatdate
from urllib.parse import quote, urlparse

from emulator.rest.auth import resource_of, signature, signing_payload


def request(
    url: str, key: str, method: str, path: str, body: bytes | str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], dict | None]:
    date = formatdate(usegmt=True)
    resource_type, link = resource_of(path)
    sig = signature(key, signing_payload(method, resource_type, link, date))
    all_headers = {
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
        "authorization": quote(f"type=master&ver=1.0&sig={sig}", safe=""),
        **(headers or {}),
    }
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=all_headers)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(raw) if raw else None


def signed_headers(key: str, method: str, path: str, host: str = "127.0.0.1") -> dict[str, str]:
    """The headers of a request signed with `key` (for raw sockets, where http.client cannot be used)."""
    date = formatdate(usegmt=True)
    resource_type, link = resource_of(path)
    sig = signature(key, signing_payload(method, resource_type, link, date))
    return {
        "host": host,
        "x-ms-date": date,
        "x-ms-version": "2020-07-15",
        "authorization": quote(f"type=master&ver=1.0&sig={sig}", safe=""),
    }


def raw_bytes(method: str, target: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    """One HTTP/1.1 request as bytes, exactly as given (no encoding, no checks)."""
    lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    if body:
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def connect(url: str, timeout: float = 10.0, rcvbuf: int | None = None) -> socket.socket:
    """A plain TCP socket to the server at `url` (`rcvbuf`: a small receive buffer, for flow-control tests)."""
    parsed = urlparse(url)
    sock = socket.socket(socket.AF_INET6 if ":" in (parsed.hostname or "") else socket.AF_INET)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    sock.connect((parsed.hostname, parsed.port))
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (socket.timeout if it never does)."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def read_response(sock: socket.socket, pending: bytearray | None = None) -> tuple[int, dict[str, str], bytes]:
    """One response read off a socket (content-length framed); `pending` carries bytes read past it."""
    buf = pending if pending is not None else bytearray()
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a whole response: {bytes(buf[:200])!r}")
        buf += chunk
    head, _, _ = bytes(buf).partition(b"\r\n\r\n")
    del buf[: len(head) + 4]
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    length = int(headers.get("content-length", "0"))
    while len(buf) < length:
        chunk = sock.recv(max(65536, length - len(buf)))
        if not chunk:
            raise ConnectionError("closed inside a response body")
        buf += chunk
    body = bytes(buf[:length])
    del buf[:length]
    return int(status_line.split()[1]), headers, body
