"""A local CA and a server certificate for 127.0.0.1/localhost, so the Azure SDK can reach the stand-in.

azure-core refuses bearer tokens over `http://` before any I/O (azure-monitor.md §4.1), so the stand-in
must speak HTTPS; clients trust it with `connection_verify=<ca.pem>` or `REQUESTS_CA_BUNDLE`. The files
are made once and kept in a directory (the data directory, so a restarted emulator keeps the CA its
clients already trust); keys are written 0600 because they are private keys, even if throw-away.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from wholefile import write_whole

CA_FILE = "ca.pem"
CERT_FILE = "server.pem"
KEY_FILE = "server-key.pem"
_VALID_DAYS = 3650  # a local demo CA: long-lived so a kept data directory keeps working


@dataclass(frozen=True)
class Certificates:
    """Where the PEM files are: `ca` is what clients trust, `cert`/`key` what the server presents."""

    ca: Path
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        """A TLS server context presenting the server certificate."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


def ensure_certificates(directory: str | Path) -> Certificates:
    """The certificates in `directory`, generated there first if any file is missing."""
    folder = Path(directory)
    certs = Certificates(folder / CA_FILE, folder / CERT_FILE, folder / KEY_FILE)
    if not all(p.is_file() for p in (certs.ca, certs.cert, certs.key)):
        folder.mkdir(parents=True, exist_ok=True)
        ca_pem, cert_pem, key_pem = _generate()
        for path, data in ((certs.key, key_pem), (certs.cert, cert_pem), (certs.ca, ca_pem)):
            _write_private(path, data)  # the CA last: its presence is not taken for a complete set
    return certs


def _write_private(path: Path, data: bytes) -> None:
    write_whole(path, data, private=True)


def _generate() -> tuple[bytes, bytes, bytes]:
    """(CA certificate, server certificate, server key) as PEM; the CA key is used once and dropped:
    a new set is made whenever one is missing, so nothing else is ever signed with it."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ruscope local Azure Monitor CA")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    pem = serialization.Encoding.PEM
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )
