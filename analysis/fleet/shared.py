"""Shared throughput: which containers spend their database's shared offer, and the throughput units a fleet's
RU/s are bought in, each shared database once with its containers (the package docstring says how)."""

from __future__ import annotations

import pandas as pd

from analysis import load, regions
from analysis.fleet.columns import (
    FLEET_KEY,
    HOT_NORMALIZED_RU,
    HOT_WASTE_NOTE,
    METRIC_COLUMNS,
    OFFER_NAME,
    OWN_UNIT,
    PARTITION_COLUMNS,
    PARTITION_LOAD_STATS,
    PROVISIONED_METRICS,
    SHARED_UNIT,
    SHARED_WASTE_NOTE,
)
from analysis.fleet.stats import (
    p95_consumed,
    partition_load,
)
from analysis.scope import in_containers
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS
from store.records import SHARED_OFFER_CONTAINER

UNIT_COLUMNS = [
    *FLEET_KEY,  # container: SHARED_OFFER_CONTAINER for a shared database
    "throughput_unit",
    "containers",  # the containers that spend the unit's RU/s, comma-separated
    "provisioned_ru_s",
    "p95_ru_s",
    "waste",
    "waste_note",
    "max_normalized_ru",
]

_OFFER_METRICS = (*PROVISIONED_METRICS, NORMALIZED_RU)  # what a container with its own RU/s reports by name


def shared_offer_members(
    fleet_keys: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame | None,
    *,
    reporting: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The containers of `fleet_keys` (FLEET_KEY) that spend their database's shared offer (the module
    docstring), as FLEET_KEY rows. `reporting`: containers known to report NormalizedRUConsumption by name
    beyond `metrics`' rows (a model's span cells, whose points a page did not read: `analysis.load.stored`)."""
    keyed = metrics.dropna(subset=FLEET_KEY)
    offered = keyed[keyed["container"].astype(str).eq(SHARED_OFFER_CONTAINER)]
    databases = offered[["account", "database"]]
    named = in_containers(keyed)
    own = named[named["metric"].isin(_OFFER_METRICS).fillna(False)][FLEET_KEY]
    if reporting is not None:
        own = pd.concat([own, reporting[FLEET_KEY]], ignore_index=True)
    snapshot = None if partitions is None else partitions.reindex(columns=PARTITION_COLUMNS).dropna(subset=FLEET_KEY)
    if snapshot is not None:
        sharing = snapshot[snapshot["database_throughput_ru"].notna()]
        databases = pd.concat([databases, sharing[["account", "database"]]])
        own = pd.concat([own, snapshot[snapshot["throughput_ru"].notna()][FLEET_KEY]])
    databases = databases.drop_duplicates()
    if databases.empty:
        return pd.DataFrame(columns=FLEET_KEY)
    candidates = in_containers(fleet_keys[FLEET_KEY]).merge(databases, on=["account", "database"])
    mine = candidates.merge(own.drop_duplicates(), on=FLEET_KEY, how="left", indicator=True)
    return mine[mine["_merge"].eq("left_only")][FLEET_KEY].drop_duplicates().reset_index(drop=True)


def with_shared_offers(
    fleet: pd.DataFrame,
    metrics: pd.DataFrame,
    partitions: pd.DataFrame | None,
    *,
    reporting: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """`fleet` with `throughput_unit`, and each container that spends its database's shared offer given that
    offer's `max_normalized_ru`, no `provisioned_ru_s` or `waste` of its own, and `SHARED_WASTE_NOTE`
    (`reporting`: as `shared_offer_members` takes it)."""
    members = shared_offer_members(fleet, metrics, partitions, reporting=reporting).assign(_shared=True)
    out = fleet.merge(members, on=FLEET_KEY, how="left")
    shared = out.pop("_shared").eq(True).to_numpy(dtype=bool)
    out["throughput_unit"] = pd.Series(OWN_UNIT, index=out.index, dtype=object).where(~shared, SHARED_UNIT)
    if not shared.any():
        return out
    offers = _offer_load(offer_rows(metrics))
    theirs = out[["account", "database"]].merge(offers, on=["account", "database"], how="left")
    theirs.index = out.index
    for name in PARTITION_LOAD_STATS:
        out[name] = out[name].where(~shared, theirs[name])
    for name in ("provisioned_ru_s", "waste"):
        out[name] = out[name].astype(float).where(~shared)
    out["waste_note"] = out["waste_note"].astype(object).where(~shared, SHARED_WASTE_NOTE)
    return out


def _offer_load(offer_rows: pd.DataFrame) -> pd.DataFrame:
    """Per shared database (account, database): its offer's partition load (`PARTITION_LOAD_STATS`, as
    `partition_load`; its partitions are not matched with its containers' requests: `analysis.load`)."""
    named = offer_rows.assign(container=OFFER_NAME)  # `analysis.load` reads the rows that name a container
    summary = load.summarize_partition_load(load.partition_minutes(named))
    return partition_load(named, summary).drop(columns="container")


