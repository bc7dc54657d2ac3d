"""The transport refuses what would make the server hoard memory or connections, over raw sockets."""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable, Iterator

import orjson
import pytest

from emulator.engine.accounting import Accounting, RequestRecord
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from emulator.rest.transport import Registry, TransportLimits, descriptor_share
from tests import rawhttp


@pytest.fixture
def serve_with() -> Iterator[Callable[..., RunningEmulator]]:
    """Start emulators with custom transport limits; all are stopped at the end of the test."""
    running: list[RunningEmulator] = []

    def start(**limits: object) -> RunningEmulator:
        engine = open_engine(throttling=False)  # big reads back to back must not meet a 429
        emu = start_in_thread(engine, limits=TransportLimits(**limits))  # type: ignore[arg-type]
        running.append(emu)
        return emu

    yield start
    for emu in running:
        emu.stop()


def _answer(emu: RunningEmulator, data: bytes) -> tuple[int, dict[str, str], dict]:
    with rawhttp.connect(emu.url) as sock:
        sock.sendall(data)
        status, headers, body = rawhttp.read_response(sock)
    return status, headers, orjson.loads(body)


def _still_serves(emu: RunningEmulator) -> None:
    status, _, body = rawhttp.request(emu.url, emu.key, "GET", "/")
    assert status == 200 and body["id"]


def test_an_oversized_url_is_a_414_before_it_is_parsed_further(emulator) -> None:
    target = "/dbs/" + "a" * 40_000
    status, headers, body = _answer(emulator, rawhttp.raw_bytes("GET", target, {"host": "127.0.0.1"}))
    assert status == 414 and body["code"] == "RequestUriTooLong"
    assert headers["connection"] == "close"
    assert emulator.engine.accounting.records() == []  # refused before authentication or routing
    _still_serves(emulator)


@pytest.mark.parametrize("chunks", [1, 40], ids=["one-write", "trickled"])
def test_oversized_headers_are_a_431(emulator, chunks: int) -> None:
    data = rawhttp.raw_bytes("GET", "/", {"host": "127.0.0.1", "x-ms-activity-id": "a" * 400_000})
    with rawhttp.connect(emulator.url) as sock:
        step = len(data) // chunks + 1
        try:
            for i in range(0, len(data), step):
                sock.sendall(data[i : i + step])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole header was sent
        status, _, body = rawhttp.read_response(sock)
    assert status == 431 and orjson.loads(body)["code"] == "RequestHeaderFieldsTooLarge"
    _still_serves(emulator)


def test_a_long_activity_id_is_cut_to_a_guid(emulator) -> None:
    long_id = "0123456789abcdef-" * 1000
    status, headers, _ = rawhttp.request(emulator.url, emulator.key, "GET", "/", headers={"x-ms-activity-id": long_id})
    assert status == 200 and headers["x-ms-activity-id"] == long_id[:36]
    assert [r.activity_id for r in emulator.engine.accounting.records()] == [long_id[:36]]


def test_the_accounting_log_is_bounded_in_bytes_and_its_strings_capped() -> None:
    log = Accounting(max_records=1_000_000, max_bytes=100_000, max_field_chars=300)
    for i in range(1000):
        log.add(RequestRecord(i, "db", "c" * 5000, "Read", "docs", 200, 0, 1.0, "0", "", str(i), "", 0.1))
    kept = log.records()
    assert log.held_bytes <= 100_000 and 0 < len(kept) < 1000
    assert kept[-1].activity_id == "999" and {len(r.container) for r in kept} == {300}
    log.clear()
    assert log.held_bytes == 0 and log.records() == []


def test_a_half_sent_request_is_answered_408_and_closed(serve_with) -> None:
    emu = serve_with(request_timeout_s=0.3)
    with rawhttp.connect(emu.url) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-ms-version: 2020")
        answer = rawhttp.read_until_closed(sock)  # the socket's 10 s timeout fails the test if never closed
    assert answer.startswith(b"HTTP/1.1 408") and b'"RequestTimeout"' in answer
    _still_serves(emu)


def test_an_idle_keep_alive_connection_is_closed(serve_with) -> None:
    emu = serve_with(idle_timeout_s=0.3)
    headers = rawhttp.signed_headers(emu.key, "GET", "/")
    with rawhttp.connect(emu.url) as sock:
        sock.sendall(rawhttp.raw_bytes("GET", "/", headers))
        pending = bytearray()
        assert rawhttp.read_response(sock, pending)[0] == 200
        assert rawhttp.read_until_closed(sock) == b"" and not pending


def test_at_the_cap_an_idle_connection_makes_room_and_busy_ones_refuse_with_a_503(serve_with) -> None:
    emu = serve_with(max_connections=2)
    get = rawhttp.raw_bytes("GET", "/", rawhttp.signed_headers(emu.key, "GET", "/"))
    first, second = rawhttp.connect(emu.url), rawhttp.connect(emu.url)
    try:
        for sock in (first, second):  # answered: both are accepted, counted, and now idle
            sock.sendall(get)
            assert rawhttp.read_response(sock)[0] == 200
        with rawhttp.connect(emu.url) as third:  # the longest-idle one (first) is closed to make room
            third.sendall(get)
            assert rawhttp.read_response(third)[0] == 200
            assert rawhttp.read_until_closed(first) == b""
            second.sendall(get[:20])  # second and third now busy: half-sent requests
            third.sendall(get[:20])
            _wait_until(lambda: [c.receiving for c in emu.connection_stats()] == [True, True])
            with rawhttp.connect(emu.url) as fourth:
                answer = rawhttp.read_until_closed(fourth)
        assert answer.startswith(b"HTTP/1.1 503") and b"maximum of 2 busy connections" in answer
        assert b'"ServiceUnavailable"' in answer
    finally:
        first.close()
        second.close()
    _wait_until(lambda: len(emu.connection_stats()) <= 1)
    _still_serves(emu)  # the closed ones no longer count


def test_pipelined_reads_never_read_pause_the_connection(serve_with) -> None:
    high = 256 * 1024
    emu = serve_with(write_buffer_high=high, write_buffer_low=64 * 1024)
    item = {"id": "big", "pk": "p", "pad": "x" * 500_000}
    _create_container_and_item(emu, item)
    path = "/dbs/d/colls/c/docs/big"
    headers = {**rawhttp.signed_headers(emu.key, "GET", path), "x-ms-documentdb-partitionkey": '["p"]'}
    one = rawhttp.raw_bytes("GET", path, headers)
    count = 200  # 100 MB of answers if they were all rendered
    with rawhttp.connect(emu.url, rcvbuf=32 * 1024) as sock:
        sock.sendall(one * count)
        _wait_until(lambda: any(c.paused for c in emu.connection_stats()))
        [(buffered, paused, queued, _)] = emu.connection_stats()
        assert paused and queued > 0, "the server rendered every answer instead of waiting for the client"
        assert buffered < high + 2 * len(orjson.dumps(item)) + 64 * 1024
        pending = bytearray()
        statuses = [rawhttp.read_response(sock, pending)[0] for _ in range(count)]
    assert statuses == [200] * count  # nothing lost: reading resumed as the client drained


def test_a_host_the_emulator_does_not_serve_is_refused(serve_with) -> None:
    emu = serve_with(allowed_hosts=("cosmos.test",))
    port = emu.url.rsplit(":", 1)[1].strip("/")
    for host, expected in [
        ("evil.example", 400),
        (f"rebind.attacker.example:{port}", 400),
        (f"localhost:{port}", 200),
        (f"127.0.0.1:{port}", 200),
        (f"[::1]:{port}", 200),
        ("10.1.2.3", 200),
        ("cosmos.test", 200),
    ]:
        headers = {**rawhttp.signed_headers(emu.key, "GET", "/"), "host": host}
        status, _, body = _answer(emu, rawhttp.raw_bytes("GET", "/", headers))
        assert status == expected, host
        if expected == 400:
            assert body["code"] == "BadRequest" and "not served" in body["message"]


def _create_container_and_item(emu: RunningEmulator, item: dict) -> None:
    key = emu.key
    assert rawhttp.request(emu.url, key, "POST", "/dbs", orjson.dumps({"id": "d"}))[0] == 201
    container = {"id": "c", "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2}}
    assert rawhttp.request(emu.url, key, "POST", "/dbs/d/colls", orjson.dumps(container))[0] == 201
    headers = {"x-ms-documentdb-partitionkey": '["p"]', "content-type": "application/json"}
    assert rawhttp.request(emu.url, key, "POST", "/dbs/d/colls/c/docs", orjson.dumps(item), headers)[0] == 201


def _wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.02)


def test_the_connection_cap_leaves_file_descriptors_for_the_rest() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert Registry(TransportLimits(max_connections=10**9), frozenset()).cap == descriptor_share() <= max(1, soft // 4)
    assert Registry(TransportLimits(max_connections=3), frozenset()).cap == 3


def test_an_upgrade_request_is_answered_then_closed(emulator) -> None:
    headers = {**rawhttp.signed_headers(emulator.key, "GET", "/"), "connection": "Upgrade", "upgrade": "websocket"}
    with rawhttp.connect(emulator.url) as sock:
        sock.sendall(rawhttp.raw_bytes("GET", "/", headers))
        answer = rawhttp.read_until_closed(sock)  # no protocol switch: the GET answered, then the end
    assert answer.startswith(b"HTTP/1.1 200")
    _still_serves(emulator)


class _Unreadable:
    """An app whose request type cannot be built: a bug on the reading side."""

    class request_type:  # noqa: N801 - the attribute the server looks up
        def __init__(self, *args: object) -> None:
            raise ValueError("cannot build\nthis request")

    def handle(self, request: object) -> tuple[int, dict[str, str], bytes]:
        raise AssertionError("never reached")


def test_a_request_the_server_fails_to_read_is_a_500_json(emulator, caplog) -> None:
    running = start_in_thread(emulator.engine, app=_Unreadable())  # type: ignore[arg-type]
    try:
        with caplog.at_level(logging.ERROR, logger="ruscope.emulator"):
            status, headers, body = _answer(running, rawhttp.raw_bytes("GET", "/", {"host": "127.0.0.1"}))
    finally:
        running.stop()
    assert status == 500 and body["code"] == "InternalServerError" and headers["connection"] == "close"
    [logged] = [r for r in caplog.records if "could not read a request" in r.getMessage()]
    assert "ValueError: cannot build this request" in logged.getMessage() and logged.exc_info is None


def test_a_head_answer_has_no_body_so_the_next_answer_parses(emulator) -> None:
    with rawhttp.connect(emulator.url) as sock:
        for method in ("HEAD", "GET"):
            sock.sendall(rawhttp.raw_bytes(method, "/", rawhttp.signed_headers(emulator.key, method, "/")))
        head = sock.recv(65536)
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        first, _, rest = head.partition(b"\r\n\r\n")
        pending = bytearray(rest)
        status, _, body = rawhttp.read_response(sock, pending)
    assert first.startswith(b"HTTP/1.1 ") and b"content-length: " in first
    assert status == 200 and orjson.loads(body)["id"]
