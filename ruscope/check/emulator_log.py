"""Reading a running emulator's request log from a position (`GET /_ruscope/requests`,
`emulator.rest.requestlog`): what the pytest plugin attributes to each test and what
`ruscope check --from-emulator` turns into a report for a test run of any SDK.

Signed with the master key as every Cosmos DB request is (`emulator.rest.auth`), over plain HTTP or HTTPS
(`--tls`, with the emulator's CA via `ca`). A read pages until it has everything after the position.
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.parse
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Any

from emulator.rest.auth import WELL_KNOWN_KEY, signature, signing_payload

RESOURCE_TYPE, LINK = "_ruscope", "_ruscope/requests"  # emulator.rest.requestlog.PATH, signed as its auth does
_EMPTY: dict[str, object] = {
    "seq": 0,
    "time": 0.0,
    "status": 0,
    "substatus": 0,
    "request_charge": 0.0,
    "pkrange_count": 0,
}
PAGE = 10_000  # records asked for per read (the emulator answers at most its MAX_LIMIT)


class EmulatorLogError(Exception):
    """The emulator cannot be read (down, not a ruscope emulator, a wrong key): the message says which."""


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the emulator metered it (emulator.engine.accounting.RequestRecord)."""

    seq: int
    time: float
    database: str
    container: str
    operation: str
    resource_type: str
    status: int
    substatus: int
    request_charge: float
    pkrange_id: str
    pkrange_count: int
    partition_key: str
    activity_id: str
    correlated_activity_id: str
    query_text: str
    user_agent: str
    tag: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> LoggedRequest:
        """From the log's JSON; a field an older emulator does not send is empty (0 for numbers)."""
        return cls(**{name: row.get(name, _EMPTY.get(name, "")) for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class LogRead:
    requests: list[LoggedRequest]
    last: int
    dropped: bool  # some requests after the position left the log (its size cap) before this read


class EmulatorLog:
    """A client of one emulator's request log, on one kept-alive connection (the pytest plugin reads it
    twice per test: a new connection each time would be most of its cost)."""

    def __init__(self, url: str, key: str | None = None, *, ca: Path | None = None, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/") + "/" + LINK
        self.key = key or WELL_KNOWN_KEY  # none given: the emulator's public well-known key
        self.timeout_s = timeout_s
        self._parts = urllib.parse.urlsplit(self.url)
        self._context = ssl.create_default_context(cafile=str(ca)) if ca else None
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        host, port = self._parts.hostname or "127.0.0.1", self._parts.port
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=self.timeout_s, context=self._context)
        return http.client.HTTPConnection(host, port, timeout=self.timeout_s)

    def _get(self, headers: dict[str, str]) -> dict[str, Any]:
        date = formatdate(usegmt=True)
        sig = signature(self.key, signing_payload("GET", RESOURCE_TYPE, LINK, date))
        auth = urllib.parse.quote(f"type=master&ver=1.0&sig={sig}", safe="")
        sent = {"x-ms-date": date, "authorization": auth, **headers}
        try:
            status, raw = self._exchange(sent)
        except (OSError, http.client.HTTPException) as exc:
            raise EmulatorLogError(f"{self.url}: cannot read the request log ({exc})") from None
        if status in (401, 403):
            raise EmulatorLogError(f"{self.url}: the key was refused ({status})")
        if status != 200:
            raise EmulatorLogError(f"{self.url}: answered {status}; is it a ruscope emulator?")
        try:
            body: dict[str, Any] = json.loads(raw)
        except ValueError:
            raise EmulatorLogError(f"{self.url}: its answer is not JSON; is it a ruscope emulator?") from None
        return body

    def _exchange(self, headers: dict[str, str]) -> tuple[int, bytes]:
        """One GET on the kept connection; a connection the server closed meanwhile is opened again once."""
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = self._connect()
            try:
                self._connection.request("GET", self._parts.path, headers=headers)
                response = self._connection.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def last(self) -> int:
        """The position now: requests after it are the ones still to come."""
        return int(self._get({})["last"])

    def since(self, position: int) -> LogRead:
        """Every request after `position`, paging `PAGE` at a time."""
        found: list[LoggedRequest] = []
        dropped, last = False, position
        while True:
            body = self._get({"x-ruscope-after": str(position), "x-ruscope-limit": str(PAGE)})
            rows = body["requests"]
            found += [LoggedRequest.of(row) for row in rows]
            dropped = dropped or bool(body["dropped"])
            last = int(body["last"])
            if not rows or found[-1].seq >= last:
                return LogRead(found, last, dropped)
            position = found[-1].seq
