"""Hot partitions: which physical partition (pkrange) is hot over time, which logical keys make it hot, how
skewed the load is, and, from the replay alone, the RU/s each partition would have to serve.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the reduced data from
`dashboard.loaders.hot_partitions` (numbers from `analysis.hot`), the figures from
`dashboard.figures.hot_partitions`, the tables through `widgets.render_table`. Every widget has a key.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analysis.hot import keys as hk
from analysis.hot import partitions as hp
from analysis.hot import replay as hr
from analysis.hot.current import CONTAINER_KEY
from dashboard import widgets
from dashboard.display import markdown_text
from dashboard.figures.hot_partitions import (
    CLIP_PERCENTILE,
    build_demand_figure,
    build_key_heatmap_figure,
    build_normalized_heatmap_figure,
    build_skew_figure,
)
from dashboard.loaders.hot_partitions import LOAD_SOURCES, HotData, load_hot
from dashboard.state import frame_state

HOW_TO_COLLECT = "Replay the queries of a config, or collect Azure Monitor metrics and logs, then open it here"
COLLECT = [
    "ruscope replay --config ruscope.toml --store {store}",
    "ruscope metrics --config ruscope.toml",
    "ruscope logs --config ruscope.toml",
]

HEATMAP_HELP = """Each row is a physical partition (pkrange), in the order of the key space it owns, so after a
split the children sit where their parent was; the dotted line marks the split. A cell is Azure Monitor's
NormalizedRUConsumption: the share of the partition's RU/s budget it spent in its busiest minute of the cell,
the maximum over the cell so that a hot minute is never averaged away. **100% (red) means the partition spent
its whole share in at least one second of the minute, even when the container as a whole was not busy. 100% does
not by itself mean 429s (one busy second makes the minute 100%: azure-monitor.md R10): the Throttling page counts
those.**"""
DEMAND_HELP = """How the replay turns into RU/s: each configured query's RU per execution on each partition (its
data pages' charges, over its executions) times its rate, `rate_per_s` in the config (1 execution/s when a
query has none), summed per partition. The budget is the partition's equal share of the container's RU/s. The
**multiplier** is how many times the configured workload the tightest partition can take before it throttles:
below 1 it throttles already; a large one means room to grow, or to lower the RU/s."""
KEY_SCALE_HELP = f"""Off: the colours run from 0 to the {CLIP_PERCENTILE}th percentile of the cells (a bulk load's
few hot bins would otherwise pale every other cell), the bins above it in the top colour. On: a log scale,
each colour step ten times the RU/s. The hover says each bin's RU/s either way."""
MONITOR_ADDS = """Azure Monitor's NormalizedRUConsumption per pkrange shows which partition is hot minute by
minute on the real traffic, and the diagnostic logs (CDBPartitionKeyRUConsumption) which logical keys make it
hot; the replay only shows where the configured queries land."""

