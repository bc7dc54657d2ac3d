"""Query costs: what each replayed query costs per execution, how that changes between runs, which
physical partitions (pkranges) the cost lands on, and how the query was routed.

Pure functions over the store's `executions` and `requests` frames (`store`), of which they read
only `EXECUTION_COLUMNS` and `REQUEST_COLUMNS`. Narrowing a frame to a time range or a database and
container is `analysis.scope`'s job, done before these run.

**Logical executions.** In "per-feed-range" mode the replay collector runs a query once per feed range
and records one `executions` row per range: same run_id, query and `repeat`, different `feed_range`.
Those rows together are *one logical execution* of the query, identified by
(run_id, database, container, query_name, repeat):
- its `total_ru` is the sum of the parts' `total_ru`, its time the earliest part's time;
- it is successful only when every part has status "ok"; otherwise it failed ("error", "budget", "stopped");
- its pkranges are the union of the parts' pkranges. The collector runs one part per physical partition,
  so the number of parts is the container's partition count: the routing class observed is the class of
  (pkranges reached, of that many), as the collector classifies an "as-is" query, and the class predicted
  for running every feed range is "fan-out" (or "single" for a one-partition container). It is a mismatch
  when any part is (a part reached a partition other than its own feed range's).
Its SHAPE (pages, round trips, items, retrieved and output documents) is the parts' sums.
An "as-is" execution is a logical execution of one part. Every per-execution number below (mean, median,
max, change between runs, the over-time series, the breakdown's RU) is per logical execution, so an
"as-is" fan-out and the same query run per feed range compare directly.

**Runs** are ordered by their start (the earliest `time` of any of their executions). A query's latest
run is the most recent run in which it had a successful execution; its previous run the one before.

**The pkrange breakdown** splits a run's RU by where it was charged: data pages (`request_kind` "page")
count for the pkrange that served them; every other request of the execution (the gateway's refusal of a
cross-partition query, the query plan, routing-map and metadata reads) counts as "gateway", with
pkrange_id "" (`GATEWAY`). Since the replay collector's `total_ru` is the sum of its requests' charges,
each query's stacked total equals its executions' `total_ru`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.pkrange_ids import GATEWAY, count_ids, counts, normalised, pkrange_sort_key, union_per_group
from cosmoscore.routing import ROUTING_CLASSES, routing_class
from store.records import EXECUTIONS, REQUESTS

QUERY_KEY = EXECUTIONS.pick("database", "container", "query_name")
# summed over the parts
SHAPE = EXECUTIONS.pick("pages", "round_trips", "items", "retrieved_documents", "output_documents")
LATEST_SHAPE = [f"latest_{name}" for name in SHAPE]  # per logical execution of the latest run (mean)
LOGICAL_KEY = EXECUTIONS.pick("run_id", *QUERY_KEY, "repeat")
_CLASSES = pd.Index(ROUTING_CLASSES)  # a class's rank is its position: the widest class is the largest

SUMMARY_COLUMNS = [
    *QUERY_KEY,
    "mode",
    "executions",
    "mean_ru",
    "median_ru",
    "max_ru",
    "latest_run",
    "latest_run_start",
    "latest_mean_ru",
    "previous_mean_ru",
    "change_pct",
    "latest_pkrange_count",
    "latest_pkranges",
    "routing",
    "routing_predicted",
    "routing_mismatch",
    "throttled",
    "errors",
    "last_seen",
    *LATEST_SHAPE,
    "ru_per_item",
    "sql",
]
LOGICAL_COLUMNS = [
    *LOGICAL_KEY,
    "time",
    "last_time",
    "mode",
    "parts",
    "ok",
    "total_ru",
    "pkranges",
    "pkrange_count",
    "routing",
    "routing_predicted",
    "routing_mismatch",
    "throttled",
    *SHAPE,
]
SERIES_COLUMNS = EXECUTIONS.pick("time", "run_id", *QUERY_KEY, "repeat", "total_ru")
BREAKDOWN_COLUMNS = [*QUERY_KEY, "pkrange_id", "ru"]
ERROR_COLUMNS = EXECUTIONS.pick("time", "run_id", *QUERY_KEY, "repeat", "mode", "feed_range", "status", "error")
# The store columns these functions read: a view loads only these (the tables have many more).
EXECUTION_COLUMNS = EXECUTIONS.pick(
    *LOGICAL_KEY,
    "time",
    "execution_id",
    "mode",
    "feed_range",
    "status",
    "error",
    "total_ru",
    "pkranges",
    "routing_observed",
    "routing_predicted",
    "routing_mismatch",
    "throttled",
    *SHAPE,
    "sql",
)
REQUEST_COLUMNS = REQUESTS.pick(
    "run_id",
    "time",
    *QUERY_KEY,
    "execution_id",
    "request_kind",
    "pkrange_id",
    "request_charge",
    "index_hit_ratio",
    "index_utilization",
)


def logical_executions(executions: pd.DataFrame) -> pd.DataFrame:
    """One row per logical execution (see the module docstring), in time order; its SHAPE columns are the
    parts' sums (missing when no part reported one).

    An "as-is" row is a whole logical execution by definition, so only per-feed-range rows are grouped: on a
    store of as-is queries the grouping (a hash of five string columns per row) is skipped altogether.
    """
    if executions.empty:
        return pd.DataFrame(columns=LOGICAL_COLUMNS)
    used = [*LOGICAL_KEY, "time", "mode", "execution_id", "total_ru", "throttled", "pkranges"]
    frame = executions[used + [name for name in SHAPE if name in executions.columns]].assign(
        ok=_is(executions["status"], "ok"),
        routing_rank=_ranks(executions["routing_observed"]),
        predicted_rank=_ranks(executions["routing_predicted"]),
        routing_mismatch=executions["routing_mismatch"].fillna(False).astype(bool),
    )  # only the columns used: a row mask below then copies 16 columns, not the table's SQL and errors
    as_is = _is(frame["mode"], "as-is").to_numpy()
    parts = [_whole(frame[as_is]), _grouped(frame[~as_is])]
    out = pd.concat([part for part in parts if not part.empty], ignore_index=True)
    out["pkrange_count"] = counts(out["pkranges"])
    out["routing"] = _classes(out.pop("routing_rank"))
    out["routing_predicted"] = _classes(out.pop("predicted_rank"))
    split = out["parts"] > 1  # one part per physical partition: the parts count is the partition count
    out.loc[split, "routing"] = [
        routing_class(hit, total) for hit, total in zip(out.loc[split, "pkrange_count"], out.loc[split, "parts"])
    ]
    out.loc[split, "routing_predicted"] = [routing_class(n, n) for n in out.loc[split, "parts"]]
    out = out.reindex(columns=LOGICAL_COLUMNS)
    return out.sort_values(["time", *LOGICAL_KEY], kind="stable", ignore_index=True)


def account_logical_executions(executions: pd.DataFrame) -> pd.DataFrame:
    """`logical_executions` of each account apart, with its `account` column: the accounts of a fleet share
    query, database and container names, so the parts of one account's execution never join another's."""
    frame = executions.dropna(subset=["account"])
    parts = [logical_executions(mine).assign(account=account) for account, mine in frame.groupby("account")]
    if not parts:
        return pd.DataFrame(columns=[*LOGICAL_COLUMNS, "account"])
    return pd.concat(parts, ignore_index=True)


def _whole(frame: pd.DataFrame) -> pd.DataFrame:
    """Logical executions of one part each (as-is rows): the row's own numbers, no grouping."""
    out = frame[[*LOGICAL_KEY, "time", "mode", "ok", "total_ru", "routing_rank", "predicted_rank"]].copy()
    out["last_time"] = frame["time"]
    out["parts"] = frame["execution_id"].notna().astype(int)
    out["routing_mismatch"] = frame["routing_mismatch"]
    out["throttled"] = frame["throttled"]
    for name in (name for name in SHAPE if name in frame.columns):
        out[name] = frame[name].to_numpy(dtype=float, na_value=np.nan)
    out["pkranges"] = normalised(frame["pkranges"])
    return out.reset_index(drop=True)


