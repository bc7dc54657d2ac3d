"""Per-partition load: each container's NormalizedRUConsumption per pkrange and minute, its consumed RU per
minute, and ruscope's own traffic (the replay) in both, kept apart, so that risk and peaks are the workload's.

Pure functions over the store's `metrics`, `requests` and `partitions` frames (only the `*_COLUMNS` below are
read; the time range, scope and region are cut before these run: `analysis.scope`, `analysis.regions`).
`analysis.fleet` (the hot-partition risk, `max_normalized_ru`, `p95_ru_s`), `analysis.overview` (`peak_ru_s`,
`hot_normalized_ru`, `hot_range_share`) and `analysis.capacity.review` (the saturation finding) read it.

The package, one module per part (their public names are re-exported here, so a caller writes `load.X`):
- `frames`: the store columns read, a metric's rows, times, grains;
- `layout`: the partition layout and the throughput in force over time (`partition_layout`,
  `provisioned_timeline`, `latest_provisioned`);
- `minutes`: the facts per pkrange and interval (`partition_minutes`) and the replay's RU per interval;
- `consumed`: consumed RU per interval and its peak and p95 (`consumed_intervals`, `summarize_consumed`);
- `summary`: the workload's peak minute and sustained load per container (`summarize_partition_load` of
  minutes, `summarize_cells` of their span cells, `analysis.spans`: the same figures from cells of any width);
- `model`: all of the above of one view's frames, built once (`LoadModel`, `build`): what a page or the
  report hands to every figure it computes from the same frames; of the points, or (`build(...,
  span_cells=)`) of the stored span cells of whole days and the other days' points, the same figures;
- `stored`: the span cells in the store (`DERIVATION`, refreshed per UTC day by `ruscope compact` and after
  `collect`) and a window's cells from them (`window_cells`, `cell_days`): the replay's candidate minutes
  kept apart and decided at read time by the rule, with the window's budgets.

**The facts, per container, pkrange and interval** (`partition_minutes`, `MINUTE_COLUMNS`):
- `normalized_ru`: Azure Monitor's NormalizedRUConsumption (percent), the largest per-second share of the
  partition's budget used in the interval (docs/reference/azure-monitor.md R10; ru-cost-model.md P11); one
  row per region (`region`, "" for a row combining the regions);
- `own_ru`, `own_peak_second_ru`: the RU the replay's requests to that pkrange were charged in the interval
  and in its busiest second. ruscope knows these exactly: every request it sent is a `requests` row with its
  time, pkrange and charge (`analysis.own_traffic`); the replay is counted in the same metrics (R75);
- `budget_ru_s`: the partition's budget in force then, `provisioned_ru_s` / `partitions` (every physical
  partition gets an equal share of the RU/s: ru-cost-model.md P4). `provisioned_ru_s` is one region's RU/s
  (each region reserves the same: `analysis.regions`): the latest AutoscaleMaxThroughput at or before the
  interval, else ProvisionedThroughput (autoscale's NormalizedRUConsumption is against its max RU/s: R10's page,
  learn `monitor-normalized-request-units.md`, splits a 20,000 RU/s autoscale max over two ranges as up to
  10,000 each; `autoscale-faq.md`: the metric "measures the utilization of autoscale max RU/s");
  `partitions` is the layout: the pkranges of the latest storage snapshot at or before the interval (the
  first snapshot before any), else the ranges the metrics reported in their latest interval
  (`partition_layout`);
- `own_normalized_ru` = `own_peak_second_ru` / `budget_ru_s` x 100: the replay's own busiest second, in the
  metric's unit;
- `own`, **the rule**: a minute's normalized RU is ruscope's own when the replay's busiest second in that
  range used at least `OWN_SHARE` (half) of what the minute's NormalizedRUConsumption says
  (`own_normalized_ru >= OWN_SHARE x normalized_ru`). NormalizedRUConsumption is one second's share (R10):
  when the replay's second carries half of it or more, the minute's figure says at least as much about the
  replay as about the workload, and the workload's own busiest second there is not known. Such minutes are
  left out of the workload's risk and peaks and counted as `own_minutes_excluded`. Without a budget (no
  throughput metrics) no minute can be shown to be the replay's, and none is excluded.

**Consumed RU** (`consumed_intervals`, `CONSUMED_COLUMNS`): TotalRequestUnits is per container per interval
(R75: the replay counted with the application); the replay's RU in the same interval (every request to the
container, pkrange or not) is exact, so the workload's RU/s is (total - own) / grain, never below 0. The
peak and p95 RU/s are of that (`summarize_consumed`); `own_ru_subtracted` says how much was taken out.

**Sustained load** (`summarize_partition_load`, `LOAD_COLUMNS`): per container, over the workload's minutes,
`sustained_normalized_ru` is the largest p95 (`SUSTAINED_QUANTILE`, the saturation finding's
`rules.SATURATION_QUANTILE`) of a range's per-minute normalized RU, with that range, its minutes and window:
one busy minute (a bulk load) does not make a range at risk; `max_normalized_ru` is the busiest workload
minute of any range (the evidence: "peak minute"), with its range and time. A range's minutes are those its
container reported (any range, in its region) from the range's first point to the container's last, or to
its own last point for a range the latest storage snapshot no longer lists (a split's parent, `retired`); a
minute without a point counts 0% (the range reported no load while its container did: an idle range that
reported only its bulk-load minute is not sustained at 100%), and its own minutes are left out.

How: the minutes' key columns are factorized once and every join with the small tables (the replay's
seconds, the budgets' timelines, the layout) is an integer lookup (`analysis.joins`); the per-range span
statistics are `analysis.spans` (the span is counted, never built as a grid). A month of one-minute points
for 100 pkranges was 11 s here and 14 s for the summary; it is a few seconds now (bench_dashboard.py).

**What a page prints** where the replay was left out: `own_traffic_note` (the minutes and RU taken out).

A bulk load ruscope did not send (the application's import; the demo's backfill, written through the
engine's domain API, no request of ruscope's recorded) is the workload's: on Azure it is indistinguishable
from it, and the sustained statistic keeps its few minutes from deciding risk.

Known limits, stated: NormalizedRUConsumption keeps only a minute's busiest second, so a minute the rule
gives to the replay may also hold a workload second near the same figure (the rule gives it away only where
the replay's own second was at least half of it); `requests` do not say which region served the replay, so
its RU is counted against the pkrange of that id in every region of the frame; a shared-throughput
database's partitions (the offer's rows, container "") are not matched with its containers' requests, so
none of their minutes is marked own.
"""

