"""The capacity-review report: what `ruscope report` writes and the Reports page shows and downloads.

One long table (`REPORT_COLUMNS`), so that numbers of different grains (a container, a physical
partition, a logical key, a query) sit in one CSV that diffs cleanly, filters by `section` in a
spreadsheet and pivots without reshaping:

| column | meaning |
|---|---|
| `section` | `report` (what the report is of), then `container`, `partition`, `key`, `query` or `action` (in that order within a container), then `offer` |
| `account`, `database`, `container` | the container; containers in `analysis.fleet`'s risk order ("" in the `report` section) |
| `subject` | what the row is about: a pkrange id, a partition key (compact JSON, `cosmoscore.keys.key_text`), a query name; "" for the container |
| `measure` | the number's name (below), or for an action the rule that fired |
| `value`, `unit` | the number and its unit (`RU`, `RU/s`, `%`, `GB`, `count`, `ratio`, a currency code in `cost`), rounded (below) |
| `detail` | plain words: the source of the number, a query's routing, an action's recommendation |
| `target`, `target_unit` | an action's number to set (`RU/s manual`, `RU/s autoscale max`, `RU/s per partition (pkrange N)`: the hot range's RU/s after a redistribution, `partitions per execution`); blank for burst capacity and a merge |
| `severity` | an action's `critical`, `warning` or `info` (`rules.SEVERITY`, docs/findings.md) |
| `command` | what applies it: the Azure CLI command (for a composite index the policy's current JSON with the entry added, `az ... show | jq`, then `update --idx`; a redistribution's calls joined with `&&` in order, `sleep 60` after every 5; burst capacity's is account-wide), with the account and resource group of the config's `monitor_resource` (`ruscope report`; without one: the endpoint's account name and `<rg>`, a placeholder the shell refuses) or `ruscope advise` for a key design; "" for a query change |
| `risk` | what applying it risks, in plain words |
| `monthly_saving`, `saving_unit` | what a throughput change saves a month (negative: costs) against the month as billed, at the `cost` section's prices (`actions._saving`; a query finding: the RU/s it saves at the query's `rate_per_s`, at the container's rate, `analysis.cost.queries`; burst capacity: the raise it avoids; a merge: 0, the RU/s billed do not change; blank for a key, a query without a rate, an autoscale container's manual change) |

The last seven are blank on rows that are not actions. The `report` section (when the caller passes a
`ReportAbout`: the CLI and the page do) has `window_start` (and how it was chosen), `window_end`, `store`
(as the user named it, without a query string or credentials: `public_store_text`), `generated_at` (UTC),
`region` ("all regions" for the total) and `ruscope_version`, each in `detail`, `value` empty.

Measures. `container` (from `analysis.overview.summarize_containers`, which says where each comes from):
`ru_consumed`, `provisioned_ru_s`, `peak_interval_ru_s` (RU/s, the average of the busiest metrics interval:
a per-minute average at PT1M, never a per-second peak), `p95_ru_s` (the p95 of those averages), `p95_utilization`, `hot_normalized_ru` (subject:
the range that peaked, which need not be the one with the most RU), `hot_range_share` (subject: the hottest
pkrange, the one with the largest share), `throttle_rate` (detail: its source and window, the first and last
time counted, as every page and the alert name them), `largest_partition_gb`, `storage_headroom`
(of 50 GB), `largest_key_gb`, `key_headroom` (of 20 GB), `autoscale_cost_ratio` (what autoscale at
the max it needs would have billed against the manual RU/s in force, hour by hour, over the cost section's main
window: `analysis.cost.bill.autoscale_ratios`), `replay_ru` (RU: what ruscope's own replay was charged in
the window, `analysis.own_traffic.summarize_replay_spend`; charged to the account and counted in Azure
Monitor, R75). `throttle_rate` is in % of requests. `partition` (the latest storage snapshot and Azure
Monitor): `size_gb`, `headroom` (of 50 GB), `documents`, `max_normalized_ru`. `key`: the `TOP_KEYS`
(`analysis.capacity.sections`, which builds each section's rows) largest logical keys (`size_gb`, with their share of 20 GB) and the `TOP_KEYS` costliest by RU in the
diagnostic logs (`ru`, and `peak_second_ru`: RU in the key's busiest second, when the logs hold it), with their money.
`cost` (`analysis.cost.bill.report_rows`, in the prices' currency): per container with RU/s of its own and
per shared database (subject "shared database offer"), the main window's `monthly_cost` as billed,
`storage_monthly_cost`, `manual_monthly_cost` / `autoscale_monthly_cost` / `serverless_monthly_cost` (subject:
the RU/s or max; detail: the hours each would have throttled) and `recommended_monthly_cost` (subject: the
option), and for the other windows `monthly_cost_7d` / `_90d` and `recommended_monthly_cost_7d` / `_90d`.
`query`: `total_ru`, `mean_ru`, `executions` of the replayed queries (the mean's detail says when a query has no
rate, so no money); then each rated query's money, and the `TOP_KEYS` costliest workload texts of the logs
(`logged_ru`) with theirs. Money (`analysis.cost.queries`): `ru_s` (RU/s it occupies), `bill_share` (% of the
container's consumed RU/s), `monthly_cost` (that share of the month as billed), `manual_rate_monthly_cost` (its
RU/s at the manual rate, every region), `serverless_monthly_cost` (its RU at the serverless price). `offer`: each
shared-throughput database, after the containers (`container` is "", `store.records.SHARED_OFFER_CONTAINER`:
the database's offer, whose containers `analysis.fleet.summarize_throughput_units` lists in `detail`):
`containers` (how many spend it), `provisioned_ru_s`, `p95_ru_s` (its containers' summed), `p95_utilization`,
`max_normalized_ru` (subject "": the offer's hottest partition; subject a pkrange: that partition of the
offer). A container that spends such an offer has no `provisioned_ru_s` of its own. A number without data
behind it has no row (never a guess).

Regions (`analysis.regions`). The report covers one region or the account in total (the default): in total,
`provisioned_ru_s` and `p95_ru_s` are every region's summed (an account with N regions reserves T x N RU/s),
and the `provisioned_ru_s` row's detail says "summed over N regions"; a partition's `max_normalized_ru` is
one region's (a row per pkrange and region, the region in `detail` when the account has several),
never a maximum across regions.
Storage rows are one copy (the storage collector's partition statistics).

Values. A share of something (utilization, a 429 rate, headroom, a range's share of the RU) is written in
percent, so that one unit reads the same everywhere. Each value is rounded to its unit's precision
(`analysis.units.PRECISION`: RU and RU/s to 0.1, % to 2 decimals or 2 significant digits below 1%, GB to 3
decimals, counts whole, ratios to 2 decimals), never more than 4 decimals, so the CSV holds plain decimal
numbers (0.0048, never 4.8e-03); a size's detail says it in the unit that fits ("36 KB").

Actions: each rule is a pure function in `analysis.capacity.rules` with its thresholds named as constants
and their sources; each returns an `Action` or None; docs/findings.md is the catalogue. One measure name, one
meaning, the value the number that fired it: `partition_saturated` (saturation: a range's p95 of per-minute
normalized RU at 90% or more; value in %, subject the pkrange; no target: do not lower), `range_share`
(share: a range's share of the RU against an even share; value in %; the key design), `skewed_key`
(throttling from one hot partition while the container is mostly idle; value: that range's peak normalized
RU in %; target the hot range's RU/s after a redistribution by Microsoft's formula, `analysis.capacity.planner`,
unless one logical key carries it: then the key design, no redistribution), `raise_throughput` (429 rate, %;
target +10%), `burst_absorbs` (in place of a raise when every partition is under 3,000 RU/s and its banked idle
capacity would have served the 429s; value the 429 rate, %; no target), `merge_candidate` (value the RU/s per
partition, under 3,000, with under 20 GB each on average; no target), `lower_throughput` (value and
target: the RU/s, never below what the hottest range needs times the layout's partition count, nor the
service minimum, and never while a range is saturated), `move_to_autoscale` (ratio; target the autoscale max
at the peak), `query_fans_out` (partitions; target 1), `order_by_needs_composite_index` (RU per execution; target
Q11's fifth, an estimate), `key_near_limit` (%; the key design). Partitions are
counted from the layout (the latest storage snapshot), else from the ranges the metrics reported last, and
the detail says which. The
report must never hold a secret: it is built from store rows, which carry no keys or tokens.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import partial, wraps
from typing import ParamSpec

import pandas as pd

from analysis import fleet, load, overview, own_traffic, regions, throttling
from analysis.capacity.about import ReportAbout, about_rows
from analysis.capacity.actions import ACTION_TEXT_COLUMNS, COLUMNS, action_rows, costliest_key_shares, partition_peaks
from analysis.capacity.commands import AzureAccount
from analysis.capacity.evidence import burst_minutes, partition_storage, throttle_terms, with_layout
from analysis.capacity.sections import (
    CONTAINER_MEASURES,
    container_rows,
    count_text,
    key_rows,
    offer_rows,
    partition_rows,
    query_rows,
)
from analysis.cost import queries as query_cost
from analysis.cost.bill import autoscale_ratios, main_bills
from analysis.cost.bill import bills as cost_bills
from analysis.cost.bill import report_rows as cost_rows
from analysis.cost.hours import unit_hours
from analysis.scope import window_text
from analysis.units import round_to_unit
from cosmoscore.billing import Prices
from cosmoscore.keys import key_text
from cosmoscore.limits import Limits
from store.records import EXECUTIONS, LOG_KEY_RU, LOG_THROTTLES, PARTITIONS

KEY = overview.KEY
P = ParamSpec("P")
REPORT_COLUMNS = COLUMNS  # one row shape; an action fills the last seven (`actions.ACTION_COLUMNS`)
SECTIONS = ("report", "container", "cost", "partition", "key", "query", "action", "offer")
REPORT_TABLES = {
    "executions": EXECUTIONS.pick(*overview.EXECUTION_COLUMNS, *query_cost.EXECUTION_COLUMNS),
    "requests": list(
        dict.fromkeys([*fleet.REQUEST_COLUMNS, *own_traffic.REQUEST_COLUMNS, *query_cost.REQUEST_COLUMNS])
    ),
    "metrics": overview.METRIC_COLUMNS,
    "partitions": PARTITIONS.pick(*fleet.PARTITION_COLUMNS, "document_count"),
    "logical_keys": overview.LOGICAL_KEY_COLUMNS,
    "log_key_ru": LOG_KEY_RU.pick(
        *KEY, "time", "pkrange_id", "partition_key", "request_charge", "peak_request_charge", "bin_minutes"
    ),
    "log_throttles": LOG_THROTTLES.pick(*throttling.LOG_THROTTLE_COLUMNS, "bin_minutes"),  # 429s per second
    "log_query_ru": query_cost.LOG_QUERY_COLUMNS,
}

# -- the report ------------------------------------------------------------------------------------------
REPLAY_DETAIL = "ruscope's replay: charged to the account, counted in Azure Monitor"


@dataclass(frozen=True)
class CapacityBuild:
    """The report and the money figures it was built from, at its prices: what the Cost page shows beside
    the report's findings, so the page and the report compute each once (`build_capacity`)."""

    report: pd.DataFrame  # REPORT_COLUMNS
    hours: pd.DataFrame  # analysis.cost.hours.unit_hours: every throughput unit's measured hours
    bills: pd.DataFrame  # analysis.cost.bill.bills of `hours`: every unit and window
    main: pd.DataFrame  # analysis.cost.bill.main_bills: the one row per unit the report reads
    query_costs: pd.DataFrame  # analysis.cost.queries.QUERY_COST_COLUMNS: replayed and logged queries
    key_costs: pd.DataFrame  # analysis.cost.queries.KEY_COST_COLUMNS: the logs' logical keys
    has_metrics: bool  # any Azure Monitor row of the region (the Cost page says what is missing without)


