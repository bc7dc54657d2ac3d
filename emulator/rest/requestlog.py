"""`GET /_ruscope/requests`: the emulator's request log read from a position, for the tools that attribute
requests to what a client did in between (the pytest plugin per test, `ruscope check --from-emulator` per
run of any SDK's test suite). Not part of the Cosmos DB API: the service has no such resource.

Signed like any request with the master key (resource type `_ruscope`, link `_ruscope/requests`), so only
the key's holder reads what was queried. Headers: `x-ruscope-after` (a sequence number; -1 or absent: only
the last number is answered, to start from) and `x-ruscope-limit` (at most `MAX_LIMIT` records). The body:

    {"last": 1234, "dropped": false,
     "requests": [{"seq": 1200, "time": 1800000000.5, "operation": "Query", "request_charge": 2.93, ...}]}

`dropped` is true when records after `x-ruscope-after` left the log (its `--request-log-mb` cap) before this
read: the reader then knows its figures are incomplete rather than wrong.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from emulator.engine.accounting import RequestRecord
from emulator.engine.facade import Engine
from emulator.rest.request import Request
from emulator.rest.wire import Reply

PATH = ["_ruscope", "requests"]
MAX_LIMIT = 10_000


def record_json(seq: int, record: RequestRecord) -> dict[str, Any]:
    return {"seq": seq, **dataclasses.asdict(record)}


def requests_reply(engine: Engine, request: Request) -> Reply:
    after = request.int_header("x-ruscope-after", -1)
    limit = min(max(request.int_header("x-ruscope-limit", MAX_LIMIT), 0), MAX_LIMIT)
    if after < 0:
        _, last, _ = engine.accounting.after(0, 0)
        return Reply(200, {"last": last, "dropped": False, "requests": []})
    picked, last, dropped = engine.accounting.after(after, limit)
    return Reply(200, {"last": last, "dropped": dropped, "requests": [record_json(s, r) for s, r in picked]})
