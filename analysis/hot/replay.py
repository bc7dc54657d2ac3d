"""Hot partitions from the replay alone, and skew: where the configured queries' RU lands per pkrange, as RU/s
demand against each partition's budget, and how unevenly any per-pkrange load is spread.

Pure functions over the store's `requests` and `executions` (the replay), `partitions` and `metrics`
frames; only the `*_COLUMNS` below are read.

**Demand.** A query's RU per execution on a pkrange is the RU of its data pages (`request_kind` "page")
served by that pkrange, over its logical executions (a per-feed-range query's parts are one execution, as
in `analysis.queries.costs`), in the query's latest run: a split changes which pkranges serve a key, and the
latest run is the one made on the partitions as they are now. Times its rate (`rate_per_s` of the config, the
latest one recorded) that is RU/s; summed over the queries, a pkrange's demand. A query without a rate has no
demand (`ru_s` NaN, `rate_missing` True, counted in `queries_without_rate`): nobody said how often it runs, and
a made-up rate (1 execution/s of a 1,000-RU count is 1,000 RU/s) would invent load. Its RU per execution, and
the replay's RU per pkrange (`replay_pkrange_ru`, the skew's replay source), still count. The gateway's RU (query plans, refusals) is charged to no partition and left out.

**Budget.** Each physical partition gets an equal share of the container's RU/s: `throughput_share` of the
latest storage snapshot when collected, else the latest provisioned RU/s from Azure Monitor
(AutoscaleMaxThroughput, else ProvisionedThroughput: `analysis.fleet`) over the number of pkranges (the
latest snapshot's, else those the replay reached). Without either the budget is unknown (NaN), never guessed.

**Multiplier.** `budget / demand` per pkrange is how many times the configured workload that partition can
take; the container's multiplier is the smallest: the workload multiplied by it makes the first partition
throttle. Below 1, that partition throttles already at the configured rates.

**Skew.** For a load per pkrange: the hottest pkrange's share against an even share (1/n), and the Gini
coefficient (0: even; (n-1)/n: one pkrange takes everything). One pkrange is not skewed (0); no load at all
has no skew (NaN). n is the rows of the load given: the page passes the pkranges that exist at the end of the
view, measured since their layout is complete (`analysis.hot.current`), so a split's parent is not counted as
one more range; the replay's demand is already its latest run's, on the partitions as they were then.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import fleet
from analysis.hot import partitions as hp
from analysis.hot.current import CONTAINER_KEY, ROW_KEY
from analysis.pkrange_ids import pkrange_sort_key
from store.records import EXECUTIONS, REQUESTS

QUERY = [*CONTAINER_KEY, "query_name"]

# The store columns these functions read: a view loads only these.
REQUEST_COLUMNS = REQUESTS.pick(*CONTAINER_KEY, "run_id", "query_name", "request_kind", "pkrange_id", "request_charge")
EXECUTION_COLUMNS = EXECUTIONS.pick(*CONTAINER_KEY, "run_id", "time", "query_name", "repeat", "rate_per_s")
PARTITION_COLUMNS = hp.PARTITION_COLUMNS  # the budget, and the EPK bounds that order the rows
QUERY_DEMAND_COLUMNS = [*QUERY, "pkrange_id", "executions", "ru_per_execution", "rate_per_s", "rate_missing", "ru_s"]
DEMAND_COLUMNS = [
    *ROW_KEY,
    "label",
    "ru_s",
    "share_pct",
    "budget_ru_s",
    "budget_source",
    "utilization_pct",
    "multiplier",
]
HEADROOM_COLUMNS = [
    *CONTAINER_KEY,
    "queries",
    "queries_without_rate",
    "pkranges",
    "ru_s",
    "first_to_throttle",
    "multiplier",
]
SKEW_COLUMNS = [*CONTAINER_KEY, "pkranges", "hottest_pkrange", "hottest_pct", "even_pct", "hot_vs_even", "gini"]


def query_demand(requests: pd.DataFrame, executions: pd.DataFrame) -> pd.DataFrame:
    """RU per execution and RU/s of each query on each pkrange its data pages reached in the query's latest run
    (`QUERY_DEMAND_COLUMNS`)."""
    logical = latest_runs(executions).drop_duplicates(subset=["run_id", *QUERY, "repeat"])
    pages = requests[requests["request_kind"].eq("page").fillna(False).to_numpy(dtype=bool)]
    pages = pages[pages["pkrange_id"].fillna("").astype(str).ne("").to_numpy(dtype=bool)]
    pages = pages.merge(logical[[*QUERY, "run_id"]].drop_duplicates(), on=[*QUERY, "run_id"])
    counts = logical.groupby(QUERY).size().rename("executions")
    if pages.empty or counts.empty:
        return pd.DataFrame(columns=QUERY_DEMAND_COLUMNS)
    ru = pages.groupby([*QUERY, "pkrange_id"])["request_charge"].sum().astype(float).rename("ru").reset_index()
    out = ru.merge(counts.reset_index(), on=QUERY, how="inner").merge(query_rates(executions), on=QUERY, how="left")
    out["ru_per_execution"] = (out.pop("ru") / out["executions"]).round(4)
    out["rate_missing"] = out["rate_per_s"].isna()
    out["rate_per_s"] = out["rate_per_s"].astype(float)  # NaN: no demand (module docstring)
    out["ru_s"] = (out["ru_per_execution"] * out["rate_per_s"]).round(4)
    out = out.assign(_pk=out["pkrange_id"].astype(str).map(pkrange_sort_key))
    return out.sort_values([*QUERY, "_pk"], ignore_index=True)[QUERY_DEMAND_COLUMNS]


def replay_pkrange_ru(by_query: pd.DataFrame) -> pd.DataFrame:
    """The data-page RU per pkrange of each query's latest run (`query_demand`'s RU per execution times its
    executions, rate or none): where the replayed queries land, the skew's replay source."""
    ru = by_query.assign(ru=by_query["ru_per_execution"].astype(float) * by_query["executions"].astype(float))
    return ru.groupby(ROW_KEY)["ru"].sum().round(4).reset_index()


