"""Fleet: every container of every account in a store frame, one row each, ranked by risk, then by waste.

Pure functions over the store's frames (`store`), of which they read only the `*_COLUMNS` below.
The time range and scope are cut before these run (`analysis.scope`). A container is identified by
(account, database, container); rows outside any container (`container` empty: the client's account read,
account- or database-level metrics) are left out.

**Columns** (`FLEET_COLUMNS`); a column without data behind it is NaN, never a guess:
- from `executions` (the replay): `executions` (logical executions, as in `analysis.queries.costs`, every
  status), `total_ru` (their RU, failed ones included: they were billed), `mean_ru` and `fan_out_share`
  (of the successful ones: RU per execution; the share whose observed routing was "fan-out");
- `requests`, `throttle_rate` (429 responses / requests), `throttle_source`, and `throttle_start` /
  `throttle_end` (the first and last time counted: its window): Azure Monitor's TotalRequests by status code
  where Monitor counted the container's requests (all its traffic), else the diagnostic logs'
  (`log_throttles`), else the replay's `requests`; `analysis.throttling.preferred_rate` computes it, so
  Fleet, Overview, the report and the alert show one rate. Beside one region's Monitor figures a log-derived
  rate's source says "all regions" (`analysis.throttling.source_name`: the store's logs sum the regions);
- from `requests` (the replay): its view of skew from the data pages' RU by `pkrange_id`: `pkranges_seen`,
  `hot_pkrange` and `hot_pkrange_share` (the hottest pkrange's share of the container's page RU). It shows
  where the *replayed queries* land, not the production traffic;
- from `metrics` (Azure Monitor, when the table exists), through the per-partition load model (`analysis.load`:
  ruscope's own traffic, known exactly from `requests`, kept apart): `provisioned_ru_s` (the latest
  AutoscaleMaxThroughput, else ProvisionedThroughput), `p95_ru_s` (95th percentile over the time range of the
  workload's RU/s: each TotalRequestUnits interval's total, summed over its dimension rows, less the replay's RU
  in it (`own_ru_subtracted`), over its grain), `waste` = 1 - p95_ru_s / provisioned_ru_s (negative: above
  the provisioned rate), `max_normalized_ru` (the workload's peak minute of NormalizedRUConsumption split by
  PartitionKeyRangeId, %: the evidence), `sustained_normalized_ru` (the largest p95 of a range's per-minute
  normalized RU, the saturation finding's statistic; `sustained_pkrange`, `_minutes`, `_start`, `_end`) and
  `own_minutes_excluded` (the pkrange-minutes left out as the replay's, by the rule of `analysis.load`);
- **Waste is not claimed for a hot partition**: the RU/s are split evenly over the physical partitions, and
  a per-interval average over the whole container hides both bursts and skew. When the hottest range's
  sustained load reached `HOT_NORMALIZED_RU` (90%) of its share (`sustained_normalized_ru`), that range is at
  its limit however idle the rest is: lowering the RU/s would throttle it more. `waste` is then blank and
  `waste_note` says `HOT_WASTE_NOTE` (the RU/s are not wasted, the key is skewed: fix the key, not the RU/s);
- from `partitions` (when the table exists): `largest_partition_gb` (the largest physical partition of the
  latest snapshot) and `storage_headroom` = 1 - its bytes / `Limits.physical_partition_max_bytes` (50 GB).

**Shared throughput** (`with_shared_offers`, `summarize_throughput_units`). A container created without RU/s
of its own in a database that has some spends the database's shared offer: Azure Monitor reports that offer's
ProvisionedThroughput and its physical partitions' NormalizedRUConsumption and sizes for the database, not
for a container (the store keeps them under `container` = `store.records.SHARED_OFFER_CONTAINER`, "": never
a row of its own here), while TotalRequestUnits stays per container. So such a container's row says
`throughput_unit` "database"; its `max_normalized_ru` is the database offer's (its partitions are the
offer's: what throttles it; so are its sustained figures), its `provisioned_ru_s` and `waste` are blank (it has no RU/s of its own) and
its `waste_note` says `SHARED_WASTE_NOTE`. Every other container says "container". The throughput units
(`UNIT_COLUMNS`) are what is paid for: one row per shared database (its containers listed in `containers`,
its p95 the sum of theirs per interval, its waste against its offer) and one per container with its own RU/s.
A shared database is recognised by its rows under the shared offer, or by the storage snapshots'
`database_throughput_ru`; its containers are those with no throughput or partition metrics of their own.

**Regions** (`analysis.regions`). Azure Monitor's figures are of one region (`region`) or of the account in
total (None, the default): `provisioned_ru_s` is then each region's latest RU/s summed (an account with N
regions reserves T x N RU/s; AutoscaleMaxThroughput, which has no Region dimension, counts N times),
`p95_ru_s` the regions' RU/s summed per interval, so `waste` compares like with like; `max_normalized_ru`
is the hottest range of any region. A one-region account reads as before.

**Ranking** (`summarize_fleet`). Each risk signal is put on one 0..1 scale, where 1 means "at the limit":
- throttling: `throttle_rate / THROTTLE_FULL_RATE`, capped at 1. Service guidance treats a few percent of
  429s as a sign to act, so 5% of requests throttled counts as full risk;
- hot partition: `sustained_normalized_ru / 100` (a partition spending its whole share of the RU/s in more
  than 1 minute in 20 throttles next; one busy minute, such as a bulk load, does not make it at risk, since
  NormalizedRUConsumption is one second's share: azure-monitor.md R10), capped at 1; 0 when every minute the
  metrics reported was ruscope's own (R75); without metrics, the replay's skew instead: with n pkranges
  seen and hottest share s, (s * n - 1) / (n - 1): 0 when even, 1 when one pkrange takes everything
  (0 for n = 1: one partition cannot be skewed). The service's measure wins because it sees real traffic;
- storage: 1 - `storage_headroom` (the largest partition's fill of 50 GB), capped to 0..1.
`risk` is the largest of the signals present (NaN when none is): one signal at its limit is enough to act
on, and averaging would let calm signals hide it. `risk_driver` names it ("hot partition", "429s",
"storage"; empty when the risk is 0 or unknown; a tie names the hot partition, the cause of the 429s a
container gets when one range is at its limit). Rows sort by risk, then waste, then total RU (each highest first, NaN last), then by name: what
may throttle or stop comes before what only costs money, and among equals the most wasteful first.

The package, one module per part (their public names are re-exported here, so a caller writes `fleet.X`):
- `columns`: the fleet's columns, thresholds and notes;
- `stats`: each group of columns per container (executions, requests, the 429 rate, throughput and
  partition load, storage);
- `shared`: shared throughput: the containers that spend an offer, the throughput units;
- `ranking`: `summarize_fleet`, the risk and its order, the container labels.
"""

