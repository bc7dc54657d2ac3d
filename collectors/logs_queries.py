"""Every KQL query `ruscope logs` sends to Log Analytics, in one place, built from parameters (pure).

Four queries (azure-monitor.md §6, §7), each in both diagnostic-settings modes:
- `key_ru`: RU and request count per logical key per pkrange per time bin (`CDBPartitionKeyRUConsumption`);
- `key_size`: the latest size of each logical key (`CDBPartitionKeyStatistics` rows are periodic snapshots:
  `arg_max(TimeGenerated, SizeKb)` per key, never a sum over time), the largest `top` keys;
- `throttles`: 429s per physical partition and operation per time bin (`CDBDataPlaneRequests`);
- `query_stats`: queries per container, pkrange and query text per time bin (`CDBQueryRuntimeStatistics`).

"resource-specific" mode reads the `CDB*` tables; "azure-diagnostics" (the legacy destination) reads
`AzureDiagnostics` rows of the matching `Category`, whose columns carry type suffixes (`_s` string, `_d`
real, `_g` guid). `result_columns` renames those back, so the collector reads one shape in both modes.

The time window is not in the KQL: the collector passes it as `timespan` (the service applies it).
Only a small KQL subset is used (where with comparisons, `in`, `and`; summarize with sum/count/arg_max by
columns and `bin(TimeGenerated, ...)`; top N by; todouble), which the local stand-in understands too.
Every value in a query is a KQL string literal made by `kql_string`.

To add a query: a `Spec` in `SPECS` (its source, aggregates, group columns), and its record in logs.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

RESOURCE_SPECIFIC = "resource-specific"
AZURE_DIAGNOSTICS = "azure-diagnostics"
MODES = (RESOURCE_SPECIFIC, AZURE_DIAGNOSTICS)
TIME = "TimeGenerated"  # the same column in both modes

# Legacy AzureDiagnostics column of each resource-specific column. Sources: azure-monitor.md §6 (partitionKey_s,
# requestCharge_s, sizeKb_d, partitionId_g) and Microsoft's Cosmos DB diagnostic queries for AzureDiagnostics
# (MicrosoftDocs azure-databases-docs, nosql/diagnostic-queries.md: databaseName_s, collectionName_s,
# partitionKeyRangeId_s, statusCode_s, OperationName, querytext_s).
LEGACY_COLUMNS = {
    "AccountName": "Resource",  # the standard AzureDiagnostics column: the resource's name, upper-cased
    "DatabaseName": "databaseName_s",
    "CollectionName": "collectionName_s",
    "PartitionKeyRangeId": "partitionKeyRangeId_s",
    "PartitionKey": "partitionKey_s",
    "RequestCharge": "requestCharge_s",
    "SizeKb": "sizeKb_d",
    "PartitionId": "partitionId_g",
    "OperationName": "OperationName",
    "StatusCode": "statusCode_s",
    "QueryText": "querytext_s",
}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Spec:
    """One query: its table (resource-specific) or Category (legacy), what it filters, computes and groups by."""

    table: str
    category: str
    aggregates: tuple[tuple[str, str, str], ...]  # (result column, function, source column or "")
    by: tuple[str, ...]  # group columns (resource-specific names); TimeGenerated binned when `binned`
    binned: bool = True
    where: tuple[tuple[str, str], ...] = ()  # extra equality filters: (column, literal as the mode writes it)
    top: str | None = None  # `top N by <column> desc` on this result column


KEY_RU, KEY_SIZE, THROTTLES, QUERY_STATS = "key_ru", "key_size", "throttles", "query_stats"
SPECS: dict[str, Spec] = {
    KEY_RU: Spec(
        "CDBPartitionKeyRUConsumption",
        "PartitionKeyRUConsumption",
        (("RequestCharge", "sum", "RequestCharge"), ("Requests", "count", "")),
        ("DatabaseName", "CollectionName", "PartitionKeyRangeId", "PartitionKey"),
    ),
    KEY_SIZE: Spec(
        "CDBPartitionKeyStatistics",
        "PartitionKeyStatistics",
        (("", "arg_max", "SizeKb"),),
        ("DatabaseName", "CollectionName", "PartitionKey"),
        binned=False,
        top="SizeKb",
    ),
    THROTTLES: Spec(
        "CDBDataPlaneRequests",
        "DataPlaneRequests",
        (("Throttled", "count", ""),),
        ("DatabaseName", "CollectionName", "PartitionId", "OperationName"),
        where=(("StatusCode", "429"),),  # StatusCode is an int column; statusCode_s a string one (below)
    ),
    QUERY_STATS: Spec(
        "CDBQueryRuntimeStatistics",
        "QueryRuntimeStatistics",
        (("Queries", "count", ""),),
        ("DatabaseName", "CollectionName", "PartitionKeyRangeId", "QueryText"),
    ),
}
QUERIES = tuple(SPECS)


@dataclass(frozen=True)
class Params:
    """What a query is about: one database (some of its containers, or all), the account's name in Azure
    (None: the workspace holds one account), the time bin and the number of largest keys."""

    database: str
    containers: tuple[str, ...] = ()
    account: str | None = None
    bin_minutes: int = 5
    top: int = 1000
    mode: str = RESOURCE_SPECIFIC


def kql_string(value: str) -> str:
    """A KQL string literal of `value`: single quotes, with `\\`, `'`, newline, carriage return and tab
    escaped by a backslash (Kusto's string-literal escapes). Other control characters are refused
    (no database, container or account name holds one)."""
    if _CONTROL.search(value):
        raise ValueError(f"a control character in {value!r} cannot go into a KQL query")
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return "'" + escaped.replace("\t", "\\t") + "'"


def column(name: str, mode: str) -> str:
    """The column `name` (a resource-specific name) as the mode's table spells it."""
    return LEGACY_COLUMNS.get(name, name) if mode == AZURE_DIAGNOSTICS else name


def result_columns(mode: str) -> dict[str, str]:
    """Renames for a result's columns to the resource-specific names (empty in that mode)."""
    return {legacy: name for name, legacy in LEGACY_COLUMNS.items()} if mode == AZURE_DIAGNOSTICS else {}


def _filters(spec: Spec, params: Params) -> list[str]:
    mode = params.mode
    terms = [f"Category == {kql_string(spec.category)}"] if mode == AZURE_DIAGNOSTICS else []
    if params.account is not None:
        name = params.account.upper() if mode == AZURE_DIAGNOSTICS else params.account
        terms.append(f"{column('AccountName', mode)} == {kql_string(name)}")
    terms.append(f"{column('DatabaseName', mode)} == {kql_string(params.database)}")
    if params.containers:
        listed = ", ".join(kql_string(c) for c in params.containers)
        terms.append(f"{column('CollectionName', mode)} in ({listed})")
    for name, literal in spec.where:  # legacy columns are strings: the literal is quoted there
        terms.append(f"{column(name, mode)} == {kql_string(literal) if mode == AZURE_DIAGNOSTICS else literal}")
    return terms


def _aggregate(result: str, function: str, source: str, mode: str) -> str:
    if function == "count":
        call = "count()"
    elif function == "sum":
        call = f"sum(todouble({column(source, mode)}))"
    else:  # arg_max: the latest row's value, named after its column
        call = f"{function}({TIME}, {column(source, mode)})"
    return f"{result} = {call}" if result else call


def build(name: str, params: Params) -> str:
    """The KQL of query `name` (one of QUERIES) for `params` (ValueError on a bad parameter)."""
    if params.mode not in MODES:
        raise ValueError(f"unknown logs mode {params.mode!r} (known: {', '.join(MODES)})")
    if not 1 <= params.bin_minutes <= 1440 or params.top < 1:
        raise ValueError("the time bin is 1 to 1440 minutes and top at least 1")
    spec, mode = SPECS[name], params.mode
    source = spec.table if mode == RESOURCE_SPECIFIC else "AzureDiagnostics"
    aggregates = ", ".join(_aggregate(*a, mode) for a in spec.aggregates)
    groups = [column(c, mode) for c in spec.by]
    if spec.binned:
        groups.append(f"bin({TIME}, {params.bin_minutes}m)")
    lines = [
        source,
        "| where " + " and ".join(_filters(spec, params)),
        f"| summarize {aggregates} by {', '.join(groups)}",
    ]
    if spec.top is not None:
        lines.append(f"| top {params.top} by {column(spec.top, mode)} desc")
    return "\n".join(lines)


def all_queries() -> list[tuple[str, str]]:
    """(name, KQL) of every query the collector can send, with sample parameters, in both modes: with and
    without an account and a container list (the stand-in's test checks it understands each)."""
    samples = [
        Params("db"),
        Params("it's \\ db", containers=("c1", "o'rders"), account="acct-1", bin_minutes=1, top=20),
    ]
    return [
        (f"{name}[{mode}]#{i}", build(name, replace(sample, mode=mode)))
        for mode in MODES
        for i, sample in enumerate(samples)
        for name in QUERIES
    ]