def latest_runs(executions: pd.DataFrame) -> pd.DataFrame:
    """The executions of each query's latest run (the run whose first execution of the query is latest)."""
    rows = executions.dropna(subset=["query_name", "run_id", "time"])
    starts = rows.groupby([*QUERY, "run_id"])["time"].min().rename("start").reset_index()
    latest = starts.sort_values(["start", "run_id"], kind="stable").drop_duplicates(subset=QUERY, keep="last")
    return rows.merge(latest[[*QUERY, "run_id"]], on=[*QUERY, "run_id"])


def query_rates(executions: pd.DataFrame) -> pd.DataFrame:
    """Each query's latest configured `rate_per_s` (NaN when none was ever recorded)."""
    rated = executions.dropna(subset=["query_name", "time"]).sort_values("time", kind="stable")
    latest = rated.dropna(subset=["rate_per_s"]).groupby(QUERY)["rate_per_s"].last().astype(float)
    return latest.reset_index()


def partition_budgets(partitions: pd.DataFrame, metrics: pd.DataFrame, pkranges: pd.DataFrame) -> pd.DataFrame:
    """Each (container, pkrange) of `pkranges` with its RU/s budget and where it comes from (module docstring)."""
    rows = pkranges[ROW_KEY].drop_duplicates().astype({"pkrange_id": str})
    snapshot = partitions.dropna(subset=["time", "pkrange_id"])
    snapshot = snapshot[snapshot["time"].eq(snapshot.groupby(CONTAINER_KEY)["time"].transform("max"))]
    shares = snapshot.dropna(subset=["throughput_share"]).groupby(ROW_KEY)["throughput_share"].max().astype(float)
    rows = rows.merge(shares.rename("share_budget").reset_index(), on=ROW_KEY, how="left")
    provisioned = _provisioned(metrics)
    counted = snapshot.groupby(CONTAINER_KEY)["pkrange_id"].nunique().rename("snapshot_count")
    seen = rows.groupby(CONTAINER_KEY)["pkrange_id"].nunique().rename("seen_count")
    rows = rows.merge(provisioned, on=CONTAINER_KEY, how="left").merge(
        counted.reset_index(), on=CONTAINER_KEY, how="left"
    )
    rows = rows.merge(seen.reset_index(), on=CONTAINER_KEY, how="left")
    count = rows["snapshot_count"].astype(float).fillna(rows["seen_count"].astype(float))
    from_metrics = rows["provisioned_ru_s"].astype(float) / count
    rows["budget_ru_s"] = rows["share_budget"].astype(float).combine_first(from_metrics).round(2)
    rows["budget_source"] = np.select(
        [rows["share_budget"].notna(), from_metrics.notna()],
        ["storage snapshot (throughput share)", "Azure Monitor provisioned RU/s / pkranges"],
        default="unknown",
    )
    return rows[[*ROW_KEY, "budget_ru_s", "budget_source"]]


def summarize_demand(
    requests: pd.DataFrame, executions: pd.DataFrame, partitions: pd.DataFrame, metrics: pd.DataFrame
) -> pd.DataFrame:
    """RU/s demand per pkrange from the replay, against its budget (`DEMAND_COLUMNS`), in key-space order."""
    by_query = query_demand(requests, executions)
    if by_query.empty:
        return pd.DataFrame(columns=DEMAND_COLUMNS)
    demand = by_query.groupby(ROW_KEY)["ru_s"].sum(min_count=1).round(4).reset_index()
    demand["share_pct"] = (100 * demand["ru_s"] / demand.groupby(CONTAINER_KEY)["ru_s"].transform("sum")).round(2)
    demand = demand.merge(partition_budgets(partitions, metrics, demand), on=ROW_KEY, how="left")
    demand["utilization_pct"] = (100 * demand["ru_s"] / demand["budget_ru_s"]).round(2)
    demand["multiplier"] = (demand["budget_ru_s"] / demand["ru_s"].where(demand["ru_s"] > 0)).round(2)
    return hp.order_pkranges(demand, partitions)[DEMAND_COLUMNS]


