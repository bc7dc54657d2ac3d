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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

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
