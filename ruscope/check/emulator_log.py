"""Reading a running emulator's request log from a position (`GET /_ruscope/requests`,
`emulator.rest.requestlog`): what the pytest plugin attributes to each test and what
`ruscope check --from-emulator` turns into a report for a test run of any SDK.

Signed with the master key as every Cosmos DB request is (`emulator.rest.auth`), over plain HTTP or HTTPS
(`--tls`, with the emulator's CA via `ca`). A read pages until it has everything after the position.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
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
    def __init__(self, url: str, key: str = WELL_KNOWN_KEY, *, ca: Path | None = None, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/") + "/" + LINK
        self.key = key
        self.timeout_s = timeout_s
        self._context = ssl.create_default_context(cafile=str(ca)) if ca else None

    def _get(self, headers: dict[str, str]) -> dict[str, Any]:
        date = formatdate(usegmt=True)
        sig = signature(self.key, signing_payload("GET", RESOURCE_TYPE, LINK, date))
        auth = urllib.parse.quote(f"type=master&ver=1.0&sig={sig}", safe="")
        request = urllib.request.Request(self.url, headers={"x-ms-date": date, "authorization": auth, **headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s, context=self._context) as response:
                body: dict[str, Any] = json.loads(response.read())
                return body
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403):
                raise EmulatorLogError(f"{self.url}: the key was refused ({exc.code})") from None
            raise EmulatorLogError(f"{self.url}: answered {exc.code}; is it a ruscope emulator?") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EmulatorLogError(f"{self.url}: cannot read the request log ({reason})") from None

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
