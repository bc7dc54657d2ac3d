"""Alerts: the config's `[alerts]` thresholds evaluated on store frames, one row per (rule, subject) that fired.

Pure functions; `collectors.alerts` reads the frames (only the `*_COLUMNS` below, only the window) and
writes the rows to the store's `alerts` table. A rule fires when its number is **at or above** its
threshold (to 1e-9, so a value computed to exactly the threshold fires). Each returns `ALERT_COLUMNS`, one
row per (container, rule, subject), in a stable order:

- `hot_partition`: a pkrange whose NormalizedRUConsumption (aggregation Maximum, split by pkrange) stayed at
  or above `percent` for `minutes` consecutive minutes of the window. A point covers its grain (PT1M: one
  minute, PT5M: five) from its time; a missing point, one below `percent` or one that was ruscope's own
  replay (`analysis.load`'s rule: the replay's busiest second there used at least half of the minute's figure;
  the message counts them) ends a stretch: the replay's load is not the workload's risk. `value` is the
  stretch's peak (%), the message names its length. A shared-throughput database's partitions (stored under
  `container` = `store.records.SHARED_OFFER_CONTAINER`: they are its offer's, not a container's) fire as the
  database's: the row's `container` is "" and the message says "database D's shared throughput".
- `throttle_rate`: 429s over all requests of the window, per container: `analysis.throttling.preferred_rate`,
  the rate every page and the report show (Azure Monitor's TotalRequests split by status code; a container
  without those rows falls back to the diagnostic logs' `log_throttles`, else to the replay's `requests`,
  status 429 over all), of the last `window_minutes` where a page's is of its whole time range. The message
  names the source and the window.
- `logical_key_storage`: a logical key's size in the latest snapshot against `Limits.logical_partition_max_bytes`
  (20 GB): from `log_key_sizes` (Log Analytics) when that table has the key, else from `logical_keys` (the
  storage collector's sample of the largest keys).
- `partition_storage`: a physical partition's size in the latest `partitions` snapshot against
  `Limits.physical_partition_max_bytes` (50 GB).
- `query_ru_increase`: a query's latest run's mean RU per successful logical execution (as in
  `analysis.queries.costs`) against its baseline, the median of the means of up to `baseline_runs` runs before
  it; a query without a previous successful run has no baseline and cannot fire.

An evaluation also records one `evaluated` row per account it covered (`evaluated_rows`), so a clean
evaluation after a noisy one is visible: `latest_alerts` is what is open now, `open_alerts` the same in a
scope (the banner and the Overview): read the `alerts` table unscoped, then cut.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd

from analysis import load, regions, throttling
from analysis.queries import costs as qc
from analysis.scope import Scope, in_containers, select_scope, span_text
from cosmoscore.limits import GB
from cosmoscore.monitor.metrics import NORMALIZED_RU
from store.records import (
    ALERTS,
    EXECUTIONS,
    LOGICAL_KEYS,
    METRICS,
    PARTITIONS,
    REQUESTS,
    SCOPE_COLUMNS,
    SHARED_OFFER_CONTAINER,
)

HOT, THROTTLE, KEY_STORAGE, PARTITION_STORAGE, QUERY_RU = (
    "hot_partition",
    "throttle_rate",
    "logical_key_storage",
    "partition_storage",
    "query_ru_increase",
)
RULES = (HOT, THROTTLE, KEY_STORAGE, PARTITION_STORAGE, QUERY_RU)
EVALUATED = "evaluated"  # the rule of the one row per account each evaluation writes, alerts or not
TOLERANCE = 1e-9
# how a message names the source of a container's 429 rate (`analysis.throttling.preferred_rate`)
SOURCE_NAMES = {
    throttling.MONITOR: "Azure Monitor TotalRequests",
    throttling.LOGS: "the diagnostic logs (Log Analytics)",
    throttling.REPLAY: "the replay's requests",
}
CONTAINER = list(SCOPE_COLUMNS)
ALERT_COLUMNS = ALERTS.pick(*CONTAINER, "rule", "subject", "value", "threshold", "unit", "message")
STORED_COLUMNS = ALERTS.pick("run_id", "time", *ALERT_COLUMNS)  # the `alerts` table's columns `latest_alerts` reads

# The store columns each rule reads: the collector loads only these.
METRIC_COLUMNS = METRICS.pick(
    *CONTAINER, "time", "metric", "aggregation", "pkrange_id", "status_code", "value", "grain", "region"
)
# the 429 rate's (status) and the replay's minutes (`analysis.load`: pkrange and charge), one read for both
REQUEST_COLUMNS = REQUESTS.pick(*CONTAINER, "time", "status", "pkrange_id", "request_charge")
LOG_THROTTLE_COLUMNS = throttling.LOG_THROTTLE_COLUMNS
PARTITION_COLUMNS = PARTITIONS.pick(*CONTAINER, "run_id", "time", "pkrange_id", "size_kb")
KEY_COLUMNS = LOGICAL_KEYS.pick(*CONTAINER, "run_id", "time", "partition_key", "size_kb")
EXECUTION_COLUMNS = EXECUTIONS.pick("account", *qc.EXECUTION_COLUMNS)


def hot_partition_alerts(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    percent: float,
    minutes: int,
) -> pd.DataFrame:
    """Pkranges at or above `percent` normalized RU for `minutes` consecutive minutes (module docstring); the
    minutes that were ruscope's own replay (`analysis.load`'s rule, from `requests` and the budgets of
    `metrics` and `partitions`) are not the workload's and end a stretch."""
    rows = metrics.dropna(subset=CONTAINER)  # a shared database's offer ("") included: its partitions throttle
    rows = rows[_is(rows["metric"], NORMALIZED_RU) & rows["aggregation"].fillna("Maximum").eq("Maximum")]
    rows = regions.select_region(rows.dropna(subset=["time", "value", "pkrange_id"]), None)
    rows, own = _without_own_minutes(rows, metrics, requests, partitions)
    own_counts = _own_counts(own)
    several = rows["account"].map(regions.region_counts(rows).set_index("account")["regions"]).gt(1)
    rows = rows[rows["value"].astype(float) >= percent - TOLERANCE]
    if rows.empty:
        return no_alerts()
    # a range is one region's (each region holds every range with its own RU/s): its stretch is counted there,
    # and named so when the account has several (a one-region account's alerts read as they always did)
    region = rows["region"].astype(object).fillna("") if "region" in rows.columns else pd.Series("", index=rows.index)
    rows = rows.assign(in_region=region.where(several.reindex(rows.index).fillna(False).astype(bool), ""))
    group = [*CONTAINER, "pkrange_id", "in_region"]
    points = rows.groupby([*group, "time"]).agg(value=("value", "max"), grain=("grain", "first")).reset_index()
    points["end"] = points["time"] + pd.to_timedelta(points["grain"].map(_grain_minutes).astype(float), unit="min")
    points = points.sort_values([*group, "time"], kind="stable")
    reach = points.groupby(group)["end"].transform(lambda ends: ends.cummax().shift())
    points["stretch"] = (reach.isna() | (points["time"] > reach)).cumsum()
    stretches = points.groupby([*group, "stretch"]).agg(
        start=("time", "min"), end=("end", "max"), peak=("value", "max")
    )
    stretches["minutes"] = (stretches["end"] - stretches["start"]).dt.total_seconds() / 60
    longest = stretches.reset_index().sort_values(["minutes", "end"], kind="stable").groupby(group).tail(1)
    fired = longest[longest["minutes"] >= minutes - TOLERANCE].sort_values(group, kind="stable")
    return _alerts(
        fired,
        HOT,
        subject=fired["pkrange_id"]
        .astype(str)
        .where(fired["in_region"].eq(""), fired["pkrange_id"].astype(str) + " (" + fired["in_region"] + ")"),
        value=fired["peak"].astype(float),
        threshold=float(percent),
        unit="%",
        message=[
            f"pkrange {row.pkrange_id}{_in_region(str(row.in_region))} of "
            f"{_owner(str(row.database), str(row.container))} at >= {percent:g}% normalized RU for "
            f"{row.minutes:g} min, peak {row.peak:g}% (threshold {percent:g}% for {minutes} min)"
            + _own_left_out(own_counts, row)
            for row in fired.itertuples()
        ],
    )


