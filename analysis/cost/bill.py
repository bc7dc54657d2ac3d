"""Each container's and shared database's bill over the measured hours, its alternatives and the one to take.

Pure functions over the hourly frame (`analysis.cost.hours`: per container or shared database and clock
hour, the need, the RU/s in force, the RU consumed) and the prices (`cosmoscore.billing.Prices`, the config's
`[pricing]`). One row per throughput unit (a container with RU/s of its own, or a shared database: container
"") and window (`BILL_COLUMNS`), money in `prices.currency`:

- `window_days`, `start`, `end`, `hours`: the last 7, 30 and 90 days up to the store's latest measured hour
  (one end for the fleet), and the clock hours measured in it (B1: each billed whole); a longer window that
  holds no more hours than the shorter one is left out (it would repeat it);
- `billed`: those hours as billed. Manual: the RU/s in force (B1). Autoscale: the RU/s it scaled to, which
  Azure Monitor does not report (the autoscale FAQ advises against reading ProvisionedThroughput for it),
  estimated as the hour's need, at least 10% of the max (B2). In every region (B3), at the multi-region-write
  rate for the accounts `[pricing] multi_write_accounts` names (B4);
- `monthly`: `billed` over `hours` x 730 (B3's month); `storage_monthly`: the latest snapshot's data and index
  (a database: its containers'), in every region (B6);
- the alternatives over the same hours, projected alike: `manual_right` at `manual_ru_s` (the busiest hour's
  need at 80%, as `lower_throughput`'s target, never under the minimum, B12), `autoscale_right` at
  `autoscale_max` (`analysis.capacity.autoscale.autoscale_estimate`'s max, never under the minimum, B12),
  `serverless` (the workload's RU at the serverless price, B5; `serverless_fits`: one region, no shared
  offer, at most 5,000 RU/s a partition, B9);
- `*_throttled_hours`: the hours whose need is above what that offer holds (the RU/s in force today, the
  manual RU/s, the autoscale max, 5,000 RU/s x partitions for serverless): the need counts the 429s'
  denied RU (B13); today's also count every hour in which Azure Monitor counted 429s;
- `recommended`, `recommended_monthly`, `monthly_saving`: the cheapest of today's offer, manual and autoscale
  that would not have throttled more hours than today (a tie keeps today's), and what it saves a month.
  Serverless is not one of them: it is an account's capacity mode, not a container's (B16), so it is
  weighed per account (`account_serverless`: every unit of the account moved to a new serverless account).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis import load
from analysis.capacity.autoscale import autoscale_estimate
from analysis.capacity.rules import RU_STEP, TARGET_PEAK_UTILIZATION
from analysis.cost.hours import HOUR_COLUMNS, offer_containers, unit_hours
from cosmoscore import billing
from store.records import SCOPE_COLUMNS, SHARED_OFFER_CONTAINER

KEY = list(SCOPE_COLUMNS)
SERVERLESS_PARTITION_RU_S = 5000  # B9: each serverless physical partition serves up to 5,000 RU/s
WINDOWS_DAYS = (7, 30, 90)  # the windows; Azure Advisor looks at 7 days only (B14 of the research)
MAIN_WINDOW_DAYS = 30  # the row the report, the findings and the pages read (the shortest when it is all)
OPTIONS = ("today", "manual", "autoscale")  # a tie on money goes to the first; serverless is an account's (B16)
BILL_COLUMNS = [
    *KEY,
    "window_days",
    "start",
    "end",
    "hours",
    "autoscale",
    "regions",
    "multi_write",
    "billed",
    "monthly",
    "throttled_hours",
    "storage_monthly",
    "manual_right",
    "manual_ru_s",
    "manual_throttled_hours",
    "autoscale_right",
    "autoscale_max",
    "autoscale_throttled_hours",
    "serverless",
    "serverless_fits",
    "serverless_throttled_hours",
    "recommended",
    "recommended_monthly",
    "monthly_saving",
    "currency",
    "price_note",
]


def container_bills(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
    prices: billing.Prices,
    *,
    multi_write: Collection[str] = (),
    windows: tuple[int, ...] = WINDOWS_DAYS,
) -> pd.DataFrame:
    """`bills` of every container with RU/s of its own and every shared database of the store's frames."""
    hours = unit_hours(metrics, requests, partitions)
    return bills(hours, partitions, prices, metrics=metrics, windows=windows, multi_write=multi_write)


