"""The Cosmos DB client every collector uses: one place for the connection settings of `ruscope.toml`.

The SDK retries throttled requests itself (`RetryOptions`, the documented setting) as many times as the
config says; connection errors are retried twice, so an endpoint that is down fails fast with one line.
Hooks see every HTTP exchange, which is how the collectors read RU and routing without private SDK names.
Every request carries the user-agent suffix `ruscope/<version>` (the SDK's documented `user_agent_suffix`):
the service logs it in `CDBDataPlaneRequests.UserAgent` (azure-monitor.md §7b R70), which is how the logs
collector keeps ruscope's own replay apart from the workload it measures (`collectors.logs.queries`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from azure.cosmos import CosmosClient, documents

from collectors.config import Account, ConnectionSettings
from collectors.credentials import account_credential
from collectors.errors import describe_error, no_key_line
from collectors.logs.queries import OWN_USER_AGENT

Hook = Callable[[Any], None]


def fetch_client(
    settings: ConnectionSettings, credential: Any, *, on_request: Hook | None = None, on_response: Hook | None = None
) -> CosmosClient:
    """A CosmosClient for one account (creating it reads the account); hooks see every request/response."""
    policy = documents.ConnectionPolicy()
    policy.RetryOptions = documents.RetryOptions(
        max_retry_attempt_count=settings.max_retry_attempts, max_wait_time_in_seconds=settings.max_retry_wait_s
    )
    return CosmosClient(
        settings.endpoint,
        credential=credential,
        connection_policy=policy,
        connection_timeout=settings.connection_timeout_s,
        retry_connect=2,
        retry_read=2,
        raw_request_hook=on_request,  # None: no hook (azure-core's CustomHookPolicy skips it)
        raw_response_hook=on_response,
        user_agent_suffix=user_agent(),
    )


def installed_version() -> str:
    """ruscope's installed version ("dev" for a source tree that was never installed): the user agent's and
    the report's, one answer."""
    try:
        return importlib.metadata.version("ruscope")
    except importlib.metadata.PackageNotFoundError:
        return "dev"


def user_agent() -> str:
    """The suffix ruscope's clients add to the SDK's user agent: `ruscope/<version>`, a Kusto term for `has`."""
    return f"{OWN_USER_AGENT}/{installed_version()}"


def check_account(account: Account, credential: Any = None) -> str | None:
    """Why the account cannot be used (unreachable, no key, a wrong key), in one line; None when it can.
    A run checks once at its start, so a dead endpoint is one line instead of an error row per query."""
    try:
        credential = credential or account_credential(account)
    except LookupError as exc:  # a key_env that is not set
        return str(exc)
    if not isinstance(credential, str) and urlparse(account.endpoint).scheme == "http":
        return no_key_line(account.endpoint, account.key_env)  # the SDK sends tokens over https only
    try:
        fetch_client(account.connection, credential)  # creating the client reads the account
    except Exception as exc:
        return describe_error(exc, account.endpoint, key_env=account.key_env)
    return None
