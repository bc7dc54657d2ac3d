"""The capacity report's `action` section: the rules of `analysis.capacity.rules` run per container, query and
logical key, each action with its numbers in columns (`ACTION_COLUMNS`: target, its unit, severity, the
command that applies it, its risk; `analysis.capacity.review`'s docstring documents them), and what they need
from the data: the logs' costliest key per range (`costliest_key_shares`) and the ranges' measured peaks
(`partition_peaks`, the need of a redistribution)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from analysis import overview
from analysis.capacity import commands, planner, rules
from analysis.capacity.evidence import ThrottleTerms
from analysis.capacity.rules import (
    Action,
    autoscale_action,
    composite_index_action,
    fan_out_action,
    hot_partition_action,
    key_storage_action,
    lower_action,
    raise_action,
    saturation_action,
    skew_action,
)
from analysis.cost import queries as query_cost
from analysis.scope import in_containers, window_text
from analysis.units import Number
from cosmoscore import billing
from cosmoscore.limits import GB, Limits
from cosmoscore.monitor.metrics import NORMALIZED_RU

KEY = overview.KEY
# blank on rows that are not actions; `monthly_saving` (a number, in `saving_unit`: the cost section's currency
# a month) is what a throughput change saves (negative: costs) at the cost section's prices (`_saving`)
ACTION_COLUMNS = ["target", "target_unit", "severity", "command", "risk", "monthly_saving", "saving_unit"]
ACTION_TEXT_COLUMNS = ["target_unit", "severity", "command", "risk", "saving_unit"]
COLUMNS = ["section", *KEY, "subject", "measure", "value", "unit", "detail", *ACTION_COLUMNS]  # every report row


def partition_peaks(metrics: pd.DataFrame) -> dict[tuple[str, ...], dict[str, float]]:
    """(account, database, container) -> pkrange -> its largest per-minute NormalizedRUConsumption (%) in the
    window, over regions (the partition rows' `max_normalized_ru`): the measured need of a redistribution."""
    normalized = overview.metric_rows(metrics, NORMALIZED_RU).dropna(subset=["pkrange_id", "value"])
    if normalized.empty:
        return {}
    peaks = normalized.groupby([*KEY, "pkrange_id"])["value"].max().reset_index()
    out: dict[tuple[str, ...], dict[str, float]] = {}
    for *key, pkrange, value in peaks.astype({"value": float}).itertuples(index=False):
        out.setdefault(tuple(str(k) for k in key), {})[str(pkrange)] = float(value)
    return out


def costliest_key_shares(log_key_ru: pd.DataFrame | None) -> dict[tuple[str, ...], tuple[str, float]]:
    """(account, database, container, pkrange) -> the key with the most RU on it in the logs, and its share."""
    if log_key_ru is None or "pkrange_id" not in log_key_ru or log_key_ru.empty:
        return {}
    rows = in_containers(log_key_ru).dropna(subset=["pkrange_id", "partition_key"])
    ru = rows.groupby([*KEY, "pkrange_id", "partition_key"])["request_charge"].sum().reset_index()
    top = ru.sort_values(["request_charge", "partition_key"], ascending=[False, True], kind="stable")
    total = ru.groupby([*KEY, "pkrange_id"])["request_charge"].transform("sum")
    top = top.assign(_share=(top["request_charge"] / total.where(total > 0)).fillna(0.0))
    top = top.drop_duplicates(subset=[*KEY, "pkrange_id"])
    names = top[[*KEY, "pkrange_id", "partition_key"]].astype(str).itertuples(index=False)
    return {tuple(k[:-1]): (k[-1], float(share)) for k, share in zip(names, top["_share"])}


def action_rows(
    containers: pd.DataFrame,
    queries: pd.DataFrame,
    keys: pd.DataFrame,
    limits: Limits | None,
    *,
    hot_keys: dict[tuple[str, ...], tuple[str, float]] | None = None,
    peaks: dict[tuple[str, ...], dict[str, float]] | None = None,
    azure: Mapping[str, commands.AzureAccount] | None = None,
    bills: Mapping[tuple[str, ...], dict[str, Any]] | None = None,
    prices: billing.Prices | None = None,
    throttles: Mapping[tuple[str, ...], ThrottleTerms] | None = None,
    minutes: Mapping[tuple[str, ...], pd.DataFrame] | None = None,
    storage: Mapping[tuple[str, ...], float] | None = None,
) -> pd.DataFrame:
    """The `action` section: every rule that fires, per container, query and logical key (`hot_keys`:
    `costliest_key_shares`, to name the key of a hot partition and say when one key carries it; `peaks`:
    `partition_peaks`, the per-partition consumption of a redistribution, `throttles` (`throttle_terms`) its
    429 terms; `minutes`: `burst_minutes`, burst capacity's evidence; `storage`: `partition_storage`, a
    merge's; `azure`: the store's account names -> their ARM names, for the commands; `bills`:
    `analysis.cost.bill`'s rows by container and their `prices`, for what a change saves), each with its
    numbers in columns."""
    bills = bills or {}
    found: list[tuple[tuple[str, ...], str, Action]] = []
    for row in containers.to_dict("records"):
        named = {str(k): v for k, v in row.items()}
        found += _container_actions(named, hot_keys or {}, peaks or {}, throttles, minutes, storage)
    for row in queries.to_dict("records"):
        found += [
            (tuple(row[name] for name in KEY), row["query_name"], a)
            for a in _query_actions({str(k): v for k, v in row.items()})
            if a
        ]
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
            "target": math.nan if a.target is None else a.target,
            "target_unit": a.target_unit,
            "severity": rules.severity(a),
            "command": commands.az_command(a, str(key[0]), str(key[1]), str(key[2]), (azure or {}).get(str(key[0]))),
            "risk": a.risk,
            **_saving(a, bills.get(tuple(str(k) for k in key)), prices),
        }
        for key, subject, a in found
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def _saving(action: Action, bill: dict[str, Any] | None, prices: billing.Prices | None) -> dict[str, Any]:
    """What a throughput change saves a month (`monthly_saving`, negative: what it costs) against the month
    as billed (`analysis.cost.bill`, the same hours and regions, the same prices): a new manual RU/s or
    autoscale max, or a redistribution's new total; burst capacity saves the raise it replaces (that raise's
    cost); a merge 0 (the RU/s billed do not change, R96). A query change: the RU/s it saves at the query's rate, priced
    (`analysis.cost.queries.finding_saving`). No figure for a key, a query without a rate or a container
    without a bill."""
    none = {"monthly_saving": math.nan, "saving_unit": ""}
    if action.change in ("query", "index"):  # a query's RU/s at its rate, priced (`analysis.cost.queries`)
        saved = query_cost.finding_saving(action.saved_ru_s, bill, prices)
        return none if math.isnan(saved) or prices is None else _per_month(saved, prices)
    if bill is None or prices is None:
        return none
    unit = f"{prices.currency} a month"
    if action.change == "merge":
        return {"monthly_saving": 0.0, "saving_unit": unit}
    if action.change == "burst" and action.instead_of is not None:
        raised = _saving(action.instead_of, bill, prices)
        if math.isnan(raised["monthly_saving"]):
            return none
        return {"monthly_saving": round(-raised["monthly_saving"], 2) + 0.0, "saving_unit": unit}
    if not (action.target or action.partitions):
        return none
    n_regions, now = int(bill["regions"]), float(bill["monthly"])
    month = billing.HOURS_PER_MONTH
    if action.change == "autoscale":
        after = float(bill["autoscale_right"])
    elif action.change == "throughput" and action.target_unit == rules.target_unit(True):
        return none  # a new autoscale max: its bill follows the hours' needs (the cost section's autoscale row)
    elif action.change == "throughput" and action.target:
        after = month * billing.manual_hour(float(action.target), prices, regions=n_regions)
    elif action.change == "redistribute" and action.partitions:
        total = sum(ru for _, ru in action.partitions)
        after = month * billing.manual_hour(total, prices, regions=n_regions)
    else:
        return none
    if bill["autoscale"] and action.change != "autoscale":
        return none  # an autoscale container's bill is estimated per hour: a manual price is not comparable
    return {"monthly_saving": round(now - after, 2), "saving_unit": unit}


