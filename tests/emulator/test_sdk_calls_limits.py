"""The engine's service limits through the SDK and raw HTTP: a 400 in the service's words, never a 500."""

from __future__ import annotations

import logging

import pytest
from azure.cosmos import CosmosClient, PartitionKey, ThroughputProperties, exceptions

from emulator.rest.server import RunningEmulator
from tests import rawhttp


def _status(call) -> tuple[int, str]:
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:
        call()
    return caught.value.status_code, caught.value.message


def test_throughput_is_capped_at_a_million_ru_s(client: CosmosClient) -> None:
    db = client.create_database("a")
    status, message = _status(lambda: db.create_container("big", PartitionKey("/k"), offer_throughput=1_000_100))
    assert status == 400 and "between 400 and 1000000 inclusive in increments of 100" in message
    autoscale = ThroughputProperties(auto_scale_max_throughput=2_000_000)
    assert _status(lambda: db.create_container("auto", PartitionKey("/k"), offer_throughput=autoscale))[0] == 400
    assert _status(lambda: client.create_database("b", offer_throughput=5_000_000))[0] == 400
    c = db.create_container("c", PartitionKey("/k"), offer_throughput=400)
    assert _status(lambda: c.replace_throughput(1_000_000_000))[0] == 400
    assert c.get_throughput().offer_throughput == 400 and len(list(c.read_feed_ranges())) == 1
    assert [x["id"] for x in db.list_containers()] == ["c"]  # nothing was created by the refusals


def test_the_partition_key_value_is_at_most_2_kb(client: CosmosClient) -> None:
    c = client.create_database("a").create_container("c", PartitionKey("/k"))
    c.create_item({"id": "1", "k": "x" * 2048})
    status, message = _status(lambda: c.create_item({"id": "2", "k": "x" * 2049}))
    assert status == 400 and "at most 2048 bytes" in message
    assert _status(lambda: c.read_item("1", "é" * 1025))[0] == 400  # bytes, not characters
    assert c.read_item("1", "x" * 2048)["id"] == "1"


def _nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def test_documents_nested_past_128_levels_are_a_400(client: CosmosClient) -> None:
    c = client.create_database("a").create_container("c", PartitionKey("/k"))
    c.create_item({"id": "ok", "k": "x", "n": _nested(128)})  # 128 levels of embedded objects
    for levels in (129, 300):
        deep = {"id": "deep", "k": "x", "n": _nested(levels)}
        status, message = _status(lambda doc=deep: c.create_item(doc))
        assert status == 400 and "deeper than 128 levels" in message
    status, _ = _status(lambda: c.patch_item("ok", "x", [{"op": "set", "path": "/m", "value": _nested(200)}]))
    assert status == 400 and c.read_item("ok", "x")["id"] == "ok"


def test_a_container_replace_with_an_array_or_a_string_key_is_a_400(emulator: RunningEmulator) -> None:
    client = CosmosClient(emulator.url, credential=emulator.key)
    client.create_database("a").create_container("c", PartitionKey("/k"))
    for body in ("[]", '{"id": "c", "partitionKey": "/k"}'):
        status, _, answer = rawhttp.request(emulator.url, emulator.key, "PUT", "/dbs/a/colls/c", body=body)
        assert status == 400 and answer["code"] == "BadRequest", body


def test_an_internal_error_logs_one_line(emulator: RunningEmulator, caplog: pytest.LogCaptureFixture) -> None:
    def recurse(*args: object, **kwargs: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    emulator.engine.list_databases = recurse  # type: ignore[method-assign]  # stands in for a deep bug
    with caplog.at_level(logging.DEBUG, logger="ruscope.emulator"):
        status, _, answer = rawhttp.request(emulator.url, emulator.key, "GET", "/dbs")
    assert status == 500 and answer["code"] == "InternalServerError"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None and "\n" not in errors[0].getMessage()
    assert "RecursionError: maximum recursion depth exceeded" in errors[0].getMessage()
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)  # the traceback, at DEBUG