def _without_own_minutes(
    rows: pd.DataFrame, metrics: pd.DataFrame, requests: pd.DataFrame | None, partitions: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The normalized RU `rows` less the points that were ruscope's replay, and those (per container, pkrange
    and time: how many per range a message counts). Without `requests` nothing is known to be the replay's."""
    if requests is None or requests.empty or rows.empty:
        return rows, pd.DataFrame(columns=[*CONTAINER, "pkrange_id", "time"])
    minutes = load.partition_minutes(metrics, requests, partitions)
    own = minutes[minutes["own"].astype(bool)][[*CONTAINER, "pkrange_id", "time"]].drop_duplicates()
    if own.empty:
        return rows, own
    keys = pd.MultiIndex.from_frame(own.assign(time=pd.to_datetime(own["time"], utc=True)))
    mine = pd.MultiIndex.from_arrays(
        [*(rows[name].astype(str) for name in (*CONTAINER, "pkrange_id")), pd.to_datetime(rows["time"], utc=True)]
    ).isin(keys)
    return rows[~mine], own


def _own_counts(own: pd.DataFrame) -> dict[tuple[str, ...], int]:
    """(account, database, container, pkrange) -> how many of its minutes were the replay's."""
    sizes = own.astype(str).groupby([*CONTAINER, "pkrange_id"]).size()
    return {tuple(str(part) for part in key): int(n) for key, n in zip(sizes.index.to_list(), sizes.to_list())}


