"""Resource tokens: what a permission read answers as `_token`, and how a request carrying one is checked.

The format is the service's outer shape, `type=resource&ver=1&sig=<base64>;<base64>;`
(cosmos-wire-protocol.md W40), which azure-cosmos passes through unchanged: the first part is the token's
claims (the permission's rid, mode, container rid, partition key, and the issue and expiry times) as
base64url JSON, the second an HMAC-SHA256 of them with the account's master key. So the emulator verifies a
token with nothing but its key: no table of issued tokens has to survive a restart, and tokens issued
before one still work after it. What a token may do is then decided by the permission as it is now
(`Engine.users.grant`): a deleted permission (or user) grants nothing, and a token whose permission was replaced
with another mode, container or partition is refused, so replacing a permission revokes its old tokens.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any

import orjson

from emulator.engine import errors
from emulator.engine.results import Grant

DEFAULT_LIFETIME_S = 3600  # one hour unless x-ms-documentdb-expiry-seconds says otherwise (W41)
MIN_LIFETIME_S = 10  # the documented range: 10 seconds to 5 hours (W41)
MAX_LIFETIME_S = 18000
_DOMAIN = b"ruscope resource token v1\n"  # a token's MAC can never be mistaken for a request signature's

INSUFFICIENT = (  # the service's text for a resource token used beyond its grant (W42)
    "Insufficient permissions provided in the authorization header for the corresponding request. "
    "Please retry with another authorization header."
)


@dataclass(frozen=True)
class Claims:
    """What a token says about itself, once its MAC verifies."""

    permission_rid: str
    mode: str
    coll_rid: str
    key: list[Any] | None
    issued: float
    expiry: float


def lifetime(header: str | None) -> int:
    """The validity asked for by `x-ms-documentdb-expiry-seconds` (seconds), or the default; 400 outside
    10 s .. 5 h, in the service's words (W41)."""
    if header is None:
        return DEFAULT_LIFETIME_S
    try:
        seconds = int(header)
    except ValueError:
        seconds = -1
    if seconds > MAX_LIFETIME_S:
        raise errors.bad_request(
            f"Value '{header}' specified for the header 'x-ms-documentdb-expiry-seconds' is invalid."
        )
    if seconds < MIN_LIFETIME_S:
        raise errors.bad_request("One of the specified inputs is invalid")
    return seconds


def mint(key_bytes: bytes, grant: Grant, now: float, seconds: int) -> str:
    """A token for what `grant` allows, valid from `now` for `seconds`."""
    claims = {
        "p": grant.permission_rid,
        "m": grant.mode,
        "c": grant.coll_rid,
        "k": grant.key,
        "i": int(now),
        "x": int(now) + seconds,
    }
    body = _b64(orjson.dumps(claims))
    return f"type=resource&ver=1&sig={body};{_b64(_mac(key_bytes, body))};"


def read(key_bytes: bytes, fields: dict[str, str]) -> Claims:
    """The claims of a resource token's fields (`type`, `ver`, `sig`); 401 when it is not one this
    emulator's key signed."""
    parts = fields.get("sig", "").split(";")
    if fields.get("ver") != "1" or len(parts) < 2 or not parts[0]:
        raise _refused("The resource token is malformed.")
    body, mac = parts[0], parts[1]
    try:
        valid = hmac.compare_digest(_unb64(mac), _mac(key_bytes, body))
        claims = orjson.loads(_unb64(body)) if valid else None
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        valid, claims = False, None
    if not valid or not isinstance(claims, dict):
        raise _refused("The resource token was not issued with this account's key.")
    try:
        return Claims(claims["p"], claims["m"], claims["c"], claims["k"], float(claims["i"]), float(claims["x"]))
    except (KeyError, TypeError, ValueError):
        raise _refused("The resource token is malformed.") from None


def check_current(claims: Claims, grant: Grant | None, now: float) -> Grant:
    """The grant a verified token stands for: 403 once it expired (W44), 401 once its permission was
    deleted or replaced with another grant."""
    if now > claims.expiry:
        raise errors.token_time_range(_rfc1123(claims.issued), _rfc1123(claims.expiry), _rfc1123(now))
    if grant is None:
        raise _refused("The permission of this resource token was deleted.")
    if (grant.mode, grant.coll_rid, grant.key) != (claims.mode, claims.coll_rid, claims.key):
        raise _refused("The permission of this resource token was replaced; read it again for a new token.")
    return grant


def authorize(grant: Grant, segments: list[str], *, read_only: bool, key: Any) -> None:
    """403 unless the request (its name path, whether it only reads, its partition key header) is within
    the grant: the account read; the container, its routing map and, within the partition when the
    permission names one, its documents; writes only in mode All."""
    if not segments:
        return  # the account read: the SDK sends it with any of its tokens (azure/cosmos/auth.py)
    if len(segments) < 4 or segments[0] != "dbs" or segments[2] != "colls":
        raise insufficient()
    if (segments[1], segments[3]) != (grant.database, grant.container):
        raise insufficient()
    if not read_only and grant.mode != "All":
        raise insufficient()
    if grant.key is None or (len(segments) == 5 and segments[4] == "pkranges"):
        return
    if len(segments) == 4:  # the container itself: read it, not change it, from within one partition
        if not read_only:
            raise insufficient()
        return
    if key != grant.key:
        raise insufficient()


def insufficient() -> errors.CosmosError:
    return errors.CosmosError(403, INSUFFICIENT)


def _refused(reason: str) -> errors.CosmosError:
    return errors.CosmosError(401, f"The input authorization token can't serve the request. {reason}")


def _mac(key_bytes: bytes, body: str) -> bytes:
    return hmac.digest(key_bytes, _DOMAIN + body.encode("ascii"), "sha256")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _rfc1123(epoch: float) -> str:
    return formatdate(epoch, usegmt=True)
