"""The fleet ranked: every container's columns joined, its risk and what drives it, in risk order, and the
labels a page picks a container by (the package docstring says how)."""

from __future__ import annotations

import pandas as pd

from analysis import load, regions
from analysis.fleet.columns import (
    COUNT_COLUMNS,
    FLEET_COLUMNS,
    FLEET_KEY,
    METRIC_COLUMNS,
    PARTITION_COLUMNS,
    RISK_SIGNALS,
    TEXT_COLUMNS,
    THROTTLE_FULL_RATE,
    TIME_COLUMNS,
)
from analysis.fleet.shared import (
    with_shared_offers,
)
from analysis.fleet.stats import (
    execution_stats,
    request_stats,
    storage_stats,
    throttle_stats,
    throughput_stats,
)
from cosmoscore.limits import Limits


def summarize_fleet(
    executions: pd.DataFrame,
    requests: pd.DataFrame,
    metrics: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    limits: Limits | None = None,
    region: str | None = None,
    log_throttles: pd.DataFrame | None = None,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """One row per container with data in any frame, ranked as the module docstring says (`FLEET_COLUMNS`);
    the Azure Monitor figures of one `region`, or of the account in total (None: `analysis.regions`);
    `log_throttles` (the diagnostic logs' requests and 429s) for the 429 rate of a container without metrics;
    `model`: the caller's `analysis.load.build` of these frames (the region's metrics), else built here."""
    metrics = metrics if metrics is not None else pd.DataFrame(columns=METRIC_COLUMNS)
    metrics = regions.select_region(metrics, region)
    parts = [
        execution_stats(executions),
        throttle_stats(metrics, requests, log_throttles, region=region),
        request_stats(requests),
        throughput_stats(metrics, requests, partitions, model=model),
        storage_stats(partitions if partitions is not None else pd.DataFrame(columns=PARTITION_COLUMNS), limits),
    ]
    keys = pd.concat([part[FLEET_KEY] for part in parts], ignore_index=True).drop_duplicates()
    fleet = keys
    for part in parts:
        fleet = fleet.merge(part, on=FLEET_KEY, how="left")
    fleet = with_shared_offers(fleet, metrics, partitions, reporting=None if model is None else model.reporting)
    fleet = fleet.assign(**_risks(fleet))
    order = ["risk", "waste", "total_ru"]
    fleet = fleet.sort_values(FLEET_KEY).sort_values(order, ascending=False, na_position="last", kind="stable")
    return _typed(fleet.reset_index(drop=True).reindex(columns=FLEET_COLUMNS))


def _risks(fleet: pd.DataFrame) -> dict[str, pd.Series]:
    """The risk score and the signal that drives it (see the module docstring)."""
    seen = fleet["pkranges_seen"].astype(float)
    skew = ((fleet["hot_pkrange_share"].astype(float) * seen - 1) / (seen - 1)).where(seen > 1, 0.0)
    skew = skew.where(fleet["hot_pkrange_share"].notna())
    # the workload's sustained load; 0 where every minute the metrics reported was ruscope's own
    sustained = fleet["sustained_normalized_ru"].astype(float)
    only_own = sustained.isna() & fleet["own_minutes_excluded"].astype("Float64").gt(0).fillna(False).astype(bool)
    sustained = sustained.where(~only_own, 0.0)
    signals = pd.DataFrame(
        {
            "hot_risk": (sustained / 100).combine_first(skew),
            "throttle_risk": fleet["throttle_rate"].astype(float) / THROTTLE_FULL_RATE,
            "storage_risk": 1 - fleet["storage_headroom"].astype(float),
        },
        index=fleet.index,
    ).clip(0, 1)
    risk = signals.max(axis=1, skipna=True).round(4)
    known = signals.notna().any(axis=1)
    driver = signals.fillna(-1).idxmax(axis=1).map(RISK_SIGNALS).where(known & risk.gt(0), "")
    return {"risk": risk.where(known), "risk_driver": driver}


def _typed(fleet: pd.DataFrame) -> pd.DataFrame:
    """Counts as nullable integers, numbers as floats (NaN where no data), notes "" where none, whatever the
    merges left."""
    fleet = fleet.assign(**{name: fleet[name].fillna("").astype(object) for name in ("waste_note", "throttle_source")})
    counts = {name: "Int64" for name in COUNT_COLUMNS}
    numbers = {
        name: "float64" for name in FLEET_COLUMNS if name not in {*FLEET_KEY, *TEXT_COLUMNS, *TIME_COLUMNS, *counts}
    }
    return fleet.astype({**counts, **numbers, **dict.fromkeys(TIME_COLUMNS, "datetime64[us, UTC]")})


def container_choices(fleet: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """Each container's (account, database, container) and its label, in the fleet's order; the labels name
    the account only when the fleet spans several."""
    keys = [(str(a), str(d), str(c)) for a, d, c in fleet[FLEET_KEY].itertuples(index=False)]
    with_account = len({key[0] for key in keys}) > 1
    return {key: container_label(key, with_account=with_account) for key in keys}


def container_label(key: tuple[str, str, str], *, with_account: bool) -> str:
    """How a container is named on a page: `database / container`, after its account when several."""
    account, database, container = key
    return f"{account} / {database} / {container}" if with_account else f"{database} / {container}"
