"""Fleet: every container of every account in a store frame, one row each, ranked by risk, then by waste.

Pure functions over the store's frames (`store`), of which they read only the `*_COLUMNS` below.
The time range and scope are cut before these run (`analysis.scope`). A container is identified by
(account, database, container); rows outside any container (`container` empty: the client's account read,
account- or database-level metrics) are left out.

**Columns** (`FLEET_COLUMNS`); a column without data behind it is NaN, never a guess:
- from `executions` (the replay): `executions` (logical executions, as in `analysis.queries.costs`, every
  status), `total_ru` (their RU, failed ones included: they were billed), `mean_ru` and `fan_out_share`
  (of the successful ones: RU per execution; the share whose observed routing was "fan-out");
- `requests`, `throttle_rate` (429 responses / requests), `throttle_source`, and `throttle_start` /
  `throttle_end` (the first and last time counted: its window): Azure Monitor's TotalRequests by status code
  where Monitor counted the container's requests (all its traffic), else the diagnostic logs'
  (`log_throttles`), else the replay's `requests`; `analysis.throttling.preferred_rate` computes it, so
  Fleet, Overview, the report and the alert show one rate. Beside one region's Monitor figures a log-derived
  rate's source says "all regions" (`analysis.throttling.source_name`: the store's logs sum the regions);
- from `requests` (the replay): its view of skew from the data pages' RU by `pkrange_id`: `pkranges_seen`,
  `hot_pkrange` and `hot_pkrange_share` (the hottest pkrange's share of the container's page RU). It shows
  where the *replayed queries* land, not the production traffic;
- from `metrics` (Azure Monitor, when the table exists), through the per-partition load model (`analysis.load`:
  ruscope's own traffic, known exactly from `requests`, kept apart): `provisioned_ru_s` (the latest
  AutoscaleMaxThroughput, else ProvisionedThroughput), `p95_ru_s` (95th percentile over the time range of the
  workload's RU/s: each TotalRequestUnits interval's total, summed over its dimension rows, less the replay's RU
  in it (`own_ru_subtracted`), over its grain), `waste` = 1 - p95_ru_s / provisioned_ru_s (negative: above
  the provisioned rate), `max_normalized_ru` (the workload's peak minute of NormalizedRUConsumption split by
  PartitionKeyRangeId, %: the evidence), `sustained_normalized_ru` (the largest p95 of a range's per-minute
  normalized RU, the saturation finding's statistic; `sustained_pkrange`, `_minutes`, `_start`, `_end`) and
  `own_minutes_excluded` (the pkrange-minutes left out as the replay's, by the rule of `analysis.load`);
- **Waste is not claimed for a hot partition**: the RU/s are split evenly over the physical partitions, and
  a per-interval average over the whole container hides both bursts and skew. When the hottest range's
  sustained load reached `HOT_NORMALIZED_RU` (90%) of its share (`sustained_normalized_ru`), that range is at
  its limit however idle the rest is: lowering the RU/s would throttle it more. `waste` is then blank and
  `waste_note` says `HOT_WASTE_NOTE` (the RU/s are not wasted, the key is skewed: fix the key, not the RU/s);
- from `partitions` (when the table exists): `largest_partition_gb` (the largest physical partition of the
  latest snapshot) and `storage_headroom` = 1 - its bytes / `Limits.physical_partition_max_bytes` (50 GB).

**Shared throughput** (`with_shared_offers`, `summarize_throughput_units`). A container created without RU/s
of its own in a database that has some spends the database's shared offer: Azure Monitor reports that offer's
ProvisionedThroughput and its physical partitions' NormalizedRUConsumption and sizes for the database, not
for a container (the store keeps them under `container` = `store.records.SHARED_OFFER_CONTAINER`, "": never
a row of its own here), while TotalRequestUnits stays per container. So such a container's row says
`throughput_unit` "database"; its `max_normalized_ru` is the database offer's (its partitions are the
offer's: what throttles it; so are its sustained figures), its `provisioned_ru_s` and `waste` are blank (it has no RU/s of its own) and
its `waste_note` says `SHARED_WASTE_NOTE`. Every other container says "container". The throughput units
(`UNIT_COLUMNS`) are what is paid for: one row per shared database (its containers listed in `containers`,
its p95 the sum of theirs per interval, its waste against its offer) and one per container with its own RU/s.
A shared database is recognised by its rows under the shared offer, or by the storage snapshots'
`database_throughput_ru`; its containers are those with no throughput or partition metrics of their own.

**Regions** (`analysis.regions`). Azure Monitor's figures are of one region (`region`) or of the account in
total (None, the default): `provisioned_ru_s` is then each region's latest RU/s summed (an account with N
regions reserves T x N RU/s; AutoscaleMaxThroughput, which has no Region dimension, counts N times),
`p95_ru_s` the regions' RU/s summed per interval, so `waste` compares like with like; `max_normalized_ru`
is the hottest range of any region. A one-region account reads as before.

**Ranking** (`summarize_fleet`). Each risk signal is put on one 0..1 scale, where 1 means "at the limit":
- throttling: `throttle_rate / THROTTLE_FULL_RATE`, capped at 1. Service guidance treats a few percent of
  429s as a sign to act, so 5% of requests throttled counts as full risk;
- hot partition: `sustained_normalized_ru / 100` (a partition spending its whole share of the RU/s in more
  than 1 minute in 20 throttles next; one busy minute, such as a bulk load, does not make it at risk, since
  NormalizedRUConsumption is one second's share: azure-monitor.md R10), capped at 1; 0 when every minute the
  metrics reported was ruscope's own (R75); without metrics, the replay's skew instead: with n pkranges
  seen and hottest share s, (s * n - 1) / (n - 1): 0 when even, 1 when one pkrange takes everything
  (0 for n = 1: one partition cannot be skewed). The service's measure wins because it sees real traffic;
- storage: 1 - `storage_headroom` (the largest partition's fill of 50 GB), capped to 0..1.
`risk` is the largest of the signals present (NaN when none is): one signal at its limit is enough to act
on, and averaging would let calm signals hide it. `risk_driver` names it ("hot partition", "429s",
"storage"; empty when the risk is 0 or unknown; a tie names the hot partition, the cause of the 429s a
container gets when one range is at its limit). Rows sort by risk, then waste, then total RU (each highest first, NaN last), then by name: what
may throttle or stop comes before what only costs money, and among equals the most wasteful first.
"""