SHARED_NOTE = """This container spends database **{database}**'s shared throughput: its partitions are the
database's, shared by its containers, and Azure Monitor reports them for the database. These rows are the
database's partitions."""
SHARED_ROWS = """Rows named *database (shared)* are a shared-throughput database's partitions: Azure Monitor reports
them for the database, whose containers share them, not for one container."""
HIDDEN = ["account", "pkrange_id"]  # the label says the pkrange (and its container when several): CSV only
PKRANGE_COLUMNS = {
    "label": st.column_config.TextColumn("pkrange"),
    "min_epk": st.column_config.TextColumn("EPK from"),
    "max_epk": st.column_config.TextColumn("EPK to"),
    "parent": st.column_config.TextColumn("split from"),
    "current": st.column_config.CheckboxColumn(
        "exists now",
        help="In the latest storage snapshot (else: reports in the latest minute); a split's parent no longer does",
    ),
    "first_time": st.column_config.DatetimeColumn("first point (UTC)", timezone="UTC"),
    "last_time": st.column_config.DatetimeColumn("last point (UTC)", timezone="UTC"),
    "peak": st.column_config.NumberColumn("peak %", format="%.0f"),
    "mean": st.column_config.NumberColumn("mean %", format="%.1f"),
}
SPLIT_COLUMNS = {
    "parent": st.column_config.TextColumn("pkrange split"),
    "children": st.column_config.TextColumn("into"),
    "time": st.column_config.DatetimeColumn("children's first point (UTC)", timezone="UTC"),
}
KEY_COLUMNS = {
    "label": st.column_config.TextColumn("pkrange"),
    "partition_key": st.column_config.TextColumn("logical key"),
    "ru": st.column_config.NumberColumn("RU", format="%.1f"),
    "ru_share_pct": st.column_config.NumberColumn("share of RU", format="%.1f%%"),
    "busiest_bin_ru_s": st.column_config.NumberColumn(
        "busiest bin RU/s", format="%.2f", help="The key's RU in its busiest log bin over the bin's seconds: a mean"
    ),
    "peak_ru_s": st.column_config.NumberColumn(
        "busiest second RU/s", format="%.1f", help="The most RU the key consumed in one second (blank: unknown)"
    ),
    "peak_time": st.column_config.DatetimeColumn("busiest second's bin (UTC)", timezone="UTC"),
    "peak_source": st.column_config.TextColumn("busiest second from"),
    "budget_ru_s": st.column_config.NumberColumn("partition budget RU/s", format="%.0f"),
    "budget_source": st.column_config.TextColumn("budget from"),
    "peak_budget_pct": st.column_config.NumberColumn("busiest second / budget", format="%.0f%%"),
    "peak_verdict": st.column_config.TextColumn("busiest second vs budget"),
    "size_kb": st.column_config.NumberColumn("size KB", format="%.0f"),
}
OPERATION_COLUMNS = {
    "operation_name": st.column_config.TextColumn("operation"),
    "ru": st.column_config.NumberColumn("RU", format="%.1f"),
    "ru_share_pct": st.column_config.NumberColumn("share of the key's RU", format="%.1f%%"),
    "peak_ru_s": st.column_config.NumberColumn(
        "busiest second RU/s", format="%.1f", help="The operation's most RU on the key in one second (blank: unknown)"
    ),
}
OPERATION_HIDDEN = ["account", "database", "container", "pkrange_id", "partition_key"]  # the key chosen above
KEY_HIDDEN = ["peak_window"]  # every busiest second is one second long (hk.PEAK_WINDOW): the CSV keeps it
PEAK_HELP = """A partition's RU/s budget is spent second by second: in a second where a partition has used its
share of the RU/s, further requests to it are throttled (429). A log bin's mean RU/s (the heatmap above) hides a
burst, so each key's **busiest second** is shown beside its busiest bin, against its partition's budget. Blank
means unknown (rows stored before ruscope collected the busiest second), never zero."""
SKEW_COLUMNS = {
    "pkranges": st.column_config.NumberColumn("pkranges"),
    "hottest_pkrange": st.column_config.TextColumn("hottest pkrange"),
    "hottest_pct": st.column_config.NumberColumn("hottest share", format="%.1f%%"),
    "even_pct": st.column_config.NumberColumn("even share (1/n)", format="%.1f%%"),
    "hot_vs_even": st.column_config.NumberColumn("hottest / even", format="%.2fx"),
    "gini": st.column_config.NumberColumn("Gini", format="%.2f", help="0: even; (n-1)/n: one pkrange takes all"),
}
DEMAND_COLUMNS = {
    "label": st.column_config.TextColumn("pkrange"),
    "ru_s": st.column_config.NumberColumn("demand RU/s", format="%.2f"),
    "share_pct": st.column_config.NumberColumn("share", format="%.1f%%"),
    "budget_ru_s": st.column_config.NumberColumn("budget RU/s", format="%.0f"),
    "budget_source": st.column_config.TextColumn("budget from"),
    "utilization_pct": st.column_config.NumberColumn("demand / budget", format="%.0f%%"),
    "multiplier": st.column_config.NumberColumn("workload multiplier", format="%.2fx"),
}
HEADROOM_COLUMNS = {
    "queries_without_rate": st.column_config.NumberColumn("queries without a rate"),
    "ru_s": st.column_config.NumberColumn("demand RU/s", format="%.2f"),
    "first_to_throttle": st.column_config.TextColumn("first pkrange to throttle"),
    "multiplier": st.column_config.NumberColumn("workload multiplier", format="%.2fx"),
}


