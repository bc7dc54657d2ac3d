"""Credentials come from the environment, never from the config file (DESIGN.md).

Cosmos DB takes either an account key or an Entra ID token credential; Azure Monitor and Log Analytics
take only a token credential. Both are built lazily: azure-identity probes the environment (managed
identity endpoints, the Azure CLI) and costs an import, so a run with `COSMOS_KEY` never touches it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

KEY_VARIABLE = "COSMOS_KEY"


def token_credential() -> TokenCredential:
    """azure-identity's DefaultAzureCredential (environment, workload and managed identity, Azure CLI...)."""
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def cosmos_credential() -> str | TokenCredential:
    """`COSMOS_KEY` when it is set, else a token credential."""
    key = os.environ.get(KEY_VARIABLE)
    return key if key else token_credential()