def _grouped(frame: pd.DataFrame) -> pd.DataFrame:
    """Logical executions of several parts (per-feed-range rows): grouped by LOGICAL_KEY."""
    if frame.empty:
        return pd.DataFrame()
    groups = frame.groupby(LOGICAL_KEY, sort=False, dropna=False)
    out = groups.agg(
        time=("time", "min"),
        last_time=("time", "max"),
        mode=("mode", "first"),
        parts=("execution_id", "count"),
        ok=("ok", "all"),
        total_ru=("total_ru", "sum"),
        routing_rank=("routing_rank", "max"),
        predicted_rank=("predicted_rank", "max"),
        routing_mismatch=("routing_mismatch", "any"),
        throttled=("throttled", "sum"),
    ).reset_index()
    shape = [name for name in SHAPE if name in frame.columns]
    if shape:
        out[shape] = groups[shape].sum(min_count=1).to_numpy(dtype=float, na_value=np.nan)
    out["pkranges"] = union_per_group(groups, frame["pkranges"])
    return out


def summarize_query_costs(executions: pd.DataFrame) -> pd.DataFrame:
    """One row per (database, container, query_name), most expensive latest run first
    (`summarize_logical` of the executions' logical executions)."""
    return summarize_logical(logical_executions(executions), run_starts(executions), latest_sql(executions))


