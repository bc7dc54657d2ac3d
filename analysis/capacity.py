"""The capacity-review report: what `ruscope report` writes and the Reports page shows and downloads.

One long table (`REPORT_COLUMNS`), so that numbers of different grains (a container, a physical
partition, a logical key, a query) sit in one CSV that diffs cleanly, filters by `section` in a
spreadsheet and pivots without reshaping:

| column | meaning |
|---|---|
| `section` | `container`, `partition`, `key`, `query` or `action` (in that order within a container) |
| `account`, `database`, `container` | the container; containers in `analysis.fleet`'s risk order |
| `subject` | what the row is about: a pkrange id, a partition key (JSON text), a query name; "" for the container |
| `measure` | the number's name (below), or for an action the rule that fired |
| `value`, `unit` | the number and its unit (`RU`, `RU/s`, `%`, `share` (0..1), `GB`, `count`, `ratio`) |
| `detail` | plain words: the source of the number, a query's routing, an action's recommendation |

Measures. `container` (from `analysis.overview.summarize_containers`, which says where each comes from):
`ru_consumed`, `provisioned_ru_s`, `peak_ru_s`, `p95_ru_s`, `p95_utilization`, `hot_normalized_ru` (subject:
the hottest pkrange), `hot_range_share`, `throttle_rate`, `largest_partition_gb`, `storage_headroom`
(of 50 GB), `largest_key_gb`, `key_headroom` (of 20 GB), `autoscale_cost_ratio` (what autoscale would
cost against manual RU/s set at the peak, below). `partition` (the latest storage snapshot and Azure
Monitor): `size_gb`, `headroom` (of 50 GB), `documents`, `max_normalized_ru`. `key`: the `TOP_KEYS`
largest logical keys (`size_gb`, with their share of 20 GB) and the `TOP_KEYS` costliest by RU in the
diagnostic logs (`ru`). `query`: `total_ru`, `mean_ru`, `executions` of the replayed queries. A number
without data behind it has no row (never a guess).

Actions: each rule is a pure function below with its thresholds named as constants and their sources;
each returns an `Action` or None. The report must never hold a secret: it is built from store rows,
which carry no keys or tokens.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from analysis import overview
from cosmoscore.limits import GB, Limits

KEY = overview.KEY
REPORT_COLUMNS = ["section", *KEY, "subject", "measure", "value", "unit", "detail"]
SECTIONS = ("container", "partition", "key", "query", "action")
TOP_KEYS = 5

# The store columns the report reads, per table (`ruscope report` reads only these).
REPORT_TABLES = {
    "executions": overview.EXECUTION_COLUMNS,
    "requests": overview.fleet.REQUEST_COLUMNS,
    "metrics": overview.METRIC_COLUMNS,
    "partitions": [*overview.fleet.PARTITION_COLUMNS, "document_count"],
    "logical_keys": overview.LOGICAL_KEY_COLUMNS,
    "log_key_ru": [*KEY, "time", "partition_key", "request_charge"],
}

# -- thresholds of the rules, with why ------------------------------------------------------------------
THROTTLE_HEALTHY_MAX = overview.THROTTLE_HEALTHY_MAX  # ru-cost-model.md P12: 1-5% of requests 429 is healthy
THROTTLE_QUIET_MAX = 0.01  # the band's low end: lowering RU/s is advised only below it
LOWER_PEAK_UTILIZATION = 0.5  # even the busiest interval used under half the provisioned RU/s: paying 2x
TARGET_PEAK_UTILIZATION = 0.8  # a suggested rate the peak fills to 80%: a per-minute average hides bursts
RU_STEP = {False: 100, True: 1000}  # concepts-limits: manual RU/s in steps of 100, autoscale max of 1,000
AUTOSCALE_MIN_MAX = 1000  # ru-cost-model.md P9: the smallest autoscale max RU/s
# learn "how-to-choose-offer": autoscale bills each hour at the highest RU/s it scaled to (at least 10% of
# the max, P10) at 1.5x the manual rate per RU/s; manual must be set at the peak to avoid 429s.
AUTOSCALE_PRICE_FACTOR = 1.5
AUTOSCALE_MIN_FRACTION = 0.1
AUTOSCALE_SAVES_BELOW = 0.9  # advise autoscale when it would cost under 90% of manual: a clear saving
AUTOSCALE_MIN_HOURS = 24  # at least a day of metrics: a daily cycle decides whether hours are quiet
# Each physical partition gets an equal share of the RU/s (ru-cost-model.md P4; azure-monitor.md §5): a range
# at 1.5x its even share throttles when the container runs at 2/3 of its provisioned rate (a third paid for
# and unusable); 2x would never fire with two ranges.
SKEW_FACTOR = 1.5
KEY_STORAGE_WARN = 0.8  # a logical key at 80% of 20 GB (P1): changing the key takes a migration; start now
TOP = re.compile(r"\bTOP\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Action:
    """A recommendation: the rule (`measure`), the number that fired it and what to do, in plain words."""

    measure: str
    value: float
    unit: str
    detail: str


def raise_action(throttle_rate: float, skewed: bool) -> Action | None:
    """More than the healthy 1-5% of requests throttled: raise RU/s (or first fix a skewed key)."""
    if not throttle_rate > THROTTLE_HEALTHY_MAX:
        return None
    detail = f"Raise the RU/s: {throttle_rate:.1%} of requests were throttled (429), above the 1-5% the service documents as healthy."
    if skewed:
        detail += " One partition takes most of the load, so fixing the key (below) may cost less than more RU/s."
    return Action("raise_throughput", round(throttle_rate * 100, 2), "%", detail)


def lower_action(peak_ru_s: float, provisioned_ru_s: float, throttle_rate: float, autoscale: bool) -> Action | None:
    """The busiest interval used under half the provisioned RU/s, with (almost) no 429s: lower it."""
    if not (provisioned_ru_s > 0 and peak_ru_s >= 0) or throttle_rate > THROTTLE_QUIET_MAX:
        return None
    utilization = peak_ru_s / provisioned_ru_s
    if utilization >= LOWER_PEAK_UTILIZATION:
        return None
    step, floor = RU_STEP[autoscale], AUTOSCALE_MIN_MAX if autoscale else Limits().min_throughput
    target = max(floor, math.ceil(peak_ru_s / TARGET_PEAK_UTILIZATION / step) * step)
    if target >= provisioned_ru_s:
        return None
    what = "autoscale max RU/s" if autoscale else "RU/s"
    detail = (
        f"Lower the {what} from {provisioned_ru_s:,.0f} to about {target:,.0f}: the busiest interval used "
        f"{utilization:.0%} of it ({peak_ru_s:,.0f} RU/s) and requests were not throttled."
    )
    return Action("lower_throughput", round(utilization * 100, 1), "%", detail)


def autoscale_cost_ratio(per_second: pd.Series) -> tuple[float, int]:
    """What autoscale with its max at the peak would cost against manual RU/s at the peak, from a series of
    consumed RU/s indexed by time: 1.5 x the mean over hours of max(10%, the hour's peak / the peak); and
    the number of hours. NaN when nothing was consumed."""
    hourly = per_second.groupby(per_second.index.floor("h")).max()
    peak = float(hourly.max()) if not hourly.empty else 0.0
    if not peak > 0:
        return math.nan, len(hourly)
    billed = (hourly / peak).clip(lower=AUTOSCALE_MIN_FRACTION).mean()
    return round(AUTOSCALE_PRICE_FACTOR * float(billed), 4), len(hourly)


def autoscale_action(cost_ratio: float, hours: int, autoscale: bool) -> Action | None:
    """A manual container whose hours are mostly quiet: autoscale would bill less than manual at the peak."""
    if autoscale or hours < AUTOSCALE_MIN_HOURS or not cost_ratio < AUTOSCALE_SAVES_BELOW:
        return None
    detail = (
        f"Move to autoscale (max at the peak): the load is spiky, and over {hours} hours autoscale would have "
        f"cost about {cost_ratio:.0%} of manual RU/s set high enough for the peak."
    )
    return Action("move_to_autoscale", cost_ratio, "ratio", detail)


def skew_action(hot_share: float, pkranges: int, hot_pkrange: str, source: str) -> Action | None:
    """The hottest range takes at least `SKEW_FACTOR` times its even share: the partition key is skewed."""
    if not (pkranges >= 2 and hot_share >= SKEW_FACTOR / pkranges):
        return None
    seen = "in Azure Monitor" if source == "monitor" else "in the replayed queries"
    detail = (
        f"The partition key is skewed: pkrange {hot_pkrange} takes {hot_share:.0%} of the RU {seen}, against an "
        f"even {1 / pkranges:.0%} of {pkranges} ranges. Each range gets an equal share of the RU/s, so it throttles "
        "first; choose a key with more, evenly used values (or a hierarchical key)."
    )
    return Action("skewed_key", round(hot_share, 4), "share", detail)


def fan_out_action(query_name: str, routing: str, pkrange_count: int, sql: str) -> Action | None:
    """A query that reads every partition: add the partition key filter (or TOP when it has none)."""
    if routing != "fan-out" or not pkrange_count >= 2:
        return None
    fix = "add the partition key filter" if TOP.search(sql or "") else "add the partition key filter or TOP"
    detail = f"Query {query_name} fans out to all {pkrange_count} partitions: {fix}."
    return Action("query_fans_out", float(pkrange_count), "count", detail)


def key_storage_action(partition_key: str, size_gb: float, limits: Limits | None = None) -> Action | None:
    """A logical key near 20 GB: writes to it fail at the limit, and only a new key (a migration) helps."""
    limit_gb = (limits or Limits()).logical_partition_max_bytes / GB
    fill = size_gb / limit_gb
    if not fill >= KEY_STORAGE_WARN:
        return None
    detail = (
        f"Logical key {partition_key} holds {size_gb:,.1f} GB of the {limit_gb:g} GB one key may hold; writes to it "
        "fail at the limit: plan a more granular or hierarchical partition key."
    )
    return Action("key_near_limit", round(fill * 100, 1), "%", detail)


# -- the report ------------------------------------------------------------------------------------------
SOURCES = {"monitor": "Azure Monitor", "replay": "replay"}
CONTAINER_MEASURES = [  # (column, unit, subject column, detail column)
    ("ru_consumed", "RU", None, "ru_source"),
    ("provisioned_ru_s", "RU/s", None, "throughput_kind"),
    ("peak_ru_s", "RU/s", None, None),
    ("p95_ru_s", "RU/s", None, None),
    ("p95_utilization", "share", None, None),
    ("hot_normalized_ru", "%", "hot_pkrange", None),
    ("hot_range_share", "share", "hot_pkrange", "skew_source"),
    ("throttle_rate", "share", None, "throttle_source"),
    ("largest_partition_gb", "GB", None, None),
    ("storage_headroom", "share", None, None),
    ("largest_key_gb", "GB", None, None),
    ("key_headroom", "share", None, None),
    ("autoscale_cost_ratio", "ratio", None, "autoscale_hours"),
]


def build_capacity_report(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    logical_keys: pd.DataFrame,
    log_key_ru: pd.DataFrame | None = None,
    *,
    limits: Limits | None = None,
) -> pd.DataFrame:
    """The report (`REPORT_COLUMNS`, the module docstring): empty when no container has data."""
    containers = overview.summarize_containers(executions, requests, metrics, partitions, logical_keys, limits=limits)
    if containers.empty:
        return pd.DataFrame(columns=REPORT_COLUMNS)
    containers = containers.merge(autoscale_ratios(metrics), on=KEY, how="left")
    queries = overview.query_stats(executions)
    keys = overview.latest_snapshot(logical_keys)
    sections = [
        container_rows(containers),
        partition_rows(partitions, metrics, limits),
        key_rows(keys, log_key_ru, limits),
        query_rows(queries),
        action_rows(containers, queries, keys, limits),
    ]
    report = pd.concat([part for part in sections if not part.empty], ignore_index=True)
    rank = {tuple(key): n for n, key in enumerate(containers[KEY].itertuples(index=False))}
    report["_rank"] = [rank.get(tuple(key), len(rank)) for key in report[KEY].itertuples(index=False)]
    report["_section"] = report["section"].map(SECTIONS.index)
    report = report.sort_values(["_rank", "_section"], kind="stable").drop(columns=["_rank", "_section"])
    return report.reset_index(drop=True)[REPORT_COLUMNS]


def autoscale_ratios(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per container with TotalRequestUnits: `autoscale_cost_ratio` and the hours behind it."""
    per_second = overview.consumed_per_second(metrics)
    rows = []
    for key, mine in per_second.groupby(KEY):
        ratio, hours = autoscale_cost_ratio(mine.set_index("time")["ru_s"])
        rows.append((*key, ratio, hours))
    return pd.DataFrame(rows, columns=[*KEY, "autoscale_cost_ratio", "autoscale_hours"])


def _long(frame: pd.DataFrame, section: str, column: str, unit: str, *, subject=None, detail=None) -> pd.DataFrame:
    """One report row per frame row with a `column` value: `measure` named after the column."""
    rows = frame[frame[column].notna()] if column in frame else frame.iloc[0:0]
    return pd.DataFrame(
        {
            "section": section,
            **{name: rows[name].astype(str) for name in KEY},
            "subject": rows[subject].fillna("").astype(str) if subject else "",
            "measure": column,
            "value": rows[column].astype(float),
            "unit": unit,
            "detail": rows[detail].fillna("").astype(str) if detail else "",
        },
        index=rows.index,
    )


def container_rows(containers: pd.DataFrame) -> pd.DataFrame:
    """The `container` section: one row per measure of `CONTAINER_MEASURES` that has a number."""
    named = containers.assign(
        ru_source=containers["ru_source"].map(SOURCES),
        skew_source=containers["skew_source"].map(SOURCES),
        throttle_source=containers["throttle_source"].map(SOURCES),
        throughput_kind=containers["autoscale"].map({True: "autoscale max", False: "manual"}),
        autoscale_hours=containers["autoscale_hours"].map(lambda h: _count(h, "hour") if pd.notna(h) else ""),
    )
    parts = [
        _long(named, "container", column, unit, subject=subject, detail=detail)
        for column, unit, subject, detail in CONTAINER_MEASURES
    ]
    return pd.concat(parts).sort_index(kind="stable")


def partition_rows(partitions: pd.DataFrame, metrics: pd.DataFrame, limits: Limits | None) -> pd.DataFrame:
    """The `partition` section: each physical partition of the latest snapshot, and its peak normalized RU."""
    latest = overview.latest_snapshot(partitions).sort_values([*KEY, "pkrange_id"], kind="stable")
    size = latest["size_kb"].astype(float) * 1024
    limit = (limits or Limits()).physical_partition_max_bytes
    latest = latest.assign(
        size_gb=(size / GB).round(6), headroom=(1 - size / limit).round(4), documents=latest["document_count"]
    )
    normalized = overview.metric_rows(metrics, "NormalizedRUConsumption").dropna(subset=["pkrange_id"])
    peaks = normalized.groupby([*KEY, "pkrange_id"])["value"].max().rename("max_normalized_ru").reset_index()
    parts = [
        _long(latest, "partition", c, u, subject="pkrange_id")
        for c, u in (("size_gb", "GB"), ("headroom", "share"), ("documents", "count"))
    ]
    parts.append(_long(peaks, "partition", "max_normalized_ru", "%", subject="pkrange_id"))
    return pd.concat(parts, ignore_index=True)


def key_rows(keys: pd.DataFrame, log_key_ru: pd.DataFrame | None, limits: Limits | None) -> pd.DataFrame:
    """The `key` section: the largest logical keys (latest snapshot) and the costliest in the logs."""
    limit_gb = (limits or Limits()).logical_partition_max_bytes / GB
    largest = _top(keys.assign(size_gb=(keys["size_kb"].astype(float) * 1024 / GB).round(6)), "size_gb")
    largest = largest.assign(
        detail=[
            f"{gb / limit_gb:.1%} of {limit_gb:g} GB, pkrange {pk}"
            for gb, pk in zip(largest["size_gb"], largest["pkrange_id"])
        ]
    )
    parts = [_long(largest, "key", "size_gb", "GB", subject="partition_key", detail="detail")]
    if log_key_ru is not None and not log_key_ru.empty:
        rows = overview.fleet_rows(log_key_ru)
        ru = rows.groupby([*KEY, "partition_key"])["request_charge"].sum().round(2).rename("ru").reset_index()
        costly = _top(ru, "ru").assign(detail="diagnostic logs")
        parts.append(_long(costly, "key", "ru", "RU", subject="partition_key", detail="detail"))
    return pd.concat(parts, ignore_index=True)


def _top(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The `TOP_KEYS` rows of each container with the largest `column`."""
    ordered = frame.sort_values([column, "partition_key"], ascending=[False, True], kind="stable")
    return ordered.groupby(KEY, sort=False).head(TOP_KEYS)


def query_rows(queries: pd.DataFrame) -> pd.DataFrame:
    """The `query` section: each replayed query's total and mean RU and executions, with its routing."""
    named = queries.assign(
        detail=[
            f"{routing}, {_count(n, 'partition')}" for routing, n in zip(queries["routing"], queries["pkrange_count"])
        ]
    )
    parts = [
        _long(named, "query", c, u, subject="query_name", detail="detail")
        for c, u in (("total_ru", "RU"), ("mean_ru", "RU"), ("executions", "count"))
    ]
    return pd.concat(parts).sort_index(kind="stable")


def action_rows(
    containers: pd.DataFrame, queries: pd.DataFrame, keys: pd.DataFrame, limits: Limits | None
) -> pd.DataFrame:
    """The `action` section: every rule that fires, per container, query and logical key."""
    found: list[tuple[tuple, str, Action]] = []
    for row in containers.to_dict("records"):
        key = tuple(row[name] for name in KEY)
        skew = skew_action(
            _num(row["hot_range_share"]), int(_num(row["pkranges"], 0)), row["hot_pkrange"], row["skew_source"]
        )
        rules = [
            raise_action(_num(row["throttle_rate"]), skew is not None),
            lower_action(
                _num(row["peak_ru_s"]), _num(row["provisioned_ru_s"]), _num(row["throttle_rate"], 0), row["autoscale"]
            ),
            autoscale_action(_num(row["autoscale_cost_ratio"]), int(_num(row["autoscale_hours"], 0)), row["autoscale"]),
            skew,
        ]
        found += [(key, row["hot_pkrange"] if action is skew else "", action) for action in rules if action]
    for row in queries.to_dict("records"):
        action = fan_out_action(row["query_name"], row["routing"], int(_num(row["pkrange_count"], 0)), row["sql"])
        found += [(tuple(row[name] for name in KEY), row["query_name"], action)] if action else []
    for row in keys.to_dict("records"):
        gb = float(row["size_kb"]) * 1024 / GB
        action = key_storage_action(row["partition_key"], gb, limits)
        found += [(tuple(row[name] for name in KEY), row["partition_key"], action)] if action else []
    rows = [
        {
            "section": "action",
            **dict(zip(KEY, key)),
            "subject": subject,
            "measure": a.measure,
            "value": a.value,
            "unit": a.unit,
            "detail": a.detail,
        }
        for key, subject, a in found
    ]
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


def _num(value: object, default: float = math.nan) -> float:
    """A number, or `default` for a missing one (None, NaN, pd.NA)."""
    return default if value is None or pd.isna(value) else float(value)


def _count(n: float, noun: str) -> str:
    return f"{n:.0f} {noun}{'s' * (n != 1)}"


def report_summary(report: pd.DataFrame) -> str:
    """One line for the command: how many containers and recommended actions."""
    containers = len(report[KEY].drop_duplicates())
    actions = int(report["section"].eq("action").sum())
    return f"{_count(containers, 'container')}, {_count(actions, 'recommended action')}"


def section(report: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one section, without the `section` column."""
    return report[report["section"].eq(name)].drop(columns="section").reset_index(drop=True)


def container_summary(report: pd.DataFrame) -> pd.DataFrame:
    """The `container` section as one row per container and a column per measure (the Reports page's table)."""
    rows = report[report["section"].eq("container")]
    wide = rows.pivot_table(index=KEY, columns="measure", values="value", aggfunc="first", sort=False)
    measures = [c for c, *_ in CONTAINER_MEASURES if c in wide.columns]
    return wide.reindex(columns=measures).reset_index().rename_axis(columns=None)
