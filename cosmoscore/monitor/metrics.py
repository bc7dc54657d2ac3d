"""Azure Monitor's platform metrics of `Microsoft.DocumentDB/databaseAccounts`: names, units, aggregations
(the default first), dimensions and time grains, as docs/reference/azure-monitor.md §5 lists them.

Names and shapes only: which metrics a collector asks, how it splits them, and which the local stand-in
computes are theirs to choose (from these names). The 2024 revision of the catalogue is the one declared;
where the 2023 revision differs, the comment says so. `AvailableStorage` is left out: it was removed from
Azure Monitor at the end of September 2023 (§5).
"""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "Microsoft.DocumentDB/databaseAccounts"  # §5 title; the `metricnamespace` of every query

# Dimensions (§5, column "Dimensions"). A filter names them in this case (`CollectionName eq '*'`);
# the service returns them lower-cased in a series' metadata values (§2.3).
DATABASE_NAME = "DatabaseName"
COLLECTION_NAME = "CollectionName"
REGION = "Region"
PARTITION_KEY_RANGE_ID = "PartitionKeyRangeId"
PHYSICAL_PARTITION_ID = "PhysicalPartitionId"
COLLECTION_RID = "CollectionRid"
OFFER_OWNER_RID = "OfferOwnerRid"
OPERATION_TYPE = "OperationType"
STATUS_CODE = "StatusCode"
STATUS = "Status"
CAPACITY_TYPE = "CapacityType"
PRIORITY_LEVEL = "PriorityLevel"
CONNECTION_MODE = "ConnectionMode"
IS_EXTERNAL = "IsExternal"
IS_SHARED_THROUGHPUT_OFFER = "IsSharedThroughputOffer"
PUBLIC_API_TYPE = "PublicAPIType"
API_TYPE = "APIType"
ROLE = "Role"

# Aggregations (§5, column "Aggregations"; §2.2: `aggregations=[...]` of `query_resources`).
TOTAL, AVERAGE, MAXIMUM, MINIMUM, COUNT = "Total", "Average", "Maximum", "Minimum", "Count"

# Query intervals, ISO 8601, in minutes: the emitted grains and the coarser ones aggregated server-side
# (§5 notes: PT5M, PT15M, PT30M, PT1H, PT6H, PT12H, P1D).
GRAIN_MINUTES = {"PT1M": 1, "PT5M": 5, "PT15M": 15, "PT30M": 30, "PT1H": 60, "PT6H": 360, "PT12H": 720, "P1D": 1440}
RETENTION_DAYS = 93  # §5 notes: "Platform metrics are kept for 93 days."

# What one metrics:getBatch call may ask; past these the service answers 400 (BadRequest).
# "All resources in a batch ... at most 50 resource IDs" (learn.microsoft.com/azure/azure-monitor/essentials/
# migrate-to-batch-api, batching restrictions; the getBatch GA notice; azure-monitor.md §2.2).
MAX_RESOURCE_IDS = 50
# "up to 20 metrics" per query of the metrics REST API (learn.microsoft.com/azure/azure-monitor/essentials/
# rest-api-walkthrough; the portal's metrics chart has the same cap).
MAX_METRIC_NAMES = 20
# A query's time range cannot reach past what is kept: at most the retention (RETENTION_DAYS) long.
MAX_RANGE_DAYS = RETENTION_DAYS
# Data points in one answer (resources x metrics x series x intervals). The references give no figure:
# ours, sized for the collector's largest call on the emulator (a day at PT1M split by 100 partition key
# ranges: 144,000, benchmarks/bench_monitor.py) with room, and for the memory an answer may take (~1 KB a point).
MAX_POINTS = 500_000

# Metric names (§5, column "REST name").
NORMALIZED_RU = "NormalizedRUConsumption"
TOTAL_REQUEST_UNITS = "TotalRequestUnits"
TOTAL_REQUESTS = "TotalRequests"
DATA_USAGE = "DataUsage"
INDEX_USAGE = "IndexUsage"
DOCUMENT_COUNT = "DocumentCount"
PARTITION_SIZE = "PhysicalPartitionSizeInfo"
PARTITION_THROUGHPUT = "PhysicalPartitionThroughputInfo"
PARTITION_COUNT = "PhysicalPartitionCount"
AUTOSCALED_RU = "AutoscaledRU"
PROVISIONED = "ProvisionedThroughput"
AUTOSCALE_MAX = "AutoscaleMaxThroughput"
LATENCY_DIRECT = "ServerSideLatencyDirect"
LATENCY_GATEWAY = "ServerSideLatencyGateway"
METADATA_REQUESTS = "MetadataRequests"
SERVICE_AVAILABILITY = "ServiceAvailability"


@dataclass(frozen=True)
class MetricDefinition:
    """One metric of the catalogue (§5): its REST name, unit, supported aggregations with the default
    first, dimensions, and the time grains it is emitted at, finest first."""

    name: str
    unit: str
    aggregations: tuple[str, ...]
    dimensions: tuple[str, ...]
    grains: tuple[str, ...]

    @property
    def default_aggregation(self) -> str:
        """What the service answers when a query names no aggregation."""
        return self.aggregations[0]

    @property
    def finest_grain(self) -> str:
        """The finest interval a query may ask (a finer one is refused)."""
        return self.grains[0]

    @property
    def finest_minutes(self) -> int:
        return GRAIN_MINUTES[self.finest_grain]