def summarize_logical(logical: pd.DataFrame, starts: pd.Series, sql: pd.Series | None = None) -> pd.DataFrame:
    """The summary from logical executions computed once (a page shares them with its chart); `starts` are
    `run_starts` of the executions, `sql` each query's text (`latest_sql`).

    Every query seen gets a row; its RU statistics come from successful logical executions only (NaN when
    it never succeeded). `throttled` sums the 429 responses and `errors` counts failed logical executions
    (a part with status "error", "budget" or "stopped") over every run. `change_pct` compares the latest run's mean RU
    per execution with the previous run's (NaN without a previous run). `latest_run_start` is the latest run's
    start; `latest_pkranges`, `routing` (observed), `routing_predicted` and `routing_mismatch` describe the
    latest run: the pkranges reached by any execution, the widest class, and whether any execution was routed
    other than predicted. `latest_pages` .. `latest_output_documents` are that run's means per execution,
    `ru_per_item` its mean RU over its mean returned items (NaN with none). RU is rounded to 0.01, change to 0.1.
    """
    if logical.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    ok = logical[logical["ok"]]
    seen = (
        logical.assign(failed=~logical["ok"])
        .groupby(QUERY_KEY, dropna=False)
        .agg(
            mode=("mode", "last"),
            throttled=("throttled", "sum"),
            errors=("failed", "sum"),
            last_seen=("last_time", "max"),
        )
    )
    stats = ok.groupby(QUERY_KEY, dropna=False)["total_ru"].agg(
        executions="count", mean_ru="mean", median_ru="median", max_ru="max"
    )
    summary = seen.join(stats).join(_latest_runs(ok, starts))
    if sql is not None:
        summary = summary.join(sql.rename("sql"))
    return _tidy_summary(summary.reset_index())


def latest_sql(executions: pd.DataFrame) -> pd.Series:
    """Each query's SQL as its latest execution ran it, indexed by QUERY_KEY (empty without a `sql` column)."""
    if "sql" not in executions.columns or executions.empty:
        return pd.Series(dtype=object, index=pd.MultiIndex.from_tuples([], names=QUERY_KEY), name="sql")
    return executions.groupby(QUERY_KEY, dropna=False)["sql"].last().astype(object)


def _tidy_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """The change, the counts and the dtypes and rounding of the summary; most expensive latest run first."""
    ru = ["mean_ru", "median_ru", "max_ru", "latest_mean_ru", "previous_mean_ru"]
    summary[ru + LATEST_SHAPE] = summary[ru + LATEST_SHAPE].astype(float)  # Float64's pd.NA: plain NaN compares
    summary["executions"] = summary["executions"].fillna(0).astype(int)
    change = (summary["latest_mean_ru"] / summary["previous_mean_ru"] - 1) * 100
    summary["change_pct"] = change.where(summary["previous_mean_ru"] > 0).round(1)
    items = summary["latest_items"]
    summary["ru_per_item"] = (summary["latest_mean_ru"] / items.where(items > 0)).round(3)
    summary["latest_pkrange_count"] = summary["latest_pkranges"].map(count_ids, na_action="ignore").astype("Int64")
    summary["routing_mismatch"] = summary["routing_mismatch"].astype("boolean")
    summary[["throttled", "errors"]] = summary[["throttled", "errors"]].astype(int)
    summary[ru] = summary[ru].round(2)
    summary[LATEST_SHAPE] = summary[LATEST_SHAPE].round(1)
    summary = summary.sort_values(
        ["latest_mean_ru", *QUERY_KEY],
        ascending=[False, True, True, True],
        na_position="last",
        kind="stable",
        ignore_index=True,
    )
    return summary.reindex(columns=SUMMARY_COLUMNS)


