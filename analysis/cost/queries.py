"""What each query and each logical key costs in money, and what a query finding saves a month.

Pure functions over the store's frames, a container's bill (`analysis.cost.bill.container_bills`: `monthly`,
the month as billed, its `regions`, `currency`) and the prices (`cosmoscore.billing.Prices`). Money is in the
prices' currency a month (B3's 730 hours); every row says its source, its window and, where a figure is
missing, why (`note`).

**The RU/s a consumer occupies** (`ru_s`, RU/s):
- a replayed query: its mean RU per successful logical execution in the window (`analysis.overview.query_stats`)
  x its configured `rate_per_s` (the latest recorded; `analysis.hot.replay.query_rates`). Without a rate nobody
  said how often it runs: no RU/s and no money (a made-up rate would invent load), the note says so;
- a workload query of the diagnostic logs (`analysis.queries.logged`, ruscope's own requests left out), and a
  logical key (`log_key_ru`, every operation on it): its logged RU over the window's seconds. The window is the
  container's logs from its first bin's start to its last bin's end (`logs_window`), unless the caller gives
  one; the logs count requests, so a logged text has no RU per execution.

**Its share of the bill** (`monthly`): under provisioned throughput the bill pays for RU/s, used or not (B1), so
a consumer pays through the RU/s it occupies; its share of the container's month as billed is its share of the
container's consumed RU/s,

    monthly = ru_s / consumed_ru_s x the month as billed            (bill_share_pct = 100 x ru_s / consumed_ru_s)

where `consumed_ru_s` is the workload's RU/s while measured (Azure Monitor TotalRequestUnits, the replay's own RU
taken out: `analysis.load.consumed_intervals`, the intervals' RU over their seconds). The shares of every
consumer add up to the bill: the idle RU/s are paid by those that use the rest. Where one population's RU/s
(the container's rated queries, its logged texts, its keys) claim more than the container consumed, each is a
share of their sum instead, so they still add up to the bill (the note says so: a rate or the window is off).
A container without a bill of its own (it spends its database's shared offer, or has no throughput metrics) has
no share; serverless pricing still applies.

Beside it, two prices of the same RU/s that do not depend on the bill:
- `manual_rate_monthly`: the RU/s at the manual rate in every region (B1, B3), ru_s / 100 x the price per
  100 RU/s-hour x regions x 730, linear (not in whole units: a share of a unit). What those RU/s cost when
  provisioned for this consumer alone, and the most that lowering the RU/s by as much saves;
- `serverless_monthly`: its RU at the serverless price (B5), ru_s x 3,600 x 730 / 1,000,000 x the price per
  million RU: its bill under serverless, which the store cannot tell from a shared offer (no RU/s of its own).

**What a query finding saves** (`saved_ru_s`, then `monthly_saving`): the RU per execution it removes, x the
query's rate, priced at the container's rate per RU/s (manual; autoscale 1.5x, B2) in every region x 730 —
what lowering the RU/s by as much saves (manual), or autoscale scaling that much lower each hour:
- a fan-out fixed with the partition key filter (`query_fans_out`) runs on one partition, at most at what its
  costliest partition charged for data pages in its latest run (`analysis.queries.runs.routing_multiplier`'s
  measured stand-in): it saves the rest of its RU per execution. Without a measured breakdown, the documented
  minimum a probed partition charges, about 2.5 RU each of the other partitions (ru-cost-model.md Q3, Q4):
  an estimate, and a lower bound;
- an ORDER BY whose composite index the service reports missing (`order_by_needs_composite_index`):
  Q11 measured 44.28 RU without the composite index and 8.86 RU with it, x5 (`COMPOSITE_INDEX_FACTOR`), so
  it would cost about a fifth: an estimate, labelled so, until the replay measures it with the index.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import load
from analysis.hot.replay import query_rates
from analysis.queries import costs as qc
from analysis.queries import runs as qr
from analysis.queries.logged import LOGGED_COLUMNS, workload_queries
from analysis.scope import window_text
from cosmoscore import billing
from cosmoscore.costmodel import CostModel
from store.records import EXECUTIONS, LOG_QUERY_RU, SCOPE_COLUMNS

KEY = list(SCOPE_COLUMNS)
QUERY = [*KEY, "query_name"]
SECONDS_PER_MONTH = billing.HOURS_PER_MONTH * 3600  # B3: a month of 730 hours
PARTITION_MINIMUM_RU = 2.5  # ru-cost-model.md Q3: "a minimum of about 2.5 RUs" per physical partition checked
# ru-cost-model.md Q11: 44.28 RU with a range index only, 8.86 with a composite; the emulator charges the same factor
COMPOSITE_INDEX_FACTOR = CostModel().query_order_without_composite
REPLAY_SOURCE = "replay: mean RU per execution x the config's rate_per_s"
LOGS_SOURCE = "diagnostic logs: logged RU over the logs' window"
NO_RATE = "no rate_per_s in the config: how often it runs is unknown, so no RU/s and no money"
NO_BILL = "no bill of its own (its database's shared offer, or no throughput metrics): no share of a bill"
OVER_BILL = (
    "the configured rates of the container's queries claim more RU/s than Azure Monitor measured it consume (a rate "
    "or the window is off): each share is of their sum, so the shares still add up to the bill"
)
CONSUMED_COLUMNS = [*KEY, "consumed_ru_s", "consumed_window"]
MONEY_COLUMNS = [
    "ru_s",
    "consumed_ru_s",
    "bill_share_pct",
    "monthly",
    "manual_rate_monthly",
    "serverless_monthly",
    "currency",
    "window",
    "note",
]
QUERY_COST_COLUMNS = [
    *KEY,
    "query",  # the query's name (replay) or its text as the service logged it (logs)
    "source",
    "ru_per_execution",
    "rate_per_s",
    "logged_ru",
    "window_hours",
    *MONEY_COLUMNS,
]
KEY_COST_COLUMNS = [*KEY, "partition_key", "logged_ru", "window_hours", *MONEY_COLUMNS]
# what the capacity report reads for these, beyond its own columns (`analysis.capacity.review.REPORT_TABLES`)
EXECUTION_COLUMNS = EXECUTIONS.pick("rate_per_s")
REQUEST_COLUMNS = qc.REQUEST_COLUMNS  # the pkrange breakdown and the index metrics
LOG_QUERY_COLUMNS = LOG_QUERY_RU.pick(*LOGGED_COLUMNS, "bin_minutes")
FINDING_COLUMNS = [*QUERY, "rate_per_s", "single_partition_ru", "single_partition_source", "composite_index"]


# -- the RU/s a consumer occupies ----------------------------------------------------------------------
def consumed_ru_s(
    metrics: pd.DataFrame, requests: pd.DataFrame | None = None, *, intervals: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per container: the workload's consumed RU/s while measured (the intervals' RU, the replay's taken out,
    over their seconds: `analysis.load.consumed_intervals`, `intervals` when the caller has them of these
    frames) and the window it covers (`CONSUMED_COLUMNS`)."""
    intervals = load.consumed_intervals(metrics, requests) if intervals is None else intervals
    if intervals.empty:
        return pd.DataFrame(columns=CONSUMED_COLUMNS)
    intervals = intervals.assign(ru=intervals["workload_ru_s"] * intervals["grain_s"])
    grouped = intervals.groupby(KEY)
    out = pd.DataFrame({"ru": grouped["ru"].sum(), "seconds": grouped["grain_s"].sum()})
    out["consumed_ru_s"] = out["ru"] / out["seconds"].where(out["seconds"] > 0)
    out["consumed_window"] = [window_text(a, b) for a, b in zip(grouped["time"].min(), grouped["time"].max())]
    return out.reset_index()[CONSUMED_COLUMNS]