def _per_month(saving: float, prices: billing.Prices) -> dict[str, Any]:
    return {"monthly_saving": round(saving, 2), "saving_unit": f"{prices.currency} a month"}


def _query_actions(row: dict[str, Any]) -> list[Action | None]:
    """The rules of one replayed query (`action_rows`): a fan-out, a missing composite index; with its rate and
    measured single-partition RU when the caller merged them in (`analysis.cost.queries.finding_inputs`)."""
    rate = _num(row.get("rate_per_s"))
    single = _num(row.get("single_partition_ru"))
    pkranges = int(_num(row["pkrange_count"], 0))
    ru, composite = _num(row.get("mean_ru")), row.get("composite_index")
    return [
        fan_out_action(
            row["query_name"], row["routing"], pkranges, row["sql"], ru=ru, single_partition_ru=single, rate_per_s=rate
        ),
        composite_index_action(
            row["query_name"], row["sql"], ru, composite if isinstance(composite, str) else "", rate
        ),
    ]


def _container_actions(
    row: dict[str, Any],
    hot_keys: dict[tuple[str, ...], tuple[str, float]],
    peaks: dict[tuple[str, ...], dict[str, float]],
    throttles: Mapping[tuple[str, ...], ThrottleTerms] | None = None,
    minutes: Mapping[tuple[str, ...], pd.DataFrame] | None = None,
    storage: Mapping[tuple[str, ...], float] | None = None,
) -> list[tuple[tuple[str, ...], str, Action]]:
    """The rules of one container (`action_rows`), in the report's order (`throttles`: `throttle_terms`, the
    429 terms of a redistribution; `minutes`: `burst_minutes`, the evidence of burst capacity; `storage`:
    `partition_storage`, a merge's second condition)."""
    key = tuple(row[name] for name in KEY)
    skey = tuple(str(k) for k in key)
    terms = (throttles or {}).get(skey)
    pkranges = int(_num(row["pkranges"], 0))
    # two ranges can be named: the one that peaked (the 429s' partition) and the one with the most RU (the skew)
    peak_pkrange = str(row.get("hot_peak_pkrange") or row["hot_pkrange"])
    peak_key, peak_key_share = hot_keys.get((*key, peak_pkrange), (None, math.nan))
    hot = hot_partition_action(
        _num(row["throttle_rate"]), _num(row["hot_normalized_ru"]), _num(row["p95_utilization"]),
        peak_pkrange, pkranges, peak_key, peak_key_share,
    )  # fmt: skip
    hot = _redistributed(hot, row, peaks.get(skey, {}), pkranges, peak_pkrange, terms) if hot else None
    hot_key, key_share = hot_keys.get((*key, str(row["hot_pkrange"])), (None, math.nan))
    skew = hot or skew_action(
        _num(row["hot_range_share"]), pkranges, row["hot_pkrange"], row["skew_source"], key_share, hot_key or ""
    )
    sat = row.get("sat_normalized_ru")
    evidence = (
        f"Azure Monitor NormalizedRUConsumption, {int(row['sat_minutes'])} minutes, {row['sat_window']};"
        f" partitions: {pkranges} ({row.get('layout_source', '')})."
        if sat is not None and pd.notna(sat)
        else ""
    )
    saturated = saturation_action(_num(sat), str(row.get("sat_pkrange", "")), pkranges, evidence)
    found = [(key, str(row["sat_pkrange"]), saturated)] if saturated else []
    autoscale, provisioned = bool(row["autoscale"]), _num(row["provisioned_ru_s"])
    one_region = provisioned / max(int(_num(row.get("regions"), 1)), 1)  # one region's, as the estimate's
    raised = None if hot else raise_action(_num(row["throttle_rate"]), skew is not None, provisioned, autoscale)
    if raised is not None:
        raised = _burst(raised, pkranges, (minutes or {}).get(skey), terms) or raised
    stored = (storage or {}).get(skey)
    fired = [
        raised,
        lower_action(
            _num(row["peak_ru_s"]),
            provisioned,
            _num(row["throttle_rate"], 0),
            autoscale,
            hot_normalized_ru=_num(row["hot_normalized_ru"]),
            saturated=saturated is not None,
            evidence=evidence,
        ),  # fmt: skip
        autoscale_action(
            _num(row["autoscale_cost_ratio"]),
            int(_num(row["autoscale_hours"], 0)),
            autoscale,
            _num(row.get("autoscale_max")),
            one_region,
        ),  # fmt: skip
        skew,
        rules.merge_action(pkranges, one_region / max(pkranges, 1), stored) if stored is not None else None,
    ]
    subject = peak_pkrange if hot else str(row["hot_pkrange"])
    return found + [(key, subject if action is skew else "", action) for action in fired if action]


