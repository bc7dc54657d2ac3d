"""Fleet: every container of every account in the store, ranked by risk (429s, a hot partition, storage
fill), then by waste (provisioned against p95 consumed RU/s); open one to see its query costs.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders` (`metrics`, `log_throttles` and `partitions` read as no rows until the Azure Monitor,
logs and storage collectors have written them), the numbers and the ranking rule from `analysis.fleet`, the figure
from `dashboard.figures`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis import fleet, overview
from analysis.scope import Scope
from dashboard import state, widgets
from dashboard.figures.fleet import build_fleet_figure
from dashboard.loaders.fleet import load_fleet
from dashboard.state import FrameState, frame_state

QUERY_COSTS_PAGE = "views/query_costs.py"
HOW_TO_COLLECT = "Replay the queries of a config (or of a fleet config, one account each) into it, then open it here"
COLLECT = ["ruscope replay --config ruscope.toml --store {store}"]

COLUMNS_HELP = f"""
One row per container (account, database, container) with data in the time range. Empty cells: no data
for that number yet, never a guess.

- **risk** (0 to 1, 1 = at a limit): the largest of three signals. *429s*: the share of requests throttled,
  5% or more counting as 1. *hot partition*: the sustained load of the busiest partition key range, the 95th
  percentile over the window of its per-minute normalized RU consumption from Azure Monitor (100% = 1), with
  the minutes that were ruscope's own replay left out: one busy minute (a bulk load) does not rank a container
  at its limit; without Monitor data, the replay's skew: 0 when the pkranges seen share the RU evenly, 1 when
  one takes it all. *storage*: the largest physical partition's fill of 50 GB.
  **driver** names the signal that set it.
- **waste**: 1 - p95 consumed RU/s / provisioned RU/s (autoscale: its maximum), from Azure Monitor; 0.8
  means the container rarely uses more than a fifth of what it pays for; negative means it consumes more
  than provisioned. **Not for a hot partition**: each physical partition gets an equal share of the RU/s
  and a per-minute average hides bursts, so when the hottest range reached {fleet.HOT_NORMALIZED_RU:g}% or more of its share
  (max normalized RU), waste is blank and the **waste note** says *{fleet.HOT_WASTE_NOTE}*: lowering the RU/s would
  throttle that range more; fix the key.