def logs_window(logged: pd.DataFrame) -> pd.DataFrame:
    """Per container of log rows (`time` a bin's start, `bin_minutes` its length): the logs' window, from the
    first bin's start to the last bin's end, in hours, and as text."""
    if logged.empty:
        return pd.DataFrame(columns=[*KEY, "window_hours", "window"])
    minutes = logged["bin_minutes"].astype(float).fillna(0) if "bin_minutes" in logged else 0.0
    frame = logged.assign(start=pd.to_datetime(logged["time"], utc=True))
    frame = frame.assign(end=frame["start"] + pd.to_timedelta(minutes, unit="min"))
    spans = frame.groupby(KEY).agg(start=("start", "min"), end=("end", "max")).reset_index()
    spans["window_hours"] = (spans["end"] - spans["start"]).dt.total_seconds() / 3600
    spans["window"] = [window_text(a, b) for a, b in zip(spans["start"], spans["end"])]
    return spans[[*KEY, "window_hours", "window"]]


# -- money ----------------------------------------------------------------------------------------------
def ru_s_monthly(ru_s: float, prices: billing.Prices, *, regions: int = 1, autoscale: bool = False) -> float:
    """A month of `ru_s` at the manual rate (autoscale: 1.5x, B2) in every region (B3), linear in the RU/s:
    ru_s / 100 x the price per 100 RU/s-hour x regions x 730."""
    unit = billing.manual_hour(billing.UNIT_RU_S, prices, regions=regions) / billing.UNIT_RU_S
    factor = prices.autoscale_factor if autoscale else 1.0
    return ru_s * unit * factor * billing.HOURS_PER_MONTH


