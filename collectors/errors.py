"""One line per failure, for users: what went wrong with a Cosmos DB or Azure call, never a stack trace
and never a key. Collectors record the line in their error rows and print it; the CLI never shows more."""

from __future__ import annotations

import binascii
import json
from typing import Any

from azure.core.exceptions import AzureError, ClientAuthenticationError, ServiceRequestError
from azure.cosmos.exceptions import CosmosHttpResponseError

from collectors.credentials import MissingKey


class Fatal(Exception):
    """A fault no other query of the account would escape (the credential, the role, the endpoint): its
    one line ends the account's run."""


def auth_failure(exc: BaseException) -> tuple[str, str] | None:
    """("401 unauthorized" | "403 forbidden" | "no credential", detail) when an Azure Monitor call failed
    on its identity, the detail (" (why)") only for a credential that gave no token; None otherwise. The
    callers name the role that is missing."""
    status = getattr(exc, "status_code", None)
    if status in (401, 403):
        return f"{status} {'unauthorized' if status == 401 else 'forbidden'}", ""
    for cause in _chain(exc):  # a client may wrap the credential's error in its own HttpResponseError
        if isinstance(cause, ClientAuthenticationError):
            return "no credential", f" ({str(cause).splitlines()[0] if str(cause) else type(cause).__name__})"
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and the ones it was raised from or during, innermost last (no cycles)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _json_in(text: str, marker: str) -> Any:
    """The JSON value that starts at `marker` in `text`, or None."""
    start = text.find(marker)
    if start < 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError:
        return None


def _first_error(found: dict[str, Any]) -> str | None:
    """The first entry of a service `{"errors": [...]}` list: code, message and location of a SQL error."""
    first = (found.get("errors") or found.get("Errors") or [""])[0]
    if isinstance(first, str):
        return first
    if not isinstance(first, dict):
        return None
    where = first.get("location")
    at = f" (at {where['start']}-{where['end']})" if isinstance(where, dict) else ""
    return f"{first.get('code', '')} {first.get('message', '')}{at}".strip()


def service_message(exc: CosmosHttpResponseError) -> str:
    """The useful part of a service error body: the SQL error with its location, or the message's first line."""
    text = str(exc.message or exc)
    body = _json_in(text, '{"code"')
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        text = body["message"]
    for marker in ('{"errors":', '{"Errors":'):
        found = _json_in(text, marker)
        if isinstance(found, dict) and (line := _first_error(found)) is not None:
            return line
    return text.removeprefix("Message: ").splitlines()[0].strip() if text else ""


def describe_error(exc: BaseException, endpoint: str, *, key_env: str | None = "COSMOS_KEY") -> str:
    """One line naming the cause; never a stack trace, never a key. `key_env` names the variable the key
    came from (None: a token credential), so the line says what to check."""
    if isinstance(exc, CosmosHttpResponseError):
        status = exc.status_code or 0
        if status == 401:
            check = f"{key_env} or the identity's access" if key_env else "the identity's access"
            return f"401 unauthorized: the credential was rejected (check {check})"
        if status == 403:
            return f"403 forbidden: {service_message(exc)}"
        if status == 429:
            return "429 throttled: still throttled after the SDK's retries (raise RU/s or slow the replay)"
        return f"{status} {service_message(exc)}"
    if isinstance(exc, MissingKey):
        return str(exc)
    if isinstance(exc, binascii.Error):
        return f"{key_env or 'the key'} is not a valid account key (it must be the base64 key from the portal)"
    if isinstance(exc, ServiceRequestError) and "Bearer token authentication is not permitted" in str(exc):
        return no_key_line(endpoint, key_env)
    if isinstance(exc, ServiceRequestError):
        return f"cannot reach {endpoint}: {str(exc).splitlines()[0]}"
    if isinstance(exc, AzureError):
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return f"{type(exc).__name__}: {exc}"


def no_key_line(endpoint: str, key_env: str | None) -> str:
    """An http:// endpoint (the emulator) with no key set: the SDK would try an Entra ID token, which it
    sends only over https; say which variable to set instead."""
    where = f"set {key_env}" if key_env else "give the account a key_env and set that variable"
    return (
        f"no key for {endpoint}: {where} (an http:// endpoint such as the emulator takes an account key, "
        "not a token; `ruscope emulator` prints its key)"
    )
