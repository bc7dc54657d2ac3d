"""Malformed requests from a generator: whatever arrives on the socket, the answer is a 4xx
JSON body, a valid answer or a closed connection, never a 500, and the server still answers a read afterwards."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from emulator.rest.transport import TransportLimits
from tests import rawhttp

DOCS = "/dbs/d/colls/c/docs"
FUZZED_HEADERS = [
    "x-ms-documentdb-partitionkey",
    "x-ms-continuation",
    "x-ms-max-item-count",
    "x-ms-documentdb-partitionkeyrangeid",
    "x-ms-activity-id",
    "x-ms-consistency-level",
    "if-none-match",
    "content-type",
    "x-ms-documentdb-isquery",
    "x-ms-offer-throughput",
    "x-ms-start-epk",
    "x-ms-end-epk",
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "expect",
]
SMALL = TransportLimits(max_url_bytes=2048, max_header_bytes=4096, request_timeout_s=2.0)

header_value = st.one_of(
    st.binary(max_size=80),
    st.sampled_from(
        [
            b"",
            b"-1",
            b"0",
            b"99999999999999999999",
            b"[]",
            b'["a"]',
            b"[1,2",
            b'{"from":""}',
            b"chunked",
            b"Upgrade",
            b"close",
            b"100-continue",
        ]
    ),
)
raw_request = st.builds(
    lambda method, target, headers, body: (method, target, headers, body),
    st.sampled_from([b"GET", b"POST", b"PUT", b"PATCH", b"DELETE", b"HEAD", b"OPTIONS", b"BREW", b"G\x00T"]),
    st.one_of(st.binary(min_size=1, max_size=120), st.sampled_from([b"/", DOCS.encode(), b"/dbs/d/colls/c/docs/1"])),
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from([h.encode() for h in FUZZED_HEADERS]), st.binary(min_size=1, max_size=20)),
            header_value,
        ),
        max_size=6,
    ),
    st.binary(max_size=200),
)
signed_request = st.builds(
    lambda method, path, headers, body: (method, path, headers, body),
    st.sampled_from(["GET", "POST"]),
    st.sampled_from(["/", "/dbs", DOCS, DOCS + "/1", "/dbs/d/colls/c", "/dbs/d/colls/c/pkranges"]),
    st.dictionaries(st.sampled_from(FUZZED_HEADERS[:12]), st.text(max_size=40), max_size=4),
    st.one_of(
        st.just(b""), st.binary(max_size=100), st.sampled_from([b'{"query":"SELECT * FROM c"}', b'{"id":"x","k":"a"}'])
    ),
)


@pytest.fixture(scope="module")
def server() -> Iterator[RunningEmulator]:
    emu = start_in_thread(open_engine(), limits=SMALL)
    key = emu.key
    assert rawhttp.request(emu.url, key, "POST", "/dbs", orjson.dumps({"id": "d"}))[0] == 201
    container = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    assert rawhttp.request(emu.url, key, "POST", "/dbs/d/colls", orjson.dumps(container))[0] == 201
    pk = {"x-ms-documentdb-partitionkey": '["a"]'}
    assert rawhttp.request(emu.url, key, "POST", DOCS, orjson.dumps({"id": "1", "k": "a"}), pk)[0] == 201
    yield emu
    emu.stop()


def _exchange(emu: RunningEmulator, data: bytes) -> bytes:
    """Send the bytes, close our side, and read what comes back until the server closes."""
    with rawhttp.connect(emu.url, timeout=20) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            return rawhttp.read_until_closed(sock)
        except (BrokenPipeError, ConnectionResetError):
            return b""


def _check(answer: bytes, head: bool = False) -> None:
    """Every answer on the wire: a status below 500, and error bodies that are JSON (`head`: the first
    answers a HEAD, so it has no body whatever its content-length says)."""
    pending = bytearray(answer)
    while pending.startswith(b"HTTP/1.1 "):
        head, _, rest = bytes(pending).partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        lines = [line.split(b":", 1) for line in head.split(b"\r\n")[1:]]
        length = 0 if head else int(next((v for k, v in lines if k.strip().lower() == b"content-length"), b"0"))
        head = False
        body = rest[:length]
        assert status < 500, answer[:600]
        if status >= 400 and body:
            assert isinstance(orjson.loads(body), dict), body[:300]
        pending = bytearray(rest[length:])


def _still_serves(emu: RunningEmulator) -> None:
    status, _, body = rawhttp.request(emu.url, emu.key, "GET", "/")
    assert status == 200 and body["id"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=raw_request)
def test_raw_bytes_never_get_a_500(server: RunningEmulator, request: tuple) -> None:
    method, target, headers, body = request
    lines = [method + b" " + target + b" HTTP/1.1", *(name + b": " + value for name, value in headers)]
    _check(_exchange(server, b"\r\n".join(lines) + b"\r\n\r\n" + body), head=method == b"HEAD")
    _still_serves(server)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(request=signed_request)
def test_signed_requests_with_odd_headers_never_get_a_500(server: RunningEmulator, request: tuple) -> None:
    method, path, extra, body = request
    headers = rawhttp.signed_headers(server.key, method, path)
    headers.update({k: v.encode("utf-8").decode("latin-1") for k, v in extra.items() if k not in ("authorization",)})
    headers.pop("content-length", None)
    _check(_exchange(server, rawhttp.raw_bytes(method, path, headers, body)))
    _still_serves(server)
