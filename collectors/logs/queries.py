"""Every KQL query `ruscope logs` sends to Log Analytics, in one place, built from parameters (pure).

Five queries (azure-monitor.md §6, §7), each in both diagnostic-settings modes:
- `key_ru`: RU per logical key per pkrange per time bin (`CDBPartitionKeyRUConsumption`), and the most RU
  the key consumed in one second of the bin (summed per second and region first, as Microsoft's hot-key query
  bins by 1 s: the quantity that meets a partition's RU/s budget, which each region reserves), rows with an empty PartitionKey left out (the
  service leaves it empty for operations with no single key); no request count: a row of that table is a
  key's aggregated consumption in one second (azure-monitor.md §7b R7, R24), so `count()` would count
  seconds, not requests;
- `key_operations`: the same per operation too (`OperationName`; `operationType_s` in the legacy table,
  §7b R20), with each operation's busiest second on the key: which operation heats a key (§7b R8, R51);
- `key_size`: the latest size of each logical key (`CDBPartitionKeyStatistics` rows are periodic snapshots:
  `arg_max(TimeGenerated, SizeKb)` per key, never a sum over time), the largest `top` keys;
- `throttles`: requests and, among them, 429s per physical partition and operation per time bin
  (`CDBDataPlaneRequests`: `count()` and `countif(StatusCode == 429)`; a row of that table is one request,
  a throttled attempt and its retry two, so their ratio is the share of requests answered 429, where
  Microsoft's `dcountif(ActivityId, ...)` over `dcount(ActivityId)` counts operations, an SDK's retries
  sharing one ActivityId: azure-monitor.md §7b R45-R47);
- `query_stats`: queries per container, pkrange and query text per time bin (`CDBQueryRuntimeStatistics`);
- `query_ru`: RU, requests and 429s per container, pkrange and query text per time bin: Microsoft's "top
  queries by RU" join (azure-monitor.md §7b R48), `CDBQueryRuntimeStatistics` (the text, one row per
  ActivityId kept: `summarize by`, so however many statistics rows an operation writes, each request counts
  once) joined with `CDBDataPlaneRequests` (each request's charge and status) on ActivityId, and split by
  whether ruscope sent the request itself (`UserAgent has 'ruscope'`: its client's user-agent suffix), so
  ruscope's own replay is kept apart from the workload it measures. Built by `build_query_ru`, not a `Spec`.

"resource-specific" mode reads the `CDB*` tables; "azure-diagnostics" (the legacy destination) reads
`AzureDiagnostics` rows of the matching `Category`, whose columns carry type suffixes (`_s` string, `_d`
real, `_g` guid) and are spelled per category (`databasename_s` in QueryRuntimeStatistics, `databaseName_s`
elsewhere). Tables, categories and both spellings come from `cosmoscore.monitor.logs`; `result_columns`
renames a result's columns back, so the collector reads one shape in both modes.

Aggregated tables (`[monitor] logs_tables = "aggregated-5m"` or `"aggregated-15m"`, azure-monitor.md §6.6,
§7b R60-R63): the diagnostic setting sends the low-cost DataPlaneRequests5M / 15M category in place of the
detailed ones, so `throttles` reads `CDBDataPlaneRequests5M` / `15M` (`sum(RequestCount)`, and
`sumif(RequestCount, StatusCode == 429)`: a row there sums an interval's requests), and the queries whose view
those rows do not hold (`NOT_SERVED`: per-key RU and sizes, query texts) are not sent (`queries_for`).

The time window is not in the KQL: the collector passes it as `timespan` (the service applies it).
The account is matched case-insensitively (`=~`): the legacy table holds its name upper-cased, and the
name taken from a configured resource id may be in any case (azure-monitor.md §7b R23).
Only a small KQL subset is used (where with comparisons, `=~`, `in`, `and`, `isnotempty`; summarize with sum/sumif/count/countif/arg_max by
columns and `bin(TimeGenerated, ...)`, twice for key_ru; top N by; todouble), which the local stand-in
understands too.
Every value in a query is a KQL string literal made by `kql_string`.

To add a query: a `Spec` in `SPECS` (its source, aggregates, group columns), and its record in logs.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from collectors.config.monitor import LOGS_TABLES
from cosmoscore.monitor import logs
from cosmoscore.monitor.logs import (
    ACCOUNT_NAME,
    ACTIVITY_ID,
    AZURE_DIAGNOSTICS,
    CATEGORY,
    COLLECTION_NAME,
    DATABASE_NAME,
    LEGACY_TABLE,
    MODES,
    OPERATION_NAME,
    PARTITION_ID,
    PARTITION_KEY,
    PARTITION_KEY_RANGE_ID,
    QUERY_TEXT,
    REGION_NAME,
    REQUEST_CHARGE,
    REQUEST_COUNT,
    RESOURCE_SPECIFIC,
    SIZE_KB,
    STATUS_CODE,
    TIME_GENERATED,
    USER_AGENT,
    Table,
)

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Spec:
    """One query: its table (the catalogue's, which knows the category and the legacy spellings), what it
    filters, computes and groups by."""

    table: Table
    aggregates: tuple[tuple[str, str, str], ...]  # (result column, function, source column or "")
    by: tuple[str, ...]  # group columns (resource-specific names); TimeGenerated binned when `binned`
    binned: bool = True
    where: tuple[tuple[str, str], ...] = ()  # extra equality filters: (column, literal as the mode writes it)
    # what a `countif` aggregate counts: its source column equal to this literal (quoted in legacy mode);
    # a `sumif` sums its source column over the rows whose `if_column` equals it
    counted_if: str | None = None
    if_column: str = STATUS_CODE
    present: tuple[str, ...] = ()  # columns a row must fill (`isnotempty`)
    per_second: str | None = None  # sum this column per second first (the aggregates then read those sums)
    per_second_by: tuple[str, ...] = ()  # more group columns of the per-second sums only (not of the result)
    top: str | None = None  # `top N by <column> desc` on this result column


KEY_RU, KEY_SIZE, THROTTLES, QUERY_STATS = "key_ru", "key_size", "throttles", "query_stats"
QUERY_RU = "query_ru"
OWN_TRAFFIC = "OwnTraffic"  # query_ru: the request came from ruscope's own client (its user agent)
OWN_USER_AGENT = "ruscope"  # the user-agent suffix of every ruscope client (collectors.client); a Kusto term
KEY_OPERATIONS = "key_operations"
PEAK_REQUEST_CHARGE = "PeakRequestCharge"  # key_ru: the most RU the key consumed in one second of the bin
REQUESTS, THROTTLED = "Requests", "Throttled"  # throttles: requests, and those answered 429
SPECS: dict[str, Spec] = {
    KEY_RU: Spec(
        logs.KEY_RU,
        # no count(): a row is a key's second, not a request; the busiest second is what meets the RU/s budget
        ((REQUEST_CHARGE, "sum", REQUEST_CHARGE), (PEAK_REQUEST_CHARGE, "max", REQUEST_CHARGE)),
        (DATABASE_NAME, COLLECTION_NAME, PARTITION_KEY_RANGE_ID, PARTITION_KEY),
        present=(PARTITION_KEY,),  # empty for operations with no single key (§7b R7, R22): no key's RU
        per_second=REQUEST_CHARGE,  # a key's RU in each second (its operations summed, §7b R24)
        per_second_by=(REGION_NAME,),  # each region spends its own copy of the RU/s budget (§7b R1, R50)
    ),
    KEY_OPERATIONS: Spec(  # key_ru per operation: which one heats the key (§7b R8, R20, R51)
        logs.KEY_RU,
        ((REQUEST_CHARGE, "sum", REQUEST_CHARGE), (PEAK_REQUEST_CHARGE, "max", REQUEST_CHARGE)),
        (DATABASE_NAME, COLLECTION_NAME, PARTITION_KEY_RANGE_ID, PARTITION_KEY, OPERATION_NAME),
        present=(PARTITION_KEY,),
        per_second=REQUEST_CHARGE,
        per_second_by=(REGION_NAME,),
    ),
    KEY_SIZE: Spec(
        logs.KEY_STATS,
        (("", "arg_max", SIZE_KB),),
        (DATABASE_NAME, COLLECTION_NAME, PARTITION_KEY),
        binned=False,
        top=SIZE_KB,
    ),
    THROTTLES: Spec(
        logs.REQUESTS,
        # every request of the partition and operation, and those answered 429: the rate's two terms
        ((REQUESTS, "count", ""), (THROTTLED, "countif", STATUS_CODE)),
        (DATABASE_NAME, COLLECTION_NAME, PARTITION_ID, OPERATION_NAME),
        counted_if="429",  # StatusCode is an int column; statusCode_s a string one (below)
    ),
    QUERY_STATS: Spec(
        logs.QUERY_STATS,
        (("Queries", "count", ""),),
        (DATABASE_NAME, COLLECTION_NAME, PARTITION_KEY_RANGE_ID, QUERY_TEXT),
    ),
}
QUERIES = (*SPECS, QUERY_RU)

# `[monitor] logs_tables`: the detailed tables (every query), or one aggregated table (§6.6) in their place
DETAILED = "detailed"
AGGREGATED_TABLES = {tables: table for tables, table in LOGS_TABLES.items() if table is not None}
# What the aggregated rows cannot answer (§7b R63): they are per operation, status and partition only
NOT_SERVED = {
    KEY_RU: "RU per logical key",
    KEY_OPERATIONS: "RU per logical key and operation",
    KEY_SIZE: "logical key sizes",
    QUERY_STATS: "query texts",
    QUERY_RU: "RU per query text",
}


def _aggregated_throttles(table: Table) -> Spec:
    """`throttles` over an aggregated table: its rows' request counts summed, those of 429 rows apart."""
    return replace(
        SPECS[THROTTLES],
        table=table,
        aggregates=((REQUESTS, "sum", REQUEST_COUNT), (THROTTLED, "sumif", REQUEST_COUNT)),
    )


def _check_served(name: str, tables: str) -> None:
    """KeyError when query `name` is one `logs_tables` = `tables` cannot answer (`NOT_SERVED`)."""
    if tables != DETAILED and name in NOT_SERVED:
        raise KeyError(f"{name!r} is not served by {AGGREGATED_TABLES[tables].name} ({NOT_SERVED[name]})")


def spec_of(name: str, tables: str = DETAILED) -> Spec:
    """Query `name`'s spec with `logs_tables` = `tables` (KeyError: not served there)."""
    _check_served(name, tables)
    return SPECS[name] if tables == DETAILED else _aggregated_throttles(AGGREGATED_TABLES[tables])


def queries_for(tables: str) -> tuple[str, ...]:
    """The queries sent with `logs_tables` = `tables`: all of them, or those the aggregated rows answer."""
    return QUERIES if tables == DETAILED else tuple(q for q in QUERIES if q not in NOT_SERVED)


def not_served_line(tables: str) -> str | None:
    """The one line saying what `logs_tables` = `tables` leaves out, and why (None: nothing is)."""
    if tables == DETAILED:
        return None
    table = AGGREGATED_TABLES[tables]
    missing = "; ".join(f"{name} ({what})" for name, what in NOT_SERVED.items())
    return (
        f"logs_tables {tables!r}: requests and 429s are read from {table.name}; not available in this mode: "
        f"{missing}: its rows sum {table.grain_minutes}-minute intervals per operation, status and partition, "
        "with no partition key and no query text"
    )


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
    tables: str = DETAILED  # `[monitor] logs_tables`


def kql_string(value: str) -> str:
    """A KQL string literal of `value`: single quotes, with `\\`, `'`, newline, carriage return and tab
    escaped by a backslash (Kusto's string-literal escapes). Other control characters are refused
    (no database, container or account name holds one)."""
    if _CONTROL.search(value):
        raise ValueError(f"a control character in {value!r} cannot go into a KQL query")
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return "'" + escaped.replace("\t", "\\t") + "'"


def table_of(name: str, tables: str = DETAILED) -> Table:
    """The table whose rows query `name`'s result is grouped by (query_ru: the query statistics' text)."""
    return logs.QUERY_STATS if name == QUERY_RU else spec_of(name, tables).table


def result_columns(name: str, mode: str, tables: str = DETAILED) -> dict[str, str]:
    """Renames for the columns of query `name`'s result to the resource-specific names (empty in that mode):
    the legacy spellings of its category (they differ per category, azure-monitor.md §6.5)."""
    legacy = table_of(name, tables).legacy
    return {spelled: column for column, spelled in legacy.items()} if mode == AZURE_DIAGNOSTICS else {}


def _filters(spec: Spec, params: Params) -> list[str]:
    mode, column = params.mode, spec.table.spelled
    terms = [f"{CATEGORY} == {kql_string(spec.table.category)}"] if mode == AZURE_DIAGNOSTICS else []
    if params.account is not None:  # `=~`: AzureDiagnostics upper-cases Resource, a resource id any case (R23)
        terms.append(f"{column(ACCOUNT_NAME, mode)} =~ {kql_string(params.account)}")
    terms.append(f"{column(DATABASE_NAME, mode)} == {kql_string(params.database)}")
    if params.containers:
        listed = ", ".join(kql_string(c) for c in params.containers)
        terms.append(f"{column(COLLECTION_NAME, mode)} in ({listed})")
    for name, literal in spec.where:  # legacy columns are strings: the literal is quoted there
        terms.append(f"{column(name, mode)} == {kql_string(literal) if mode == AZURE_DIAGNOSTICS else literal}")
    terms.extend(f"isnotempty({column(name, mode)})" for name in spec.present)
    return terms


def _aggregate(spec: Spec, result: str, function: str, source: str, mode: str, per_second: bool = False) -> str:
    table = spec.table
    if function == "count":
        return f"{result} = count()"
    if function in ("countif", "sumif"):  # legacy columns are strings: the literal is quoted there
        literal = spec.counted_if or ""
        value = kql_string(literal) if mode == AZURE_DIAGNOSTICS else literal
        if function == "sumif":
            return f"{result} = sumif({table.spelled(source, mode)}, {table.spelled(spec.if_column, mode)} == {value})"
        return f"{result} = countif({table.spelled(source, mode)} == {value})"
    column = source if per_second else table.spelled(source, mode)  # per second: the first summarize's sums
    if function in ("sum", "max"):
        call = f"{function}(todouble({column}))"
    else:  # arg_max: the latest row's value, named after its column
        call = f"{function}({TIME_GENERATED}, {table.spelled(source, mode)})"
    return f"{result} = {call}" if result else call


def _check(params: Params) -> None:
    if params.mode not in MODES:
        raise ValueError(f"unknown logs mode {params.mode!r} (known: {', '.join(MODES)})")
    if not 1 <= params.bin_minutes <= 1440 or params.top < 1:
        raise ValueError("the time bin is 1 to 1440 minutes and top at least 1")


def build(name: str, params: Params) -> str:
    """The KQL of query `name` (one of QUERIES) for `params` (ValueError on a bad parameter)."""
    _check(params)
    if name == QUERY_RU:
        _check_served(name, params.tables)
        return build_query_ru(params)
    spec, mode = spec_of(name, params.tables), params.mode
    if spec.table.grain_minutes and (params.bin_minutes % spec.table.grain_minutes or mode != RESOURCE_SPECIFIC):
        raise ValueError(f"{spec.table.name} is read in resource-specific mode, in bins of whole intervals")
    source = spec.table.name if mode == RESOURCE_SPECIFIC else LEGACY_TABLE
    per_second = spec.per_second is not None
    aggregates = ", ".join(_aggregate(spec, *a, mode, per_second) for a in spec.aggregates)
    groups = [spec.table.spelled(c, mode) for c in spec.by]
    lines = [source, "| where " + " and ".join(_filters(spec, params))]
    if spec.per_second is not None:
        column = spec.table.spelled(spec.per_second, mode)
        regions = [spec.table.spelled(c, mode) for c in spec.per_second_by]
        by = ", ".join([*groups, *regions, f"bin({TIME_GENERATED}, 1s)"])
        lines.append(f"| summarize {spec.per_second} = sum(todouble({column})) by {by}")
    if spec.binned:
        groups.append(f"bin({TIME_GENERATED}, {params.bin_minutes}m)")
    lines.append(f"| summarize {aggregates} by {', '.join(groups)}")
    if spec.top is not None:
        lines.append(f"| top {params.top} by {spec.table.spelled(spec.top, mode)} desc")
    return "\n".join(lines)


def build_query_ru(params: Params) -> str:
    """Microsoft's "top queries by RU" join (azure-monitor.md §7b R48) as a time-binned aggregate: each query
    request's charge and status (`CDBDataPlaneRequests`) by the text its ActivityId ran (`CDBQueryRuntimeStatistics`),
    and whether ruscope's own client sent it. The statistics side is one row per (ActivityId, text, pkrange)
    before the join, so an operation whose attempts wrote several statistics rows is not counted twice; the
    requests side keeps every attempt (a 429 and its retry share an ActivityId, §7b R46)."""
    _check(params)
    mode, texts, requests = params.mode, logs.QUERY_STATS, logs.REQUESTS
    legacy = mode == AZURE_DIAGNOSTICS
    source = LEGACY_TABLE if legacy else None
    keys = [texts.spelled(c, mode) for c in (DATABASE_NAME, COLLECTION_NAME, PARTITION_KEY_RANGE_ID, QUERY_TEXT)]
    left_id, right_id = texts.spelled(ACTIVITY_ID, mode), requests.spelled(ACTIVITY_ID, mode)
    charge, status = requests.spelled(REQUEST_CHARGE, mode), requests.spelled(STATUS_CODE, mode)
    throttled = kql_string("429") if legacy else "429"  # legacy columns are strings
    right = [
        source or requests.name,
        "| where " + " and ".join(_filters(Spec(requests, (), ()), params)),
        f"| extend {OWN_TRAFFIC} = {requests.spelled(USER_AGENT, mode)} has {kql_string(OWN_USER_AGENT)}",
        f"| project {right_id}, {charge}, {status}, {TIME_GENERATED}, {OWN_TRAFFIC}",
    ]
    on = left_id if left_id == right_id else f"$left.{left_id} == $right.{right_id}"
    lines = [
        source or texts.name,
        "| where " + " and ".join(_filters(Spec(texts, (), ()), params)),
        f"| summarize by {left_id}, {', '.join(keys)}",
        f"| join kind=inner ({' '.join(right)}) on {on}",
        f"| summarize {REQUEST_CHARGE} = sum(todouble({charge})), {REQUESTS} = count(), "
        f"{THROTTLED} = countif({status} == {throttled}) "
        f"by {', '.join(keys)}, {OWN_TRAFFIC}, bin({TIME_GENERATED}, {params.bin_minutes}m)",
    ]
    return "\n".join(lines)


def all_queries() -> list[tuple[str, str]]:
    """(name, KQL) of every query the collector can send, with sample parameters, in both modes: with and
    without an account and a container list (the stand-in's test checks it understands each)."""
    samples = [
        Params("db"),
        Params("it's \\ db", containers=("c1", "o'rders"), account="acct-1", bin_minutes=1, top=20),
    ]
    aggregated = [
        (f"{THROTTLES}[{tables}]#{i}", build(THROTTLES, replace(sample, tables=tables, bin_minutes=15)))
        for tables in AGGREGATED_TABLES
        for i, sample in enumerate(samples)
    ]
    return [
        (f"{name}[{mode}]#{i}", build(name, replace(sample, mode=mode)))
        for mode in MODES
        for i, sample in enumerate(samples)
        for name in QUERIES
    ] + aggregated