from __future__ import annotations

from analysis.fleet.columns import (
    COUNT_COLUMNS,
    EXECUTION_COLUMNS,
    FLEET_COLUMNS,
    FLEET_KEY,
    FLEET_METRIC_COLUMNS,
    HOT_NORMALIZED_RU,
    HOT_WASTE_NOTE,
    LOAD_STATS,
    METRIC_COLUMNS,
    OFFER_NAME,
    OWN_UNIT,
    PARTITION_COLUMNS,
    PARTITION_LOAD_STATS,
    PROVISIONED_METRICS,
    REQUEST_COLUMNS,
    RISK_SIGNALS,
    SHARED_UNIT,
    SHARED_WASTE_NOTE,
    SUSTAINED_WINDOW,
    TEXT_COLUMNS,
    THROTTLE_FULL_RATE,
    THROTTLE_WINDOW,
    TIME_COLUMNS,
    grain_seconds,
)
from analysis.fleet.ranking import (
    container_choices,
    container_label,
    summarize_fleet,
)
from analysis.fleet.shared import (
    UNIT_COLUMNS,
    offer_rows,
    shared_offer_members,
    summarize_throughput_units,
    unit_label,
    with_shared_offers,
)
from analysis.fleet.stats import (
    execution_stats,
    request_stats,
    storage_stats,
    throttle_stats,
    throughput_stats,
)

__all__ = [
    "COUNT_COLUMNS",
    "EXECUTION_COLUMNS",
    "FLEET_COLUMNS",
    "FLEET_KEY",
    "FLEET_METRIC_COLUMNS",
    "HOT_NORMALIZED_RU",
    "HOT_WASTE_NOTE",
    "LOAD_STATS",
    "METRIC_COLUMNS",
    "OFFER_NAME",
    "OWN_UNIT",
    "PARTITION_COLUMNS",
    "PARTITION_LOAD_STATS",
    "PROVISIONED_METRICS",
    "REQUEST_COLUMNS",
    "RISK_SIGNALS",
    "SHARED_UNIT",
    "SHARED_WASTE_NOTE",
    "SUSTAINED_WINDOW",
    "TEXT_COLUMNS",
    "THROTTLE_FULL_RATE",
    "THROTTLE_WINDOW",
    "TIME_COLUMNS",
    "UNIT_COLUMNS",
    "container_choices",
    "container_label",
    "execution_stats",
    "grain_seconds",
    "offer_rows",
    "request_stats",
    "shared_offer_members",
    "storage_stats",
    "summarize_fleet",
    "summarize_throughput_units",
    "throttle_stats",
    "throughput_stats",
    "unit_label",
    "with_shared_offers",
]