AUTOSCALE_COLUMNS = [*KEY, "autoscale_cost_ratio", "autoscale_hours", "autoscale_max"]


def autoscale_ratios(main: pd.DataFrame) -> pd.DataFrame:
    """Per container of `main` (`main_bills`): what autoscale at its max would have billed over the month as
    billed manual (`AUTOSCALE_COLUMNS`: the report's `autoscale_cost_ratio` and the `move_to_autoscale`
    finding's numbers are the cost section's, one definition); NaN on autoscale already."""
    if main.empty:
        return pd.DataFrame(columns=AUTOSCALE_COLUMNS)
    manual = ~main["autoscale"].astype(bool) & main["monthly"].gt(0)
    ratio = (main["autoscale_right"] / main["monthly"]).where(manual).round(4)
    return main[KEY].assign(
        autoscale_cost_ratio=ratio, autoscale_hours=main["hours"], autoscale_max=main["autoscale_max"]
    )


@dataclass(frozen=True, slots=True)
class Unit:
    """What one throughput unit's bill needs besides its hours: its storage (one region's GB), and for a
    shared database how many containers spend its offer (its minimum, B12)."""

    storage_gb: float = math.nan
    containers: int = 0


def bills(
    hours: pd.DataFrame,
    partitions: pd.DataFrame | None,
    prices: billing.Prices,
    *,
    metrics: pd.DataFrame | None = None,
    windows: tuple[int, ...] = WINDOWS_DAYS,
    multi_write: Collection[str] = (),
) -> pd.DataFrame:
    """`BILL_COLUMNS` per throughput unit of `hours` (`analysis.cost.hours.container_hours` and
    `database_hours`, concatenated) and window (the module docstring). `metrics`: to count a shared
    database's containers (its minimum); `multi_write`: the store's account names with multi-region writes."""
    if hours.empty:
        return pd.DataFrame(columns=BILL_COLUMNS)
    hours = hours.reindex(columns=HOUR_COLUMNS)
    end = pd.Timestamp(hours["hour"].max())
    units = _units(partitions, metrics)
    note = billing.LIST_PRICE_NOTE if prices.list_example else "your [pricing]"
    rows = []
    for key, mine in hours.groupby(KEY, sort=False):
        unit = units.get(tuple(str(k) for k in key), Unit())
        shown = 0
        for days in sorted(windows):
            start = end - pd.Timedelta(days=days) + pd.Timedelta(hours=1)
            window = mine[mine["hour"] >= start].sort_values("hour")
            if window.empty or len(window) <= shown:
                continue  # no more hours than the shorter window: it would repeat it
            shown = len(window)
            found = window_bill(window, unit, prices, multi_write=str(key[0]) in set(multi_write))
            rows.append({**dict(zip(KEY, (str(k) for k in key))), "window_days": days, "start": start, "end": end,
                         **found, "currency": prices.currency, "price_note": note})  # fmt: skip
    return pd.DataFrame(rows, columns=BILL_COLUMNS)


