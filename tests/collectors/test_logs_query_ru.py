"""`query_ru` end to end: an application's queries and ruscope's own, through the real azure-cosmos SDK over
HTTP, then `ruscope logs` through the real `LogsQueryClient` over HTTPS against the stand-in; the stored
`log_query_ru` rows against what the SDKs themselves saw (ids, charges, statuses of their responses).

The application's client retries its 429s; a retry resends the operation's ActivityId (azure-monitor.md §7b
R46), so a throttled query is two requests of one id, both counted, both charged (R47, R71). ruscope's
client (`collectors.client.fetch_client`, user agent `ruscope/<version>`, R70) runs another text: its rows
are flagged `own_traffic` and kept out of the workload's ranking."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from azure.cosmos import CosmosClient, PartitionKey

from analysis.queries.logged import own_traffic, workload_queries
from collectors.client import fetch_client
from collectors.config import ConnectionSettings
from cosmoscore.monitor.logs import AZURE_DIAGNOSTICS, MODES
from emulator.engine.facade import Engine
from emulator.monitor.app import MonitorApp
from emulator.monitor.tls import ensure_certificates
from emulator.rest.server import start_in_thread
from store import read_table, store_location
from tests.collectors.test_logs_standin import StandIn, collect, config, token  # noqa: F401 (autouse: a token)
from tests.conftest import ManualClock
from tests.emulator.engine.test_throttling import SMALL, _keys_on_two_ranges
from tests.emulator.history.test_history import START

APP_QUERY = "SELECT * FROM c WHERE c.k = @k"
OWN_QUERY = "SELECT c.id FROM c"  # an aggregate would reach the partitions rewritten by the query plan


@dataclass
class Seen:
    """Per text: each response the SDK saw (activity id, charge, status)."""

    responses: dict[str, list[tuple[str, float, int]]] = field(default_factory=lambda: defaultdict(list))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[StandIn, Seen]]:
    certs = ensure_certificates(tmp_path_factory.mktemp("query-ru-tls"))
    clock = ManualClock(START)
    engine = Engine(limits=SMALL, clock=clock)
    cosmos = start_in_thread(engine)
    app = MonitorApp(engine)
    monitor = start_in_thread(engine, app=app, tls=certs.server_context())
    seen = Seen()
    text = {"value": APP_QUERY}

    def watch(response: Any) -> None:  # what the SDK saw; a 429's retry lands in the next second
        request, http = response.http_request, response.http_response
        if (
            request.method == "POST"
            and request.url.rstrip("/").endswith("/docs")
            and "x-ms-documentdb-isquery" in request.headers
        ):
            headers = http.headers
            seen.responses[text["value"]].append(
                (headers["x-ms-activity-id"], float(headers["x-ms-request-charge"]), http.status_code)
            )
        if http.status_code == 429:
            clock.advance(1.0)

    app_client = CosmosClient(cosmos.url, credential=cosmos.key, raw_response_hook=watch)
    c = app_client.create_database("t").create_container("c", PartitionKey("/k"), offer_throughput=400)
    hot, _ = _keys_on_two_ranges(engine)
    for i in range(5):
        c.create_item({"id": str(i), "k": hot})
    for _ in range(400):  # until the SDK has retried a throttled query (the clock moves only on a 429)
        list(c.query_items(APP_QUERY, parameters=[{"name": "@k", "value": hot}], partition_key=hot))
        if any(status == 429 for _, _, status in seen.responses[APP_QUERY]):
            break
    assert any(status == 429 for _, _, status in seen.responses[APP_QUERY])
    clock.advance(1.0)
    text["value"] = OWN_QUERY  # ruscope's own client, as every collector makes it
    own = fetch_client(ConnectionSettings(endpoint=cosmos.url), cosmos.key, on_response=watch)
    mine = own.get_database_client("t").get_container_client("c")
    for _ in range(3):
        list(mine.query_items(OWN_QUERY, enable_cross_partition_query=True))
    clock.advance(120)  # the last minute is complete
    stand_in = StandIn(monitor, app, engine, clock, certs, hot)
    yield stand_in, seen
    monitor.stop()
    cosmos.stop()


def _expected(seen: Seen, text: str) -> tuple[float, int, int]:
    """RU, requests and 429s of the query operations of `text` that ran at least once: every attempt of
    each id whose final answer was a 200 (a retry resends the id, R46)."""
    ran = {aid for aid, _, status in seen.responses[text] if status == 200}
    attempts = [(charge, status) for aid, charge, status in seen.responses[text] if aid in ran]
    return sum(c for c, _ in attempts), len(attempts), sum(1 for _, s in attempts if s == 429)


@pytest.mark.parametrize("mode", MODES)
def test_query_ru_charges_each_text_with_every_attempt_and_keeps_ruscope_apart(
    served: tuple[StandIn, Seen], tmp_path: Path, mode: str
) -> None:
    stand_in, seen = served
    code, out, err = collect(stand_in, tmp_path, config(stand_in, logs_mode=mode))
    assert (code, err) == (0, []), err
    assert any("logs query_ru: " in line for line in out), out
    frame = read_table(store_location(tmp_path), "log_query_ru")
    assert set(frame["query_text"]) >= {APP_QUERY, OWN_QUERY} and not frame["partial"].any()
    assert set(frame.loc[frame["own_traffic"], "query_text"]) == {OWN_QUERY}

    workload = workload_queries(frame)
    (row,) = workload[workload["query_text"] == APP_QUERY].to_dict("records")
    ru, requests, throttled = _expected(seen, APP_QUERY)
    assert (row["requests"], row["throttled"]) == (requests, throttled) and throttled >= 1
    assert row["request_charge"] == pytest.approx(ru)  # the 429 attempts' charge counted too
    assert row["pkranges"] == 1 and row["share_pct"] == pytest.approx(100.0)  # ruscope's own left out

    (mine,) = own_traffic(frame).to_dict("records")
    own_ru, own_requests, _ = _expected(seen, OWN_QUERY)
    assert (mine["requests"], mine["request_charge"]) == (own_requests, pytest.approx(own_ru))
    assert own_requests >= 3 * 2  # a cross-partition query: a request per partition, each its own id
    if mode == AZURE_DIAGNOSTICS:
        assert frame["request_charge"].sum() == pytest.approx(ru + own_ru)
