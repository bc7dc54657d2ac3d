"""The command that applies a finding (R90-R97 in docs/reference/azure-monitor.md): the Azure CLI for a
throughput, autoscale, redistribution, merge, burst-capacity or indexing-policy change, named with the
account's ARM names (`azure_account`: R94), ruscope's advisor for a key design; nothing for a change to the
application. Pure text from an `analysis.capacity.rules.Action`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from analysis.capacity.planner import redistribution_commands
from analysis.capacity.rules import Action, target_unit

RESOURCE_GROUP = "<rg>"  # no ARM id in the config: a placeholder the shell refuses to run as is
ADVISE_COMMAND = "ruscope advise --config ruscope.toml"


@dataclass(frozen=True, slots=True)
class AzureAccount:
    """An account as Azure Resource Manager names it, which `az` needs: the store keys an account by the
    config's name or its endpoint's host, neither of which is always the ARM name."""

    name: str
    resource_group: str = RESOURCE_GROUP


_ARM_ACCOUNT = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.DocumentDB/databaseAccounts/(?P<name>[^/]+)",
    re.IGNORECASE,
)
_ENDPOINT_HOST = re.compile(r"(?P<name>[a-z0-9-]+)\.documents\.azure\.com", re.IGNORECASE)


def azure_account(account: str, host: str | None = None, arm_id: str | None = None) -> AzureAccount:
    """The ARM names of the store's `account`: from its ARM resource id (the config's `monitor_resource`:
    .../resourceGroups/G/providers/Microsoft.DocumentDB/databaseAccounts/N, R94) when given; else the name an
    endpoint host says (https://N.documents.azure.com, R94) with the resource group left `<rg>`; else the
    store's name as it is."""
    found = _ARM_ACCOUNT.fullmatch(arm_id or "")
    if found:
        return AzureAccount(found["name"], found["group"])
    for candidate in (host, account):
        named = _ENDPOINT_HOST.fullmatch(candidate or "")
        if named:
            return AzureAccount(named["name"])
    return AzureAccount(account)


def az_command(action: Action, account: str, database: str, container: str, azure: AzureAccount | None = None) -> str:
    """The command that applies `action` (R90-R97): the Azure CLI for a throughput change, a merge or burst
    capacity, with the account's ARM names (`azure`, else `azure_account(account)`: `<rg>` where the resource
    group is not known), ruscope's advisor for a key design; "" for a query change or a container without
    RU/s of its own. A redistribution's calls (`redistribution_commands`) are joined with `&&`, in order."""
    arm = azure or azure_account(account)
    group = arm.resource_group if arm.resource_group == RESOURCE_GROUP else shlex.quote(arm.resource_group)
    names = f"--account-name {shlex.quote(arm.name)} --resource-group {group} " + (
        f"--database-name {shlex.quote(database)} --name {shlex.quote(container)}"
    )
    sql = "az cosmosdb sql container"
    if action.change == "advise":
        return ADVISE_COMMAND
    if action.change == "index" and action.composite_index and container:
        added = shlex.quote(f".compositeIndexes += [{action.composite_index}]")
        return (
            f"{sql} show {names} --query resource.indexingPolicy | jq {added} > policy.json && "
            f"{sql} update {names} --idx @policy.json"
        )
    if action.change == "burst":
        return (
            f"az cosmosdb update --name {shlex.quote(arm.name)} --resource-group {group} --enable-burst-capacity true"
        )
    if not container:
        return ""
    if action.change == "merge":
        return f"{sql} merge {names}"
    if action.change == "redistribute" and action.plan is not None:
        return " && ".join(redistribution_commands(action.plan, sql, names))
    if not (action.target or 0) > 0:
        return ""
    if action.change == "throughput":
        flag = "--max-throughput" if action.target_unit == target_unit(True) else "--throughput"
        return f"{sql} throughput update {names} {flag} {action.target or 0:.0f}"
    if action.change == "autoscale":
        return (
            f"{sql} throughput migrate {names} --throughput-type autoscale && "
            f"{sql} throughput update {names} --max-throughput {action.target or 0:.0f}"
        )
    return ""