def build_capacity(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame,
    logical_keys: pd.DataFrame,
    log_key_ru: pd.DataFrame | None = None,
    log_throttles: pd.DataFrame | None = None,
    log_query_ru: pd.DataFrame | None = None,
    *,
    limits: Limits | None = None,
    region: str | None = None,
    about: ReportAbout | None = None,
    azure: Mapping[str, AzureAccount] | None = None,
    prices: Prices | None = None,
    multi_write: Collection[str] = (),
) -> CapacityBuild:
    """The report (`REPORT_COLUMNS`, the module docstring) and its money figures (`CapacityBuild`) of one `region`, or of the account in total (None),
    its first section `about` (the caller's window, store, time and version) when given: empty when no
    container has data. `prices`: what the `cost` section prices at (`analysis.cost.bill`; Microsoft's
    example list prices by default, labelled so; `multi_write`: the accounts with multi-region writes). `azure`:
    each store account's ARM names (from the config),
    so a command names the account and resource group `az` needs (without: the endpoint's account name and
    `<rg>`)."""
    metrics = regions.select_region(metrics, region)
    logical_keys = _spelled(logical_keys)
    log_key_ru = _spelled(log_key_ru) if log_key_ru is not None else None
    model = load.build(metrics, requests, partitions)  # once: every load figure below reads it
    containers = overview.summarize_containers(
        executions,
        requests,
        metrics,
        partitions,
        logical_keys,
        log_throttles,
        limits=limits,
        region=region,
        model=model,
    )
    hours = unit_hours(metrics, requests, partitions, model=model)
    bills = cost_bills(hours, partitions, prices or Prices(), metrics=metrics, multi_write=multi_write)
    main = main_bills(bills)  # the autoscale ratio, the findings' money: the cost section's main window
    queries = overview.query_stats(executions)
    costs, key_money = query_cost.report_costs(
        queries, executions, requests, metrics, main, prices or Prices(), log_query_ru, log_key_ru, model=model
    )
    build = partial(
        CapacityBuild,
        hours=hours,
        bills=bills,
        main=main,
        query_costs=costs,
        key_costs=key_money,
        has_metrics=not metrics.empty,
    )
    if containers.empty:
        return build(report=pd.DataFrame(columns=REPORT_COLUMNS))
    containers = _without_own_offer(containers.merge(autoscale_ratios(main), on=KEY, how="left"), metrics, partitions)
    containers = containers.assign(throughput_kind=_throughput_kind(containers, metrics, region))
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    containers = containers.assign(regions=1 if region is not None else containers["account"].map(counts).fillna(1))
    containers = _with_replay_spend(containers, requests)
    keys = overview.latest_snapshot(logical_keys)
    sections = [
        container_rows(containers),
        cost_rows(_reported_units(bills, containers)),
        partition_rows(partitions, metrics, limits, model.ranges),
        key_rows(keys, log_key_ru, limits, key_money),
        query_rows(queries, costs),
        action_rows(
            with_layout(containers, partitions, metrics, layout=model.layout),
            query_cost.with_finding_inputs(queries, executions, requests),
            keys,
            limits,
            hot_keys=costliest_key_shares(log_key_ru),
            peaks=partition_peaks(metrics),
            azure=azure,
            bills={tuple(str(r[k]) for k in KEY): {str(c): v for c, v in r.items()} for r in main.to_dict("records")},
            prices=prices or Prices(),
            throttles=throttle_terms(metrics, log_throttles, requests, consumed=model.consumed),
            minutes=burst_minutes(model.require_minutes(), metrics),
            storage=partition_storage(partitions),
        ),
        offer_rows(containers, metrics, partitions),
    ]
    if about is not None:
        sections.insert(0, about_rows(about))
    report = pd.concat([part for part in sections if not part.empty], ignore_index=True)
    rank = {tuple(key): n for n, key in enumerate(containers[KEY].itertuples(index=False))}
    report["_rank"] = [rank.get(tuple(key), len(rank)) for key in report[KEY].itertuples(index=False)]
    report.loc[report["section"].eq("report"), "_rank"] = -1  # what the report is of, first
    report["_section"] = report["section"].map(SECTIONS.index)
    report = report.sort_values(["_rank", "_section"], kind="stable").drop(columns=["_rank", "_section"])
    report["value"] = [round_to_unit(value, unit) for value, unit in zip(report["value"], report["unit"])]
    report = report.reindex(columns=REPORT_COLUMNS)
    report[ACTION_TEXT_COLUMNS] = report[ACTION_TEXT_COLUMNS].astype(object).fillna("")
    return build(report=report.reset_index(drop=True))


