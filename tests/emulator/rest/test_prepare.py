"""Work an app names in `prepare` runs off the event loop (measured: parsing a 400 KB IN list or OR chain
held the one serving thread 0.3-0.5 s), so other connections are answered meanwhile, and the request is
answered after it, in its connection's order. Large queries go that way through the real SDK with the
same answers and the same errors."""

from __future__ import annotations

import threading

import pytest
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError

from emulator.rest.app import PREPARE_BYTES, CosmosApp
from emulator.rest.request import Request
from emulator.rest.server import open_engine, start_in_thread
from tests import rawhttp


class GatedApp:
    """Preparing /slow waits until /fast has been answered: only an off-loop preparation lets that happen."""

    def __init__(self) -> None:
        self.fast_answered = threading.Event()
        self.events: list[str] = []

    def prepare(self, request: Request):
        if request.path != "/slow":
            return None

        def work() -> None:
            self.events.append("slow preparing")
            answered = self.fast_answered.wait(timeout=10)
            self.events.append("slow prepared" if answered else "slow prepared, fast never answered")

        return work

    def handle(self, request: Request):
        self.events.append(f"{request.path} answered")
        if request.path == "/fast":
            self.fast_answered.set()
        return 200, {"content-type": "application/json"}, b"{}"


def test_other_connections_are_answered_while_a_request_is_prepared() -> None:
    app = GatedApp()
    emu = start_in_thread(open_engine(), app=app)
    try:
        with rawhttp.connect(emu.url) as slow, rawhttp.connect(emu.url) as fast:
            slow.sendall(rawhttp.raw_bytes("GET", "/slow", {"Host": "127.0.0.1"}) * 2)  # two, pipelined
            for _ in range(500):
                if "slow preparing" in app.events:
                    break
                threading.Event().wait(0.01)
            fast.sendall(rawhttp.raw_bytes("GET", "/fast", {"Host": "127.0.0.1"}))
            assert rawhttp.read_response(fast)[0] == 200
            pending = bytearray()
            assert rawhttp.read_response(slow, pending)[0] == 200
            assert rawhttp.read_response(slow, pending)[0] == 200
    finally:
        emu.stop()
    assert app.events[:4] == ["slow preparing", "/fast answered", "slow prepared", "/slow answered"]
    assert app.events.count("/slow answered") == 2  # the pipelined one waited behind it, in order


def test_a_preparation_that_fails_leaves_the_answer_to_the_request() -> None:
    class Failing(GatedApp):
        def prepare(self, request: Request):
            def work() -> None:
                raise RuntimeError("boom")

            return work

    emu = start_in_thread(open_engine(), app=Failing())
    try:
        with rawhttp.connect(emu.url) as sock:
            sock.sendall(rawhttp.raw_bytes("GET", "/x", {"Host": "127.0.0.1"}))
            assert rawhttp.read_response(sock)[0] == 200
    finally:
        emu.stop()


@pytest.fixture
def large_queries(emulator):
    client = CosmosClient(emulator.url, credential=emulator.key)
    coll = client.create_database("d").create_container("c", PartitionKey("/pk"))
    for i in range(40):
        coll.create_item({"id": f"i{i}", "pk": f"p{i % 4}", "n": i})
    return coll


def test_a_large_query_is_prepared_and_answered_as_before(large_queries) -> None:
    in_list = "SELECT VALUE c.n FROM c WHERE c.n IN (" + ",".join(str(i * 3) for i in range(4_000)) + ")"
    or_chain = "SELECT VALUE c.n FROM c WHERE " + " OR ".join(f"c.n = {i * 5}" for i in range(2_000))
    for sql, step in ((in_list, 3), (or_chain, 5)):
        assert len(sql) > PREPARE_BYTES
        rows = list(large_queries.query_items(sql, enable_cross_partition_query=True))
        assert sorted(rows) == list(range(0, 40, step))


def test_a_large_malformed_query_gets_the_services_400(large_queries) -> None:
    sql = "SELECT VALUE c.n FROM c WHERE c.n IN (" + ",".join(str(i) for i in range(4_000)) + ") AND"
    with pytest.raises(CosmosHttpResponseError) as caught:
        list(large_queries.query_items(sql, enable_cross_partition_query=True))
    assert caught.value.status_code == 400
    assert "Syntax error" in str(caught.value.message)


def test_only_large_query_posts_are_prepared() -> None:
    app = CosmosApp(open_engine())
    body = b'{"query": "SELECT * FROM c WHERE c.id IN (' + b",".join(b"%d" % i for i in range(5_000)) + b')"}'
    query_headers = {b"x-ms-documentdb-isquery": b"True", b"content-type": b"application/query+json"}
    path = "/dbs/d/colls/c/docs"
    assert app.prepare(Request("POST", path, query_headers, body)) is not None
    assert app.prepare(Request("POST", path, query_headers, b'{"query": "SELECT * FROM c"}')) is None
    assert app.prepare(Request("POST", path, {b"content-type": b"application/json"}, body)) is None  # a create
    assert app.prepare(Request("GET", path, query_headers, body)) is None