def _money(frame: pd.DataFrame, bills: pd.DataFrame, consumed: pd.DataFrame, prices: billing.Prices) -> pd.DataFrame:
    """`frame` (KEY, `ru_s`, a `note` so far) with `MONEY_COLUMNS` (the module docstring's rule)."""
    bill = bills.reindex(columns=[*KEY, "monthly", "regions"]).astype({k: str for k in KEY})
    used = consumed.reindex(columns=[*KEY, "consumed_ru_s"]).astype({k: str for k in KEY})
    out = frame.merge(used, on=KEY, how="left").merge(bill, on=KEY, how="left")
    ru_s, consumed_ru_s = out["ru_s"].astype(float), out["consumed_ru_s"].astype(float)
    # one population's shares (the rated queries, the logged texts, the keys) add up to the bill at most:
    # where their RU/s claim more than the container consumed, each is a share of their sum
    group = [out[k] for k in KEY] + ([out["source"]] if "source" in out else [])
    claimed = ru_s.groupby(group, dropna=False).transform("sum")
    over = claimed > consumed_ru_s * (1 + 1e-9)
    share = ru_s / consumed_ru_s.where(~over, claimed).where(lambda d: d > 0)
    billed = out["monthly"].astype(float)
    out["bill_share_pct"] = (100 * share).where(billed.notna())
    out["monthly"] = share * billed
    regions = out["regions"].astype(float).fillna(1).clip(lower=1).astype(int)
    out["manual_rate_monthly"] = [ru_s_monthly(r, prices, regions=n) for r, n in zip(ru_s, regions)]
    out["serverless_monthly"] = [billing.serverless_cost(r * SECONDS_PER_MONTH, prices) for r in ru_s]
    out["currency"] = prices.currency
    notes = [
        n if n else (NO_BILL if pd.isna(b) else (OVER_BILL if o else "")) for n, b, o in zip(out["note"], billed, over)
    ]
    return out.assign(note=notes)


def query_costs(
    queries: pd.DataFrame,
    executions: pd.DataFrame,
    logged: pd.DataFrame | None,
    bills: pd.DataFrame,
    consumed: pd.DataFrame,
    prices: billing.Prices,
    *,
    window_hours: float | None = None,
) -> pd.DataFrame:
    """Per replayed query (`queries`: `analysis.overview.query_stats`; its rate from `executions`) and per
    workload query of the logs (`logged`: `log_query_ru` rows), what it costs (`QUERY_COST_COLUMNS`, the module
    docstring); `bills` are `container_bills`, `consumed` is `consumed_ru_s`; `window_hours` the logs' window
    when the caller knows it (else `logs_window`). Replayed queries first, each part costliest first."""
    parts = [_replayed(queries, executions, consumed), _logged(logged, window_hours)]
    rows = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) else None
    if rows is None:
        return pd.DataFrame(columns=QUERY_COST_COLUMNS)
    return _money(rows, bills, consumed, prices).reindex(columns=QUERY_COST_COLUMNS)