def _redistributed(
    action: Action,
    row: dict[str, Any],
    peaks: dict[str, float],
    pkranges: int,
    hot_pkrange: str,
    terms: ThrottleTerms | None = None,
) -> Action:
    """A hot-partition action to redistribute, with its plan (`planner.partition_needs`, Microsoft's formula,
    and `planner.redistribution_plan`) and the hot range's RU/s after it (`hot_pkrange`, the one that peaked) as
    its target: from the RU/s in force in one region (a total over N regions / N), and only when the
    metrics' ranges are the layout's (the command must name every partition). The 429s per second are the
    logs' per partition where the store has them, else the container's, all given to the hot range (the
    finding's own reading: they come from it), and the detail says which."""
    if action.change != "redistribute":
        return action
    provisioned = _num(row["provisioned_ru_s"]) / max(int(_num(row.get("regions"), 1)), 1)
    if not provisioned > 0:
        return replace(action, change="", detail=f"{action.detail} No command: the container has no RU/s of its own.")
    if len(peaks) != pkranges:
        why = f"Azure Monitor names {len(peaks)} ranges, the layout has {pkranges}: no command (it must name each)."
        return replace(action, change="", detail=f"{action.detail} {why}")
    share = provisioned / len(peaks)
    per_s: dict[str, float] = {}
    charge = terms.ru_per_request if terms else math.nan
    if terms and terms.per_pkrange:
        per_s, whose = {pk: v for pk, v in terms.per_pkrange.items() if pk in peaks}, "per partition"
    elif terms and terms.container_per_s >= 0:
        per_s, whose = {hot_pkrange: terms.container_per_s}, f"the container's, all given to pkrange {hot_pkrange}"
    needs = planner.partition_needs(peaks, share, per_s, charge)
    plan = planner.redistribution_plan(needs, provisioned, bool(row["autoscale"]))
    if per_s and charge >= 0:
        hot_per_s = per_s.get(hot_pkrange, 0.0)
        how = (
            f"pkrange {hot_pkrange} consumed {peaks[hot_pkrange] / 100 * share:,.0f} RU/s ({peaks[hot_pkrange]:.0f}% of "
            f"{share:,.0f}) + {hot_per_s:,.2f} 429s/s x {charge:,.2f} RU a request ({whose}; {terms.source if terms else ''})"
        )
    else:
        how = f"no 429s per second or charge in the store, so pkrange {hot_pkrange} at 100% gets twice its share"
    if plan is None:
        return replace(
            action, change="", detail=f"{action.detail} No command: by {how}, no partition needs more than its share."
        )
    after = dict(plan.partitions)
    total = sum(after.values())
    raised = (
        f" The others cannot give that without going under their own need, so the total is first raised to "
        f"{plan.raise_to:,.0f} (split evenly)."
        if plan.raise_to
        else ""
    )
    detail = (
        f"{action.detail} Each partition's need is Microsoft's formula, consumed RU/s (NormalizedRUConsumption x "
        f"the {share:,.0f} RU/s each has now) + 429 responses per second x the average RU per request: {how}; "
        f"the others keep at least their own need (in steps of 100 RU/s, at least 100 and at most 10,000 each).{raised} After: "
        + ", ".join(f"pkrange {pk} {ru:,.0f}" for pk, ru in plan.partitions)
        + f" RU/s, {total:,.0f} in total against {provisioned:,.0f} now, in {len(plan.requests)} "
        + ("call" if len(plan.requests) == 1 else "calls")
        + " (each one source and at most 20 targets; at most 5 a minute)."
    )
    unit = f"RU/s per partition (pkrange {hot_pkrange})"
    return replace(
        action, partitions=plan.partitions, plan=plan, target=after.get(hot_pkrange), target_unit=unit, detail=detail
    )