from __future__ import annotations

import pandas as pd

from analysis import load, regions, throttling
from analysis.queries import costs as qc
from analysis.scope import in_containers
from cosmoscore.limits import GB, Limits
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUEST_UNITS
from store.records import EXECUTIONS, METRICS, PARTITIONS, REQUESTS, SCOPE_COLUMNS, SHARED_OFFER_CONTAINER

FLEET_KEY = list(SCOPE_COLUMNS)
THROTTLE_FULL_RATE = 0.05  # a 429 rate at which the throttling signal is at its maximum (see the docstring)
PROVISIONED_METRICS = load.PROVISIONED_METRICS  # AutoscaleMaxThroughput preferred, then ProvisionedThroughput
# in the order a tie is named: a hot partition first, since it is what a container's 429s come from
RISK_SIGNALS = {"hot_risk": "hot partition", "throttle_risk": "429s", "storage_risk": "storage"}
HOT_NORMALIZED_RU = 90.0  # percent: a range this close to its share of the RU/s is at its limit (see the docstring)
HOT_WASTE_NOTE = "a hot partition: the RU/s are not wasted, the key is skewed"
SHARED_WASTE_NOTE = "spends its database's shared RU/s: see the database's throughput unit"
# `throughput_unit`: whose RU/s a container spends, its own or its database's shared offer
OWN_UNIT = "container"
SHARED_UNIT = "database"
OFFER_NAME = "(offer)"  # a stand-in container name for a shared offer's rows inside `analysis.load`

# The store columns these functions read: a view loads only these.
EXECUTION_COLUMNS = EXECUTIONS.pick("account", *qc.EXECUTION_COLUMNS)
REQUEST_COLUMNS = REQUESTS.pick(*FLEET_KEY, "time", "request_kind", "pkrange_id", "status", "request_charge")
METRIC_COLUMNS = METRICS.pick(
    *FLEET_KEY, "time", "metric", "aggregation", "pkrange_id", "value", "grain", "region"
)  # throughput_stats
# all summarize_fleet reads: the status code the 429 rate needs (kept out of METRIC_COLUMNS, which others
# extend with it: a column named twice breaks a load)
FLEET_METRIC_COLUMNS = METRICS.pick(*METRIC_COLUMNS, "status_code")
PARTITION_COLUMNS = PARTITIONS.pick(  # the storage collector's `partitions`
    *FLEET_KEY, "time", "pkrange_id", "size_kb", "throughput_ru", "database_throughput_ru"
)

