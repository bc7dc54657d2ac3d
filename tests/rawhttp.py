"""Signed raw REST requests for what the SDK never sends (malformed JSON, mismatched keys)."""

from __future__ import annotations

import http.client
import json
from email.utils import formatdate
from urllib.parse import quote, urlparse

from emulator.auth import resource_of, signature, signing_payload


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
