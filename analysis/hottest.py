"""Each container's hottest physical partition and its share of the RU: the skew figure the Overview, Fleet,
the Hot partitions page's first source and the report all read (one definition).

Pure functions over Azure Monitor's NormalizedRUConsumption by pkrange (`analysis.load.partition_minutes`:
ruscope's own replay minutes marked there and left out here), the storage snapshots (the layout) and, for a
container that spends its database's shared offer, the offer's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import fleet, joins, load, spans
from analysis.load import latest_snapshot
from analysis.pkrange_ids import pkrange_sort_key
from store.records import SCOPE_COLUMNS, SHARED_OFFER_CONTAINER

KEY = list(SCOPE_COLUMNS)
_OFFER = "(offer)"  # a stand-in container name for a shared offer's rows inside `container_hottest_ranges`


RANGE_LOAD_COLUMNS = [*KEY, "region", "pkrange_id", "max", "mean", "ranges"]


def range_loads(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """Per container, region and current pkrange: the workload's largest and mean NormalizedRUConsumption over
    the window and how many current ranges the region has (`RANGE_LOAD_COLUMNS`). Current: the ranges the
    latest storage snapshot lists (the layout), else those of the latest interval (a range retired by a split
    is gone either way). The mean is over each range's span with a minute without a point at 0% (it reported
    no load while its container did: `analysis.load`), so a range seen only in a bulk-load minute is not the
    whole container's RU; the minutes that were ruscope's own (from `requests`) are left out of the values,
    not of the layout. The one per-range load behind the hottest range, its share and the Hot partitions
    page's Azure Monitor skew (each range has an equal share of the RU/s, so a range's share of the summed
    means is its share of the RU). `model`: the caller's `analysis.load.build` of these frames."""
    if model is None:
        return loads_of_minutes(load.partition_minutes(metrics, requests, partitions), partitions)
    return loads_of_ranges(model.ranges, partitions)


def loads_of_minutes(
    minutes: pd.DataFrame, partitions: pd.DataFrame | None = None, *, ranges: pd.DataFrame | None = None
) -> pd.DataFrame:
    """`range_loads` of minutes already marked (`analysis.load.partition_minutes`): for a caller that reads
    those minutes for more than this (the Hot partitions page marks its heatmap's replay cells with them);
    `ranges`: their `analysis.spans.range_spans` at `load.SUSTAINED_QUANTILE`, when the caller has them."""
    if minutes.empty:
        return pd.DataFrame(columns=RANGE_LOAD_COLUMNS)
    return loads_of_ranges(
        spans.range_spans(minutes, load.SUSTAINED_QUANTILE) if ranges is None else ranges, partitions
    )


def loads_of_ranges(ranges: pd.DataFrame, partitions: pd.DataFrame | None = None) -> pd.DataFrame:
    """`range_loads` of the ranges' span statistics (`analysis.spans.range_spans` at `load.SUSTAINED_QUANTILE`,
    or a model's `ranges`)."""
    if ranges.empty:
        return pd.DataFrame(columns=RANGE_LOAD_COLUMNS)
    regional = [*KEY, "region"]
    laid_out = latest_snapshot(partitions)[KEY].drop_duplicates() if partitions is not None else None
    if laid_out is None or laid_out.empty:
        has_layout = np.zeros(len(ranges), dtype=bool)
    else:
        has_layout = joins.match(ranges, laid_out.astype(str), KEY) >= 0
    # current: a laid-out container's ranges the snapshot still lists, else those of the latest interval
    current = ranges[np.where(has_layout, ~ranges["retired"], ranges["current_latest"])]
    counts = current.groupby(regional).size().rename("ranges").reset_index()
    per_range = current.dropna(subset=["max"]).astype({"max": float, "mean": float})
    return per_range.merge(counts, on=regional)[RANGE_LOAD_COLUMNS].reset_index(drop=True)


def hottest_range(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """Per container (`range_loads`), two figures that name their own range:
    - the hottest range, `monitor_hot`: the one with the largest share of the summed mean workload normalized
      RU of its region's ranges (ties: the first in id order), that share (`monitor_share`) and how many ranges
      there are (`monitor_pkranges`): the skew figure, the same range the Hot partitions page's skew table
      ranks first;
    - the peak, `hot_normalized_ru`: the largest workload NormalizedRUConsumption of any current range, and
      that range (`monitor_peak_pkrange`): how close a partition came to its budget, what the hot-partition
      finding and the floor of a lower RU/s read. A range with a smaller share can have the higher peak
      minute; naming each figure's own range keeps "pkrange 1 takes 48%" and "pkrange 0 peaked at 97%" true.
    A range is one region's (each region holds every range, with its own RU/s): in a frame of several regions
    each figure is that of any region, a share and count of its own region's ranges. `model`: as
    `range_loads` takes them."""
    columns = [*KEY, "monitor_hot", "monitor_share", "monitor_pkranges", "hot_normalized_ru", "monitor_peak_pkrange"]
    per_range = range_loads(metrics, requests, partitions, model=model)
    if per_range.empty:
        return pd.DataFrame(columns=columns)
    regional = [*KEY, "region"]
    totals = per_range.groupby(regional)["mean"].sum().rename("_total").reset_index()
    per_range = per_range.merge(totals, on=regional)
    per_range["_share"] = per_range["mean"] / per_range["_total"].where(per_range["_total"] > 0)
    per_range["_order"] = per_range["pkrange_id"].astype(str).map(pkrange_sort_key)
    # ties: the first range in id order, as the Hot partitions page's skew table breaks them (`analysis.hot.replay`)
    by_share = per_range.sort_values(["_share", "_order", "region"], ascending=[False, True, True], kind="stable")
    hot = by_share.groupby(KEY).agg(
        monitor_hot=("pkrange_id", "first"), monitor_share=("_share", "first"), monitor_pkranges=("ranges", "first")
    )
    by_peak = per_range.sort_values(
        ["max", "_share", "_order", "region"], ascending=[False, False, True, True], kind="stable"
    )
    peak = by_peak.groupby(KEY).agg(hot_normalized_ru=("max", "first"), monitor_peak_pkrange=("pkrange_id", "first"))
    hot["monitor_share"] = hot["monitor_share"].astype(float).round(4)
    return hot.join(peak).reset_index()[columns]


def container_hottest_ranges(
    fleet_rows: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """`hottest_range` per container (the replay's minutes out, from `requests`); a container that spends its
    database's shared offer (`analysis.fleet.shared_offer_members`) has no partitions of its own in Azure
    Monitor, so its hottest range is the offer's (the offer's rows are under
    `store.records.SHARED_OFFER_CONTAINER`): what throttles it. `model`: as `range_loads` takes it."""
    own = hottest_range(metrics, requests, partitions, model=model)
    reporting = None if model is None else model.reporting
    members = fleet.shared_offer_members(fleet_rows.reindex(columns=KEY), metrics, partitions, reporting=reporting)
    if members.empty:
        return own
    keyed = metrics.dropna(subset=KEY)
    offer = keyed[keyed["container"].astype(str).eq(SHARED_OFFER_CONTAINER)]
    offers = hottest_range(offer.assign(container=_OFFER)).drop(columns="container")
    shared = members.merge(offers, on=["account", "database"])
    return pd.concat([own, shared.reindex(columns=own.columns)], ignore_index=True).drop_duplicates(subset=KEY)
