"""The Log Analytics tables a Cosmos DB account's diagnostic settings write, in both destination modes
(docs/reference/azure-monitor.md §6, §7b).

"Resource specific": one `CDB*` table per diagnostic category, with the columns of §6.1-6.4 (plus the
standard ones every table has, `STANDARD`). "Azure diagnostics" (legacy): every category in the one
`AzureDiagnostics` table, told apart by `Category`, where a column carries a type suffix (`_s` string,
`_d` real, `_g` GUID) and, KQL identifiers being case-sensitive, its spelling differs per category
(§7b R6: QueryRuntimeStatistics writes `databasename_s`, PartitionKeyRUConsumption `databaseName_s`).
So each `Table` holds its own legacy spellings; `AzureDiagnostics`' own columns are `LEGACY_COMMON`.

The aggregated tables (§6.6, preview: `CDBDataPlaneRequests5M` / `15M`, categories `DataPlaneRequests5M` /
`15M`) are written in resource-specific mode only, so they are apart (`AGGREGATED`), with no legacy spellings:
a row sums the requests of one interval (`Table.grain_minutes`) per operation, status and partition.

Names and shapes only: what a collector asks and what the stand-in serves are theirs to choose from these.
To add a column: its name constant, then the `Column` in its table (and its legacy spelling if documented).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

# Destination modes of a diagnostic setting (§6)
RESOURCE_SPECIFIC: Final = "resource-specific"
AZURE_DIAGNOSTICS: Final = "azure-diagnostics"
MODES = (RESOURCE_SPECIFIC, AZURE_DIAGNOSTICS)

# Tables (§6.1-6.4) and the legacy one (§6)
KEY_RU_TABLE = "CDBPartitionKeyRUConsumption"
KEY_STATS_TABLE = "CDBPartitionKeyStatistics"
QUERY_STATS_TABLE = "CDBQueryRuntimeStatistics"
REQUESTS_TABLE = "CDBDataPlaneRequests"
REQUESTS_5M_TABLE = "CDBDataPlaneRequests5M"  # §6.6: aggregated, resource-specific only
REQUESTS_15M_TABLE = "CDBDataPlaneRequests15M"
LEGACY_TABLE = "AzureDiagnostics"

# Diagnostic categories (§6): the `Category` of a legacy row, one per resource-specific table
KEY_RU_CATEGORY = "PartitionKeyRUConsumption"
KEY_STATS_CATEGORY = "PartitionKeyStatistics"
QUERY_STATS_CATEGORY = "QueryRuntimeStatistics"
REQUESTS_CATEGORY = "DataPlaneRequests"
REQUESTS_5M_CATEGORY = "DataPlaneRequests5M"  # §6.6, §7b R60
REQUESTS_15M_CATEGORY = "DataPlaneRequests15M"

# Columns of the resource-specific tables (§6.1-6.4)
TIME_GENERATED = "TimeGenerated"
ACCOUNT_NAME = "AccountName"
ACTIVITY_ID = "ActivityId"
DATABASE_NAME = "DatabaseName"
COLLECTION_NAME = "CollectionName"
OPERATION_NAME = "OperationName"
PARTITION_KEY = "PartitionKey"
PARTITION_KEY_RANGE_ID = "PartitionKeyRangeId"
REGION_NAME = "RegionName"
REQUEST_CHARGE = "RequestCharge"
SIZE_KB = "SizeKb"
QUERY_TEXT = "QueryText"
PARTITION_ID = "PartitionId"  # §6.4: the physical partition's GUID, not a pkrange id
STATUS_CODE = "StatusCode"  # §6.4: an int
DURATION_MS = "DurationMs"
REQUEST_LENGTH = "RequestLength"
RESPONSE_LENGTH = "ResponseLength"
USER_AGENT = "UserAgent"
CONNECTION_MODE = "ConnectionMode"
CLIENT_IP_ADDRESS = "ClientIpAddress"
REQUEST_RESOURCE_ID = "RequestResourceId"
REQUEST_RESOURCE_TYPE = "RequestResourceType"
# Columns of the aggregated tables (§6.6): the interval's request count and per-request statistics
REQUEST_COUNT = "RequestCount"  # a real (§7b R61: Microsoft's sample queries spell it SampleCount)
TOTAL_REQUEST_CHARGE = "TotalRequestCharge"
AVG_REQUEST_CHARGE = "AvgRequestCharge"
MAX_REQUEST_CHARGE = "MaxRequestCharge"
TOTAL_DURATION_MS = "TotalDurationMs"
AVG_DURATION_MS = "AvgDurationMs"
MAX_DURATION_MS = "MaxDurationMs"
TOTAL_REQUEST_LENGTH = "TotalRequestLength"
AVG_REQUEST_LENGTH = "AvgRequestLength"
MAX_REQUEST_LENGTH = "MaxRequestLength"
TOTAL_RESPONSE_LENGTH = "TotalResponseLength"
AVG_RESPONSE_LENGTH = "AvgResponseLength"
MAX_RESPONSE_LENGTH = "MaxResponseLength"
# Standard columns of every resource-specific table (§6, before §6.1)
TENANT_ID = "TenantId"  # the workspace id
SOURCE_SYSTEM = "SourceSystem"
TYPE = "Type"  # the table's name
RESOURCE_ID_ = "_ResourceId"
SUBSCRIPTION_ID_ = "_SubscriptionId"
BILLED_SIZE = "_BilledSize"
IS_BILLABLE = "_IsBillable"
# AzureDiagnostics' own columns (§6.5): the category, and the resource, upper-cased
CATEGORY = "Category"
RESOURCE = "Resource"  # the account's name
RESOURCE_ID = "ResourceId"
RESOURCE_GROUP = "ResourceGroup"
SUBSCRIPTION_ID = "SubscriptionId"
RESOURCE_PROVIDER = "ResourceProvider"
RESOURCE_TYPE = "ResourceType"

STRING, INT, REAL, DATETIME, GUID = "string", "int", "real", "datetime", "guid"  # Kusto scalar types


@dataclass(frozen=True)
class Column:
    """A column and its Kusto type."""

    name: str
    type: str = STRING


@dataclass(frozen=True)
class Table:
    """A diagnostic category: its resource-specific table and columns (the standard ones apart), and the
    `AzureDiagnostics` spelling of the columns documented in legacy mode (resource-specific name -> legacy)."""

    name: str
    category: str
    columns: tuple[Column, ...]
    legacy: dict[str, str] = field(default_factory=dict)
    grain_minutes: int | None = None  # an aggregated table's interval (§6.6); None: a row per event

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def spelled(self, name: str, mode: str) -> str:
        """Column `name` (a resource-specific name) as the mode's table spells it (KeyError: undocumented)."""
        if mode == RESOURCE_SPECIFIC:
            if self.column(name) is None and name not in STANDARD_NAMES:
                raise KeyError(f"{self.name} has no column {name!r}")
            return name
        return self.legacy[name]


