"""The fleet's columns, signals' thresholds and notes: what every module of `analysis.fleet` and its readers
name (the package docstring says what each column means)."""

from __future__ import annotations

from analysis import load
from analysis.queries import costs as qc
from store.records import EXECUTIONS, METRICS, PARTITIONS, REQUESTS, SCOPE_COLUMNS

FLEET_KEY = list(SCOPE_COLUMNS)

THROTTLE_FULL_RATE = 0.05  # a 429 rate at which the throttling signal is at its maximum (see the docstring)

PROVISIONED_METRICS = load.PROVISIONED_METRICS  # AutoscaleMaxThroughput preferred, then ProvisionedThroughput

# in the order a tie is named: a hot partition first, since it is what a container's 429s come from
RISK_SIGNALS = {"hot_risk": "hot partition", "throttle_risk": "429s", "storage_risk": "storage"}

HOT_NORMALIZED_RU = 90.0  # percent: a range this close to its share of the RU/s is at its limit (see the docstring)

HOT_WASTE_NOTE = "a hot partition: the RU/s are not wasted, the key is skewed"

SHARED_WASTE_NOTE = "spends its database's shared RU/s: see the database's throughput unit"

# `throughput_unit`: whose RU/s a container spends, its own or its database's shared offer
OWN_UNIT = "container"

SHARED_UNIT = "database"

OFFER_NAME = "(offer)"  # a stand-in container name for a shared offer's rows inside `analysis.load`

# The store columns these functions read: a view loads only these.
EXECUTION_COLUMNS = EXECUTIONS.pick("account", *qc.EXECUTION_COLUMNS)

REQUEST_COLUMNS = REQUESTS.pick(*FLEET_KEY, "time", "request_kind", "pkrange_id", "status", "request_charge")

METRIC_COLUMNS = METRICS.pick(
    *FLEET_KEY, "time", "metric", "aggregation", "pkrange_id", "value", "grain", "region"
)  # throughput_stats

# all summarize_fleet reads: the status code the 429 rate needs (kept out of METRIC_COLUMNS, which others
# extend with it: a column named twice breaks a load)
FLEET_METRIC_COLUMNS = METRICS.pick(*METRIC_COLUMNS, "status_code")

PARTITION_COLUMNS = PARTITIONS.pick(  # the storage collector's `partitions`
    *FLEET_KEY, "time", "pkrange_id", "size_kb", "throughput_ru", "database_throughput_ru"
)

# the workload's per-partition load (`analysis.load`), after the columns fleet had before it
PARTITION_LOAD_STATS = ["max_normalized_ru", *load.SUSTAINED_COLUMNS, "own_minutes_excluded"]

LOAD_STATS = [*PARTITION_LOAD_STATS, "own_ru_subtracted"]

COUNT_COLUMNS = ["executions", "requests", "pkranges_seen", "sustained_minutes", "own_minutes_excluded"]

THROTTLE_WINDOW = ["throttle_start", "throttle_end"]  # the first and last time a 429 rate counted

SUSTAINED_WINDOW = ["sustained_start", "sustained_end"]

TIME_COLUMNS = ["last_seen", *THROTTLE_WINDOW, *SUSTAINED_WINDOW]

TEXT_COLUMNS = ["risk_driver", "waste_note", "throttle_source", "hot_pkrange", "throughput_unit", "last_seen"]

TEXT_COLUMNS += ["sustained_pkrange"]

FLEET_COLUMNS = [
    *FLEET_KEY,
    "risk",
    "risk_driver",
    "waste",
    "waste_note",
    "executions",
    "total_ru",
    "mean_ru",
    "fan_out_share",
    "requests",
    "throttle_rate",
    "throttle_source",
    *THROTTLE_WINDOW,
    "pkranges_seen",
    "hot_pkrange",
    "hot_pkrange_share",
    "throughput_unit",
    "provisioned_ru_s",
    "p95_ru_s",
    "max_normalized_ru",
    "largest_partition_gb",
    "storage_headroom",
    "last_seen",
    *LOAD_STATS[1:],  # added after `max_normalized_ru` was shipped: at the end
]

grain_seconds = load.grain_seconds  # an ISO 8601 grain in seconds (one minute when missing)
