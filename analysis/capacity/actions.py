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
from analysis.capacity import rules
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
from analysis.scope import in_containers
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
    azure: Mapping[str, rules.AzureAccount] | None = None,
    bills: Mapping[tuple[str, ...], dict[str, Any]] | None = None,
    prices: billing.Prices | None = None,
) -> pd.DataFrame:
    """The `action` section: every rule that fires, per container, query and logical key (`hot_keys`:
    `costliest_key_shares`, to name the key of a hot partition and say when one key carries it; `peaks`:
    `partition_peaks`, the per-partition need of a redistribution; `azure`: the store's account names ->
    their ARM names, for the commands; `bills`: `analysis.cost.bill`'s rows by container and their `prices`,
    for what a change saves), each with its numbers in columns."""
    bills = bills or {}
    found: list[tuple[tuple[str, ...], str, Action]] = []
    for row in containers.to_dict("records"):
        found += _container_actions({str(k): v for k, v in row.items()}, hot_keys or {}, peaks or {})
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
            "command": rules.az_command(a, str(key[0]), str(key[1]), str(key[2]), (azure or {}).get(str(key[0]))),
            "risk": a.risk,
            **_saving(a, bills.get(tuple(str(k) for k in key)), prices),
        }
        for key, subject, a in found
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def _saving(action: Action, bill: dict[str, Any] | None, prices: billing.Prices | None) -> dict[str, Any]:
    """What a throughput change saves a month (`monthly_saving`, negative: what it costs) against the month
    as billed (`analysis.cost.bill`, the same hours and regions, the same prices): a new manual RU/s or
    autoscale max, or a redistribution's new total; a query change: the RU/s it saves at the query's rate, priced
    (`analysis.cost.queries.finding_saving`). No figure for a key, a query without a rate or a container without
    a bill."""
    none = {"monthly_saving": math.nan, "saving_unit": ""}
    if action.change in ("query", "index"):  # a query's RU/s at its rate, priced (`analysis.cost.queries`)
        saved = query_cost.finding_saving(action.saved_ru_s, bill, prices)
        return none if math.isnan(saved) or prices is None else _per_month(saved, prices)
    if bill is None or prices is None or not (action.target or action.partitions):
        return none
    regions, now = int(bill["regions"]), float(bill["monthly"])
    month = billing.HOURS_PER_MONTH
    if action.change == "autoscale":
        after = float(bill["autoscale_right"])
    elif action.change == "throughput" and action.target_unit == rules.target_unit(True):
        return none  # a new autoscale max: its bill follows the hours' needs (the cost section's autoscale row)
    elif action.change == "throughput" and action.target:
        after = month * billing.manual_hour(float(action.target), prices, regions=regions)
    elif action.change == "redistribute" and action.partitions:
        total = sum(ru for _, ru in action.partitions)
        after = month * billing.manual_hour(total, prices, regions=regions)
    else:
        return none
    if bill["autoscale"] and action.change != "autoscale":
        return none  # an autoscale container's bill is estimated per hour: a manual price is not comparable
    return _per_month(now - after, prices)


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
) -> list[tuple[tuple[str, ...], str, Action]]:
    """The rules of one container (`action_rows`), in the report's order."""
    key = tuple(row[name] for name in KEY)
    pkranges = int(_num(row["pkranges"], 0))
    # two ranges can be named: the one that peaked (the 429s' partition) and the one with the most RU (the skew)
    peak_pkrange = str(row.get("hot_peak_pkrange") or row["hot_pkrange"])
    peak_key, peak_key_share = hot_keys.get((*key, peak_pkrange), (None, math.nan))
    hot = hot_partition_action(
        _num(row["throttle_rate"]), _num(row["hot_normalized_ru"]), _num(row["p95_utilization"]),
        peak_pkrange, pkranges, peak_key, peak_key_share,
    )  # fmt: skip
    hot = _redistributed(hot, row, peaks.get(tuple(str(k) for k in key), {}), pkranges, peak_pkrange) if hot else None
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
    fired = [
        None if hot else raise_action(_num(row["throttle_rate"]), skew is not None, provisioned, autoscale),
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
            provisioned / max(int(_num(row.get("regions"), 1)), 1),  # one region's, as the estimate's
        ),  # fmt: skip
        skew,
    ]
    subject = peak_pkrange if hot else str(row["hot_pkrange"])
    return found + [(key, subject if action is skew else "", action) for action in fired if action]


def _redistributed(
    action: Action, row: dict[str, Any], peaks: dict[str, float], pkranges: int, hot_pkrange: str
) -> Action:
    """A hot-partition action to redistribute, with its per-partition RU/s (`rules.redistribution`) and the
    hot range's (`hot_pkrange`, the one that peaked) as its target: from the RU/s in force in one region (a
    total over N regions / N), and only when the metrics' ranges are the layout's (the command must name
    every partition)."""
    if action.change != "redistribute":
        return action
    provisioned = _num(row["provisioned_ru_s"]) / max(int(_num(row.get("regions"), 1)), 1)
    if not provisioned > 0:
        return replace(action, change="", detail=f"{action.detail} No command: the container has no RU/s of its own.")
    if len(peaks) != pkranges:
        why = f"Azure Monitor names {len(peaks)} ranges, the layout has {pkranges}: no command (it must name each)."
        return replace(action, change="", detail=f"{action.detail} {why}")
    given = rules.redistribution(peaks, provisioned)
    target = dict(given).get(hot_pkrange)
    total = sum(ru for _, ru in given)
    detail = (
        f"{action.detail} Per partition from the measured peaks (Azure Monitor NormalizedRUConsumption x the "
        f"{provisioned / len(given):,.0f} RU/s each has now): "
        + ", ".join(f"pkrange {pk} {ru:,.0f}" for pk, ru in given)
        + f" RU/s, {total:,.0f} in total against {provisioned:,.0f} now"
        + (" (the total changes with it)." if total != provisioned else ".")
    )
    unit = f"RU/s per partition (pkrange {hot_pkrange})"
    return replace(action, partitions=given, target=target, target_unit=unit, detail=detail)


def _num(value: Number, default: float = math.nan) -> float:
    """A number, or `default` for a missing one (None, NaN, pd.NA)."""
    return default if value is None or pd.isna(value) else float(value)