def legacy_type(name: str) -> str:
    """The Kusto type of an `AzureDiagnostics` column, from its suffix (§6: `_s`, `_d`, `_g`)."""
    common = next((c for c in LEGACY_COMMON if c.name == name), None)
    if common is not None:
        return common.type
    return {"_d": REAL, "_g": GUID}.get(name[-2:], STRING)


STANDARD = (
    Column(TENANT_ID),
    Column(SOURCE_SYSTEM),
    Column(TYPE),
    Column(RESOURCE_ID_),
    Column(SUBSCRIPTION_ID_),
    Column(BILLED_SIZE, REAL),
    Column(IS_BILLABLE),
)
STANDARD_NAMES = frozenset(c.name for c in STANDARD)
LEGACY_COMMON = (
    Column(TIME_GENERATED, DATETIME),
    Column(CATEGORY),
    Column(OPERATION_NAME),
    Column(RESOURCE),
    Column(RESOURCE_ID),
    Column(RESOURCE_GROUP),
    Column(SUBSCRIPTION_ID),
    Column(RESOURCE_PROVIDER),
    Column(RESOURCE_TYPE),
    *STANDARD,
)
# Legacy spellings every category shares (§6.5): the time, and the account as the row's resource
_SHARED = {TIME_GENERATED: TIME_GENERATED, ACCOUNT_NAME: RESOURCE}
_CAMEL = {DATABASE_NAME: "databaseName_s", COLLECTION_NAME: "collectionName_s", REGION_NAME: "regionName_s"}
_TIME, _ACCOUNT = Column(TIME_GENERATED, DATETIME), Column(ACCOUNT_NAME)
_DB, _COLL, _REGION = Column(DATABASE_NAME), Column(COLLECTION_NAME), Column(REGION_NAME)