def _latest_runs(ok: pd.DataFrame, starts: pd.Series) -> pd.DataFrame:
    """Per query: its latest run with a success, that run's start, mean RU and shape, pkranges, routing; the
    previous run's mean."""
    ranked = ok.assign(routing=_ranks(ok["routing"]), routing_predicted=_ranks(ok["routing_predicted"]))
    groups = ranked.groupby([*QUERY_KEY, "run_id"], dropna=False)
    per_run = groups.agg(
        latest_mean_ru=("total_ru", "mean"),
        routing=("routing", "max"),
        routing_predicted=("routing_predicted", "max"),
        routing_mismatch=("routing_mismatch", "any"),
    ).reset_index()
    per_run[LATEST_SHAPE] = groups[SHAPE].mean().to_numpy(dtype=float)
    per_run["latest_pkranges"] = union_per_group(groups, ranked["pkranges"])
    for column in ("routing", "routing_predicted"):
        per_run[column] = _classes(per_run[column])
    per_run["latest_run_start"] = per_run["run_id"].map(starts)
    per_run = per_run.sort_values(["latest_run_start", "run_id"], kind="stable")
    back = per_run.groupby(QUERY_KEY, dropna=False).cumcount(ascending=False)  # 0: latest, 1: previous
    latest = per_run[back == 0].set_index(QUERY_KEY).rename(columns={"run_id": "latest_run"})
    previous = per_run[back == 1].set_index(QUERY_KEY)["latest_mean_ru"].rename("previous_mean_ru")
    return latest.join(previous)


def ru_per_execution(executions: pd.DataFrame) -> pd.DataFrame:
    """RU of every successful logical execution, in time order."""
    logical = logical_executions(executions)
    return logical.loc[logical["ok"], SERIES_COLUMNS].reset_index(drop=True)


def failed_executions(executions: pd.DataFrame) -> pd.DataFrame:
    """Every execution row (each feed range on its own) whose status is not "ok", newest first."""
    failed = executions.loc[~_is(executions["status"], "ok"), ERROR_COLUMNS]
    return failed.sort_values(["time", "run_id"], ascending=False, kind="stable", ignore_index=True)


def pkrange_breakdown(requests: pd.DataFrame, run_id: str, *, executions: pd.DataFrame | None = None) -> pd.DataFrame:
    """RU of one run per (query, pkrange_id); pkrange_id "" (`GATEWAY`) holds RU not charged by a data page.

    Without `executions`, `ru` is the run's total for the query. With them (the run's `executions` rows),
    only the requests of successful logical executions count and `ru` is per logical execution, so each
    query's stacked total equals its mean `total_ru` in that run (the summary's `latest_mean_ru` for the
    latest run). Rows: queries most expensive first, pkranges in numeric order, the gateway last.
    """
    run = requests[_is(requests["run_id"], run_id)]
    counts = None
    if executions is not None:
        mine = executions[_is(executions["run_id"], run_id)]
        logical = logical_executions(mine)
        counts = logical[logical["ok"]].groupby(QUERY_KEY, dropna=False).size().rename("count")
        ok_ids = _ok_execution_ids(mine)
        run = run[run["execution_id"].isin(ok_ids)]
    if run.empty:
        return pd.DataFrame(columns=BREAKDOWN_COLUMNS)
    pkrange = run["pkrange_id"].fillna(GATEWAY).where(_is(run["request_kind"], "page"), GATEWAY)
    ru = run.assign(pkrange_id=pkrange).groupby([*QUERY_KEY, "pkrange_id"], dropna=False)["request_charge"].sum()
    out = ru.rename("ru").reset_index()
    if counts is not None:
        out["ru"] = out["ru"] / out.set_index(QUERY_KEY).index.map(counts.to_dict()).to_numpy(dtype=float)
    total = out.groupby(QUERY_KEY, dropna=False)["ru"].transform("sum")
    order = out.assign(_total=-total, _pk=out["pkrange_id"].map(pkrange_sort_key))
    return order.sort_values(["_total", *QUERY_KEY, "_pk"], kind="stable", ignore_index=True)[BREAKDOWN_COLUMNS]


def _ok_execution_ids(executions: pd.DataFrame) -> pd.Series:
    """execution_id of every part of a successful logical execution."""
    all_ok = (
        _is(executions["status"], "ok").groupby([executions[k] for k in LOGICAL_KEY], dropna=False).transform("all")
    )
    ids: pd.Series = executions.loc[all_ok, "execution_id"]
    return ids


def run_starts(executions: pd.DataFrame) -> pd.Series:
    """Start time of each run (its earliest execution), indexed by run_id."""
    return executions.groupby("run_id")["time"].min()


def _is(values: pd.Series, value: str) -> pd.Series:
    """values == value as plain bools: a missing value (the store's pd.NA) is not equal."""
    return values.eq(value).fillna(False).astype(bool)


def _ranks(classes: pd.Series) -> pd.Series:
    """The rank of each routing class (an unknown or missing one: 0), vectorised."""
    codes = _CLASSES.get_indexer(pd.Index(classes.astype(object)))
    return pd.Series(np.clip(codes, 0, None), index=classes.index, dtype="int64")


def _classes(ranks: pd.Series) -> np.ndarray:
    return np.take(np.asarray(ROUTING_CLASSES, dtype=object), ranks.to_numpy(dtype=int))
