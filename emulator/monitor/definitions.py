"""Which metrics the Azure Monitor stand-in serves, and how: the catalogue's metrics (`cosmoscore.monitor.metrics`,
azure-monitor.md §5) less the aggregations and dimensions the emulator's accounting cannot back, and the
catalogued metrics it does not compute, answered as the service answers a metric it could not query (a 200
whose metric carries `errorCode`/`errorMessage`, §7b R11). To serve another metric: a `served(...)` line in
`DEFINITIONS` and its computation in `emulator.monitor.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    AUTOSCALED_RU,
    AVERAGE,
    CATALOGUE,
    COLLECTION_NAME,
    DATA_USAGE,
    DATABASE_NAME,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    LATENCY_DIRECT,
    LATENCY_GATEWAY,
    METADATA_REQUESTS,
    NORMALIZED_RU,
    OPERATION_TYPE,
    PARTITION_COUNT,
    PARTITION_KEY_RANGE_ID,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PHYSICAL_PARTITION_ID,
    PROVISIONED,
    REGION,
    SERVICE_AVAILABILITY,
    STATUS_CODE,
    TOTAL,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)
from emulator.monitor.query import bad_request


@dataclass(frozen=True)
class Definition:
    """A metric as the stand-in serves it: the catalogue's (azure-monitor.md §5), less the aggregations and
    dimensions the accounting cannot back."""

    name: str
    unit: str
    description: str
    aggregations: tuple[str, ...]  # the default first
    dimensions: tuple[str, ...]
    grain: int = 1  # the finest time grain it is emitted at, in minutes (§5); finer intervals are refused


def served(
    name: str, description: str, aggregations: tuple[str, ...] | None = None, dimensions: tuple[str, ...] = ()
) -> Definition:
    """The catalogue's metric `name` as served: its unit and finest grain, the given subset of its
    aggregations (default: all; the default stays first) and its container dimensions (Region too, where
    the catalogue has it) plus `dimensions`."""
    metric = CATALOGUE[name]
    aggs = aggregations or metric.aggregations
    dims = (DATABASE_NAME, COLLECTION_NAME, *([REGION] if REGION in metric.dimensions else []), *dimensions)
    if aggs[0] != metric.default_aggregation or not set(aggs) <= set(metric.aggregations):
        raise ValueError(f"{name}: {aggs} is not a subset of {metric.aggregations} led by the default")
    if not set(dims) <= set(metric.dimensions):
        raise ValueError(f"{name}: {dims} is not a subset of {metric.dimensions}")
    return Definition(name, metric.unit, description, aggs, dims, metric.finest_minutes)


DEFINITIONS = {
    d.name.lower(): d
    for d in (
        # PhysicalPartitionId: one physical partition per range in the emulator, so the same id
        served(
            NORMALIZED_RU,
            "Max RU consumption percentage per minute",
            dimensions=(PARTITION_KEY_RANGE_ID, PHYSICAL_PARTITION_ID),
        ),
        # Maximum is per request: the per-minute aggregates cannot back it
        served(TOTAL_REQUEST_UNITS, "SQL Request Units consumed", (TOTAL, AVERAGE), (OPERATION_TYPE, STATUS_CODE)),
        served(TOTAL_REQUESTS, "Number of requests made", dimensions=(OPERATION_TYPE, STATUS_CODE)),
        # less OfferOwnerRid: no offer resource ids
        served(DATA_USAGE, "Total data usage reported at 5 minutes granularity"),
        served(INDEX_USAGE, "Total index usage reported at 5 minutes granularity"),
        served(DOCUMENT_COUNT, "Total document count"),
        served(PARTITION_SIZE, "Physical Partition Size in bytes", dimensions=(PHYSICAL_PARTITION_ID,)),
        served(PARTITION_THROUGHPUT, "Physical Partition Throughput", dimensions=(PHYSICAL_PARTITION_ID,)),
        served(PROVISIONED, "Provisioned Throughput"),
        served(AUTOSCALE_MAX, "Autoscale Max Throughput"),
    )
}
# In Azure's catalogue (azure-monitor.md §5) but not computed from the emulator's accounting yet: a query
# naming one is valid (it is checked like any other), and the answer is a 200 whose metric carries
# `errorCode`/`errorMessage` and no time series, as the service reports one metric it could not query
# (§7b R11), while the other metrics of the query are served.
NOT_COMPUTED = (
    PARTITION_COUNT,
    AUTOSCALED_RU,
    LATENCY_DIRECT,
    LATENCY_GATEWAY,
    METADATA_REQUESTS,
    SERVICE_AVAILABILITY,
)
NOT_COMPUTED_CODE = "MetricNotComputed"  # the stand-in's own: Azure publishes no list of these codes (R11)


def _uncomputed(name: str) -> Definition:
    """The catalogue's metric `name` whole (every aggregation and dimension), for validating a query of it."""
    metric = CATALOGUE[name]
    return Definition(name, metric.unit, name, metric.aggregations, metric.dimensions, metric.finest_minutes)


UNCOMPUTED = {name.lower(): _uncomputed(name) for name in NOT_COMPUTED}


def definition_of(name: str) -> Definition:
    definition = DEFINITIONS.get(name.strip().lower()) or UNCOMPUTED.get(name.strip().lower())
    if definition is not None:
        return definition
    valid = ", ".join(d.name for d in DEFINITIONS.values())
    raise bad_request(
        "Failed to find metric configuration for provider: Microsoft.DocumentDB, resource Type: databaseAccounts, "
        f"metric: {name.strip()}, Valid metrics: {valid}"
    )


def failed_metric(definition: Definition, reason: str) -> dict[str, object]:
    """A metric the answer reports failed: its error code and message, no time series (§7b R11)."""
    return {
        "type": "Microsoft.Insights/metrics",
        "name": {"value": definition.name, "localizedValue": definition.description},
        "displayDescription": definition.description,
        "unit": definition.unit,
        "errorCode": NOT_COMPUTED_CODE,
        "errorMessage": f"Metric {definition.name} could not be queried: {reason}.",
        "timeseries": [],
    }