KEY_RU = Table(  # §6.1; legacy: §6, §7b R6
    KEY_RU_TABLE,
    KEY_RU_CATEGORY,
    (
        _TIME,
        _ACCOUNT,
        Column(ACTIVITY_ID),  # on the current learn page, missing from the 2024 include
        _DB,
        _COLL,
        Column(OPERATION_NAME),
        Column(PARTITION_KEY),
        Column(PARTITION_KEY_RANGE_ID),
        _REGION,
        Column(REQUEST_CHARGE, REAL),
    ),
    {
        **_SHARED,
        **_CAMEL,
        PARTITION_KEY: "partitionKey_s",
        PARTITION_KEY_RANGE_ID: "partitionKeyRangeId_s",
        REQUEST_CHARGE: "requestCharge_s",
        OPERATION_NAME: "operationType_s",  # §7b R20: the operation is a property of its own here
    },
)
KEY_STATS = Table(  # §6.2; legacy: §6.5 (regionName_s, databaseName_s, collectionName_s, partitionKey_s, sizeKb_d)
    KEY_STATS_TABLE,
    KEY_STATS_CATEGORY,
    (_TIME, _ACCOUNT, _DB, _COLL, Column(PARTITION_KEY), _REGION, Column(SIZE_KB, INT)),
    {**_SHARED, **_CAMEL, PARTITION_KEY: "partitionKey_s", SIZE_KB: "sizeKb_d"},
)
QUERY_STATS = Table(  # §6.3 (no RegionName); legacy: §7b R6, all lower case
    QUERY_STATS_TABLE,
    QUERY_STATS_CATEGORY,
    (_TIME, _ACCOUNT, Column(ACTIVITY_ID), _DB, _COLL, Column(PARTITION_KEY_RANGE_ID), Column(QUERY_TEXT)),
    {
        **_SHARED,
        DATABASE_NAME: "databasename_s",
        COLLECTION_NAME: "collectionname_s",
        PARTITION_KEY_RANGE_ID: "partitionkeyrangeid_s",
        QUERY_TEXT: "querytext_s",
        ACTIVITY_ID: "activityId_g",
    },
)
REQUESTS = Table(  # §6.4 (the columns this catalogue names; the rest are strings there); legacy: §6.5
    REQUESTS_TABLE,
    REQUESTS_CATEGORY,
    (
        _TIME,
        _ACCOUNT,
        Column(ACTIVITY_ID),
        Column(CLIENT_IP_ADDRESS),
        _COLL,
        Column(CONNECTION_MODE),
        _DB,
        Column(DURATION_MS, REAL),
        Column(OPERATION_NAME),
        Column(PARTITION_ID),
        _REGION,
        Column(REQUEST_CHARGE, REAL),
        Column(REQUEST_LENGTH, REAL),
        Column(REQUEST_RESOURCE_ID),
        Column(REQUEST_RESOURCE_TYPE),
        Column(RESPONSE_LENGTH, REAL),
        Column(STATUS_CODE, INT),
        Column(USER_AGENT),
    ),
    {
        **_SHARED,
        **_CAMEL,
        ACTIVITY_ID: "activityId_g",
        OPERATION_NAME: OPERATION_NAME,
        STATUS_CODE: "statusCode_s",
        REQUEST_CHARGE: "requestCharge_s",
        PARTITION_ID: "partitionId_g",
        DURATION_MS: "duration_s",
        RESPONSE_LENGTH: "responseLength_s",
        REQUEST_RESOURCE_TYPE: "requestResourceType_s",  # troubleshoot-request-rate-too-large's 429 query
        USER_AGENT: "userAgent_s",  # §7b R70: "{user agent name}/{version}", the older logging page
    },
)
TABLES: dict[str, Table] = {t.name: t for t in (KEY_RU, KEY_STATS, QUERY_STATS, REQUESTS)}
BY_CATEGORY: dict[str, Table] = {t.category: t for t in TABLES.values()}
CATEGORIES = tuple(BY_CATEGORY)


def _aggregated(name: str, category: str, grain: int) -> Table:
    """An aggregated table (§6.6): CDBDataPlaneRequests' dimensions, then the interval's count and the
    total, average and largest charge, duration and sizes of its requests; resource-specific only."""
    statistics = (
        (TOTAL_REQUEST_CHARGE, AVG_REQUEST_CHARGE, MAX_REQUEST_CHARGE),
        (TOTAL_DURATION_MS, AVG_DURATION_MS, MAX_DURATION_MS),
        (TOTAL_REQUEST_LENGTH, AVG_REQUEST_LENGTH, MAX_REQUEST_LENGTH),
        (TOTAL_RESPONSE_LENGTH, AVG_RESPONSE_LENGTH, MAX_RESPONSE_LENGTH),
    )
    dimensions = (
        _TIME,
        _ACCOUNT,
        Column(CLIENT_IP_ADDRESS),
        _COLL,
        Column(CONNECTION_MODE),
        _DB,
        Column(OPERATION_NAME),
        Column(PARTITION_ID),
        _REGION,
        Column(REQUEST_RESOURCE_ID),
        Column(REQUEST_RESOURCE_TYPE),
        Column(STATUS_CODE, INT),
        Column(USER_AGENT),
    )
    measures = (Column(REQUEST_COUNT, REAL), *(Column(n, REAL) for names in statistics for n in names))
    return Table(name, category, (*dimensions, *measures), grain_minutes=grain)


REQUESTS_5M = _aggregated(REQUESTS_5M_TABLE, REQUESTS_5M_CATEGORY, 5)
REQUESTS_15M = _aggregated(REQUESTS_15M_TABLE, REQUESTS_15M_CATEGORY, 15)
AGGREGATED: dict[str, Table] = {t.name: t for t in (REQUESTS_5M, REQUESTS_15M)}
AGGREGATED_CATEGORIES = tuple(t.category for t in AGGREGATED.values())


def legacy_columns() -> frozenset[str]:
    """Every `AzureDiagnostics` column the catalogue names: its own and each category's spellings."""
    return frozenset(c.name for c in LEGACY_COMMON) | {v for t in TABLES.values() for v in t.legacy.values()}


def column_names() -> frozenset[str]:
    """Every column name the catalogue declares, in either mode."""
    tables = (*TABLES.values(), *AGGREGATED.values())
    resource_specific = {c.name for t in tables for c in t.columns} | STANDARD_NAMES
    return frozenset(resource_specific) | legacy_columns()
