"""`[monitor]`: where `ruscope metrics` and `ruscope logs` read Azure Monitor and Log Analytics.

Kept apart from config.py (which imports it back, so `collectors.config.MonitorSettings` is unchanged) to
keep both modules short. Validated like the rest of the config: a mistake is a located line
(`monitor.logs_mode: Input should be 'resource-specific' or 'azure-diagnostics'`); `logs_tables` with an
aggregated table (azure-monitor.md §6.6) also wants resource-specific mode and a bin of whole intervals.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cosmoscore.monitor.logs import REQUESTS_5M, REQUESTS_15M, RESOURCE_SPECIFIC
from cosmoscore.monitor.metrics import (
    AUTOSCALE_MAX,
    DATA_USAGE,
    DOCUMENT_COUNT,
    INDEX_USAGE,
    NORMALIZED_RU,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
)

# azure-monitor.md §1.2: LogsQueryClient's default endpoint (and the production token audience)
LOGS_ENDPOINT = "https://api.loganalytics.io"
_WORKSPACE_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _https_url(value: str, example: str) -> str:
    parsed = urlparse(value)
    if parsed.scheme != "https" or not parsed.hostname or parsed.query or parsed.username or parsed.password:
        raise ValueError(f"must be an https URL such as {example}")
    return value.rstrip("/")


# `logs_tables`: the detailed tables, or one low-cost aggregated table in their place (azure-monitor.md §6.6)
LOGS_TABLES = {"detailed": None, "aggregated-5m": REQUESTS_5M, "aggregated-15m": REQUESTS_15M}


# The metrics collected unless the config names others (azure-monitor.md §5): the hot-partition signal, RU and
# requests by operation and status (429s), storage and documents per container and physical partition, and the
# throughput in force.
DEFAULT_METRICS = (
    NORMALIZED_RU,
    TOTAL_REQUEST_UNITS,
    TOTAL_REQUESTS,
    DATA_USAGE,
    INDEX_USAGE,
    DOCUMENT_COUNT,
    PARTITION_SIZE,
    PARTITION_THROUGHPUT,
    PROVISIONED,
    AUTOSCALE_MAX,
)


class MonitorSettings(BaseModel):
    """`[monitor]`: the metrics endpoint (accounts with a `monitor_resource`), and the Log Analytics
    workspace of the diagnostic logs (optional: without it `ruscope logs` has nothing to do)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str  # the regional metrics endpoint, https://<region>.metrics.monitor.azure.com (or the stand-in)
    grain: Literal["PT1M", "PT5M"] = "PT1M"
    backfill_hours: Annotated[float, Field(gt=0, le=93 * 24)] = 24  # a first run's window (Azure keeps 93 days)
    overlap_minutes: Annotated[int, Field(ge=0, le=1440)] = 5  # asked again for late points
    ca_bundle: Annotated[str, Field(min_length=1)] | None = None  # a CA file to trust (the local stand-in's)
    metrics: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)] = list(DEFAULT_METRICS)
    workspace_id: str | None = None  # the Log Analytics workspace (a GUID) the diagnostic settings send to
    logs_endpoint: str = LOGS_ENDPOINT  # or the local stand-in's https URL
    logs_mode: Literal["resource-specific", "azure-diagnostics"] = RESOURCE_SPECIFIC  # azure-monitor.md §6
    # what the diagnostic setting sends: the detailed categories, or DataPlaneRequests5M / 15M alone (§6.6)
    logs_tables: Literal["detailed", "aggregated-5m", "aggregated-15m"] = "detailed"
    logs_bin_minutes: Annotated[int, Field(ge=1, le=1440)] = 5  # the time bin of RU, 429 and query rows
    logs_top_keys: Annotated[int, Field(ge=1, le=100_000)] = 1000  # largest logical keys kept per snapshot
    # bins closer to now than this are left to a later run: a row of a bin is stored once, so the bin must be
    # whole when read (Log Analytics ingestion takes 20 s to 3 min typically: learn.microsoft.com/azure/
    # azure-monitor/logs/data-ingestion-time; 0 for the local stand-in, which has no ingestion delay)
    logs_lag_minutes: Annotated[int, Field(ge=0, le=1440)] = 5

    @model_validator(mode="after")
    def _aggregated_tables(self) -> MonitorSettings:
        """An aggregated table exists in resource-specific mode only, and a bin must hold whole intervals."""
        table = LOGS_TABLES[self.logs_tables]
        if table is None:
            return self
        chosen = f"logs_tables = {self.logs_tables!r} ({table.name})"
        if self.logs_mode != RESOURCE_SPECIFIC:
            raise ValueError(
                f"{chosen} needs logs_mode = {RESOURCE_SPECIFIC!r}: the aggregated tables are written "
                f"to resource-specific tables only, not to AzureDiagnostics"
            )
        if self.logs_bin_minutes % (table.grain_minutes or 1):
            raise ValueError(
                f"logs_bin_minutes = {self.logs_bin_minutes} with {chosen}: the bin must be a multiple of "
                f"{table.grain_minutes} minutes, the table's interval"
            )
        return self

    @field_validator("endpoint")
    @classmethod
    def _https(cls, value: str) -> str:
        return _https_url(value, "https://westeurope.metrics.monitor.azure.com")

    @field_validator("logs_endpoint")
    @classmethod
    def _logs_https(cls, value: str) -> str:
        return _https_url(value, LOGS_ENDPOINT)

    @field_validator("workspace_id")
    @classmethod
    def _guid(cls, value: str | None) -> str | None:
        if value is not None and not _WORKSPACE_ID.fullmatch(value):
            raise ValueError("must be the workspace's id, a GUID such as 00000000-0000-0000-0000-000000000000")
        return value
