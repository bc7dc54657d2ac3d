"""Each container's bill over the measured hours, and its alternatives, from the store's frames.

Pure functions over `metrics`, `requests` and `partitions` (the per-partition load model: `analysis.load`,
`analysis.capacity.autoscale.interval_needs`) and the prices (`cosmoscore.billing.Prices`, the config's
`[pricing]`). One row per container with throughput metrics (`BILL_COLUMNS`), money in `prices.currency`:

- `hours`: the clock hours with a measured interval (B1: each hour is billed whole);
- `billed`: those hours as billed. Manual: the RU/s in force, the hour's largest (B1). Autoscale: the RU/s it
  scaled to, which Azure Monitor does not report, estimated as the hour's need (the consumed RU/s, or what the
  hottest partition's busiest second needed, whichever is more), at least 10% of the max (B2). In every region
  (B3), at the single-write rate (the store does not say whether writes go to several regions);
- `monthly`: `billed` over `hours` x 730 (B3's month); `storage_monthly`: the latest snapshot's data and index
  over its partitions, in every region (B6);
- `manual_right`, `manual_ru_s`: manual at the RU/s that keeps the busiest hour's need at 80% (as
  `lower_throughput`'s target), never under the minimum (B12); `autoscale_right`, `autoscale_max`: autoscale
  at the max `analysis.capacity.autoscale` recommends; `serverless`: the workload's RU at the serverless price
  (B5), `serverless_fits` whether its limits allow it (one region, at most 5,000 RU/s a partition, B9). Each
  over the same hours, projected to a month like `monthly`.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import load, regions
from analysis.capacity.autoscale import autoscale_estimate, interval_needs
from analysis.capacity.rules import RU_STEP, TARGET_PEAK_UTILIZATION
from analysis.overview import metric_rows
from cosmoscore import billing
from cosmoscore.monitor.metrics import AUTOSCALE_MAX
from store.records import SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
SERVERLESS_PARTITION_RU_S = 5000  # B9: each serverless physical partition serves up to 5,000 RU/s
BILL_COLUMNS = [
    *KEY,
    "hours",
    "autoscale",
    "regions",
    "billed",
    "monthly",
    "storage_monthly",
    "manual_right",
    "manual_ru_s",
    "autoscale_right",
    "autoscale_max",
    "serverless",
    "serverless_fits",
    "currency",
    "price_note",
]


def container_bills(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
    prices: billing.Prices,
    needs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """`BILL_COLUMNS` per container with measured intervals and RU/s of its own (the module docstring; a
    container that spends its database's shared offer has no bill of its own). `needs`: `interval_needs` of
    the same frames, when the caller has it (the report reads it for the autoscale ratio too)."""
    needs = interval_needs(metrics, requests, partitions) if needs is None else needs
    if needs.empty:
        return pd.DataFrame(columns=BILL_COLUMNS)
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    autoscaled = _autoscale_max(metrics)
    consumed = load.consumed_intervals(metrics, requests)
    workload_ru = (consumed["workload_ru_s"] * consumed["grain_s"]).groupby([consumed[k] for k in KEY]).sum()
    layout = load.partition_layout(partitions, metrics).set_index(KEY)["partitions"]
    storage = _storage_gb(partitions)
    note = billing.LIST_PRICE_NOTE if prices.list_example else "your [pricing]"
    rows = []
    for group, mine in needs.groupby(KEY):
        key = _key(group)
        n = max(int(counts.get(key[0], 1)), 1)
        hourly = mine.assign(hour=pd.DatetimeIndex(mine["time"]).floor("h")).groupby("hour")
        need, manual = hourly["need"].max(), hourly["manual"].max()
        top = autoscaled.get(key)
        if manual.isna().all() and top is None:
            continue  # no RU/s of its own: it spends its database's shared offer, billed as the database's
        manual = manual.ffill().bfill()
        if top is not None and top > 0:
            billed = sum(billing.autoscale_hour(top, v, prices, regions=n) for v in need)
        else:
            billed = sum(billing.manual_hour(v, prices, regions=n) for v in manual)
        hours = len(need)
        right = _manual_right(float(need.max()), storage.get(key, 0.0), float(manual.max()))
        manual_right = hours * billing.manual_hour(right, prices, regions=n)
        estimate = autoscale_estimate(need, manual)
        auto_right = sum(billing.autoscale_hour(estimate.max_ru_s, v, prices, regions=n) for v in need)
        pkranges = int(layout.get(key, 1) or 1)
        fits = n == 1 and float(need.max()) <= SERVERLESS_PARTITION_RU_S * pkranges
        serverless = billing.serverless_cost(float(workload_ru.get(key, 0.0)), prices)
        month = billing.HOURS_PER_MONTH / hours if hours else math.nan
        gb = storage.get(key, math.nan)
        rows.append(
            (*key, hours, top is not None, n, billed, billed * month, billing.storage_month(gb, prices, regions=n),
             manual_right * month, right, auto_right * month, estimate.max_ru_s, serverless * month, fits,
             prices.currency, note)
        )  # fmt: skip
    return pd.DataFrame(rows, columns=BILL_COLUMNS)


def _manual_right(peak_need: float, storage_gb: float, highest_ever: float) -> float:
    """The manual RU/s that keeps the busiest hour's need at `TARGET_PEAK_UTILIZATION`, in steps of 100, never
    under the container's minimum (B12; the highest RU/s ever is the highest seen in the window)."""
    step = RU_STEP[False]
    wanted = math.ceil(peak_need / TARGET_PEAK_UTILIZATION / step) * step if peak_need > 0 else 0
    return float(max(wanted, billing.min_manual_ru_s(storage_gb, highest_ever)))


def _autoscale_max(metrics: pd.DataFrame) -> dict[tuple[str, ...], float]:
    """Containers on autoscale and their max RU/s in force (the latest AutoscaleMaxThroughput)."""
    rows = metric_rows(metrics, AUTOSCALE_MAX).dropna(subset=["time"])
    latest = rows.sort_values("time").groupby(KEY)["value"].last()
    return {_key(k): float(value) for k, value in zip(latest.index.to_list(), latest.to_list())}


def _storage_gb(partitions: pd.DataFrame | None) -> dict[tuple[str, ...], float]:
    """Each container's data and index in its latest storage snapshot, in GB (one region's copy)."""
    if partitions is None or partitions.empty:
        return {}
    latest = load.latest_snapshot(partitions).dropna(subset=["size_kb"])
    sizes = latest.groupby(KEY)["size_kb"].sum().astype(float) * 1024 / 1024**3
    return {_key(k): float(gb) for k, gb in zip(sizes.index.to_list(), sizes.to_list())}


def _key(parts: object) -> tuple[str, ...]:
    """A (account, database, container) group key as text."""
    return tuple(str(part) for part in parts) if isinstance(parts, tuple) else (str(parts),)


def report_rows(bills: pd.DataFrame) -> pd.DataFrame:
    """The capacity report's `cost` section: per container, the month as billed, its storage and each
    alternative over the same hours, in the prices' currency (`analysis.capacity.actions.COLUMNS`)."""
    rows = []
    for row in bills.to_dict("records"):
        kind = "autoscale" if row["autoscale"] else "manual"
        regions_text = f"{row['regions']} region{'s' if row['regions'] != 1 else ''}"
        hours = f"{row['hours']} hour{'s' if row['hours'] != 1 else ''}"
        measured = f"{hours} measured, x 730 / {row['hours']}; {regions_text}; {row['price_note']}"
        serverless = (
            "fits serverless (one region, at most 5,000 RU/s a partition)"
            if row["serverless_fits"]
            else ("serverless does not fit (more than one region, or a partition's need over 5,000 RU/s)")
        )
        found = [
            ("monthly_cost", "", row["monthly"], f"as billed ({kind}); {measured}"),
            ("storage_monthly_cost", "", row["storage_monthly"], f"data and index, latest snapshot; {regions_text}"),
            ("manual_monthly_cost", f"{row['manual_ru_s']:,.0f} RU/s", row["manual_right"],
             f"manual at the RU/s that keeps the busiest hour's need at 80%; {measured}"),
            ("autoscale_monthly_cost", f"max {row['autoscale_max']:,.0f} RU/s", row["autoscale_right"],
             f"autoscale at its recommended max; {measured}"),
            ("serverless_monthly_cost", "", row["serverless"], f"the workload's RU; {serverless}; {measured}"),
        ]  # fmt: skip
        for measure, subject, value, detail in found:
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                rows.append(("cost", *(row[k] for k in KEY), subject, measure, float(value), row["currency"], detail))
    columns = ["section", *KEY, "subject", "measure", "value", "unit", "detail"]
    return pd.DataFrame(rows, columns=columns)
