"""Where the store lives: a local directory (the default, `ruscope-data`) or Azure Blob / ADLS Gen2.

`StoreLocation` is the one value every store function takes (`require_location` refuses anything else); it is
built once, by `store_location`, where the store is named (the config, the command line, the dashboard). Why it carries its own pending directory: pending segments need a local disk
with `flock` (a kill -9 must lose nothing and two runs must never seal one segment), which object storage
is not; a local store keeps them in `STORE/_pending`, a remote one in a local state directory named by a
short hash of the URI, so two stores on one host never share segments.

Credentials come only from the environment, never from the config file (DESIGN.md), in this order:
`AZURE_STORAGE_CONNECTION_STRING`; `AZURE_STORAGE_ACCOUNT_NAME` + `AZURE_STORAGE_ACCOUNT_KEY`;
`AZURE_STORAGE_USE_EMULATOR=true` (Azurite: its well-known account; `AZURE_STORAGE_ENDPOINT`, the account's
blob endpoint, for a non-default address); else a bearer token from azure-identity's
`DefaultAzureCredential` (a managed identity, a workload identity, `az login`). A token lasts about an hour:
build a new location per run. The options are kept out of `repr`, so a location never prints a key.

The store's rows are the account's data: a writer creates a local store directory and every pending directory
0700 (`create_private_dirs`), so the files inside are the owner's alone whatever mode delta-rs gives them (a
directory the user made before keeps the mode they chose).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_STORE = "ruscope-data"
PENDING = "_pending"
STORAGE_SCOPE = "https://storage.azure.com/.default"
AZURITE_ACCOUNT = "devstoreaccount1"  # the emulator's well-known account and key (public, in every Azurite)
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
ABFSS_FORM = "abfss://container@account.dfs.core.windows.net/path"
_ABFS = re.compile(r"abfss?://(?P<container>[^@/]+)@(?P<account>[^./]+)\.dfs\.core\.windows\.net(?P<path>/.*)?")
_AZ = re.compile(r"(?:az|azure|abfss?)://(?P<container>[^@/]+)(?P<path>/.*)?")
Token = Callable[[], str]


@dataclass(frozen=True)
class StoreLocation:
    """A store's URI (a local path or `az://...`), the delta-rs storage options to reach it, and the local
    directory of its pending segments."""

    uri: str
    pending_dir: Path
    storage_options: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def local(self) -> Path | None:
        """The store's directory when it is on a local disk, else None."""
        return None if "://" in self.uri else Path(self.uri)

    def table_uri(self, table: str) -> str:
        return f"{self.uri.rstrip('/')}/{table}"

    def options(self) -> dict[str, str] | None:
        """Storage options for delta-rs (None for a local directory)."""
        return dict(self.storage_options) if self.storage_options else None

    def __str__(self) -> str:
        return self.uri


PRIVATE_DIR = 0o700


def create_private_dirs(location: StoreLocation) -> None:
    """Create the local store directory (if the store is local) and the pending directory, each 0700 when
    this creates it; parents above them keep the umask's mode (they are not the store's)."""
    for directory in (location.local, location.pending_dir):
        if directory is None:
            continue
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=PRIVATE_DIR, exist_ok=True)  # the umask can only narrow it


def require_location(store: object, what: str) -> StoreLocation:
    """`store` itself when it is a `StoreLocation`; a TypeError naming `what` otherwise.

    Every store function takes the one location type, built once by `store_location` where the store is named
    (the config, the command line, the dashboard's frame): a `Path` or a `str` carried about instead is how an
    `az://container/path` became `az:/container/path` on its way through `Path()`.
    """
    if not isinstance(store, StoreLocation):
        raise TypeError(f"{what} takes a StoreLocation (store_location(...)), not {type(store).__name__} {store!r}")
    return store


