"""Regions: which of Azure Monitor's metric rows a figure reads, one region at a time or the account in total.

An account replicated to N regions reserves its provisioned RU/s in every region (T RU/s provisioned cost
T x N RU/s) and keeps a full copy of its data in each (docs/reference/azure-monitor.md §7b, R40-R41), and the
metrics collector stores each point per region (the metrics table's `region` column). So a figure reads:
- **one region** (`select_region(metrics, "West US")`): the rows of that region, plus the rows of a metric
  without a Region dimension (AutoscaleMaxThroughput: the maximum RU/s the container scales to in each
  region); utilisation there is that region's RU against that region's RU/s;
- **the account in total** (`select_region(metrics, None)`): every region's rows, summed where a figure
  sums (RU, requests, RU/s reserved: `region_counts` says by how many regions a per-region setting is
  multiplied), a maximum where it takes one (the hottest range of any region).

A row with no region is "all regions combined": stored before the collector split by Region (or a metric
without the dimension). It is never added to per-region rows of the same point: where a (scope, metric,
aggregation, time) has rows per region, its combined row is dropped (`without_combined_duplicates`). A
one-region account (or a store written before the split) reads as it always did.

To make a figure region-aware: call `select_region` on its metric rows first (pages pass the frame's
region, `None` for the total), and group by `region` where a per-region setting meets a per-region use.
"""

from __future__ import annotations

import pandas as pd

from cosmoscore.monitor.metrics import AUTOSCALE_MAX
from store.records import METRICS, SCOPE_COLUMNS

REGION = "region"
TOTAL_LABEL = "All regions (total)"  # how a page names the account in total
# the metrics without a Region dimension (the catalogue's, cosmoscore.monitor.metrics): one value that holds
# in every region
UNREGIONED_METRICS = (AUTOSCALE_MAX,)
# a point: what a row combining the regions and the rows per region of the same minute share
POINT_KEY = METRICS.pick(*SCOPE_COLUMNS, "metric", "aggregation", "time")
METRIC_COLUMNS = METRICS.pick(*POINT_KEY, REGION)  # what these functions read of a metrics frame
REGION_COLUMNS = METRICS.pick(REGION)  # what `regions` reads


def regions(metrics: pd.DataFrame) -> list[str]:
    """The regions a metrics frame names, sorted (empty: a one-region store written before the split, or a
    frame without the column)."""
    if REGION not in metrics.columns:
        return []
    named = metrics[REGION].dropna().astype(str)
    return sorted(named[named.ne("")].unique().tolist())


def select_region(metrics: pd.DataFrame, region: str | None) -> pd.DataFrame:
    """The rows a figure of `region` reads (None: the account in total); the module docstring says which."""
    if REGION not in metrics.columns or metrics.empty:
        return metrics
    rows = without_combined_duplicates(metrics)
    if region is None:
        return rows
    named = rows[REGION].astype(object).eq(region).fillna(False).astype(bool)
    unregioned = rows[REGION].isna() & rows["metric"].isin(UNREGIONED_METRICS).fillna(False).astype(bool)
    return rows[named | unregioned].reset_index(drop=True)


def without_combined_duplicates(metrics: pd.DataFrame) -> pd.DataFrame:
    """`metrics` less each combined (region-less) row whose point also has rows per region."""
    combined = metrics[REGION].isna().to_numpy(dtype=bool)
    if not combined.any() or combined.all():
        return metrics
    key = [name for name in POINT_KEY if name in metrics.columns]
    split = metrics.loc[~combined, key].drop_duplicates().assign(_split=True)
    marked = metrics[key].merge(split, on=key, how="left")["_split"].eq(True).to_numpy(dtype=bool)
    return metrics[~(combined & marked)].reset_index(drop=True)


def region_counts(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per account: how many regions its rows name (`regions`, at least 1): by how much a per-region setting
    (AutoscaleMaxThroughput) is multiplied in the account's total."""
    if REGION not in metrics.columns:
        return pd.DataFrame(columns=["account", "regions"])
    named = metrics.dropna(subset=["account", REGION])
    counts = named.groupby("account")[REGION].nunique()
    accounts = pd.Series(1, index=pd.Index(metrics["account"].dropna().unique(), name="account"))
    return counts.reindex(accounts.index).fillna(1).clip(lower=1).rename("regions").astype(int).reset_index()


def per_region_choice(metrics: pd.DataFrame, region: str | None) -> str | None:
    """The region a per-region figure shows (a partition's normalized RU, its RU/s budget: each region has
    its own): `region` when chosen, else the first region of a frame that names several; None when the
    frame names at most one, so a one-region account reads as it always did."""
    if region is not None:
        return region
    named = regions(metrics)
    return named[0] if len(named) > 1 else None