def summarize_headroom(demand: pd.DataFrame, by_query: pd.DataFrame) -> pd.DataFrame:
    """Per container: queries (and how many lack a rate), total demand, the first pkrange to throttle and the
    workload multiplier at which it does (NaN when no budget is known) (`HEADROOM_COLUMNS`)."""
    if demand.empty:
        return pd.DataFrame(columns=HEADROOM_COLUMNS)
    queries = (
        by_query.drop_duplicates(subset=QUERY)
        .groupby(CONTAINER_KEY)
        .agg(queries=("query_name", "size"), queries_without_rate=("rate_missing", "sum"))
    )
    ranked = demand.dropna(subset=["multiplier"]).sort_values("multiplier", kind="stable")
    first = ranked.groupby(CONTAINER_KEY).agg(first_to_throttle=("label", "first"), multiplier=("multiplier", "first"))
    totals = demand.groupby(CONTAINER_KEY).agg(
        pkranges=("pkrange_id", "size"), ru_s=("ru_s", lambda v: v.sum(min_count=1))
    )
    out = queries.join(totals, how="outer").join(first, how="left").reset_index()
    out["ru_s"] = out["ru_s"].round(4)
    return out.astype({"queries": "Int64", "queries_without_rate": "Int64", "pkranges": "Int64"})[HEADROOM_COLUMNS]


def gini(values: np.ndarray) -> float:
    """The Gini coefficient of non-negative loads: 0 when even (or one value), (n-1)/n when one takes all,
    NaN when there is no load (all zero, or none)."""
    x = np.sort(np.asarray(values, dtype=float))
    total = x.sum()
    if len(x) == 0 or not total > 0:
        return float("nan")
    n = len(x)
    return float(2 * np.sum(np.arange(1, n + 1) * x) / (n * total) - (n + 1) / n)


def hottest_share(values: np.ndarray) -> float:
    """The largest load's share of the total (NaN when there is no load)."""
    x = np.asarray(values, dtype=float)
    total = x.sum()
    return float(x.max() / total) if len(x) and total > 0 else float("nan")


def summarize_skew(load: pd.DataFrame, *, column: str) -> pd.DataFrame:
    """Per container: the hottest pkrange of `load[column]`, its share against an even share (1/n), that
    ratio, and the Gini coefficient (`SKEW_COLUMNS`; shares in percent). A loop over containers, not over rows."""
    rows = []
    for key, mine in load.dropna(subset=[column]).groupby(CONTAINER_KEY, sort=True):
        values = mine[column].to_numpy(dtype=float)
        share, n = hottest_share(values), len(values)
        hottest = _first_of_largest(mine["pkrange_id"].astype(str), values) if share == share else None
        shares = (round(100 * share, 2), round(100 / n, 2), round(share * n, 2), round(gini(values), 4))
        rows.append((*key, n, hottest, *shares))
    return pd.DataFrame(rows, columns=SKEW_COLUMNS).astype({"pkranges": "Int64"})


def _first_of_largest(pkranges: pd.Series, values: np.ndarray) -> str:
    """The pkrange with the largest value; among equal values the first in id order (`pkrange_sort_key`), as
    `analysis.hottest.hottest_range` breaks the tie, so the page and the model name the same range."""
    tied = pkranges.to_numpy()[values == values.max()]
    return str(min(tied, key=pkrange_sort_key))


def load_shares(load: pd.DataFrame, *, column: str) -> pd.DataFrame:
    """Each pkrange's share of its container's `load[column]` and the even share (1/n), for the skew bars."""
    frame = load.dropna(subset=[column])[[*ROW_KEY, "label", column]].copy()
    total = frame.groupby(CONTAINER_KEY)[column].transform("sum")
    frame["share"] = (frame[column].astype(float) / total.where(total > 0)).round(4)
    frame["even_share"] = 1 / frame.groupby(CONTAINER_KEY)[column].transform("size")
    return frame.reset_index(drop=True)


def _provisioned(metrics: pd.DataFrame) -> pd.DataFrame:
    """The latest provisioned RU/s per container (`analysis.fleet`), from the throughput metrics' rows only."""
    rows = metrics[metrics["metric"].isin(fleet.PROVISIONED_METRICS).fillna(False).to_numpy(dtype=bool)]
    if rows.empty:
        return pd.DataFrame(columns=[*CONTAINER_KEY, "provisioned_ru_s"])
    return fleet.throughput_stats(rows.reindex(columns=fleet.METRIC_COLUMNS))[[*CONTAINER_KEY, "provisioned_ru_s"]]