def _own_left_out(counts: dict[tuple[str, ...], int], row: object) -> str:
    """'; N minutes of ruscope's replay left out' for a fired range that had some (none: "")."""
    count = counts.get(tuple(str(getattr(row, name)) for name in (*CONTAINER, "pkrange_id")), 0)
    return f"; {count} minute{'s' if count != 1 else ''} of ruscope's replay left out" if count else ""


def _in_region(region: str) -> str:
    return f" in {region}" if region else ""


def throttle_rate_alerts(
    metrics: pd.DataFrame,
    requests: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    percent: float,
    window_minutes: int,
) -> pd.DataFrame:
    """Containers whose 429s were at or above `percent` of their requests (module docstring)."""
    rates = throttling.preferred_rate(metrics, requests, log_throttles)  # the one 429 rate every page shows
    rates = rates.assign(
        total=rates["requests"].astype(float),
        rate=rates["rate"].astype(float) * 100,
        source=rates["source"].map(SOURCE_NAMES).fillna(rates["source"]),
    )
    fired = rates[rates["rate"] >= percent - TOLERANCE].sort_values(CONTAINER, kind="stable")
    last = span_text(pd.Timedelta(minutes=window_minutes))  # "1 hour": as the dashboard's "Last 1 hour" reads
    return _alerts(
        fired,
        THROTTLE,
        subject="",
        value=fired["rate"].round(4),
        threshold=float(percent),
        unit="%",
        message=[
            f"429s were {row.rate:.3g}% of requests to {row.database}/{row.container} in the last {last} "
            f"({row.throttled:g} of {row.total:g}, from {row.source}; threshold {percent:g}%)"
            for row in fired.itertuples()
        ],
    )


def logical_key_alerts(
    logical_keys: pd.DataFrame, log_key_sizes: pd.DataFrame, *, percent: float, limit_bytes: int
) -> pd.DataFrame:
    """Logical keys at or above `percent` of `limit_bytes` in the latest snapshot (module docstring)."""
    logs = _latest_snapshot(log_key_sizes).assign(source="; from the diagnostic logs", rank=0)
    stats = _latest_snapshot(logical_keys).assign(source="; from the storage statistics", rank=1)
    keys = pd.concat([logs, stats], ignore_index=True)
    if keys.empty:
        return no_alerts()
    keys = keys.sort_values("rank", kind="stable").drop_duplicates([*CONTAINER, "partition_key"], keep="first")
    return _fill_alerts(
        keys, "partition_key", KEY_STORAGE, percent, limit_bytes, lambda key: f"logical key {_key_text(key)}"
    )


def partition_storage_alerts(partitions: pd.DataFrame, *, percent: float, limit_bytes: int) -> pd.DataFrame:
    """Physical partitions at or above `percent` of `limit_bytes` in the latest snapshot (module docstring)."""
    latest = _latest_snapshot(partitions).assign(source="")
    if latest.empty:
        return no_alerts()
    return _fill_alerts(latest, "pkrange_id", PARTITION_STORAGE, percent, limit_bytes, lambda pk: f"pkrange {pk}")