# the workload's per-partition load (`analysis.load`), after the columns fleet had before it
PARTITION_LOAD_STATS = ["max_normalized_ru", *load.SUSTAINED_COLUMNS, "own_minutes_excluded"]
LOAD_STATS = [*PARTITION_LOAD_STATS, "own_ru_subtracted"]
COUNT_COLUMNS = ["executions", "requests", "pkranges_seen", "sustained_minutes", "own_minutes_excluded"]
THROTTLE_WINDOW = ["throttle_start", "throttle_end"]  # the first and last time a 429 rate counted
SUSTAINED_WINDOW = ["sustained_start", "sustained_end"]
TIME_COLUMNS = ["last_seen", *THROTTLE_WINDOW, *SUSTAINED_WINDOW]
TEXT_COLUMNS = ["risk_driver", "waste_note", "throttle_source", "hot_pkrange", "throughput_unit", "last_seen"]
TEXT_COLUMNS += ["sustained_pkrange"]
FLEET_COLUMNS = [
    *FLEET_KEY,
    "risk",
    "risk_driver",
    "waste",
    "waste_note",
    "executions",
    "total_ru",
    "mean_ru",
    "fan_out_share",
    "requests",
    "throttle_rate",
    "throttle_source",
    *THROTTLE_WINDOW,
    "pkranges_seen",
    "hot_pkrange",
    "hot_pkrange_share",
    "throughput_unit",
    "provisioned_ru_s",
    "p95_ru_s",
    "max_normalized_ru",
    "largest_partition_gb",
    "storage_headroom",
    "last_seen",
    *LOAD_STATS[1:],  # added after `max_normalized_ru` was shipped: at the end
]


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


def execution_stats(executions: pd.DataFrame) -> pd.DataFrame:
    """Per container: logical executions, their RU, mean RU and fan-out share of the successful ones."""
    columns = [*FLEET_KEY, "executions", "total_ru", "mean_ru", "fan_out_share", "last_seen"]
    frame = in_containers(executions)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    logical = qc.account_logical_executions(frame)
    logical = logical.assign(
        ok_ru=logical["total_ru"].where(logical["ok"]),
        fan_out=(logical["routing"] == "fan-out").where(logical["ok"]).astype("float"),
    )
    stats = logical.groupby(FLEET_KEY).agg(
        executions=("run_id", "size"),
        total_ru=("total_ru", "sum"),
        mean_ru=("ok_ru", "mean"),
        fan_out_share=("fan_out", "mean"),
        last_seen=("last_time", "max"),
    )
    return stats.round({"total_ru": 2, "mean_ru": 2, "fan_out_share": 4}).reset_index()[columns]


def throttle_stats(
    metrics: pd.DataFrame,
    requests: pd.DataFrame,
    log_throttles: pd.DataFrame | None = None,
    *,
    region: str | None = None,
) -> pd.DataFrame:
    """Per container: the requests and 429 rate of `analysis.throttling.preferred_rate` (Azure Monitor's
    where it counted the container, else the logs', else the replay's), their source (named for `region`:
    `throttling.source_name`) and window."""
    columns = [*FLEET_KEY, "requests", "throttle_rate", "throttle_source", *THROTTLE_WINDOW]
    frame = in_containers(requests)
    keep = [name for name in throttling.METRIC_COLUMNS if name in metrics.columns]
    metrics = in_containers(metrics)[keep].reindex(columns=throttling.METRIC_COLUMNS)
    rate = throttling.preferred_rate(metrics, frame, log_throttles)
    rate = rate.assign(
        throttle_rate=rate["rate"].astype(float).round(4),
        throttle_source=rate["source"].astype(object).map(lambda source: throttling.source_name(source, region)),
        throttle_start=rate["start"],
        throttle_end=rate["end"],
    )
    return rate.astype({"requests": "float64"})[columns]


def request_stats(requests: pd.DataFrame) -> pd.DataFrame:
    """Per container: the hottest pkrange of the replay's data pages' RU, its share, the pkranges seen."""
    columns = [*FLEET_KEY, "pkranges_seen", "hot_pkrange", "hot_pkrange_share"]
    frame = in_containers(requests)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    pages = frame[frame["request_kind"].eq("page").fillna(False) & frame["pkrange_id"].fillna("").ne("")]
    by_pkrange = pages.groupby([*FLEET_KEY, "pkrange_id"])["request_charge"].sum().astype(float).reset_index()
    by_pkrange = by_pkrange.sort_values("request_charge", ascending=False, kind="stable")
    per_container = by_pkrange.groupby(FLEET_KEY)
    hot = per_container.agg(
        pkranges_seen=("pkrange_id", "size"), hot_pkrange=("pkrange_id", "first"), hot=("request_charge", "first")
    )
    total = per_container["request_charge"].sum()
    hot["hot_pkrange_share"] = (hot.pop("hot") / total.where(total > 0)).round(4)
    return hot.reset_index().reindex(columns=columns)


