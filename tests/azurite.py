"""Azurite, the Azure Storage emulator, for the store's `az://` tests (the `azurite` fixture in conftest.py).

Where it comes from: `azurite` is pinned in package.json / package-lock.json and `make install` runs
`npm ci`, which puts `node_modules/.bin/azurite-blob` in the repository. Without Node.js and npm there is
no Azurite: the tests that take the fixture are skipped with that reason, unless RUSCOPE_REQUIRE_AZURITE is
set (`.ci/run` sets it when npm is present), and then they fail, so CI cannot go green by skipping them.
RUSCOPE_AZURITE_BLOB names another `azurite-blob` executable.

The fixture starts one `azurite-blob` per test session, on a free port, data in a temporary directory:

    azurite-blob --silent --skipApiVersionCheck --loose --location DIR --blobHost 127.0.0.1 --blobPort PORT

(`--skipApiVersionCheck`: current SDKs send API versions newer than Azurite knows; `--loose`: it ignores
headers it does not support instead of refusing the request.)

How delta-rs (object_store) reaches Azurite on a port that is not the default 10000, measured with
deltalake 1.6.6 and Azurite 3.37.0:

- storage options, self-contained (what `RunningAzurite.storage_options` gives):
  `azure_storage_account_name=devstoreaccount1`, `azure_storage_account_key=<the well-known key>`,
  `azure_storage_endpoint=http://127.0.0.1:PORT/devstoreaccount1` (the account's blob endpoint, with the
  account in the path), `allow_http=true`. Works for `az://container/path` and for
  `abfss://container@devstoreaccount1.dfs.core.windows.net/path` alike.
- `azure_storage_use_emulator=true` IGNORES `azure_storage_endpoint`: in emulator mode object_store takes
  the address only from the process environment variable `AZURITE_BLOB_STORAGE_URL`
  (`http://127.0.0.1:PORT`, no account; default `http://127.0.0.1:10000`). So with the emulator flag a
  custom port works only if that variable is set in the writing process itself; passing it in a mapping
  does nothing. For a custom port, prefer the self-contained options above.
- delta-rs also reads `AZURE_*` variables from the environment (`AZURE_STORAGE_ACCOUNT_NAME`,
  `AZURE_STORAGE_ACCOUNT_KEY`, `AZURE_STORAGE_ENDPOINT`, `AZURE_ALLOW_HTTP`, `AZURE_STORAGE_USE_EMULATOR`),
  so a subprocess given `RunningAzurite.env` reaches Azurite with no storage options at all.
- a container name must be 3 to 63 lowercase letters, digits and hyphens (Azurite answers 400
  OutOfRangeInput otherwise); `uri_for` makes one per call.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACCOUNT = "devstoreaccount1"
# The emulator's well-known account key (public, the same in every Azurite).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parent.parent
MISSING = (
    "Azurite is not installed: run `make install` with Node.js and npm on PATH "
    "(npm ci puts node_modules/.bin/azurite-blob in the repository), or set RUSCOPE_AZURITE_BLOB"
)


@dataclass(frozen=True)
class RunningAzurite:
    """An Azurite blob service on 127.0.0.1:`port` (account devstoreaccount1)."""

    port: int

    @property
    def blob_endpoint(self) -> str:
        return f"http://{HOST}:{self.port}/{ACCOUNT}"

    @property
    def connection_string(self) -> str:
        """For azure-storage-blob (`BlobServiceClient.from_connection_string`)."""
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};BlobEndpoint={self.blob_endpoint};"
        )

    @property
    def storage_options(self) -> dict[str, str]:
        """delta-rs storage options that reach this Azurite with nothing from the environment."""
        return {
            "azure_storage_account_name": ACCOUNT,
            "azure_storage_account_key": KEY,
            "azure_storage_endpoint": self.blob_endpoint,
            "allow_http": "true",
        }

    @property
    def env(self) -> dict[str, str]:
        """Environment variables for a process (the store, a `ruscope` command) to reach this Azurite.

        Both ways are set: the emulator flag with `AZURITE_BLOB_STORAGE_URL` (the only address object_store
        uses in emulator mode) and the account, key and blob endpoint (`AZURE_STORAGE_ENDPOINT`) for code
        that passes explicit options."""
        return {
            "AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT,
            "AZURE_STORAGE_ACCOUNT_KEY": KEY,
            "AZURE_STORAGE_USE_EMULATOR": "true",
            "AZURITE_BLOB_STORAGE_URL": f"http://{HOST}:{self.port}",
            "AZURE_STORAGE_ENDPOINT": self.blob_endpoint,
            "AZURE_ALLOW_HTTP": "true",
        }

    def uri_for(self, name: str) -> str:
        """A new, empty blob container, and `az://<container>/<name>` in it."""
        from azure.storage.blob import BlobServiceClient

        container = f"t-{uuid.uuid4().hex[:24]}"
        with BlobServiceClient.from_connection_string(self.connection_string) as service:
            service.create_container(container)
        return f"az://{container}/{name.strip('/')}"


def find_azurite() -> str | None:
    """The `azurite-blob` executable (RUSCOPE_AZURITE_BLOB, else the repository's node_modules, else PATH),
    or None when it or `node` is missing."""
    if shutil.which("node") is None:
        return None
    for candidate in (os.environ.get("RUSCOPE_AZURITE_BLOB"), REPO / "node_modules" / ".bin" / "azurite-blob"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("azurite-blob")


def azurite_required() -> bool:
    return os.environ.get("RUSCOPE_REQUIRE_AZURITE", "").lower() in {"1", "true", "yes"}


@contextmanager
def running_azurite(executable: str, location: Path, *, timeout: float = 60.0) -> Iterator[RunningAzurite]:
    """Start `azurite-blob` on a free port with its data in `location`; stop it on exit."""
    location.mkdir(parents=True, exist_ok=True)
    log_path = location.parent / f"{location.name}.log"
    for _attempt in range(3):  # a free port can be taken by someone else before Azurite binds it
        port = _free_port()
        command = [executable, "--silent", "--skipApiVersionCheck", "--loose", "--location", str(location)]
        command += ["--blobHost", HOST, "--blobPort", str(port)]
        with log_path.open("ab") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            answering = _wait_until_answering(process, port, timeout)
            exited = process.poll() is not None
            if answering:
                yield RunningAzurite(port)
                return
        finally:
            _stop(process)
        if not exited:  # it ran but never answered: another port would not help
            break
    tail = log_path.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"Azurite did not start ({' '.join(command)}); its output:\n{tail}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _wait_until_answering(process: subprocess.Popen[bytes], port: int, timeout: float) -> bool:
    """True once Azurite answers HTTP on `port` (any status: an unsigned request gets 403); False if it
    exited or the timeout passed first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            urllib.request.urlopen(f"http://{HOST}:{port}/{ACCOUNT}?comp=list", timeout=2).close()
            return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.1)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill it: its data is a temporary directory, and a graceful stop (SIGTERM) takes Azurite about 10 s
    even when idle."""
    if process.poll() is None:
        process.kill()
    process.wait()