_CONTAINER = (COLLECTION_NAME, DATABASE_NAME, REGION)
_REQUESTS = (DATABASE_NAME, COLLECTION_NAME, REGION, STATUS_CODE, OPERATION_TYPE, STATUS, CAPACITY_TYPE, PRIORITY_LEVEL)
_LATENCY = (
    DATABASE_NAME,
    COLLECTION_NAME,
    REGION,
    CONNECTION_MODE,
    OPERATION_TYPE,
    PUBLIC_API_TYPE,
    API_TYPE,
    IS_EXTERNAL,
)
_DAILY = ("PT1M", "PT5M", "PT1H", "P1D")
_SIZES = (TOTAL, AVERAGE, MAXIMUM, MINIMUM)
_PARTITION = (COLLECTION_NAME, DATABASE_NAME, PHYSICAL_PARTITION_ID, OFFER_OWNER_RID, REGION)
CATALOGUE: dict[str, MetricDefinition] = {
    m.name: m
    for m in (
        # OfferOwnerRid is absent from the 2023 revision
        MetricDefinition(
            NORMALIZED_RU,
            "Percent",
            (MAXIMUM, AVERAGE),
            (*_CONTAINER, PARTITION_KEY_RANGE_ID, COLLECTION_RID, PHYSICAL_PARTITION_ID, OFFER_OWNER_RID),
            _DAILY,
        ),
        MetricDefinition(TOTAL_REQUEST_UNITS, "Count", (TOTAL, AVERAGE, MAXIMUM), _REQUESTS, ("PT1M",)),
        MetricDefinition(TOTAL_REQUESTS, "Count", (COUNT,), (*_REQUESTS, CONNECTION_MODE, IS_EXTERNAL), ("PT1M",)),
        MetricDefinition(DATA_USAGE, "Bytes", _SIZES, _CONTAINER, ("PT5M", "PT15M", "PT30M", "PT1H")),
        MetricDefinition(INDEX_USAGE, "Bytes", _SIZES, _CONTAINER, ("PT5M", "PT15M", "PT30M", "PT1H")),
        MetricDefinition(DOCUMENT_COUNT, "Count", (TOTAL, AVERAGE), _CONTAINER, ("PT5M", "PT1H", "P1D")),
        # the 2023 revision lists Maximum only
        MetricDefinition(PARTITION_SIZE, "Bytes", (MAXIMUM, AVERAGE), _PARTITION, _DAILY),
        # the 2023 revision also lists PT1M
        MetricDefinition(PARTITION_THROUGHPUT, "Count", (MAXIMUM,), _PARTITION, ("PT5M", "PT1H", "P1D")),
        MetricDefinition(
            PARTITION_COUNT,
            "Count",
            (MAXIMUM,),
            (COLLECTION_NAME, DATABASE_NAME, IS_SHARED_THROUGHPUT_OFFER, OFFER_OWNER_RID, REGION),
            ("PT5M",),
        ),
        MetricDefinition(
            AUTOSCALED_RU, "Count", (MAXIMUM,), (DATABASE_NAME, COLLECTION_NAME, PHYSICAL_PARTITION_ID, REGION), _DAILY
        ),
        # the 2023 revision has AllowWrite instead of Region
        MetricDefinition(
            PROVISIONED, "Count", (MAXIMUM,), (DATABASE_NAME, COLLECTION_NAME, REGION), ("PT5M", "PT1H", "P1D")
        ),
        MetricDefinition(AUTOSCALE_MAX, "Count", (MAXIMUM,), (DATABASE_NAME, COLLECTION_NAME), ("PT5M", "PT1H")),
        MetricDefinition(LATENCY_DIRECT, "MilliSeconds", (AVERAGE, MINIMUM, MAXIMUM, TOTAL), _LATENCY, _DAILY),
        MetricDefinition(LATENCY_GATEWAY, "MilliSeconds", (AVERAGE, MINIMUM, MAXIMUM, TOTAL), _LATENCY, _DAILY),
        MetricDefinition(
            METADATA_REQUESTS, "Count", (COUNT,), (DATABASE_NAME, COLLECTION_NAME, REGION, STATUS_CODE, ROLE), ("PT1M",)
        ),
        MetricDefinition(SERVICE_AVAILABILITY, "Percent", (MINIMUM, AVERAGE, MAXIMUM), (IS_EXTERNAL,), ("PT1H",)),
    )
}
_BY_LOWER = {name.lower(): m for name, m in CATALOGUE.items()}
DIMENSIONS = tuple(dict.fromkeys(d for m in CATALOGUE.values() for d in m.dimensions))

# The `CollectionName` a shared-throughput database's own series carry (azure-monitor.md §7b R2, R30-R32):
# its physical partitions belong to the database's offer, not to a container, so NormalizedRUConsumption,
# PhysicalPartitionSizeInfo and PhysicalPartitionThroughputInfo come back with `<empty>`, and the offer's
# ProvisionedThroughput / AutoscaleMaxThroughput with `__Empty`. Every other metric (TotalRequestUnits,
# TotalRequests, DataUsage, IndexUsage, DocumentCount) still names the real container. Both strings are
# legal container ids (only `/` and `\` are refused), so a reader tells them apart by metric, not by name.
SHARED_PARTITIONS_COLLECTION = "<empty>"
SHARED_OFFER_COLLECTION = "__Empty"
SHARED_DATABASE_COLLECTION = {
    NORMALIZED_RU: SHARED_PARTITIONS_COLLECTION,
    PARTITION_SIZE: SHARED_PARTITIONS_COLLECTION,
    PARTITION_THROUGHPUT: SHARED_PARTITIONS_COLLECTION,
    PROVISIONED: SHARED_OFFER_COLLECTION,
    AUTOSCALE_MAX: SHARED_OFFER_COLLECTION,
}


def find_metric(name: str) -> MetricDefinition | None:
    """The catalogue's metric `name`, matched without regard to case as the service does; None if unknown."""
    return _BY_LOWER.get(name.strip().lower())