def _report_of(build: Callable[P, CapacityBuild]) -> Callable[P, pd.DataFrame]:
    """`build`'s report alone, with `build`'s arguments (and signature: `inspect.signature` follows it)."""

    @wraps(build)
    def report(*args: P.args, **kwargs: P.kwargs) -> pd.DataFrame:
        return build(*args, **kwargs).report

    return report


build_capacity_report = _report_of(build_capacity)  # the report (`REPORT_COLUMNS`) of `build_capacity`


def _reported_units(bills: pd.DataFrame, containers: pd.DataFrame) -> pd.DataFrame:
    """The bills of the report's containers and of the shared databases they are in."""
    own = bills.merge(containers[KEY], on=KEY)
    databases = containers[["account", "database"]].drop_duplicates()
    shared = bills[bills["container"].eq("")].merge(databases, on=["account", "database"])
    return pd.concat([own, shared], ignore_index=True)


def _spelled(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with its `partition_key` in the one spelling (`cosmoscore.keys.key_text`): the store's reader
    gives it so already; a frame built elsewhere is spelled here, so the report's keys join the pages'."""
    if "partition_key" not in frame.columns or frame.empty:
        return frame
    keys = frame["partition_key"]
    spelled = {k: key_text(k) for k in keys.dropna().unique()}
    return frame.assign(partition_key=keys.map(spelled, na_action="ignore"))


def _with_replay_spend(containers: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """`containers` with `replay_ru` and its detail: what ruscope's replay was charged in the window
    (`analysis.own_traffic.summarize_replay_spend`, the one definition; NaN where it sent nothing)."""
    columns = [c for c in own_traffic.REQUEST_COLUMNS if c in requests.columns]
    spend = own_traffic.summarize_replay_spend(requests[columns] if not requests.empty else requests.iloc[0:0])
    if spend.empty:
        return containers.assign(replay_ru=math.nan, replay_detail="")
    spend = spend.assign(
        replay_detail=[
            f"{REPLAY_DETAIL}; {count_text(float(n), 'request')} ({int(t)} throttled), {count_text(float(r), 'run')},"
            f" {window_text(a, b)}"
            for n, t, r, a, b in zip(
                spend["requests"], spend["throttled"], spend["runs"], spend["first"], spend["last"]
            )
        ]
    )
    spend = spend.rename(columns={"ru": "replay_ru"})[[*KEY, "replay_ru", "replay_detail"]]
    spend = spend.astype({k: containers[k].dtype for k in KEY})
    return containers.merge(spend, on=KEY, how="left")


def _throughput_kind(containers: pd.DataFrame, metrics: pd.DataFrame, region: str | None) -> pd.Series:
    """The `provisioned_ru_s` row's detail: manual or autoscale, and where the account has several regions,
    which the figure covers (one region's RU/s, or every region's summed: `analysis.regions`)."""
    kind = containers["autoscale"].map({True: "autoscale max", False: "manual"})
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    if region is not None:
        return kind + f", region {region}"
    n = containers["account"].map(counts).fillna(1).astype(int)
    return kind.where(n.le(1), kind + ", summed over " + n.astype(str) + " regions")


def _without_own_offer(containers: pd.DataFrame, metrics: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
    """`containers` with no autoscale ratio for those that spend their database's shared offer: they have no
    RU/s of their own to move (the database's offer is the one to change; the `offer` section has it)."""
    members = fleet.shared_offer_members(containers, metrics, partitions)
    if members.empty:
        return containers
    sharing = containers[KEY].merge(members.assign(_shared=True), on=KEY, how="left")["_shared"].eq(True)
    out = containers.copy()
    out.loc[sharing.to_numpy(dtype=bool), ["autoscale_cost_ratio", "autoscale_hours", "autoscale_max"]] = float("nan")
    return out


def report_summary(report: pd.DataFrame) -> str:
    """One line for the command: how many containers and recommended actions."""
    named = report[~report["section"].eq("report") & report["container"].astype(str).ne("")]
    containers = len(named[KEY].drop_duplicates())  # a shared offer's or an account's rows are no container
    actions = int(report["section"].eq("action").sum())
    return f"{count_text(containers, 'container')}, {count_text(actions, 'recommended action')}"


def section(report: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of one section, without the `section` column."""
    return report[report["section"].eq(name)].drop(columns="section").reset_index(drop=True)


def container_summary(report: pd.DataFrame) -> pd.DataFrame:
    """The `container` section as one row per container and a column per measure (the Reports page's table)."""
    rows = report[report["section"].eq("container")]
    wide = rows.pivot_table(index=KEY, columns="measure", values="value", aggfunc="first", sort=False)
    measures = [c for c, *_ in CONTAINER_MEASURES if c in wide.columns]
    return wide.reindex(columns=measures).reset_index().rename_axis(columns=None)
