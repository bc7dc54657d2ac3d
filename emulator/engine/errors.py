"""Service errors: status, substatus and the body texts the real service sends.

The SDK keys its retries on status + `x-ms-substatus` only (cosmos-errors-and-stats.md §0); codes and
messages follow the captured service texts of §1.4 so users see familiar errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from emulator.durability.datadir import JournalFull, reason

_VERSION = "Microsoft.Azure.Documents.Common/2.14.0"

_CODES = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Gone",
    412: "PreconditionFailed",
    413: "RequestEntityTooLarge",
    429: "429",  # the service really sends the digits here (§1.1)
    500: "InternalServerError",
    503: "ServiceUnavailable",
}


@dataclass
class CosmosError(Exception):
    """An error response; raised anywhere in the engine, turned into HTTP by the thin layer."""

    status: int
    message: str
    substatus: int = 0
    retry_after_ms: int | None = None
    additional_info: str | None = None  # the 400/1004 body's query plan
    request_charge: float = 0.0  # what the service charged for the failed request (set by metering)

    def __str__(self) -> str:
        return f"{self.status}/{self.substatus}: {self.message}"

    @property
    def code(self) -> str:
        return _CODES.get(self.status, str(self.status))

    def body(self, activity_id: str) -> dict[str, str]:
        """The JSON error body (layout C: text, then the activity id)."""
        body = {"code": self.code, "message": f"{self.message}\r\nActivityId: {activity_id}, {_VERSION}"}
        if self.additional_info is not None:
            body["additionalErrorInfo"] = self.additional_info
        return body


def _errors(text: str) -> str:
    """The backend's envelope, its list valid JSON as the service's is (a quote in the text escaped)."""
    return 'Message: {"Errors":[' + json.dumps(text, ensure_ascii=False) + "]}"


def bad_request(text: str, substatus: int = 0) -> CosmosError:
    return CosmosError(400, _errors(text), substatus)


def invalid_ttl(name: str, value: str) -> CosmosError:
    """A `ttl` or `defaultTtl` that is neither -1 nor a positive int32 (cosmos-wire-protocol.md W88: the
    service's text, captured for an item ttl of 0 and null and a container defaultTtl of 0)."""
    return bad_request(
        f"The input {name} '{value}' is invalid. Ensure to provide a nonzero positive integer less than or equal "
        "to '2147483647', or '-1' which means never expire."
    )


def method_not_allowed(method: str) -> CosmosError:
    return CosmosError(405, f"The HTTP method {method} is not allowed on this resource.")


def not_found(kind: str = "Resource") -> CosmosError:
    if kind == "Entity":
        return CosmosError(
            404,
            "Entity with the specified id does not exist in the system. More info: https://aka.ms/cosmosdb-tsg-not-found",
        )
    return CosmosError(404, _errors("Resource Not Found. Learn more: https://aka.ms/cosmosdb-tsg-not-found"))


def conflict() -> CosmosError:
    return CosmosError(409, "Entity with the specified id already exists in the system.")


def unique_violation() -> CosmosError:
    """A write whose unique key values another item of its logical partition holds (W53)."""
    return CosmosError(409, "Unique index constraint violation.")


def precondition_failed() -> CosmosError:
    return CosmosError(412, "Operation cannot be performed because one of the specified precondition is not met.")


def too_large() -> CosmosError:
    return CosmosError(413, _errors("Request size is too large"))


def partition_full(limit_gb: float) -> CosmosError:
    return CosmosError(403, _errors(f"Partition key reached maximum size of {limit_gb:g} GB"), 1014)


def throttled(retry_after_ms: int) -> CosmosError:
    text = (
        "Request rate is large. More Request Units may be needed, so no changes were made. "
        "Please retry this request later. Learn more: http://aka.ms/cosmosdb-error-429"
    )
    return CosmosError(429, _errors(text), 3200, retry_after_ms=retry_after_ms)


def range_gone() -> CosmosError:
    return CosmosError(410, _errors("The requested partition key range is gone (it was split)"), 1002)


def unauthorized(payload: str) -> CosmosError:
    text = (
        "The input authorization token can't serve the request. The wrong key is being used or the expected "
        "payload is not built as per the protocol. For more info: https://aka.ms/cosmosdb-tsg-mac-signature. "
        f"Server used the following payload to sign: '{payload}'"
    )
    return CosmosError(401, text)


def missing_auth() -> CosmosError:
    return CosmosError(401, "Required Header authorization is missing. Ensure a valid Authorization token is passed.")


def missing_date() -> CosmosError:
    """No `x-ms-date` nor `Date` (azure-cosmos-dotnet-v3 RMResources `MissingDateForAuthorization`)."""
    return CosmosError(401, "Authorization token mandates Date headers. Please pass in RFC 1123 style date format.")


def invalid_date() -> CosmosError:
    """An unreadable date (RMResources `InvalidDateHeader`)."""
    return CosmosError(401, "The input date header is invalid format. Please pass in RFC 1123 style date format.")


def token_time_range(start: str, expiry: str, now: str) -> CosmosError:
    """A signature dated outside its window (RMResources `InvalidTokenTimeRange`, 403 as captured in
    microsoft/vscode-cosmosdb#842)."""
    return CosmosError(
        403,
        "The authorization token is not valid at the current time. Please create another token and retry "
        f"(token start time: {start}, token expiry time: {expiry}, current server time: {now}).",
    )


def aad_refused(reason: str) -> CosmosError:
    """An Entra ID token the emulator does not take (the service's text for these is not captured)."""
    return CosmosError(401, f"The input authorization token can't serve the request. {reason}")


def storage_unavailable(exc: JournalFull) -> CosmosError:
    """The service's 503 for a write the data directory could not hold: substatus 0, the short gateway body
    (cosmos-errors-and-stats.md §1.1 and §1.4 "503"). Nothing was applied, so the SDK's one retry of a 503
    after 500 ms is safe."""
    text = (
        f"The ruscope emulator could not write its journal {exc.path}: {reason(exc.cause)}. "
        "The write was not applied; free some space and retry."
    )
    return CosmosError(503, text)