def store_location(
    store: Path | str | StoreLocation | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    token: Token | None = None,
    state_dir: Path | None = None,
) -> StoreLocation:
    """The location of `store` (default `ruscope-data`): a local path as it is, an Azure URI with its
    credentials from `environ` (default os.environ) or `token` (default DefaultAzureCredential)."""
    if isinstance(store, StoreLocation):
        return store
    uri = str(store if store is not None else DEFAULT_STORE)
    if "://" not in uri:
        return StoreLocation(uri, Path(uri) / PENDING)
    env = os.environ if environ is None else environ
    options = azure_options(uri, env, token or _default_token)
    digest = hashlib.sha256(uri.encode()).hexdigest()[:12]
    return StoreLocation(uri, (state_dir or _state_home(env)) / "pending" / digest, options)


def azure_options(uri: str, env: Mapping[str, str], token: Token) -> dict[str, str]:
    """delta-rs (object_store) options for an Azure URI; ValueError for a URI it cannot be."""
    abfs = _ABFS.fullmatch(uri)
    if not (abfs or _AZ.fullmatch(uri)):
        raise ValueError(f"store {uri!r}: expected a local path, az://container/path or {ABFSS_FORM}")
    options = _connection_string(env.get("AZURE_STORAGE_CONNECTION_STRING", ""))
    if options:
        return options
    account = (abfs.group("account") if abfs else None) or env.get("AZURE_STORAGE_ACCOUNT_NAME")
    endpoint = _endpoint_options(env)
    if account and env.get("AZURE_STORAGE_ACCOUNT_KEY"):
        key = env["AZURE_STORAGE_ACCOUNT_KEY"]
        return {"azure_storage_account_name": account, "azure_storage_account_key": key, **endpoint}
    if env.get("AZURE_STORAGE_USE_EMULATOR", "").lower() in {"1", "true", "yes"}:
        # object_store's emulator mode ignores an endpoint option (it reads AZURITE_BLOB_STORAGE_URL from the
        # environment): with an endpoint given, name Azurite's public account and key instead
        if endpoint:
            return {"azure_storage_account_name": AZURITE_ACCOUNT, "azure_storage_account_key": AZURITE_KEY, **endpoint}
        return {"azure_storage_use_emulator": "true", "allow_http": "true"}
    if not account:
        raise ValueError(f"store {uri!r}: set AZURE_STORAGE_ACCOUNT_NAME (the storage account of the container)")
    return {"azure_storage_account_name": account, "bearer_token": token(), **endpoint}


def _endpoint_options(env: Mapping[str, str]) -> dict[str, str]:
    """A blob endpoint other than Azure's (an emulator, a sovereign cloud) and whether it may be http."""
    endpoint = env.get("AZURE_STORAGE_ENDPOINT", "")
    if not endpoint:
        return {}
    allow_http = endpoint.startswith("http://") or env.get("AZURE_ALLOW_HTTP", "").lower() == "true"
    return {"azure_storage_endpoint": endpoint, "allow_http": str(allow_http).lower()}


def _connection_string(text: str) -> dict[str, str]:
    """The options a storage connection string gives (`UseDevelopmentStorage=true` is Azurite)."""
    parts = dict(p.split("=", 1) for p in text.split(";") if "=" in p)
    if parts.get("UseDevelopmentStorage", "").lower() == "true":
        return {"azure_storage_use_emulator": "true", "allow_http": "true"}
    options = {
        "azure_storage_account_name": parts.get("AccountName", ""),
        "azure_storage_account_key": parts.get("AccountKey", ""),
    }
    if not all(options.values()):
        return {}
    if "BlobEndpoint" in parts:
        options["azure_storage_endpoint"] = parts["BlobEndpoint"]
        options["allow_http"] = str(parts["BlobEndpoint"].startswith("http://")).lower()
    return options


def _default_token() -> str:
    """A bearer token for Azure Storage from DefaultAzureCredential (imported only for a remote store)."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential().get_token(STORAGE_SCOPE).token


def _state_home(env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "ruscope"