def summarize_throughput_units(
    fleet: pd.DataFrame,
    metrics: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    region: str | None = None,
    reporting: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per throughput unit of the containers in `fleet` (`summarize_fleet`'s, of the same `region`):
    each shared database with its containers, each container with RU/s of its own (`UNIT_COLUMNS`); a unit
    where its first container is in the fleet's order (`reporting`: as `shared_offer_members` takes it)."""
    if fleet.empty:
        return pd.DataFrame(columns=UNIT_COLUMNS)
    metrics = metrics if metrics is not None else pd.DataFrame(columns=METRIC_COLUMNS)
    metrics = regions.select_region(metrics, region)
    ranked = fleet.reset_index(drop=True).assign(_rank=lambda f: range(len(f)))
    members = shared_offer_members(fleet, metrics, partitions, reporting=reporting)
    members = members.merge(ranked[[*FLEET_KEY, "_rank"]], on=FLEET_KEY)
    own = ranked[~ranked["_rank"].isin(members["_rank"])]
    own = own.assign(containers=own["container"], throughput_unit=OWN_UNIT).reindex(columns=[*UNIT_COLUMNS, "_rank"])
    if members.empty:
        return own.drop(columns="_rank").reset_index(drop=True)
    databases = members.groupby(["account", "database"]).agg(
        containers=("container", lambda c: ", ".join(sorted(c))), _rank=("_rank", "min")
    )
    stats = databases.reset_index().assign(container=SHARED_OFFER_CONTAINER)
    rows = offer_rows(metrics, members[FLEET_KEY])
    offers = _offer_load(rows)[["account", "database", "max_normalized_ru", "sustained_normalized_ru"]]
    p95 = p95_consumed(rows.assign(container=OFFER_NAME)).assign(container=SHARED_OFFER_CONTAINER)
    for part in (load.latest_provisioned(rows), p95.drop(columns="own_ru_subtracted")):
        stats = stats.merge(part, on=FLEET_KEY, how="left")
    stats = stats.merge(offers, on=["account", "database"], how="left")
    recorded = stats[["account", "database"]].merge(_snapshot_offers(partitions), how="left")
    stats["provisioned_ru_s"] = (
        stats["provisioned_ru_s"].astype(float).combine_first(recorded["database_throughput_ru"].astype(float))
    )
    provisioned = stats["provisioned_ru_s"].astype(float)
    waste = (1 - stats["p95_ru_s"].astype(float) / provisioned.where(provisioned > 0)).round(4)
    hot = stats.pop("sustained_normalized_ru").astype(float).ge(HOT_NORMALIZED_RU)
    notes = pd.Series("", index=stats.index, dtype=object).where(~hot, HOT_WASTE_NOTE)
    stats = stats.assign(throughput_unit=SHARED_UNIT, waste=waste.where(~hot), waste_note=notes)
    units = pd.concat([stats.reindex(columns=[*UNIT_COLUMNS, "_rank"]), own], ignore_index=True)
    units = units.sort_values("_rank", kind="stable").drop(columns="_rank").reset_index(drop=True)
    return units.astype({name: "float64" for name in ("provisioned_ru_s", "p95_ru_s", "waste", "max_normalized_ru")})


def unit_label(key: tuple[str, str, str], containers: str = "") -> str:
    """How a throughput unit is named on a page: `database / container`, or `database (shared: a, b)`."""
    _, database, container = key
    if container != SHARED_OFFER_CONTAINER:
        return f"{database} / {container}"
    return f"{database} (shared by {containers})" if containers else f"{database} (shared)"


def offer_rows(metrics: pd.DataFrame, members: pd.DataFrame | None = None) -> pd.DataFrame:
    """The metric rows of the shared offers (container SHARED_OFFER_CONTAINER), and, given `members`, their
    containers' rows relabelled as the offer's (their TotalRequestUnits: the offer's consumption)."""
    keyed = metrics.dropna(subset=FLEET_KEY)
    rows = keyed[keyed["container"].astype(str).eq(SHARED_OFFER_CONTAINER)]
    if members is None or members.empty:
        return rows
    spent = keyed.merge(members, on=FLEET_KEY)
    spent = spent[spent["metric"].eq(TOTAL_REQUEST_UNITS).fillna(False)].assign(container=SHARED_OFFER_CONTAINER)
    return pd.concat([rows, spent], ignore_index=True)


def _snapshot_offers(partitions: pd.DataFrame | None) -> pd.DataFrame:
    """Per database: the latest shared RU/s the storage snapshots recorded (`database_throughput_ru`)."""
    columns = ["account", "database", "database_throughput_ru"]
    if partitions is None or "database_throughput_ru" not in partitions:
        return pd.DataFrame(columns=columns).astype({"database_throughput_ru": "float64"})
    rows = partitions.dropna(subset=["account", "database", "time", "database_throughput_ru"])
    latest = rows[rows["time"].eq(rows.groupby(["account", "database"])["time"].transform("max"))]
    return latest.groupby(["account", "database"])["database_throughput_ru"].max().astype(float).reset_index()
