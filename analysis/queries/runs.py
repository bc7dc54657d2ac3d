"""Query costs run by run: what a person can see over time, one run against another, where a run's RU went
per query (the routing multiplier), and how the index served it.

Pure functions over the frames of `analysis.queries.costs` (logical executions, `pkrange_breakdown`) and the
store's `requests`; no I/O.

**Over time** (`ru_over_time`): one point per query per run (the mean RU of its successful logical
executions, at the run's start), not one per execution. Past `MAX_POINTS` runs the runs are grouped into
equal windows of whole minutes from the first run's start (span // MAX_POINTS + 1 minutes, so at most
MAX_POINTS windows), each point the mean over the window's executions, at the window's start: 730 hourly
runs of 50 queries draw 12,000 points instead of 100,000.

**The routing multiplier** of a query in a run: its RU per execution divided by the RU per execution that
its costliest physical partition charged for data pages,

    routing_multiplier = ru / costliest_pkrange_ru

i.e. how many single-partition executions the query costs. With its full partition key in the filter the
query would run on one partition, and at most on what its costliest partition charged (the partition that
served the most): the denominator is a measured stand-in for "the same query on one partition", not a
model. A single-partition query is 1.0 (a little above with metadata reads at the gateway); a fan-out over
P partitions is at least about 1 + 2.5 (P - 1) / costliest, since every partition probed charges a minimum
of about 2.5 RU even when nothing matches (docs/reference/ru-cost-model.md, Q3 and Q4). The
gateway's share (the refused first attempt, the query plan) is in the numerator: a routed query would not
pay it. No data page (a query that found no partition): NaN.

**Index use** (`index_use`): per query, the mean `index_hit_ratio` of its data pages (the service's
indexUtilizationRatio query metric) and the index paths the service reports as used and as missing
(`x-ms-cosmos-index-utilization`, base64 or plain JSON), when the replay asked for index metrics; a
composite index is its paths and orders joined ("/a ASC, /b DESC"), and `missing_composite_indexes` lists the
composites the service says a query lacks, one row each.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import numpy as np
import pandas as pd

from analysis.pkrange_ids import GATEWAY
from analysis.queries.costs import BREAKDOWN_COLUMNS, QUERY_KEY

MAX_POINTS = 240  # per query: 30 days of hourly runs draw 3-hour windows
MAX_PARTITIONS = 24  # partitions drawn on their own in a breakdown; the rest fold into OTHER
OTHER = "other"  # pkrange_id of the partitions folded together
OVER_TIME_COLUMNS = ["time", *QUERY_KEY, "mean_ru", "executions", "runs", "run_id"]
MULTIPLIER_COLUMNS = [*QUERY_KEY, "ru", "costliest_pkrange_ru", "pkranges", "routing_multiplier"]
INDEX_COLUMNS = [*QUERY_KEY, "index_hit_ratio", "indexes_used", "indexes_missing"]
MISSING_COMPOSITE_COLUMNS = [*QUERY_KEY, "composite_spec"]  # account first when the requests have it
COMPARE_COLUMNS = [
    *QUERY_KEY,
    "ru_a",
    "ru_b",
    "change_pct",
    "pkranges_a",
    "pkranges_b",
    "routing_multiplier_a",
    *INDEX_COLUMNS[len(QUERY_KEY) :],
]


def ru_over_time(logical: pd.DataFrame, starts: pd.Series, *, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """Mean RU per successful logical execution per query per run (or window), at the run's (window's) start.

    `logical` is `logical_executions`, `starts` `run_starts`; `runs` counts the runs in a point and `run_id`
    names the run of a one-run point ("" for a window). Sorted by query, then time.
    """
    ok = logical[logical["ok"]]
    if ok.empty:
        return pd.DataFrame(columns=OVER_TIME_COLUMNS)
    per_run = ok.groupby([*QUERY_KEY, "run_id"], dropna=False, sort=False)["total_ru"].agg(["sum", "count"])
    per_run = per_run.reset_index()
    per_run["time"] = per_run["run_id"].map(starts)
    if starts.size > max_points:
        first = starts.min()
        span = (starts.max() - first) // pd.Timedelta(minutes=1)
        width = pd.Timedelta(minutes=span // max_points + 1)  # whole minutes, at most max_points windows
        per_run["time"] = first + (per_run["time"] - first) // width * width
    groups = per_run.groupby([*QUERY_KEY, "time"], dropna=False)
    out = groups.agg(
        ru=("sum", "sum"), executions=("count", "sum"), runs=("run_id", "size"), run_id=("run_id", "first")
    ).reset_index()
    out["mean_ru"] = (out.pop("ru").astype(float) / out["executions"]).round(2)
    out["run_id"] = out["run_id"].astype(object).where(out["runs"].eq(1), "")
    return out.sort_values([*QUERY_KEY, "time"], kind="stable", ignore_index=True)[OVER_TIME_COLUMNS]


def costliest_partitions(*breakdowns: pd.DataFrame, top: int = MAX_PARTITIONS) -> set[tuple[str, str, str]]:
    """The (database, container, pkrange_id) of the `top` partitions that charged the most over the
    breakdowns together (two runs side by side keep the same ones); the gateway is not a partition."""
    both = pd.concat(
        [b[b["pkrange_id"].ne(GATEWAY)] for b in breakdowns if not b.empty] or [pd.DataFrame(columns=BREAKDOWN_COLUMNS)]
    )
    totals = (
        both.groupby(["database", "container", "pkrange_id"])["ru"].sum().sort_values(ascending=False, kind="stable")
    )
    return set(totals.index[:top].tolist())


def fold_partitions(breakdown: pd.DataFrame, keep: set[tuple[str, str, str]]) -> pd.DataFrame:
    """The breakdown with every partition not in `keep` summed, per query, into pkrange_id OTHER of its
    container: a fan-out over 100 partitions draws 25 segments a person can tell apart, the same total."""
    ids = breakdown["pkrange_id"].astype(object)
    keys = pd.MultiIndex.from_frame(breakdown[["database", "container"]].astype(object).assign(pkrange_id=ids))
    folded = ids.where(keys.isin(list(keep)) | ids.eq(GATEWAY), OTHER)
    if folded.eq(ids).all():
        return breakdown
    out = breakdown.assign(pkrange_id=folded).groupby([*QUERY_KEY, "pkrange_id"], sort=False, dropna=False)["ru"].sum()
    return out.reset_index()[BREAKDOWN_COLUMNS]


def routing_multiplier(breakdown: pd.DataFrame) -> pd.DataFrame:
    """Per query of a run's `pkrange_breakdown` (per execution): its RU, its costliest partition's RU, the
    partitions its data pages came from, and their ratio (see the module docstring); the breakdown's order."""
    if breakdown.empty:
        return pd.DataFrame(columns=MULTIPLIER_COLUMNS)
    pages = breakdown[breakdown["pkrange_id"].ne(GATEWAY)]
    out = breakdown.groupby(QUERY_KEY, sort=False, dropna=False)["ru"].sum().rename("ru").to_frame()
    by_query = pages.groupby(QUERY_KEY, sort=False, dropna=False)
    out = out.join(by_query["ru"].max().rename("costliest_pkrange_ru")).join(by_query.size().rename("pkranges"))
    costliest = out["costliest_pkrange_ru"].astype(float)
    out["routing_multiplier"] = (out["ru"].astype(float) / costliest.where(costliest > 0)).round(2)
    out["pkranges"] = out["pkranges"].fillna(0).astype(int)
    out[["ru", "costliest_pkrange_ru"]] = out[["ru", "costliest_pkrange_ru"]].astype(float).round(2)
    return out.reset_index()[MULTIPLIER_COLUMNS]


