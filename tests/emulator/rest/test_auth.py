"""Authentication as the service checks it: a current, dated master-key signature, and Entra ID tokens where
the emulator is asked to accept them."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import time
from collections.abc import Callable
from email.utils import formatdate
from pathlib import Path
from urllib.parse import quote, urlparse

import pytest
from azure.core.credentials import AccessToken
from azure.cosmos import CosmosClient, PartitionKey, exceptions

from emulator.monitor.tls import ensure_certificates
from emulator.rest import auth
from emulator.rest.app import CosmosApp
from emulator.rest.server import RunningEmulator, open_engine, start_in_thread


def _get(emu: RunningEmulator, headers: dict[str, str], path: str = "/dbs") -> tuple[int, dict]:
    parsed = urlparse(emu.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request("GET", path, headers={"x-ms-version": "2020-07-15", **headers})
    resp = conn.getresponse()
    body = json.loads(resp.read() or b"null")
    conn.close()
    return resp.status, body


def _signed(key: str, x_ms_date: str | None, http_date: str = "", path: str = "/dbs") -> dict[str, str]:
    resource_type, link = auth.resource_of(path)
    payload = auth.signing_payload("GET", resource_type, link, x_ms_date or "", http_date)
    headers = {"authorization": quote(f"type=master&ver=1.0&sig={auth.signature(key, payload)}", safe="")}
    if x_ms_date is not None:
        headers["x-ms-date"] = x_ms_date
    if http_date:
        headers["date"] = http_date
    return headers


def _ago(seconds: float) -> str:
    return formatdate(time.time() - seconds, usegmt=True)


def test_a_current_signature_is_accepted_within_the_skew_window(emulator: RunningEmulator) -> None:
    for offset in (0, 14 * 60, 19 * 60, -4 * 60):  # 15 min of life plus 5 min of skew either side
        assert _get(emulator, _signed(emulator.key, _ago(offset)))[0] == 200, offset


def test_a_stale_or_future_signature_is_refused_with_the_service_message(emulator: RunningEmulator) -> None:
    for date in (_ago(21 * 60), _ago(-6 * 60), "Mon, 01 Jan 2001 00:00:00 GMT"):
        status, body = _get(emulator, _signed(emulator.key, date))
        assert status == 403, date
        assert body["message"].startswith("The authorization token is not valid at the current time.")
        assert (
            f"token start time: {formatdate(auth.parsedate_to_datetime(date).timestamp(), usegmt=True)}"
            in body["message"]
        )
    refused = [r for r in emulator.engine.accounting.records() if r.operation == "Rejected"]
    assert [r.status for r in refused] == [403, 403, 403]


def test_a_missing_or_unreadable_date_is_a_401(emulator: RunningEmulator) -> None:
    status, body = _get(emulator, _signed(emulator.key, None))
    assert status == 401 and body["message"].startswith("Authorization token mandates Date headers.")
    status, body = _get(emulator, _signed(emulator.key, "yesterday-ish"))
    assert status == 401 and body["message"].startswith("The input date header is invalid format.")


def test_the_date_header_stands_in_for_x_ms_date(emulator: RunningEmulator) -> None:
    assert _get(emulator, _signed(emulator.key, None, http_date=_ago(0)))[0] == 200


def test_nothing_is_cached_from_paths_before_authentication() -> None:
    assert not hasattr(
        auth.resource_of, "cache_info"
    )  # no path cache: one that grows with the paths clients send hoards memory


def _jwt(claims: dict[str, object]) -> str:
    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


class FixedCredential:
    """A TokenCredential whose token is a fixed JWT-shaped string (as DefaultAzureCredential would give)."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(_jwt({"aud": "https://cosmos.azure.com", "oid": "tester"}), int(time.time()) + 3600)


@pytest.fixture
def tls_emulator(tmp_path: Path) -> Callable[..., tuple[RunningEmulator, Path]]:
    running: list[RunningEmulator] = []

    def start(**app_kwargs: object) -> tuple[RunningEmulator, Path]:
        certs = ensure_certificates(tmp_path / "certs")
        engine = open_engine()
        emu = start_in_thread(engine, tls=certs.server_context(), app=CosmosApp(engine, **app_kwargs))
        running.append(emu)
        return emu, certs.ca

    yield start
    for emu in running:
        emu.stop()


def test_entra_id_tokens_are_accepted_over_https(tls_emulator) -> None:
    emu, ca = tls_emulator()
    credential = FixedCredential()
    client = CosmosClient(emu.url, credential=credential, connection_verify=str(ca))
    container = client.create_database("shop").create_container("orders", PartitionKey("/tenant"))
    container.create_item({"id": "1", "tenant": "t1"})
    assert container.read_item("1", "t1")["id"] == "1" and credential.scopes
    master = CosmosClient(emu.url, credential=emu.key, connection_verify=str(ca))  # the key still works
    assert [d["id"] for d in master.list_databases()] == ["shop"]


def test_entra_id_tokens_are_refused_when_not_enabled_or_malformed(emulator: RunningEmulator, tls_emulator) -> None:
    token = quote(f"type=aad&ver=1.0&sig={_jwt({'oid': 'x'})}", safe="")
    headers = {"authorization": token, "x-ms-date": _ago(0)}
    assert _get(emulator, headers)[0] == 401  # plain HTTP: not accepted unless asked
    emu, ca = tls_emulator(auth_settings=auth.AuthSettings(accept_aad=False))
    with pytest.raises(exceptions.CosmosHttpResponseError) as caught:  # the client's first account read
        CosmosClient(emu.url, credential=FixedCredential(), connection_verify=str(ca))
    assert caught.value.status_code == 401
    emu, ca = tls_emulator()
    parsed = urlparse(emu.url)
    conn = http.client.HTTPSConnection(parsed.hostname, parsed.port, context=ssl.create_default_context(cafile=str(ca)))
    conn.request("GET", "/dbs", headers={"authorization": "type=aad&ver=1.0&sig=not-a-jwt", "x-ms-date": _ago(0)})
    response = conn.getresponse()
    assert response.status == 401 and "not a well-formed JWT" in json.loads(response.read())["message"]