def _replayed(queries: pd.DataFrame, executions: pd.DataFrame, consumed: pd.DataFrame) -> pd.DataFrame:
    """The replayed queries' RU per execution, rate and RU/s; the window is the consumed RU/s's."""
    if queries.empty:
        return pd.DataFrame()
    rows = queries[[*QUERY, "mean_ru"]].astype({k: str for k in QUERY}).merge(_rates(executions), on=QUERY, how="left")
    rate = rows["rate_per_s"].astype(float)
    windows = consumed.reindex(columns=CONSUMED_COLUMNS).set_index(KEY)["consumed_window"]
    out = pd.DataFrame(
        {
            **{k: rows[k] for k in KEY},
            "query": rows["query_name"],
            "source": REPLAY_SOURCE,
            "ru_per_execution": rows["mean_ru"].astype(float),
            "rate_per_s": rate,
            "logged_ru": math.nan,
            "window_hours": math.nan,
            "ru_s": rows["mean_ru"].astype(float) * rate,
            "window": [windows.get(tuple(k), "") for k in rows[KEY].itertuples(index=False)],
            "note": [NO_RATE if pd.isna(r) else "" for r in rate],
        }
    )
    return out.sort_values(["ru_s", "query"], ascending=[False, True], na_position="last", kind="stable")


def _logged(logged: pd.DataFrame | None, window_hours: float | None) -> pd.DataFrame:
    """The workload queries of the logs: their RU over the window's seconds."""
    if logged is None or logged.empty:
        return pd.DataFrame()
    texts = workload_queries(logged)
    if texts.empty:
        return pd.DataFrame()
    rows = texts.astype({k: str for k in KEY}).merge(_windows(logged, window_hours), on=KEY, how="left")
    hours = rows["window_hours"].astype(float)
    return pd.DataFrame(
        {
            **{k: rows[k] for k in KEY},
            "query": rows["query_text"],
            "source": LOGS_SOURCE,
            "ru_per_execution": math.nan,
            "rate_per_s": math.nan,
            "logged_ru": rows["request_charge"].astype(float),
            "window_hours": hours,
            "ru_s": rows["request_charge"].astype(float) / (hours.where(hours > 0) * 3600),
            "window": rows["window"],
            "note": "",
        }
    )


def _windows(logged: pd.DataFrame, window_hours: float | None) -> pd.DataFrame:
    """`logs_window` per container, its hours replaced by the caller's window when given."""
    spans = logs_window(logged).astype({k: str for k in KEY})
    return spans if window_hours is None else spans.assign(window_hours=float(window_hours))


def key_costs(
    log_key_ru: pd.DataFrame | None,
    bills: pd.DataFrame,
    consumed: pd.DataFrame,
    prices: billing.Prices,
    *,
    window_hours: float | None = None,
) -> pd.DataFrame:
    """Per logical key of the logs (`log_key_ru`, over its pkranges), what it costs by the same rule as a
    logged query (`KEY_COST_COLUMNS`), costliest first."""
    if log_key_ru is None or log_key_ru.empty:
        return pd.DataFrame(columns=KEY_COST_COLUMNS)
    rows = log_key_ru.dropna(subset=["partition_key"]).astype({k: str for k in KEY})
    ru = rows.groupby([*KEY, "partition_key"])["request_charge"].sum().astype(float).rename("logged_ru").reset_index()
    ru = ru.merge(_windows(rows, window_hours), on=KEY, how="left")
    hours = ru["window_hours"].astype(float)
    ru = ru.assign(ru_s=ru["logged_ru"] / (hours.where(hours > 0) * 3600), note="")
    ru = ru.sort_values(["logged_ru", "partition_key"], ascending=[False, True], kind="stable", ignore_index=True)
    return _money(ru, bills, consumed, prices).reindex(columns=KEY_COST_COLUMNS)