def _fill_alerts(
    rows: pd.DataFrame, subject: str, rule: str, percent: float, limit_bytes: int, name: Callable[[str], str]
) -> pd.DataFrame:
    """The storage rules: the subjects (largest size each) at or above `percent` of `limit_bytes`."""
    sized = rows.assign(bytes=rows["size_kb"].astype(float) * 1024)
    key = [*CONTAINER, subject]
    sized = sized.groupby(key, as_index=False).agg(bytes=("bytes", "max"), source=("source", "first"))
    sized["share"] = sized["bytes"] / limit_bytes * 100
    fired = sized[sized["share"] >= percent - TOLERANCE].sort_values(key, kind="stable")
    sizes = [_size(size) for size in fired["bytes"].astype(float).tolist()]
    return _alerts(
        fired,
        rule,
        subject=fired[subject].astype(str),
        value=fired["share"].round(4),
        threshold=float(percent),
        unit="%",
        message=[
            f"{name(str(row.subject))} of {row.database}/{row.container} holds {size}, {row.share:.3g}% of the "
            f"{_size(limit_bytes)} limit (threshold {percent:g}%{row.source})"
            for row, size in zip(fired.rename(columns={subject: "subject"}).itertuples(), sizes)
        ],
    )


def query_ru_alerts(executions: pd.DataFrame, *, percent: float, baseline_runs: int) -> pd.DataFrame:
    """Queries whose latest run's mean RU is up `percent` or more on their baseline (module docstring)."""
    means = run_means(executions)
    if means.empty:
        return no_alerts()
    key = ["account", *qc.QUERY_KEY]
    back = means.groupby(key).cumcount(ascending=False)  # 0: the latest run, 1: the one before...
    latest = means[back == 0].set_index(key)["mean_ru"].rename("latest")
    earlier = means[(back >= 1) & (back <= baseline_runs)].groupby(key)["mean_ru"]
    found = pd.concat([latest, earlier.median().rename("baseline"), earlier.size().rename("runs")], axis=1)
    found = found.dropna(subset=["latest", "baseline"]).astype({"runs": int}).reset_index()
    found = found[found["baseline"] > 0].assign(change=lambda f: (f["latest"] / f["baseline"] - 1) * 100)
    fired = found[found["change"] >= percent - TOLERANCE].sort_values(key, kind="stable")
    return _alerts(
        fired,
        QUERY_RU,
        subject=fired["query_name"].astype(str),
        value=fired["change"].round(4),
        threshold=float(percent),
        unit="%-change",
        message=[
            f"query {row.query_name} on {row.database}/{row.container} took {row.latest:.2f} RU per execution in "
            f"its latest run, up {row.change:.3g}% on its baseline of {row.baseline:.2f} RU (median of "
            f"{row.runs} previous run(s); threshold +{percent:g}%)"
            for row in fired.itertuples()
        ],
    )


def run_means(executions: pd.DataFrame) -> pd.DataFrame:
    """Per account, query and run: the mean RU of its successful logical executions, oldest run first."""
    columns = ["account", *qc.QUERY_KEY, "run_id", "start", "mean_ru"]
    logical = qc.account_logical_executions(executions)
    ok = logical[logical["ok"].astype(bool)] if not logical.empty else logical
    if ok.empty:
        return pd.DataFrame(columns=columns)
    key = ["account", *qc.QUERY_KEY, "run_id"]
    means = ok.groupby(key).agg(mean_ru=("total_ru", "mean")).reset_index()
    starts = logical.groupby(["account", "run_id"])["time"].min().rename("start")
    means = means.join(starts, on=["account", "run_id"]).astype({"mean_ru": float})
    return means.sort_values(["start", "run_id"], kind="stable", ignore_index=True)[columns]


def evaluated_rows(accounts: list[str], alerts: pd.DataFrame) -> pd.DataFrame:
    """One `evaluated` row per account covered: `value` is how many alerts fired there."""
    counts = alerts["account"].value_counts() if not alerts.empty else pd.Series(dtype=int)
    fired = [int(counts.get(account, 0)) for account in accounts]
    return pd.DataFrame(
        {
            "account": accounts,
            "database": "",
            "container": "",
            "rule": EVALUATED,
            "subject": "",
            "value": [float(n) for n in fired],
            "threshold": 0.0,
            "unit": "alerts",
            "message": [f"{n} alert(s) fired" for n in fired],
        },
        columns=ALERT_COLUMNS,
    )