def with_multipliers(summary: pd.DataFrame, multipliers: pd.DataFrame) -> pd.DataFrame:
    """The summary with `routing_multiplier` of each query's latest run (`multipliers`: `routing_multiplier`
    rows with a `run_id`); NaN for a query without one."""
    if multipliers.empty:
        return summary.assign(routing_multiplier=np.nan)
    keys = multipliers[[*QUERY_KEY, "run_id", "routing_multiplier"]].rename(columns={"run_id": "latest_run"})
    return summary.merge(keys, on=[*QUERY_KEY, "latest_run"], how="left")


def index_use(requests: pd.DataFrame) -> pd.DataFrame:
    """Per query of a run's requests: the mean index hit ratio of its data pages, and the index paths
    reported used and missing, comma-separated (blank when the replay did not ask for index metrics)."""
    pages = requests[requests["request_kind"].eq("page").fillna(False).astype(bool)]
    if pages.empty:
        return pd.DataFrame(columns=INDEX_COLUMNS)
    codes, texts = pd.factorize(pages["index_utilization"].astype(object), use_na_sentinel=True)
    parsed = [_index_paths(text) for text in texts]
    keyed = pages[QUERY_KEY].assign(code=codes, ratio=pages["index_hit_ratio"].astype(float))
    groups = keyed.groupby(QUERY_KEY, sort=False, dropna=False)
    out = groups["ratio"].mean().round(3).rename("index_hit_ratio").to_frame()
    used, missing = {}, {}
    for key, query_codes in groups["code"]:
        found = [parsed[c] for c in set(query_codes.tolist()) if c >= 0]
        used[key] = ", ".join(sorted(set().union(*(u for u, _ in found))))
        missing[key] = ", ".join(sorted(set().union(*(m for _, m in found))))
    out["indexes_used"] = out.index.map(used)
    out["indexes_missing"] = out.index.map(missing)
    return out.reset_index()[INDEX_COLUMNS]