from __future__ import annotations

from analysis.load.consumed import CONSUMED_COLUMNS, CONSUMED_SUMMARY_COLUMNS, consumed_intervals, summarize_consumed
from analysis.load.frames import (
    DEFAULT_GRAIN_SECONDS,
    KEY,
    METRIC_COLUMNS,
    PARTITION_COLUMNS,
    REQUEST_COLUMNS,
    grain_seconds,
    grain_series_seconds,
    latest_snapshot,
)
from analysis.load.layout import (
    LAYOUT_COLUMNS,
    METRICS_LAYOUT,
    PROVISIONED_METRICS,
    STORAGE_LAYOUT,
    latest_provisioned,
    partition_layout,
    per_region_else_combined,
    provisioned_timeline,
)
from analysis.load.minutes import MINUTE_COLUMNS, OWN_SHARE, own_per_interval, partition_minutes
from analysis.load.model import LoadModel, build
from analysis.load.summary import (
    LOAD_COLUMNS,
    SUSTAINED_COLUMNS,
    SUSTAINED_QUANTILE,
    own_traffic_note,
    summarize_cells,
    summarize_partition_load,
    workload_minutes,
)

__all__ = [
    "CONSUMED_COLUMNS",
    "CONSUMED_SUMMARY_COLUMNS",
    "DEFAULT_GRAIN_SECONDS",
    "KEY",
    "LAYOUT_COLUMNS",
    "LOAD_COLUMNS",
    "METRICS_LAYOUT",
    "METRIC_COLUMNS",
    "MINUTE_COLUMNS",
    "OWN_SHARE",
    "PARTITION_COLUMNS",
    "PROVISIONED_METRICS",
    "REQUEST_COLUMNS",
    "STORAGE_LAYOUT",
    "SUSTAINED_COLUMNS",
    "SUSTAINED_QUANTILE",
    "LoadModel",
    "build",
    "consumed_intervals",
    "grain_seconds",
    "grain_series_seconds",
    "latest_provisioned",
    "latest_snapshot",
    "own_per_interval",
    "own_traffic_note",
    "partition_layout",
    "partition_minutes",
    "per_region_else_combined",
    "provisioned_timeline",
    "summarize_cells",
    "summarize_consumed",
    "summarize_partition_load",
    "workload_minutes",
]
