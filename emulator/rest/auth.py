"""Request authentication, checked as the service checks it (cosmos-wire-protocol.md §4).

The SDK signs `verb\\nresourceType\\nresourceLink\\nx-ms-date\\n\\n` with HMAC-SHA256 of the base64 key.
The signed date must be current: the token runs from `x-ms-date` (or `Date`) for 15 minutes, with 5
minutes of clock skew either side, else 403 (the service's `AuthorizationHelper.ValidateInputRequestTime`
and `CheckTimeRangeIsCurrent` in azure-cosmos-dotnet-v3; captured texts in microsoft/vscode-cosmosdb#842,
#1425). Entra ID tokens (`type=aad&ver=1.0&sig=<JWT>`) are accepted well-formed, as the official
emulator does locally, when the app is asked to.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from urllib.parse import unquote

from emulator.engine import errors

WELL_KNOWN_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@dataclass(frozen=True)
class AuthSettings:
    """How requests are authenticated; see the module docstring for the sources of the numbers."""

    token_lifetime_s: int = 900  # a master-key token expires 15 min after its date
    clock_skew_s: int = 300  # "allow [start-5, end+5]" minutes
    accept_aad: bool | None = None  # Entra ID tokens: True, False, or None = over HTTPS only


def resource_of(path: str) -> tuple[str, str]:
    """(resourceType, resourceLink) the signature covers, derived from the URL path."""
    segments = [unquote(s) for s in path.strip("/").split("/") if s]
    if not segments:
        return "", ""
    if segments[-2:] == ["operations", "partitionkeydelete"]:
        # signed as the container (azure-cosmos `_base._internal_resourcetype` turns partitionkey into colls)
        segments = segments[:-2]
    if len(segments) % 2:  # a feed: the type is the last segment, the link its parent
        resource_type, link = segments[-1], "/".join(segments[:-1])
    else:
        resource_type, link = segments[-2], "/".join(segments)
    if is_rid_link(segments):  # signed with the target's rid, lower-cased (the SDK's rule)
        link = (segments[-1] if len(segments) % 2 == 0 else segments[-2]).lower()
    if segments[0] == "offers":  # offers are addressed by RID, signed as the bare RID lower-cased
        link = segments[1].lower() if len(segments) == 2 else ""
    return resource_type, link


def is_rid_link(segments: Sequence[str]) -> bool:
    """The SDK's rule (`_base.IsNameBased`): `dbs/<8 characters of base64 for 4 bytes>` is a rid link."""
    if len(segments) < 2 or segments[0] != "dbs" or len(segments[1]) != 8:
        return False
    try:
        return len(base64.standard_b64decode(segments[1].replace("-", "/"))) == 4
    except (binascii.Error, ValueError):
        return False


def signing_payload(verb: str, resource_type: str, link: str, date: str, http_date: str = "") -> str:
    """The signed text: `Date` takes the fifth line only when there is no `x-ms-date`."""
    fallback = "" if date else http_date.lower()
    return f"{verb.lower()}\n{resource_type.lower()}\n{link}\n{date.lower()}\n{fallback}\n"


def check_time(date: str, now: float, settings: AuthSettings) -> None:
    """Refuse a signature whose date is missing (401), unreadable (401) or not current (403)."""
    if not date.strip():
        raise errors.missing_date()
    try:
        start = parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        raise errors.invalid_date() from None
    end = start + settings.token_lifetime_s
    if start - settings.clock_skew_s > now or end + settings.clock_skew_s < now:
        raise errors.token_time_range(_rfc1123(start), _rfc1123(end), _rfc1123(now))


def _rfc1123(epoch: float) -> str:
    return formatdate(epoch, usegmt=True)


def is_aad(authorization: str) -> bool:
    """Whether `authorization` is an Entra ID token (`type=aad`), well-formed or not."""
    return fields(authorization).get("type") == "aad"


def well_formed_jwt(authorization: str) -> bool:
    """An Entra ID token whose `sig` is a JWT: three base64url parts, the first a JSON header with `alg`."""
    parts = fields(authorization).get("sig", "").split(".")
    if len(parts) != 3 or not all(parts[:2]):
        return False
    try:
        header = json.loads(base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)))
    except (ValueError, binascii.Error):
        return False
    return isinstance(header, dict) and "alg" in header


def is_resource_token(authorization: str) -> bool:
    """Whether `authorization` is a resource token (`type=resource`, `emulator.rest.resource_tokens`)."""
    return fields(authorization).get("type") == "resource"


def fields(authorization: str) -> dict[str, str]:
    """The `type`, `ver` and `sig` of an authorization header, URL-decoded (the SDK quotes it)."""
    return dict(part.split("=", 1) for part in unquote(authorization).split("&") if "=" in part)


def signature(key: str, payload: str) -> str:
    digest = hmac.new(base64.b64decode(key), payload.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify(key_bytes: bytes, authorization: str, payload: str) -> bool:
    """Whether the `authorization` header carries a master-key signature of `payload`."""
    parts = fields(authorization)
    if parts.get("type") != "master" or "sig" not in parts:
        return False
    expected = base64.b64encode(hmac.digest(key_bytes, payload.encode("utf-8"), "sha256")).decode()
    return hmac.compare_digest(expected, parts["sig"])