def throughput_stats(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    model: load.LoadModel | None = None,
) -> pd.DataFrame:
    """Per container with Azure Monitor rows: provisioned and p95 consumed RU/s (the workload's: the replay's
    RU subtracted), waste, and the workload's hot-partition load (`analysis.load`: peak minute, sustained,
    ruscope's own minutes left out); `model`: `analysis.load.build` of these frames, else built here."""
    frame = in_containers(metrics)
    model = model if model is not None else load.build(frame, requests, partitions)
    stats = pd.DataFrame(columns=FLEET_KEY)
    parts = (
        load.latest_provisioned(frame),
        model.consumed_summary[[*FLEET_KEY, "p95_ru_s", "own_ru_subtracted"]],
        _partition_load(frame, model.load),
    )
    for part in parts:
        stats = stats.merge(part, on=FLEET_KEY, how="outer")
    provisioned = stats["provisioned_ru_s"].astype(float)
    waste = (1 - stats["p95_ru_s"].astype(float) / provisioned.where(provisioned > 0)).round(4)
    hot = stats["sustained_normalized_ru"].astype(float).ge(HOT_NORMALIZED_RU)
    stats["waste"] = waste.where(~hot)
    stats["waste_note"] = pd.Series("", index=stats.index, dtype=object).where(~hot, HOT_WASTE_NOTE)
    return stats[[*FLEET_KEY, "provisioned_ru_s", "p95_ru_s", "waste", "waste_note", *LOAD_STATS]]


def storage_stats(partitions: pd.DataFrame, limits: Limits | None = None) -> pd.DataFrame:
    """Per container with partition rows: its largest physical partition (latest snapshot) and the headroom."""
    columns = [*FLEET_KEY, "largest_partition_gb", "storage_headroom"]
    frame = in_containers(partitions).dropna(subset=["time", "size_kb"])
    if frame.empty:
        return pd.DataFrame(columns=columns)
    latest = frame[frame["time"].eq(frame.groupby(FLEET_KEY)["time"].transform("max"))]
    largest = latest.groupby(FLEET_KEY)["size_kb"].max().astype(float) * 1024
    limit = (limits or Limits()).physical_partition_max_bytes
    stats = pd.DataFrame({"largest_partition_gb": (largest / GB).round(3), "storage_headroom": (1 - largest / limit)})
    return stats.round({"storage_headroom": 4}).reset_index()[columns]


def _p95_consumed(metrics: pd.DataFrame, requests: pd.DataFrame | None = None) -> pd.DataFrame:
    """The 95th percentile of the workload's TotalRequestUnits per second (an interval's total less the
    replay's RU in it, over its grain: `analysis.load.consumed_intervals`), and the replay's RU subtracted."""
    consumed = load.summarize_consumed(load.consumed_intervals(metrics, requests))
    return consumed[[*FLEET_KEY, "p95_ru_s", "own_ru_subtracted"]]


def _partition_load(metrics: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The workload's per-partition load (`summary`: `analysis.load.summarize_partition_load` of `metrics`):
    `max_normalized_ru` (the peak minute of the rows split by PartitionKeyRangeId; of the unsplit rows where a
    container has none), `sustained_normalized_ru` and its range and window, and the own minutes left out."""
    unsplit = _max_normalized(metrics[metrics["pkrange_id"].isna()])  # a store collected without the split
    unsplit = unsplit[~unsplit.set_index(FLEET_KEY).index.isin(summary.set_index(FLEET_KEY).index)]
    return pd.concat([summary, unsplit], ignore_index=True)[[*FLEET_KEY, *PARTITION_LOAD_STATS]]


def _max_normalized(metrics: pd.DataFrame) -> pd.DataFrame:
    """The largest NormalizedRUConsumption (percent) of the rows split by PartitionKeyRangeId (`pkrange_id`),
    else of the unsplit rows: Azure Monitor's figure as it is, ruscope's own minutes in (a shared offer's)."""
    rows = metrics[metrics["metric"].eq(NORMALIZED_RU).fillna(False)].dropna(subset=["value"])
    by_pkrange = rows.dropna(subset=["pkrange_id"])
    rows = by_pkrange if not by_pkrange.empty else rows
    peak = rows.groupby(FLEET_KEY)["value"].max().astype(float).reset_index()
    return peak.rename(columns={"value": "max_normalized_ru"})[[*FLEET_KEY, "max_normalized_ru"]]


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
    `_partition_load`; its partitions are not matched with its containers' requests: `analysis.load`)."""
    named = offer_rows.assign(container=OFFER_NAME)  # `analysis.load` reads the rows that name a container
    summary = load.summarize_partition_load(load.partition_minutes(named))
    return _partition_load(named, summary).drop(columns="container")


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
    p95 = _p95_consumed(rows.assign(container=OFFER_NAME)).assign(container=SHARED_OFFER_CONTAINER)
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


grain_seconds = load.grain_seconds  # an ISO 8601 grain in seconds (one minute when missing)


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