def window_bill(
    hours: pd.DataFrame, unit: Unit, prices: billing.Prices, *, multi_write: bool = False
) -> dict[str, object]:
    """One unit's bill over one window's hours (the module docstring's columns from `hours` to
    `monthly_saving`)."""
    need, in_force, ru = (hours[name].astype(float) for name in ("need", "in_force", "ru"))
    auto = bool(hours["autoscale"].iloc[0])
    n = int(hours["regions"].max())
    pkranges = int(hours["pkranges"].max())
    shared = str(hours["container"].iloc[0]) == SHARED_OFFER_CONTAINER

    def autoscaled(max_ru_s: pd.Series | float) -> float:
        tops = max_ru_s if isinstance(max_ru_s, pd.Series) else pd.Series(max_ru_s, index=need.index)
        return billing.hours_cost(
            billing.autoscale_hour(t, v, prices, regions=n, multi_write=multi_write) for t, v in zip(tops, need)
        )

    if auto:
        billed = autoscaled(in_force)
    else:
        billed = billing.hours_cost(
            billing.manual_hour(v, prices, regions=n, multi_write=multi_write) for v in in_force
        )
    month = billing.HOURS_PER_MONTH / len(hours)
    highest = float(in_force.max())
    peak = float(need.max())
    manual_ru_s = _manual_right(peak, unit, highest)
    manual = len(hours) * billing.manual_hour(manual_ru_s, prices, regions=n, multi_write=multi_write)
    estimate = autoscale_estimate(need.set_axis(hours["hour"]), in_force.set_axis(hours["hour"]))
    top = max(estimate.max_ru_s, _autoscale_floor(unit, highest)) if estimate.max_ru_s > 0 else math.nan
    auto_right = autoscaled(top) if top > 0 else math.nan
    fits = n == 1 and not shared and peak <= SERVERLESS_PARTITION_RU_S * pkranges
    serverless = billing.serverless_cost(float(ru.sum()), prices) if not shared else math.nan
    throttled = {
        "today": int(((need > in_force + 1e-3).to_numpy() | hours["throttled"].astype(bool).to_numpy()).sum()),
        "manual": _over(need, manual_ru_s),
        "autoscale": _over(need, top) if top > 0 else math.nan,
        "serverless": _over(need, SERVERLESS_PARTITION_RU_S * pkranges) if not shared else math.nan,
    }
    monthly = {"today": billed * month, "manual": manual * month, "autoscale": auto_right * month}
    chosen = recommend(monthly, throttled)
    gb = unit.storage_gb
    return {
        "hours": len(hours), "autoscale": auto, "regions": n, "multi_write": multi_write,
        "billed": billed, "monthly": monthly["today"], "throttled_hours": throttled["today"],
        "storage_monthly": billing.storage_month(gb, prices, regions=n),
        "manual_right": monthly["manual"], "manual_ru_s": manual_ru_s, "manual_throttled_hours": throttled["manual"],
        "autoscale_right": monthly["autoscale"], "autoscale_max": top,
        "autoscale_throttled_hours": throttled["autoscale"],
        "serverless": serverless * month, "serverless_fits": fits,
        "serverless_throttled_hours": throttled["serverless"],
        "recommended": chosen, "recommended_monthly": monthly[chosen],
        "monthly_saving": round(monthly["today"] - monthly[chosen], 2),
    }  # fmt: skip


ACCOUNT_SERVERLESS_COLUMNS = ["account", "units", "monthly", "serverless", "fits", "why_not", "monthly_saving",
                              "currency"]  # fmt: skip


def account_serverless(main: pd.DataFrame) -> pd.DataFrame:
    """Per account of `main` (`main_bills`): its throughput as billed a month against its units' workload RU
    at the serverless price (B5), and whether serverless could hold it: every unit one region, none a shared
    offer and no partition's need over 5,000 RU/s (B9). Serverless is a new account and a copy of the data,
    not a change to the existing one (B16); `why_not` names the units that do not fit."""
    if main.empty:
        return pd.DataFrame(columns=ACCOUNT_SERVERLESS_COLUMNS)
    rows = []
    for account, units in main.groupby("account", sort=True):
        misfits = units[~units["serverless_fits"].astype(bool)]
        names = [f"{d}/{c}" if c != SHARED_OFFER_CONTAINER else f"{d} (shared offer)"
                 for d, c in zip(misfits["database"], misfits["container"])]  # fmt: skip
        why = f"does not fit: {', '.join(names)}" if names else ""
        billed, serverless = float(units["monthly"].sum()), float(units["serverless"].sum(min_count=1))
        saving = round(billed - serverless, 2) if not names else math.nan
        rows.append((str(account), len(units), billed, serverless, not names, why, saving, units["currency"].iloc[0]))
    return pd.DataFrame(rows, columns=ACCOUNT_SERVERLESS_COLUMNS)