def latest_alerts(alerts: pd.DataFrame) -> pd.DataFrame:
    """The alerts of each account's latest evaluation (`STORED_COLUMNS`): what is open now. An account whose
    latest evaluation fired nothing has none, however many an earlier one had."""
    evaluations = alerts[_is(alerts["rule"], EVALUATED)].dropna(subset=["time", "run_id"])
    if evaluations.empty:
        return pd.DataFrame(columns=STORED_COLUMNS)
    latest = evaluations.sort_values(["time", "run_id"], kind="stable").groupby("account").tail(1)
    keys = pd.MultiIndex.from_frame(latest[["account", "run_id"]].astype(str))
    mine = alerts[pd.MultiIndex.from_frame(alerts[["account", "run_id"]].astype(str)).isin(keys)]
    mine = mine[~_is(mine["rule"], EVALUATED)]
    return mine.sort_values([*CONTAINER, "rule", "subject"], kind="stable", ignore_index=True)[STORED_COLUMNS]


def open_alerts(alerts: pd.DataFrame, where: Scope) -> pd.DataFrame:
    """`latest_alerts` in a scope. The scope is cut after the latest evaluations are found: their `evaluated`
    rows name no database or container, so cutting first would lose them (and every alert with them)."""
    return select_scope(latest_alerts(alerts), where).reset_index(drop=True)


def _latest_snapshot(frame: pd.DataFrame) -> pd.DataFrame:
    """Each container's rows of its latest run (the run with its latest time)."""
    rows = in_containers(frame).dropna(subset=["time", "run_id", "size_kb"])
    if rows.empty:
        return rows
    runs = rows.groupby([*CONTAINER, "run_id"])["time"].max().reset_index()
    latest = runs.sort_values(["time", "run_id"], kind="stable").groupby(CONTAINER).tail(1)
    return rows.merge(latest[[*CONTAINER, "run_id"]], on=[*CONTAINER, "run_id"])


def _alerts(fired: pd.DataFrame, rule: str, **columns: pd.Series | str | float | list[str]) -> pd.DataFrame:
    """`ALERT_COLUMNS` for the fired rows; the named columns given, the container's from the rows."""
    if fired.empty:
        return no_alerts()
    out = fired[CONTAINER].astype(str).reset_index(drop=True).assign(rule=rule)
    for name, value in columns.items():
        out[name] = value.to_numpy() if isinstance(value, pd.Series) else value  # by position, not index
    return out[ALERT_COLUMNS].astype({"value": float, "threshold": float})


def no_alerts() -> pd.DataFrame:
    """No alert: `ALERT_COLUMNS`, no rows."""
    return pd.DataFrame(columns=ALERT_COLUMNS).astype({"value": float, "threshold": float})


def _grain_minutes(grain: object) -> float:
    """An ISO 8601 grain ("PT1M", "PT5M") in minutes; a missing or unreadable one is a minute."""
    try:
        minutes = pd.Timedelta(str(grain)).total_seconds() / 60 if isinstance(grain, str) and grain else 0.0
    except ValueError:
        minutes = 0.0
    return minutes if minutes > 0 else 1.0


def _size(size_bytes: float) -> str:
    """Bytes in the largest unit that keeps a digit before the point (GB, MB, KB)."""
    for unit, scale in (("GB", GB), ("MB", 1024**2), ("KB", 1024)):
        if size_bytes >= scale:
            return f"{size_bytes / scale:.3g} {unit}"
    return f"{size_bytes:g} bytes"


def _key_text(partition_key: str) -> str:
    """A key's JSON text as people write it: ["t1"] -> t1, ["t1","u1"] -> t1/u1."""
    try:
        parts = json.loads(partition_key)
    except ValueError:
        return partition_key
    values = parts if isinstance(parts, list) else [parts]
    return "/".join(str(part) for part in values)


def _owner(database: str, container: str) -> str:
    """Whose partition it is: `database/container`, or a shared-throughput database's offer."""
    if container == SHARED_OFFER_CONTAINER:
        return f"database {database}'s shared throughput"
    return f"{database}/{container}"


def _is(values: pd.Series, value: str) -> pd.Series:
    return values.eq(value).fillna(False).astype(bool)