def _burst(raised: Action, pkranges: int, minutes: pd.DataFrame | None, terms: ThrottleTerms | None) -> Action | None:
    """Burst capacity in place of `raised` when every range of the container, each under 3,000 RU/s, would
    have had its 429s served from its bank (`planner.burst_absorbs`, per range and region over `minutes`), the
    429s' RU being their count x the average charge; None otherwise (or without the evidence)."""
    charge = terms.ru_per_request if terms else math.nan
    if minutes is None or minutes.empty or not charge >= 0 or minutes["budget_ru_s"].isna().any():
        return None
    budgets = minutes["budget_ru_s"].astype(float)
    if not (budgets.gt(0).all() and budgets.lt(planner.BURST_RATE_RU_S).all()):
        return None
    for _, group in minutes.groupby(["region", "pkrange_id"], sort=True):
        seq = list(zip(group["normalized_ru"].astype(float), group["throttled"].astype(float) * charge))
        absorbed, _ = planner.burst_absorbs(float(group["budget_ru_s"].max()), seq, float(group["grain_s"].iloc[0]))
        if not absorbed and group["throttled"].gt(0).any():
            return None
    throttled = minutes[minutes["throttled"].gt(0)]
    if throttled.empty:
        return None
    counted = throttled[["region", "time"]].drop_duplicates()
    evidence = (
        f"Azure Monitor NormalizedRUConsumption and TotalRequests, {len(minutes['time'].unique())} minutes, "
        f"{window_text(minutes['time'].min(), minutes['time'].max())}; charge: {terms.source if terms else ''}."
    )
    return rules.burst_action(raised, pkranges, float(budgets.max()), len(counted), evidence)


def _num(value: Number, default: float = math.nan) -> float:
    """A number, or `default` for a missing one (None, NaN, pd.NA)."""
    return default if value is None or pd.isna(value) else float(value)
