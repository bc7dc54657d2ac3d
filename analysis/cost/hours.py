"""The measured hours every bill is computed from: per container with RU/s of its own and clock hour (B1:
each hour is billed whole), one region's figures from the per-partition load model
(`analysis.capacity.autoscale.interval_needs`, `analysis.load`):

- `need`: the hour's highest need (the workload's consumed RU/s, or what the hottest range's busiest second
  needed x its partitions, plus what the 429s were denied, B13), the RU/s any offer must hold that hour;
- `in_force`: the RU/s in force (the manual RU/s, or the autoscale max), the hour's highest;
- `throttled`: whether Azure Monitor counted 429s in the hour (what the RU/s in force did not serve);
- `ru`: the workload's RU consumed in the hour (Azure Monitor's TotalRequestUnits less the replay's), what
  serverless would bill (B5);
- `autoscale`: whether the container reports AutoscaleMaxThroughput (then each hour bills what it scaled
  to, which Azure Monitor does not report for the whole container: estimated as the hour's need, B2);
- `regions`, `pkranges`: the account's regions (B3: billed in each) and the container's partitions.

A container that spends its database's shared offer has no hours of its own here (its database is billed:
`analysis.cost.bill.database_hours`).
"""

from __future__ import annotations

import pandas as pd

from analysis import fleet, load, regions
from analysis.capacity.autoscale import interval_needs
from analysis.overview import metric_rows
from cosmoscore.monitor.metrics import AUTOSCALE_MAX
from store.records import SCOPE_COLUMNS, SHARED_OFFER_CONTAINER

KEY = list(SCOPE_COLUMNS)
HOUR_COLUMNS = [*KEY, "hour", "need", "in_force", "ru", "throttled", "autoscale", "regions", "pkranges"]


def container_hours(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """`HOUR_COLUMNS` per container with RU/s of its own and measured hour (the module docstring). `model`:
    the caller's `analysis.load.build` of these frames, else built here."""
    model = model if model is not None else load.build(metrics, requests, partitions)
    needs = interval_needs(metrics, requests, partitions, model=model)
    if needs.empty:
        return pd.DataFrame(columns=HOUR_COLUMNS)
    own = _own_offer(metrics)
    needs = needs.merge(own, on=KEY, how="inner")
    if needs.empty:
        return pd.DataFrame(columns=HOUR_COLUMNS)
    hour = pd.DatetimeIndex(needs["time"]).floor("h")
    marked = needs.assign(hour=hour, throttled=needs["denied_ru_s"].astype(float).gt(0))
    hourly = (
        marked.groupby([*KEY, "hour"])
        .agg(need=("need", "max"), in_force=("manual", "max"), throttled=("throttled", "any"))
        .reset_index()
    )
    hourly["in_force"] = hourly.groupby(KEY)["in_force"].ffill().groupby([hourly[k] for k in KEY]).bfill()
    consumed = model.consumed
    ru = consumed.assign(
        hour=pd.DatetimeIndex(consumed["time"]).floor("h"), ru=consumed["workload_ru_s"] * consumed["grain_s"]
    )
    ru = ru.groupby([*KEY, "hour"])["ru"].sum().reset_index()
    out = hourly.merge(ru, on=[*KEY, "hour"], how="left").merge(own, on=KEY, how="left")
    counts = regions.region_counts(metrics).set_index("account")["regions"]
    layout = model.layout[[*KEY, "partitions"]]
    out = out.merge(layout, on=KEY, how="left")
    out = out.assign(
        ru=out["ru"].astype(float).fillna(0.0),
        regions=out["account"].map(counts).fillna(1).clip(lower=1).astype(int),
        pkranges=out.pop("partitions").astype(float).fillna(1).clip(lower=1).astype(int),
    )
    typed: pd.DataFrame = out.astype({"need": float, "in_force": float, "autoscale": bool, "throttled": bool})
    return typed[HOUR_COLUMNS]


def _own_offer(metrics: pd.DataFrame) -> pd.DataFrame:
    """The containers with RU/s of their own (a ProvisionedThroughput or AutoscaleMaxThroughput row naming
    them) and whether on autoscale; a container spending its database's offer reports neither (R2, R30)."""
    autoscaled = metric_rows(metrics, AUTOSCALE_MAX).dropna(subset=["value"])[KEY].drop_duplicates()
    provisioned = load.latest_provisioned(metrics)[KEY].drop_duplicates()
    both = pd.concat([provisioned, autoscaled]).drop_duplicates().astype(str)
    flagged = both.merge(autoscaled.astype(str).assign(autoscale=True), on=KEY, how="left")
    return flagged.assign(autoscale=flagged["autoscale"].eq(True))


def database_hours(
    metrics: pd.DataFrame, requests: pd.DataFrame | None, partitions: pd.DataFrame | None
) -> pd.DataFrame:
    """`HOUR_COLUMNS` per shared-throughput database (container `SHARED_OFFER_CONTAINER`) and hour: its
    offer's rows (ProvisionedThroughput or AutoscaleMaxThroughput, NormalizedRUConsumption per partition:
    R2, R30) with its member containers' TotalRequestUnits as its consumption (`analysis.fleet.offer_rows`),
    through the same model as a container's; its partitions are the ranges its offer reports."""
    keyed = metrics.dropna(subset=KEY)
    members = fleet.shared_offer_members(keyed[KEY].drop_duplicates(), metrics, partitions)
    rows = fleet.offer_rows(metrics, members)
    if rows.empty:
        return pd.DataFrame(columns=HOUR_COLUMNS)
    named = rows.assign(container=fleet.OFFER_NAME)  # `analysis.load` reads the rows that name a container
    # the replay's requests to the members are the offer's too: their RU is taken out of its consumption
    own = None if requests is None else requests.merge(members, on=KEY).assign(container=fleet.OFFER_NAME)
    hours = container_hours(named, own, None)
    return hours.assign(container=SHARED_OFFER_CONTAINER)


def unit_hours(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """`HOUR_COLUMNS` of every throughput unit: the containers with RU/s of their own (`container_hours`),
    then the shared databases (`database_hours`); what `analysis.cost.bill` bills and the reservation planner
    sums (`analysis.cost.reservation.fleet_usage`). `model`: as `container_hours` takes it."""
    parts = [
        container_hours(metrics, requests, partitions, model=model),
        database_hours(metrics, requests, partitions),
    ]
    found = [part for part in parts if not part.empty]
    return pd.concat(found, ignore_index=True) if found else parts[0]


def offer_containers(metrics: pd.DataFrame, partitions: pd.DataFrame | None) -> pd.DataFrame:
    """Per shared database (account, database): how many containers spend its offer (B12: a database's
    minimum grows past 25 of them)."""
    keyed = metrics.dropna(subset=KEY)
    members = fleet.shared_offer_members(keyed[KEY].drop_duplicates(), metrics, partitions)
    return members.groupby(["account", "database"]).size().rename("containers").reset_index()
