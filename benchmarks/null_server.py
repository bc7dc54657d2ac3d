"""A null Cosmos DB endpoint: canned valid responses, no work. The SDK's own floor for benchmarks.

Answers the account read, container read, point read, upsert and a query (one canned page holding the
item) with fixed bodies, on a raw asyncio protocol that writes each response in one piece
(cosmos-wire-protocol.md, performance note).
Run: python benchmarks/null_server.py PORT
"""

from __future__ import annotations

import asyncio
import json
import sys

ITEM = {"id": "item", "pk": "p", "payload": "x" * 900, "_rid": "AAAAAAAAAAAAAAAAAAAAAA==", "_etag": '"e"', "_ts": 1}
CONTAINER = {
    "id": "bench",
    "_rid": "QmTNC0NkzQs=",
    "_self": "dbs/QWTNCw==/colls/QmTNC0NkzQs=/",
    "partitionKey": {"paths": ["/pk"], "kind": "Hash", "version": 2},
}
QUERY_PAGE = {"_rid": CONTAINER["_rid"], "Documents": [ITEM], "_count": 1}


def _account(port: int) -> dict:
    loc = [{"name": "local", "databaseAccountEndpoint": f"http://127.0.0.1:{port}/"}]
    return {
        "id": "null",
        "writableLocations": loc,
        "readableLocations": loc,
        "userConsistencyPolicy": {"defaultConsistencyLevel": "Eventual"},
    }


def _response(status: int, body: dict, extra: str = "") -> bytes:
    payload = json.dumps(body).encode()
    head = (
        f"HTTP/1.1 {status} OK\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n"
        f"{extra}x-ms-request-charge: 1.00\r\nx-ms-documentdb-partitionkeyrangeid: 0\r\n"
        "x-ms-activity-id: 00000000-0000-0000-0000-000000000000\r\n\r\n"
    )
    return head.encode() + payload


class NullProtocol(asyncio.Protocol):
    def __init__(self, responses: dict[str, bytes]) -> None:
        self.responses = responses
        self.buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if len(rest) < length:
                return
            self.buffer = rest[length:]
            method, path = head.split(b" ", 2)[:2]
            query = b"\r\nx-ms-documentdb-isquery: true" in head.lower()
            self.transport.write(self._answer(method.decode(), path.decode(), query))  # type: ignore[attr-defined]

    def _answer(self, method: str, path: str, query: bool = False) -> bytes:
        segments = [s for s in path.split("?")[0].split("/") if s]
        if not segments:
            return self.responses["account"]
        if len(segments) == 4:
            return self.responses["container"]
        if method == "POST":
            return self.responses["query" if query else "created"]
        return self.responses["item"]


async def main(port: int) -> None:
    responses = {
        "account": _response(200, _account(port)),
        "container": _response(200, CONTAINER),
        "item": _response(200, ITEM),
        "created": _response(201, ITEM),
        "query": _response(200, QUERY_PAGE, "x-ms-item-count: 1\r\n"),
    }
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: NullProtocol(responses), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
