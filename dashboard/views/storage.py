"""Storage: how full each physical partition is against 50 GB, the largest logical keys against 20 GB,
how fast they grow and when they would reach the limit, each container's size over time, and its index
size against its data.

Layout only: the store, time range and scope come from the frame (`dashboard.state`), the data from
`dashboard.loaders` (`partitions` and `logical_keys` from `ruscope storage`, `log_key_sizes` from
`ruscope logs`), the numbers from `analysis.storage`, the figures from `dashboard.figures.storage`, the
limits from `cosmoscore.limits`. Every widget has a key (tests drive them by key).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from analysis import storage
from cosmoscore.limits import Limits
from dashboard import widgets
from dashboard.figures.storage import build_container_growth_figure, build_key_fill_figure, build_partition_fill_figure
from dashboard.loaders.tables import load_view
from dashboard.state import frame_state

LIMITS = Limits()
HOW_TO_COLLECT = "Take storage snapshots of the containers (partition sizes and the largest logical keys)"
COLLECT = ["ruscope storage --config ruscope.toml", "ruscope replay --config ruscope.toml --store {store}"]
STORAGE_COMMANDS = ["ruscope storage --config ruscope.toml   # partition sizes and the largest logical keys"]

GROWTH_HELP = """
**growth KB/day** is a least-squares line through the size at each snapshot in the time range;
**projected full** is when that line reaches the limit. Both are blank with a reason when there are fewer
than two snapshots, the size is not growing, or the line gets there only after 100 years. A physical partition splits past 50 GB (its children get
new pkrange ids, so their history starts at the split); a logical partition cannot grow past 20 GB at all:
writes to that key fail. Logical key sizes are sampled by the service (statistics) or reported per key by
diagnostic logs (logs): a key is one row with both sizes, and its fill and growth come from the source with
more snapshots (a growth line needs two), ties going to the newer. Sizes are shown in the unit that fits the
largest (KB, MB or GB; the CSV keeps KB) and fills as a percentage of the limit; a limit far above every bar
is named above the figure instead of drawn, so the bars stay visible. The rules are in `analysis/storage.py`.
"""

_GROWTH = {
    "snapshots": st.column_config.NumberColumn("snapshots"),
    "growth_kb_per_day": st.column_config.NumberColumn("growth KB/day", format="%.1f"),
    "projected_full": st.column_config.DatetimeColumn("projected full (UTC)", timezone="UTC", format="YYYY-MM-DD"),
    "projection_note": st.column_config.TextColumn("why no projection"),
}
INDEX_COLUMNS = {
    "label": st.column_config.TextColumn("container"),
    "time": st.column_config.DatetimeColumn("snapshot (UTC)", timezone="UTC"),
    "data_kb": st.column_config.NumberColumn("data KB", format="%.0f"),
    "index_kb": st.column_config.NumberColumn("index KB", format="%.0f"),
    "index_to_data": st.column_config.NumberColumn("index / data", format="%.2f"),
    "note": st.column_config.TextColumn("note"),
}
HIDDEN = ["account", "database", "container"]


SHARED_HELP = """These containers have no RU/s of their own: they spend their database's shared throughput, one
throughput unit (Azure Monitor reports its partitions' utilisation for the database, on the Hot partitions page).
Each container's physical partitions above are its own data."""


def size_columns(frame: pd.DataFrame, unit: storage.SizeUnit, *, limit: str, sizes: dict[str, str]) -> dict[str, Any]:
    """The headers of a fill table: its sizes in `unit` (`sizes`: column -> header), the fill as a percentage
    with the decimals its smallest value needs, its growth."""
    decimals = storage.percent_decimals(frame["fill_pct"])
    number = "%.0f" if unit.name == "KB" else "%.3f"
    return {
        **{
            name: st.column_config.NumberColumn(f"{header} {unit.name}", format=number)
            for name, header in sizes.items()
        },
        "fill_pct": st.column_config.NumberColumn(f"% of {limit}", format=f"%.{decimals}f%%"),
        **_GROWTH,
    }


def in_unit(frame: pd.DataFrame, unit: storage.SizeUnit, columns: list[str]) -> pd.DataFrame:
    """The frame with `columns` (KB) in `unit`; the CSV keeps the KB."""
    return frame.assign(**{name: storage.in_unit(frame[name], unit) for name in columns})


def render_partitions(partitions: pd.DataFrame) -> None:
    fill = storage.partition_fill(partitions, limits=LIMITS)
    st.subheader("Physical partitions against 50 GB")
    limit = LIMITS.physical_partition_max_bytes
    widgets.render_figure(build_partition_fill_figure(fill, limit_bytes=limit), key="storage_partitions_chart")
    unit = storage.size_unit(fill["size_kb"])
    columns = {
        "label": st.column_config.TextColumn(storage.label_title(fill, "pkrange")),
        **size_columns(fill, unit, limit="50 GB", sizes={"size_kb": "size"}),
        "document_count": st.column_config.NumberColumn("documents"),
    }
    shown = in_unit(fill, unit, ["size_kb"])[
        ["label", "size_kb", "fill_pct", "document_count", *storage.GROWTH_COLUMNS]
    ]
    widgets.render_table(
        shown, key="storage_partitions", file_name="storage-partitions.csv", column_config=columns, csv=fill
    )


def render_shared(partitions: pd.DataFrame) -> None:
    """The shared-throughput databases of the view: which containers spend one database's RU/s."""
    shared = storage.shared_throughput(partitions)
    if shared.empty:
        return
    st.subheader("Shared-throughput databases")
    st.caption(SHARED_HELP)
    columns = {
        "containers": st.column_config.TextColumn("containers sharing its RU/s"),
        "database_throughput_ru": st.column_config.NumberColumn("shared RU/s", format="%.0f"),
    }
    widgets.render_table(shared, key="storage_shared", file_name="storage-shared-databases.csv", column_config=columns)


def render_keys(logical_keys: pd.DataFrame, log_key_sizes: pd.DataFrame) -> None:
    keys = storage.key_fill(logical_keys, log_key_sizes, limits=LIMITS)
    st.subheader("Largest logical keys against 20 GB")
    if keys.empty:
        st.caption("No logical key sizes in this view: `ruscope storage` lists the largest keys it samples.")
        return
    limit = LIMITS.logical_partition_max_bytes
    widgets.render_figure(build_key_fill_figure(keys, limit_bytes=limit), key="storage_keys_chart")
    sized = ["size_kb", "statistics_kb", "logs_kb"]
    unit = storage.size_unit(pd.concat([keys[name] for name in sized], ignore_index=True))
    columns = {
        "label": st.column_config.TextColumn(storage.label_title(keys, "partition key")),
        "source": st.column_config.TextColumn("size, fill and growth from"),
        **size_columns(
            keys, unit, limit="20 GB", sizes={"size_kb": "size", "statistics_kb": "statistics", "logs_kb": "logs"}
        ),
    }
    order = ["label", "size_kb", "fill_pct", "source", "statistics_kb", "logs_kb", *storage.GROWTH_COLUMNS]
    widgets.render_table(
        in_unit(keys, unit, sized)[order], key="storage_keys", file_name="storage-keys.csv", column_config=columns,
        csv=keys,
    )  # fmt: skip


def render_growth(partitions: pd.DataFrame) -> None:
    sizes = storage.container_sizes(partitions)
    st.subheader("Size over time")
    widgets.render_figure(build_container_growth_figure(sizes), key="storage_growth_chart")
    unit = storage.size_unit(sizes["size_kb"])
    columns = {
        "label": st.column_config.TextColumn(storage.container_title(sizes)),
        "time": st.column_config.DatetimeColumn("snapshot (UTC)", timezone="UTC"),
        "size_kb": st.column_config.NumberColumn(f"size {unit.name}", format="%.0f" if unit.name == "KB" else "%.3f"),
        "document_count": st.column_config.NumberColumn("documents"),
        "pkranges": st.column_config.NumberColumn("pkranges"),
    }
    shown = in_unit(sizes, unit, ["size_kb"]).drop(columns=[*HIDDEN, "run_id"])
    widgets.render_table(shown, key="storage_sizes", file_name="storage-sizes.csv", column_config=columns, csv=sizes)


def render_index(partitions: pd.DataFrame) -> None:
    index = storage.index_sizes(partitions)
    st.subheader("Index against data")
    st.caption(
        "Index = the container's collectionSize - documentsSize. Where they are equal or missing the index "
        f"is blank and marked '{storage.INDEX_NOT_REPORTED}' (the local emulator reports no index size)."
    )
    widgets.render_table(
        index.drop(columns=HIDDEN),
        key="storage_index",
        file_name="storage-index.csv",
        column_config={**INDEX_COLUMNS, "label": st.column_config.TextColumn(storage.container_title(index))},
        csv=index,
    )


ONE_COPY = """Sizes are one copy of the data: the storage collector's partition statistics, whatever region
is picked. The account keeps a full copy in each of its {n} regions, so it stores (and is billed for) {n} times
these sizes; the 20 GB and 50 GB limits hold for each copy."""

st.title("Storage")
view = frame_state()
partitions = load_view(view, "partitions", columns=storage.PARTITION_COLUMNS)
logical_keys = load_view(view, "logical_keys", columns=storage.LOGICAL_KEY_COLUMNS)
log_key_sizes = load_view(view, "log_key_sizes", columns=storage.LOG_KEY_SIZE_COLUMNS)
executions = load_view(view, "executions", columns=["run_id"])
widgets.render_store_warnings(partitions.warnings + logical_keys.warnings + log_key_sizes.warnings)
if partitions.frame.empty and logical_keys.frame.empty and log_key_sizes.frame.empty:
    if executions.frame.empty:
        widgets.render_empty_state(view, what="storage snapshots", how=HOW_TO_COLLECT, commands=COLLECT)
    else:
        widgets.render_monitor_missing(
            what="storage snapshots",
            shown="nothing: the replay measures RU, not bytes",
            adds="`ruscope storage` records each physical partition's size and documents, the largest logical "
            "keys and the index size; two or more snapshots give growth rates and the date each reaches "
            "50 GB / 20 GB.",
            commands=STORAGE_COMMANDS,
        )
else:
    if len(view.regions) > 1:
        st.caption(ONE_COPY.format(n=len(view.regions)))
    render_partitions(partitions.frame)
    render_shared(load_view(view, "partitions", columns=storage.SHARED_COLUMNS).frame)
    render_keys(logical_keys.frame, log_key_sizes.frame)
    render_growth(partitions.frame)
    render_index(partitions.frame)
    with st.expander("How growth and the projected date are computed"):
        st.markdown(GROWTH_HELP)
