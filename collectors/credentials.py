"""Credentials come from the environment, never from the config file (DESIGN.md).

Cosmos DB takes either an account key or an Entra ID token credential; Azure Monitor and Log Analytics
take only a token credential. Both are built lazily: azure-identity probes the environment (managed
identity endpoints, the Azure CLI) and costs an import, so a run with a key never touches it.

In a fleet each account names the variable holding its key (`key_env`); an account without one uses
the token credential (workload or managed identity), except a lone account, which reads `COSMOS_KEY`
when it is set, as before fleets existed.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from azure.core.credentials import AccessToken, TokenCredential

    from collectors.config import Account

KEY_VARIABLE = "COSMOS_KEY"


class MissingKey(LookupError):
    """An account names a key variable that is not set: its run fails with this one line."""


def token_credential() -> TokenCredential:
    """azure-identity's DefaultAzureCredential (environment, workload and managed identity, Azure CLI...)."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def cosmos_credential(key_env: str = KEY_VARIABLE) -> str | TokenCredential:
    """The key in `key_env` (default `COSMOS_KEY`) when it is set, else a token credential."""
    key = os.environ.get(key_env)
    return key if key else token_credential()


def account_credential(account: Account) -> str | TokenCredential:
    """The credential of one account: its key variable, else a token credential. A variable the config
    names explicitly must be set: silently falling back to an identity would hide a broken secret mount."""
    if account.key_env is None:
        return token_credential()
    if os.environ.get(account.key_env) or account.key_optional:
        return cosmos_credential(account.key_env)
    raise MissingKey(f"the environment variable {account.key_env} (its key_env) is not set")


MONITOR_TOKEN_VARIABLE = "RUSCOPE_MONITOR_TOKEN"


class StaticToken:
    """A TokenCredential that sends one fixed bearer token: for local testing against the stand-in, which
    accepts any token (and answers 401 to an empty one). Never a way to reach Azure."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        from azure.core.credentials import AccessToken

        return AccessToken(self._token, int(time.time()) + 3600)


def monitor_credential() -> TokenCredential:
    """Azure Monitor's credential: `RUSCOPE_MONITOR_TOKEN`, when set (even empty), as a static bearer token
    for local testing; else DefaultAzureCredential."""
    token = os.environ.get(MONITOR_TOKEN_VARIABLE)
    return StaticToken(token) if token is not None else token_credential()