def _index_info(text: str) -> dict[str, Any]:
    """One `x-ms-cosmos-index-utilization` value decoded (plain JSON, else base64 JSON); {} when neither."""
    try:
        info = json.loads(text)
    except ValueError:
        try:
            info = json.loads(base64.b64decode(text, validate=True))
        except (ValueError, binascii.Error):
            return {}
    return info if isinstance(info, dict) else {}


def _index_paths(text: str) -> tuple[set[str], set[str]]:
    """The IndexSpec paths of the used (utilized) and missing (potential) indexes of one header value."""
    info = _index_info(text)

    def specs(*names: str) -> set[str]:
        return {_spec(e) for n in names for e in info.get(n) or [] if isinstance(e, dict) and _spec(e)}

    return specs("UtilizedSingleIndexes", "UtilizedCompositeIndexes"), specs(
        "PotentialSingleIndexes", "PotentialCompositeIndexes"
    )


def _spec(entry: dict[str, Any]) -> str:
    """One index entry's spec: a single index's `IndexSpec` ("/a/?"), a composite's `IndexSpecs` joined
    ("/a ASC, /b ASC": the service writes a composite as a list, the .NET SDK's CompositeIndexIndexMetrics)."""
    many = entry.get("IndexSpecs")
    if isinstance(many, list):
        return ", ".join(str(part) for part in many)
    one = entry.get("IndexSpec")
    return "" if one is None else str(one)


def missing_composite_indexes(requests: pd.DataFrame) -> pd.DataFrame:
    """Per query of the requests (`MISSING_COMPOSITE_COLUMNS`, account first when the frame has one): each
    composite index the service reported as potential (missing) on its data pages, as its spec ("/a ASC, /b
    DESC"), one row per spec; none when the replay did not ask for index metrics."""
    key = (["account"] if "account" in requests.columns else []) + QUERY_KEY
    pages = requests[requests["request_kind"].eq("page").fillna(False).astype(bool)].dropna(
        subset=["index_utilization"]
    )
    rows = []
    for text, mine in pages.groupby("index_utilization", sort=False):
        for spec in sorted(_composite_specs(str(text))):
            rows += [(*k, spec) for k in mine[key].drop_duplicates().itertuples(index=False)]
    out = pd.DataFrame(rows, columns=[*key, "composite_spec"]).drop_duplicates()
    return out.sort_values([*key, "composite_spec"], ignore_index=True)


def _composite_specs(text: str) -> set[str]:
    """The specs of the potential composite indexes of one header value (base64 or plain JSON)."""
    info = _index_info(text)
    return {_spec(e) for e in info.get("PotentialCompositeIndexes") or [] if isinstance(e, dict) and _spec(e)}


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, *, index: pd.DataFrame | None = None) -> pd.DataFrame:
    """Two runs' `routing_multiplier` frames side by side, per query: RU per execution in run A and run B,
    A's change against B in % (NaN when either is missing), the partitions each reached, A's multiplier and,
    from `index` (`index_use` of run A), how the index served A. Queries of A first (its order), then those
    only in B."""
    cols = [*QUERY_KEY, "ru", "pkranges", "routing_multiplier"]
    both = a[cols].merge(b[cols], on=QUERY_KEY, how="outer", suffixes=("_a", "_b"), sort=False)
    order = pd.concat([a[QUERY_KEY], b[QUERY_KEY]]).drop_duplicates().reset_index(drop=True)
    both = order.merge(both, on=QUERY_KEY, how="left")
    ru_a, ru_b = both["ru_a"].astype(float), both["ru_b"].astype(float)
    both["change_pct"] = ((ru_a / ru_b.where(ru_b > 0) - 1) * 100).round(1)
    for column in ("pkranges_a", "pkranges_b"):
        both[column] = both[column].astype("Int64")
    if index is not None and not index.empty:
        both = both.merge(index, on=QUERY_KEY, how="left")
    return both.reindex(columns=COMPARE_COLUMNS)