def recommend(monthly: dict[str, float], throttled: dict[str, float]) -> str:
    """The cheapest option (`OPTIONS`) that would not have throttled more hours than today's offer; a NaN
    cost (an option that does not apply) is never chosen, and a tie keeps the earlier option."""
    limit = throttled["today"]
    fair = [o for o in OPTIONS if monthly.get(o, math.nan) == monthly.get(o) and throttled.get(o, math.inf) <= limit]
    return min(fair, key=lambda o: (round(monthly[o], 2), OPTIONS.index(o))) if fair else "today"


def _over(need: pd.Series, capacity: pd.Series | float) -> int:
    """The hours whose need is above the capacity (a thousandth of an RU/s of slack: figures rounded)."""
    return int((need > capacity + 1e-3).sum())


def _manual_right(peak_need: float, unit: Unit, highest_ever: float) -> float:
    """The manual RU/s that keeps the busiest hour's need at `TARGET_PEAK_UTILIZATION`, in steps of 100, never
    under the minimum (B12; a shared database's counts its containers; the highest RU/s ever is the highest
    seen in the window)."""
    step = RU_STEP[False]
    wanted = math.ceil(peak_need / TARGET_PEAK_UTILIZATION / step) * step if peak_need > 0 else 0
    gb = 0.0 if math.isnan(unit.storage_gb) else unit.storage_gb
    if unit.containers:
        floor = billing.min_database_manual_ru_s(gb, highest_ever, unit.containers)
    else:
        floor = billing.min_manual_ru_s(gb, highest_ever)
    return float(max(wanted, floor))


def _autoscale_floor(unit: Unit, highest_ever: float) -> float:
    """The smallest autoscale max the unit may have (B12), in the autoscale step."""
    gb = 0.0 if math.isnan(unit.storage_gb) else unit.storage_gb
    if unit.containers:
        floor = billing.min_database_autoscale_max_ru_s(gb, highest_ever, unit.containers)
    else:
        floor = billing.min_autoscale_max_ru_s(gb, highest_ever)
    step = RU_STEP[True]
    return float(math.ceil(floor / step) * step)


def _units(partitions: pd.DataFrame | None, metrics: pd.DataFrame | None) -> dict[tuple[str, ...], Unit]:
    """Each container's latest storage (GB, one region's copy), and each shared database's: its containers'
    storage summed, and their count."""
    snapshot = None if partitions is None or partitions.empty else load.latest_snapshot(partitions)
    sized = pd.DataFrame(columns=[*KEY, "size_kb"]) if snapshot is None else snapshot.dropna(subset=["size_kb"])
    latest = sized.groupby(KEY)["size_kb"].sum().astype(float) * 1024 / 1024**3
    by_key = {tuple(str(k) for k in key): float(gb) for key, gb in zip(latest.index.to_list(), latest.to_list())}
    found = {key: Unit(storage_gb=gb) for key, gb in by_key.items()}
    if metrics is None:
        return found
    for row in offer_containers(metrics, partitions).to_dict("records"):
        members = [gb for key, gb in by_key.items() if key[:2] == (str(row["account"]), str(row["database"]))]
        key = (str(row["account"]), str(row["database"]), SHARED_OFFER_CONTAINER)
        found[key] = Unit(storage_gb=float(sum(members)) if members else math.nan, containers=int(row["containers"]))
    return found


def main_bills(found: pd.DataFrame) -> pd.DataFrame:
    """Per unit, the row of `MAIN_WINDOW_DAYS` where the store holds more than a week, else its shortest
    window's (all it has): the one bill the report, the findings and the pages read."""
    if found.empty:
        return found
    ranked = found.assign(_main=found["window_days"].ne(MAIN_WINDOW_DAYS))
    ranked = ranked.sort_values([*KEY, "_main", "window_days"], kind="stable")
    return ranked.drop_duplicates(subset=KEY).drop(columns="_main").reset_index(drop=True)


