"""Continuation tokens of the wrong shape are the service's 400: never a 500, never a page that
is silently empty or starts over; the tokens the emulator writes still page through everything."""

from __future__ import annotations

import json

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from emulator.rest.tokens import MALFORMED_CONTINUATION
from tests import rawhttp

BAD_TOKENS = [
    "not json",
    "[1, 2]",
    '"from"',
    "{}",
    '{"from": 5}',
    '{"from": "zz"}',
    '{"from": "FF"}',
    '{"from": "", "after": [1, 2]}',
    '{"from": "", "after": ["", "1", "2"]}',
    '{"from": "", "after": "x"}',
    '{"from": "", "extra": 1}',
    '[{"token": null, "range": {"min": "", "max": "FF"}}]',  # a query's token on a feed
    "x" * 20_000,
]
BAD_QUERY_TOKENS = [
    "not json",
    "{}",
    '{"token": null}',
    '{"token": null, "range": {"min": "", "max": "FF", "isMinInclusive": true}}',
    '{"token": "+RID:~a#RT:1#TRC:1#TRC:2", "range": {"min": "", "max": "FF"}}',
    '{"token": "+RID:~a#TRC:1#EPK:zz", "range": {"min": "", "max": "FF"}}',
    '{"token": "+RID:~a#TRC:1#EPK:", "range": {"min": "", "max": "FF"}}',  # not inside the range
    '{"token": "12345678901234", "range": {"min": "", "max": "FF"}}',
    '[{"token": null, "range": {"min": "", "max": "FF"}}',
    '{"min": null}',
    '{"offset": 3}',
    '{"min": 5, "offset": 0}',
    '{"min": "zz", "offset": 0}',
    '{"min": "FF", "offset": 0}',
    '{"min": null, "offset": -1}',
    '{"min": null, "offset": "3"}',
    '{"min": null, "offset": 2.5}',
    '{"min": null, "offset": true}',
    '{"min": null, "offset": 0}',  # the emulator's former query token
    '{"from": ""}',  # a feed's token on a query
]


@pytest.fixture
def docs_path(emulator) -> str:
    db = CosmosClient(emulator.url, credential=emulator.key).create_database("d")
    container = db.create_container("c", PartitionKey("/k"), offer_throughput=12_000)  # two ranges
    for i in range(10):
        container.create_item({"id": str(i), "k": f"k{i}"})
    return "/dbs/d/colls/c/docs"


@pytest.mark.parametrize("token", BAD_TOKENS)
def test_a_read_feed_token_of_the_wrong_shape_is_a_400(emulator, docs_path: str, token: str) -> None:
    status, _, body = rawhttp.request(
        emulator.url, emulator.key, "GET", docs_path, headers={"x-ms-continuation": token}
    )
    assert status == 400 and MALFORMED_CONTINUATION in body["message"], body


@pytest.mark.parametrize("token", BAD_QUERY_TOKENS)
def test_a_query_token_of_the_wrong_shape_is_a_400(emulator, docs_path: str, token: str) -> None:
    headers = {
        "x-ms-documentdb-isquery": "true",
        "content-type": "application/query+json",
        "x-ms-documentdb-partitionkeyrangeid": "0",
        "x-ms-continuation": token,
    }
    body = json.dumps({"query": "SELECT * FROM c"})
    status, _, answer = rawhttp.request(emulator.url, emulator.key, "POST", docs_path, body, headers)
    assert status == 400 and MALFORMED_CONTINUATION in answer["message"], answer


def test_the_tokens_the_emulator_writes_page_through_everything(emulator, docs_path: str) -> None:
    container = CosmosClient(emulator.url, credential=emulator.key).get_database_client("d").get_container_client("c")
    assert sorted(d["id"] for d in container.read_all_items(max_item_count=3)) == [str(i) for i in range(10)]
    rows = container.query_items("SELECT c.id FROM c", enable_cross_partition_query=True, max_item_count=3)
    assert sorted(r["id"] for r in rows) == [str(i) for i in range(10)]