# -- what a query finding saves ---------------------------------------------------------------------------
def finding_inputs(executions: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """Per replayed query, what its findings' money needs (`FINDING_COLUMNS`): its rate, the RU a
    single-partition execution costs (its latest run's costliest partition's data pages, per execution:
    measured) and a composite index the service reports missing (the `compositeIndexes` entry, JSON)."""
    out = _rates(executions)
    parts = [
        _single_partition(mine, requests[requests["account"].eq(account).fillna(False).astype(bool)]).assign(
            account=str(account)
        )
        for account, mine in executions.dropna(subset=["account"]).groupby("account")
    ]
    if {"index_utilization", "request_kind", "account"} <= set(requests.columns):
        found = qr.missing_composite_indexes(requests)
        found = found[found["composite_spec"].str.count(",").ge(1)]  # one path: the range index serves it
        found = found.assign(composite_index=found["composite_spec"].map(composite_json))
        parts.append(found.drop(columns="composite_spec").drop_duplicates(subset=QUERY))
    for part in parts:
        if not part.empty:
            out = out.merge(part.astype({k: str for k in QUERY}), on=QUERY, how="outer")
    return out.reindex(columns=FINDING_COLUMNS)


def with_finding_inputs(queries: pd.DataFrame, executions: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """`queries` (`analysis.overview.query_stats`) with `finding_inputs` merged in, for `action_rows`."""
    if queries.empty:
        return queries
    inputs = finding_inputs(executions, requests)
    return queries.astype({k: str for k in QUERY}).merge(inputs, on=QUERY, how="left")


def _rates(executions: pd.DataFrame) -> pd.DataFrame:
    """Each query's latest configured rate (`analysis.hot.replay.query_rates`), keys as text; none recorded: empty."""
    if executions.empty or "rate_per_s" not in executions.columns:
        return pd.DataFrame({**{k: pd.Series(dtype=str) for k in QUERY}, "rate_per_s": pd.Series(dtype=float)})
    return query_rates(executions).astype({**{k: str for k in QUERY}, "rate_per_s": float})


def _single_partition(executions: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """One account's queries: the costliest partition's data-page RU per execution in each query's latest run."""
    if requests.empty or "execution_id" not in requests.columns or "query_name" not in requests.columns:
        return pd.DataFrame(columns=[*qc.QUERY_KEY, "single_partition_ru", "single_partition_source"])
    summary = qc.summarize_query_costs(executions)
    parts = []
    for run_id, mine in summary.dropna(subset=["latest_run"]).groupby("latest_run"):
        breakdown = qc.pkrange_breakdown(requests, str(run_id), executions=executions)
        found = qr.routing_multiplier(breakdown).merge(mine[qc.QUERY_KEY], on=qc.QUERY_KEY)
        parts.append(found.assign(single_partition_source=f"measured: its costliest partition in run {run_id}"))
    if not parts:
        return pd.DataFrame(columns=[*qc.QUERY_KEY, "single_partition_ru", "single_partition_source"])
    found = pd.concat(parts, ignore_index=True).dropna(subset=["costliest_pkrange_ru"])
    found = found.rename(columns={"costliest_pkrange_ru": "single_partition_ru"})
    return found[[*qc.QUERY_KEY, "single_partition_ru", "single_partition_source"]]


def composite_json(spec: str) -> str:
    """A composite index spec of the index metrics ("/a ASC, /b DESC") as the `compositeIndexes` entry the
    indexing policy takes, compact JSON: the entry `advisor.lint.composite_index` writes (not imported: the advisor
    loads the SQL engine, which analysis does not); the service already spells each path as a policy does."""
    entries = []
    for part in spec.split(","):
        path, _, order = part.strip().rpartition(" ")
        if not path:  # a path without an order is ascending
            path, order = order, "ASC"
        entries.append({"path": path, "order": "descending" if order.upper() == "DESC" else "ascending"})
    return json.dumps(entries, separators=(",", ":"))


def fan_out_saving(ru: float, pkranges: int, single_partition_ru: float | None) -> tuple[float, str]:
    """The RU per execution a fan-out saves with its partition key filter, and how it is known: `ru` less the
    measured single-partition RU, else at least 2.5 RU for each partition but one (Q3: an estimate)."""
    if single_partition_ru is not None and not math.isnan(single_partition_ru) and single_partition_ru > 0:
        return max(ru - single_partition_ru, 0.0), "measured"
    return PARTITION_MINIMUM_RU * max(pkranges - 1, 0), "estimate"


def composite_index_saving(ru: float) -> float:
    """The RU per execution a missing composite index would save: Q11's x5 (an estimate)."""
    return ru * (1 - 1 / COMPOSITE_INDEX_FACTOR)


def finding_saving(saved_ru_s: float | None, bill: Mapping[str, Any] | None, prices: billing.Prices | None) -> float:
    """What a query finding's `saved_ru_s` saves a month (module docstring), NaN without a rate or a bill."""
    if saved_ru_s is None or math.isnan(saved_ru_s) or bill is None or prices is None:
        return math.nan
    regions = max(int(bill.get("regions") or 1), 1)
    return ru_s_monthly(saved_ru_s, prices, regions=regions, autoscale=bool(bill.get("autoscale")))


# -- the capacity report's rows --------------------------------------------------------------------------
def report_rows(costs: pd.DataFrame, section: str, subject: str) -> pd.DataFrame:
    """Report rows (`analysis.capacity.actions.COLUMNS`' first nine) of a `query_costs` or `key_costs` frame:
    `logged_ru` (logs only), `ru_s`, `bill_share`, `monthly_cost`, `manual_rate_monthly_cost`,
    `serverless_monthly_cost`, each with its source and window; a figure without data behind it has no row."""
    rows = []
    for r in costs.to_dict("records"):
        about = (
            f"{r.get('source') or LOGS_SOURCE}; {r['window']}" if r["window"] else str(r.get("source") or LOGS_SOURCE)
        )
        share = f"{r['bill_share_pct']:.2f}% of" if pd.notna(r["bill_share_pct"]) else "share of"
        found = [
            ("logged_ru", r.get("logged_ru"), "RU", about),
            ("ru_s", r["ru_s"], "RU/s", about),
            ("bill_share", r["bill_share_pct"], "%", f"of the container's consumed RU/s ({r['consumed_ru_s']:,.1f} RU/s)"),
            ("monthly_cost", r["monthly"], r["currency"], f"{share} the month as billed; {r['note'] or about}"),
            ("manual_rate_monthly_cost", r["manual_rate_monthly"], r["currency"], "its RU/s at the manual rate, in every region"),
            ("serverless_monthly_cost", r["serverless_monthly"], r["currency"], "its RU at the serverless price"),
        ]  # fmt: skip
        for measure, value, unit, detail in found:
            if value is not None and pd.notna(value):
                rows.append((section, *(r[k] for k in KEY), str(r[subject]), measure, float(value), unit, detail))
    columns = ["section", *KEY, "subject", "measure", "value", "unit", "detail"]
    return pd.DataFrame(rows, columns=columns)


def report_costs(
    queries: pd.DataFrame,
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame,
    bills: pd.DataFrame,
    prices: billing.Prices,
    log_query_ru: pd.DataFrame | None = None,
    log_key_ru: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The capacity report's `query_costs` and `key_costs`, over one `consumed_ru_s` of the containers
    (`model`: the caller's `analysis.load.build` of these frames)."""
    consumed = consumed_ru_s(metrics, requests, intervals=None if model is None else model.consumed)
    return (
        query_costs(queries, executions, log_query_ru, bills, consumed, prices),
        key_costs(log_key_ru, bills, consumed, prices),
    )


def query_report_rows(costs: pd.DataFrame | None, *, top: int) -> pd.DataFrame:
    """The `query` section's money (`report_rows`): every replayed query's, then the `top` costliest workload
    queries of the logs per container."""
    if costs is None or costs.empty:
        return pd.DataFrame(columns=["section", *KEY, "subject", "measure", "value", "unit", "detail"])
    texts = costs[costs["source"].eq(LOGS_SOURCE)].groupby(KEY, sort=False).head(top)
    return pd.concat([report_rows(costs[costs["source"].eq(REPLAY_SOURCE)], "query", "query"),
                      report_rows(texts, "query", "query")], ignore_index=True)  # fmt: skip


def key_report_rows(money: pd.DataFrame | None, keys: pd.DataFrame) -> pd.DataFrame:
    """The `key` section's money (`report_rows` of `key_costs`) for the `keys` (KEY, partition_key) it lists."""
    if money is None or money.empty:
        return pd.DataFrame(columns=["section", *KEY, "subject", "measure", "value", "unit", "detail"])
    listed = money.merge(keys[[*KEY, "partition_key"]].astype(str), on=[*KEY, "partition_key"])
    return report_rows(listed, "key", "partition_key")


def say_unrated(rows: pd.DataFrame, costs: pd.DataFrame | None) -> pd.DataFrame:
    """The `query` section's rows with `NO_RATE` added to the `mean_ru` detail of each replayed query without a
    rate: the report says why it has no money."""
    if costs is None or costs.empty or rows.empty:
        return rows
    named = costs[costs["note"].eq(NO_RATE)]
    unrated = {(*(str(r[k]) for k in KEY), str(r["query"])) for r in named.to_dict("records")}
    keys = [(*(str(r[k]) for k in KEY), str(r["subject"])) for r in rows.to_dict("records")]
    hit = [m == "mean_ru" and k in unrated for m, k in zip(rows["measure"], keys)]
    return rows.assign(detail=[f"{d}; {NO_RATE}" if h else d for d, h in zip(rows["detail"], hit)])