- **executions**, **total RU**, **mean RU**, **fan-out share**: the replayed queries (a per-feed-range
  query's parts count as one execution); the fan-out share is the share of executions that reached
  every partition.
- **requests**, **429 rate**, **429s from**: the requests and the share answered 429 (throttled) over the
  whole window (the time range's data), from Azure Monitor's TotalRequests by status code where it counted
  the container (all its traffic), else from the diagnostic logs (Log Analytics: summed over the regions, so "all regions"
  beside one region's figures), else from the replay's own requests; *429s from* names the source. The
  Overview, the Throttling page, the report and the alert show the same rate (an alert's of its last minutes).
- **pkranges**, **hot pkrange**, **hot share**, **skew from**: the physical partitions of the layout (the
  latest storage snapshot, else the ranges Azure Monitor reported last: **layout from**), the range carrying
  the most of the workload's RU and its share (Azure Monitor's mean normalized RU per range, ruscope's replay
  left out; without Monitor data, the replay's data-page RU: **skew from** says which). The Overview, the Hot
  partitions page's first skew source and the report show the same numbers.
- **provisioned RU/s**, **p95 RU/s**, **max normalized RU %**, **largest partition GB**, **storage
  headroom**: from Azure Monitor and the partition collector, once they run.
- **throughput unit**: *container* when the container has RU/s of its own; *database* when it spends its
  database's shared throughput. Such a container has no provisioned RU/s or waste of its own (the **waste
  note** says so), and its max normalized RU is the database's: its partitions are the database's, shared
  with the database's other containers. The **Throughput units** table below lists what is paid for: each
  shared database once, with its containers, and each container with its own RU/s.

- **regions**: for an account in several regions, the sidebar's *Region* picks whose Azure Monitor figures
  these are: one region's RU against that region's RU/s, or every region's RU against every region's RU/s
  (an account with N regions reserves T x N RU/s), never a sum over regions against one region's RU/s.

Rows sort by risk, then waste, then total RU, highest first. The rule is in `analysis/fleet.py`.
"""

# the risk's and the 429s' columns first, where a narrow window still shows them
SHOWN = [*fleet.FLEET_KEY, "risk", "risk_driver", "throttle_rate", "throttle_source", "waste", "waste_note"]
SHOWN += [name for name in overview.FLEET_TABLE_COLUMNS if name not in SHOWN]

TABLE_COLUMNS = {
    "risk": st.column_config.ProgressColumn("risk", min_value=0.0, max_value=1.0, format="%.2f"),
    "risk_driver": st.column_config.TextColumn("driver"),
    "waste": st.column_config.NumberColumn("waste", format="%.2f"),
    "waste_note": st.column_config.TextColumn("waste note"),
    "executions": st.column_config.NumberColumn("executions"),
    "total_ru": st.column_config.NumberColumn("total RU", format="%.2f"),
    "mean_ru": st.column_config.NumberColumn("mean RU", format="%.2f"),
    "fan_out_share": st.column_config.NumberColumn("fan-out share", format="%.2f"),
    "requests": st.column_config.NumberColumn("requests", format="%.0f"),
    "throttle_rate": st.column_config.NumberColumn("429 rate", format="%.2f%%"),  # shown in percent
    "throttle_source": st.column_config.TextColumn("429s from"),
    **widgets.RATE_WINDOW_COLUMNS,
    "pkranges": st.column_config.NumberColumn("pkranges"),
    "layout_source": st.column_config.TextColumn("layout from"),
    "hot_pkrange": st.column_config.TextColumn("hot pkrange"),
    "hot_range_share": st.column_config.NumberColumn("hot share", format="%.2f"),
    "skew_source": st.column_config.TextColumn("skew from"),
    "provisioned_ru_s": st.column_config.NumberColumn("provisioned RU/s", format="%.0f"),
    "p95_ru_s": st.column_config.NumberColumn("p95 RU/s", format="%.1f"),
    "max_normalized_ru": st.column_config.NumberColumn("max normalized RU %", format="%.0f"),
    "largest_partition_gb": st.column_config.NumberColumn("largest partition GB", format="%.2f"),
    "storage_headroom": st.column_config.NumberColumn("storage headroom", format="%.2f"),
    "last_seen": st.column_config.DatetimeColumn("last seen (UTC)", timezone="UTC"),
    "throughput_unit": st.column_config.TextColumn("throughput unit"),
}
UNIT_COLUMNS = {
    "unit": TABLE_COLUMNS["throughput_unit"],
    "containers": st.column_config.TextColumn("containers"),
    # the figures a unit shares with its containers' rows, shown the same way
    **{
        name: TABLE_COLUMNS[name]
        for name in ("provisioned_ru_s", "p95_ru_s", "waste", "waste_note", "max_normalized_ru")
    },
}
UNITS_HELP = """What is paid for: a shared-throughput database is one unit, its containers spending its RU/s
together (its p95 is theirs summed, its partitions' utilisation is reported for the database), and every
other container is a unit of its own."""


def render_units(units: pd.DataFrame) -> None:
    """The throughput units, when a shared-throughput database makes them differ from the containers."""
    if not units["throughput_unit"].eq(fleet.SHARED_UNIT).any():
        return
    st.subheader("Throughput units")
    st.caption(UNITS_HELP)
    keys = units[fleet.FLEET_KEY].astype(str).itertuples(index=False, name=None)
    named = units.assign(unit=[fleet.unit_label(k, c) for k, c in zip(keys, units["containers"], strict=True)])
    shown = named[["unit", "containers", "provisioned_ru_s", "p95_ru_s", "waste", "waste_note", "max_normalized_ru"]]
    widgets.render_table(shown, key="fleet_units", file_name="fleet-units.csv", column_config=UNIT_COLUMNS, csv=units)


def render_scope_note(view: FrameState) -> None:
    if view.scope == Scope():
        return
    st.caption("The sidebar's scope narrows this list; choose (all) there, or:")
    if st.button("Show every container", key="fleet_show_all", icon=":material/select_all:"):
        state.request_scope(Scope())
        st.rerun()


def render_open(ranked: pd.DataFrame) -> None:
    choices = fleet.container_choices(ranked)
    picked = st.selectbox(
        "Open a container's query costs",
        list(choices),
        index=None,
        format_func=choices.__getitem__,
        placeholder="Choose a container",
        key="fleet_open",
    )
    if picked is not None:
        account, database, container = picked
        state.request_scope(Scope(database=database, container=container, account=account))
        st.switch_page(QUERY_COSTS_PAGE)


st.title("Fleet")
view = frame_state()
data = load_fleet(view)
widgets.render_store_warnings(data.warnings)
ranked, units = data.ranked, data.units
if ranked.empty:
    widgets.render_empty_state(view, what="containers with data", how=HOW_TO_COLLECT, commands=COLLECT)
else:
    render_scope_note(view)
    widgets.render_region_note(view)
    render_open(ranked)
    widgets.render_rate_window(ranked["throttle_start"], ranked["throttle_end"])
    percent = ranked.assign(throttle_rate=ranked["throttle_rate"] * 100)[SHOWN]  # the CSV keeps the share
    widgets.render_table(percent, key="fleet_table", file_name="fleet.csv", column_config=TABLE_COLUMNS, csv=ranked)
    widgets.render_figure(build_fleet_figure(ranked, title="Riskiest containers first"), key="fleet_chart")
    render_units(units)
    with st.expander("What the columns mean and how the list is ranked"):
        st.markdown(COLUMNS_HELP)
