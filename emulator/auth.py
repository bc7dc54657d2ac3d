"""Master-key request signatures, checked as the service checks them (cosmos-wire-protocol.md §4).

The SDK signs `verb\\nresourceType\\nresourceLink\\nx-ms-date\\n\\n` with HMAC-SHA256 of the base64 key.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
from collections.abc import Sequence
from urllib.parse import unquote

WELL_KNOWN_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


@functools.lru_cache(maxsize=4096)
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


def signing_payload(verb: str, resource_type: str, link: str, date: str) -> str:
    return f"{verb.lower()}\n{resource_type.lower()}\n{link}\n{date.lower()}\n\n"


def signature(key: str, payload: str) -> str:
    digest = hmac.new(base64.b64decode(key), payload.encode("utf-8"), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify(key_bytes: bytes, authorization: str, payload: str) -> bool:
    """Whether the `authorization` header carries a master-key signature of `payload`."""
    fields = dict(part.split("=", 1) for part in unquote(authorization).split("&") if "=" in part)
    if fields.get("type") != "master" or "sig" not in fields:
        return False
    expected = base64.b64encode(hmac.digest(key_bytes, payload.encode("utf-8"), "sha256")).decode()
    return hmac.compare_digest(expected, fields["sig"])