OWN_CELLS = (
    "× marks {minutes} minute{s} of ruscope's own replay: Azure Monitor counts it with the workload, so the cell "
    "shows it; the replay's busiest second there used at least half of the minute's figure, and the risk, the "
    "Overview, the skew and the report leave those minutes out."
)


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A table without the columns the label stands for (the CSV download keeps them)."""
    return frame.drop(columns=[name for name in HIDDEN if name in frame.columns])


def render_heatmap(data: HotData) -> None:
    st.subheader("Normalized RU per partition")
    heatmap = data.heatmap
    if heatmap.empty:
        widgets.render_monitor_missing(
            what="metrics (NormalizedRUConsumption by pkrange)",
            shown="the replay's RU/s demand per partition and the logical keys it has",
            adds=MONITOR_ADDS,
        )
        return
    st.markdown(HEATMAP_HELP)
    widgets.render_region_note(frame_state(), per_region=data.region)
    if data.shared_database is not None:
        st.caption(SHARED_NOTE.format(database=markdown_text(data.shared_database)))
    elif any(label.split("/")[0].endswith(hp.SHARED_SUFFIX) for label in heatmap.labels):
        st.caption(SHARED_ROWS)
    widgets.render_figure(build_normalized_heatmap_figure(heatmap), key="hot_heatmap")
    if heatmap.own_minutes:
        st.caption(OWN_CELLS.format(minutes=heatmap.own_minutes, s="" if heatmap.own_minutes == 1 else "s"))
    widgets.render_table(
        hp.pkrange_table(heatmap.rows),
        key="hot_pkranges_table",
        file_name="hot-partitions.csv",
        column_config=PKRANGE_COLUMNS,
        csv=heatmap.rows,
    )
    if not heatmap.splits.empty:
        st.caption("Splits in this view")
        splits = heatmap.splits[[*CONTAINER_KEY, "parent", "children", "time"]]
        widgets.render_table(
            splits, key="hot_splits", file_name="hot-partition-splits.csv", column_config=SPLIT_COLUMNS
        )


def render_keys(data: HotData) -> None:
    st.subheader("Logical keys")
    if data.key_totals.empty:
        widgets.render_monitor_missing(
            what="diagnostic logs (RU per logical key)",
            shown="the largest logical keys from the storage snapshots, when collected",
            adds="CDBPartitionKeyRUConsumption gives the RU of each logical key on each partition over time "
            "(not collected with `[monitor] logs_tables` = `aggregated-5m` / `aggregated-15m`: the aggregated "
            "logs have no partition key).",
        )
    else:
        widgets.render_logs_region_note(frame_state(), "RU per logical key (diagnostic logs)", per_region=data.region)
        top = st.selectbox("Top keys by RU", hk.TOP_KEY_CHOICES, index=1, key="hot_top_keys")
        log = st.toggle("Log colour scale", key="hot_keys_log_scale", help=KEY_SCALE_HELP)
        heatmap = hk.top_keys(data.key_heatmap, int(top))
        figure = build_key_heatmap_figure(heatmap, scale="log" if log else "clipped")
        widgets.render_figure(figure, key="hot_keys_heatmap")
    render_keys_in_range(data)


def render_keys_in_range(data: HotData) -> None:
    if data.pkranges.empty or (data.key_totals.empty and data.key_sizes.empty):
        return
    labels = data.pkranges["label"].astype(str).tolist()
    chosen = st.multiselect(
        "Pkranges (key-space order): the logical keys inside them",
        labels,
        default=[data.hottest] if data.hottest in labels else labels[:1],
        key="hot_pkranges",
    )
    picked = data.pkranges[data.pkranges["label"].isin(chosen)]
    keys = hk.keys_in_pkranges(data.key_totals, data.key_sizes, picked)
    if not data.key_totals.empty:
        st.markdown(PEAK_HELP)
    for _, row in hk.keys_at_budget(keys).iterrows():
        st.markdown(_at_budget_sentence(row))
    table = shown(keys).drop(columns=KEY_HIDDEN)
    widgets.render_table(
        table, key="hot_keys_table", file_name="hot-partition-keys.csv", column_config=KEY_COLUMNS, csv=keys
    )
    render_key_operations(data, keys)


def render_key_operations(data: HotData, keys: pd.DataFrame) -> None:
    """Which operation heats one logical key of the table above (the logs' RU per key and operation)."""
    logged = keys.dropna(subset=["ru"]).reset_index(drop=True)
    if data.key_operations.empty or logged.empty:
        return
    st.caption("RU by operation: which operation heats a key")
    names = [f"{key} (pkrange {label})" for key, label in zip(logged["partition_key"], logged["label"])]
    picked = st.selectbox("Logical key", range(len(names)), format_func=names.__getitem__, key="hot_key_operations_key")
    operations = hk.operations_of(data.key_operations, logged.iloc[int(picked or 0)])
    if operations.empty:
        st.info(
            "No RU by operation for this key in the view: its rows were collected before `ruscope logs` "
            "asked for them (query `key_operations`).",
            icon=":material/info:",
        )
        return
    widgets.render_table(
        operations.drop(columns=OPERATION_HIDDEN),
        key="hot_key_operations_table",
        file_name="hot-partition-key-operations.csv",
        column_config=OPERATION_COLUMNS,
        csv=operations,
    )


def _at_budget_sentence(row: pd.Series) -> str:
    """One plain sentence for a key whose busiest second reached its partition's budget."""
    when = f" (in the bin from {row['peak_time']:%Y-%m-%d %H:%M} UTC)" if pd.notna(row["peak_time"]) else ""
    mean = (
        f"; its busiest bin averaged {row['busiest_bin_ru_s']:.2f} RU/s, which hides the burst"
        if pd.notna(row["busiest_bin_ru_s"])
        else ""
    )
    return (
        f"**At its budget**: key {markdown_text(row['partition_key'])} on pkrange {markdown_text(row['label'])}: its busiest second"
        f"{when} took {row['peak_ru_s']:.1f} RU, {row['peak_budget_pct']:.0f}% of its partition's budget of "
        f"{row['budget_ru_s']:.0f} RU/s ({markdown_text(row['budget_source'])}): it reached the budget, and "
        f"requests to that partition beyond it in that second are throttled (429){mean}."
    )


def render_skew(data: HotData) -> None:
    if not data.loads:
        return
    st.subheader("Skew")
    source = st.radio("Load per pkrange from", list(data.loads), key="hot_skew_source", horizontal=True)
    column, unit = LOAD_SOURCES[source]
    load = data.loads[source]
    st.caption(
        f"An even spread gives each of n pkranges 1/n of the load ({unit}). n counts the pkranges that exist at "
        "the end of the view (a split's parent is gone), and the load is measured since the last split, when all "
        "of them had data. The Gini coefficient is 0 when even and (n-1)/n when one pkrange takes it all."
    )
    skew = hr.summarize_skew(load, column=column)
    widgets.render_table(skew, key="hot_skew", file_name="hot-partition-skew.csv", column_config=SKEW_COLUMNS)
    widgets.render_figure(build_skew_figure(hr.load_shares(load, column=column)), key="hot_skew_chart")


def render_replay(data: HotData) -> None:
    st.subheader("From the replay: RU/s demand per partition")
    if data.demand.empty:
        st.info(
            "No replayed data pages in this view: `ruscope replay --config ruscope.toml` measures where the "
            "configured queries land.",
            icon=":material/info:",
        )
        return
    st.markdown(DEMAND_HELP)
    for _, row in data.headroom.iterrows():
        st.markdown(_headroom_sentence(row))
    widgets.render_figure(build_demand_figure(data.demand), key="hot_demand_chart")
    widgets.render_table(
        shown(data.demand),
        key="hot_demand_table",
        file_name="hot-partition-demand.csv",
        column_config=DEMAND_COLUMNS,
        csv=data.demand,
    )
    widgets.render_table(
        data.headroom, key="hot_headroom", file_name="hot-partition-headroom.csv", column_config=HEADROOM_COLUMNS
    )
    with st.expander("Per query and pkrange"):
        widgets.render_table(data.by_query, key="hot_query_demand", file_name="hot-partition-query-demand.csv")


def _headroom_sentence(row: pd.Series) -> str:
    """One plain sentence per container: the first partition to throttle and at what multiple of the workload."""
    name = f"**{markdown_text(row['database'])}/{markdown_text(row['container'])}**"
    unrated = int(row["queries_without_rate"] or 0)
    note = (
        f" {unrated} of {row['queries']} queries have no `rate_per_s` and are left out of the demand (set how often"
        " each runs to count it)."
        if unrated
        else ""
    )
    if pd.isna(row["ru_s"]):
        return (
            f"{name}: none of its {row['queries']} replayed queries has a `rate_per_s`, so its demand in RU/s is "
            "unknown: set how often each runs to see which partition throttles first."
        )
    if pd.isna(row["multiplier"]):
        return (
            f"{name}: demand {row['ru_s']:.2f} RU/s; the partitions' budget is unknown (no storage snapshot or "
            f"provisioned RU/s metric), so the throttling point cannot be said.{note}"
        )
    verdict = "throttles already at the configured rates" if row["multiplier"] < 1 else "would throttle first"
    return (
        f"{name}: demand {row['ru_s']:.2f} RU/s. Pkrange {markdown_text(row['first_to_throttle'])} {verdict}: at "
        f"{row['multiplier']:.2f}x the configured workload.{note}"
    )


st.title("Hot partitions")
view = frame_state()
data = load_hot(view)
widgets.render_store_warnings(data.warnings)
if data.empty:
    widgets.render_empty_state(
        view, what="partition metrics, logs or replay data", how=HOW_TO_COLLECT, commands=COLLECT
    )
else:
    render_heatmap(data)
    render_keys(data)
    render_skew(data)
    render_replay(data)