def report_rows(found: pd.DataFrame) -> pd.DataFrame:
    """The capacity report's `cost` section: per unit, its main window's month as billed, its storage, each
    alternative with the hours it would have throttled and the recommendation; for its other windows the
    month as billed and the recommendation (measures suffixed `_7d`, `_90d`). In the prices' currency
    (`analysis.capacity.actions.COLUMNS`)."""
    main = main_bills(found)
    mains = set(zip(*(main[k] for k in [*KEY, "window_days"]))) if not main.empty else set()
    rows = []
    for row in found.to_dict("records"):
        is_main = tuple(row[k] for k in [*KEY, "window_days"]) in mains
        rows += [("cost", *(row[k] for k in KEY), *found_row, row["currency"], detail)
                 for *found_row, detail in _cost_rows({str(k): v for k, v in row.items()}, is_main)]  # fmt: skip
    for row in account_serverless(main).to_dict("records"):
        if row["serverless"] == row["serverless"]:
            rows.append(("cost", row["account"], "", "", "new serverless account", "serverless_account_monthly_cost",
                         float(row["serverless"]), row["currency"], _serverless_detail({str(k): v for k, v in row.items()})))  # fmt: skip
    columns = ["section", *KEY, "subject", "measure", "value", "unit", "detail"]
    return pd.DataFrame(rows, columns=columns)


def _serverless_detail(row: dict[str, Any]) -> str:
    """The account serverless row's detail: whether it fits, what it saves, and that it is a migration."""
    fit = (
        f"fits; saves {row['monthly_saving']:,.2f} {row['currency']} a month against {row['monthly']:,.2f} as billed"
        if row["fits"]
        else row["why_not"]
    )
    return (
        f"the workload's RU of the account's {row['units']} throughput units at the serverless price; {fit}; "
        "serverless is an account's capacity mode: a new account and a copy of the data (B16)"
    )


def _cost_rows(row: dict[str, Any], main: bool) -> list[tuple[str, str, float, str]]:
    """(subject, measure, value, detail) of one bill row (`report_rows`), those with a value."""
    kind = "autoscale" if row["autoscale"] else "manual"
    where = f"{row['regions']} region{'s' if row['regions'] != 1 else ''}"
    where += ", multi-region writes" if row["multi_write"] else ""
    hours = f"{row['hours']} hour{'s' if row['hours'] != 1 else ''}"
    window = f"last {row['window_days']} days: {hours} measured, x 730 / {row['hours']}"
    measured = f"{window}; {where}; {row['price_note']}"
    unit = "" if row["container"] != SHARED_OFFER_CONTAINER else "shared database offer"
    suffix = "" if main else f"_{row['window_days']}d"

    def throttle(n: float) -> str:
        return "" if n != n else f"; would have throttled {int(n)} of the {hours}"

    serverless = (
        "fits serverless (one region, at most 5,000 RU/s a partition), as part of a new serverless account (B16)"
        if row["serverless_fits"]
        else "serverless does not fit (a shared offer, more than one region, or a partition's need over 5,000 RU/s)"
    )
    today = ("monthly_cost", unit, row["monthly"],
             f"as billed ({kind}); {measured}; throttled {int(row['throttled_hours'])} of the {hours}")  # fmt: skip
    named = "keep as billed" if row["recommended"] == "today" else row["recommended"]
    chosen = ("recommended_monthly_cost", named, row["recommended_monthly"],
              f"the cheapest that would not have throttled more hours than today; saves "
              f"{row['monthly_saving']:,.2f} {row['currency']} a month; {window}")  # fmt: skip
    rows = [today, chosen] if not main else [
        today,
        ("storage_monthly_cost", unit, row["storage_monthly"], f"data and index, latest snapshot; {where}"),
        ("manual_monthly_cost", f"{row['manual_ru_s']:,.0f} RU/s", row["manual_right"],
         f"manual at the RU/s that keeps the busiest hour's need at 80%; {measured}"
         f"{throttle(row['manual_throttled_hours'])}"),
        ("autoscale_monthly_cost", f"max {row['autoscale_max']:,.0f} RU/s", row["autoscale_right"],
         f"autoscale at its recommended max; {measured}{throttle(row['autoscale_throttled_hours'])}"),
        ("serverless_monthly_cost", "", row["serverless"],
         f"the workload's RU; {serverless}; {measured}{throttle(row['serverless_throttled_hours'])}"),
        chosen,
    ]  # fmt: skip
    return [
        (subject, f"{measure}{suffix}", float(value), detail)
        for measure, subject, value, detail in rows
        if value is not None and not (isinstance(value, float) and math.isnan(value))
    ]
