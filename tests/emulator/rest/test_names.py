"""Any name and any id survive the wire: header values are rendered printable ASCII, names are
percent-encoded as the service encodes them, and no value can start a header of its own."""

from __future__ import annotations

import logging
from urllib.parse import quote

import orjson
import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.rest.request import Request
from emulator.rest.server import start_in_thread
from emulator.rest.transport import header_value, render
from tests import rawhttp


@pytest.mark.parametrize(("db_name", "coll_name"), [("数据", "容器😀"), ("sp ace%41", "c é")])
def test_names_in_any_script_work_end_to_end_through_the_sdk(emulator, db_name: str, coll_name: str) -> None:
    seen: list[dict[str, str]] = []
    client = CosmosClient(
        emulator.url, credential=emulator.key, raw_response_hook=lambda r: seen.append(r.http_response.headers)
    )
    container = client.create_database(db_name).create_container(coll_name, PartitionKey("/k"))
    container.create_item({"id": "项 é", "k": "键"})
    container.upsert_item({"id": "🙂", "k": "键"})
    assert container.read_item("项 é", "键")["id"] == "项 é"
    rows = list(container.query_items("SELECT * FROM c WHERE c.k = '键'", partition_key="键"))
    assert sorted(r["id"] for r in rows) == sorted(["项 é", "🙂"])
    paged = list(container.read_all_items(max_item_count=1))  # continuations carry ids across pages
    assert sorted(r["id"] for r in paged) == sorted(["项 é", "🙂"])
    expected = f"dbs/{quote(db_name, safe='')}/colls/{quote(coll_name, safe='')}"
    assert {h["x-ms-alt-content-path"] for h in seen if "x-ms-alt-content-path" in h} == {expected}
    assert len(emulator.engine.accounting.records()) > 0 and not [
        r for r in emulator.engine.accounting.records() if r.status == 409
    ]


def test_a_name_with_cr_lf_cannot_inject_a_header(emulator) -> None:
    name = "inj\r\nX-Injected: yes"
    url, key = emulator.url, emulator.key
    assert rawhttp.request(url, key, "POST", "/dbs", orjson.dumps({"id": name}))[0] == 201
    db_path = "/dbs/" + quote(name, safe="")
    container = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    assert rawhttp.request(url, key, "POST", db_path + "/colls", orjson.dumps(container))[0] == 201
    docs, pk = db_path + "/colls/c/docs", {"x-ms-documentdb-partitionkey": '["k"]'}
    for item_id in ("a\r\nX-Item: 1", "b\u2028\u0000"):
        status, headers, _ = rawhttp.request(url, key, "POST", docs, orjson.dumps({"id": item_id, "k": "k"}), pk)
        assert status == 201 and "x-injected" not in headers and "x-item" not in headers
        assert headers["x-ms-alt-content-path"] == "dbs/inj%0D%0AX-Injected%3A%20yes/colls/c"
    status, headers, body = rawhttp.request(url, key, "GET", docs, headers={**pk, "x-ms-max-item-count": "1"})
    token = headers["x-ms-continuation"]
    assert status == 200 and token.isascii() and token.isprintable()
    status, _, rest = rawhttp.request(url, key, "GET", docs, headers={**pk, "x-ms-continuation": token})
    assert status == 200 and {d["id"] for d in body["Documents"] + rest["Documents"]} == {
        "a\r\nX-Item: 1",
        "b\u2028\u0000",
    }


def test_header_values_are_printable_ascii() -> None:
    assert header_value("dbs/db1/colls/c1") == "dbs/db1/colls/c1"
    assert header_value("a\r\nb: c") == "a%0D%0Ab: c"
    assert header_value("数") == "%E6%95%B0"
    raw = render(200, {"x-a": "é\n", "x-b": "plain"}, b"{}", True)
    assert raw.count(b"\r\n") == 5 and b"x-a: %C3%A9%0A\r\n" in raw


class _Unrenderable:
    """An app whose answer cannot be rendered (a header that is not a string)."""

    def handle(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        return 200, {"x-count": 5}, b"{}"  # type: ignore[dict-item]


def test_a_response_that_fails_to_render_is_a_500_json_logged_once(emulator, caplog) -> None:
    running = start_in_thread(emulator.engine, app=_Unrenderable())
    try:
        with caplog.at_level(logging.ERROR, logger="ruscope.emulator"):
            status, headers, body = rawhttp.request(running.url, running.key, "GET", "/")
            again = rawhttp.request(running.url, running.key, "GET", "/")[0]
    finally:
        running.stop()
    assert status == 500 and body["code"] == "InternalServerError" and again == 500
    assert headers["content-type"] == "application/json"
    logged = [r for r in caplog.records if "could not answer GET /" in r.getMessage()]
    assert len(logged) == 2 and all(r.exc_info is None for r in logged)  # one line per request, no traceback
    assert "AttributeError" in logged[0].getMessage()
