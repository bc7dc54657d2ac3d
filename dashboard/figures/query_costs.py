"""The Query costs page's figures: RU per execution over time, and a run's RU per partition as stacked bars.

Values go to plotly as numpy arrays (sent as packed binary, not lists of Python floats), y axes start at
zero, and figures draw what a person can see: aggregates (`analysis.queries.runs`), not every row. A
partition is labelled `container/pkrange` (`partition_labels`) and its colour is keyed on that label
(`partition_colors`), so two containers' ranges never share a colour and figures given the same colours
draw a partition alike. Two runs side by side share one y scale (`stacked_range`), so the taller bar is
the costlier run's.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from analysis.pkrange_ids import GATEWAY, pkrange_sort_key
from analysis.queries.runs import OTHER
from dashboard.figures.canvas import empty_note, line_mode, readable, utc_naive, with_time_range

PARTITION_PALETTE = [*qualitative.Alphabet, *qualitative.Dark24, *qualitative.Light24]  # 74 colours
GATEWAY_COLOR = "#9e9e9e"
OTHER_COLOR = "#d9d9d9"  # the partitions folded together (analysis.queries.runs.fold_partitions)
GATEWAY_LABEL = "gateway"
LEGEND_ROW_PX, BREAKDOWN_HEIGHT = 20, 450  # a breakdown grows with its legend, so no entry scrolls out of view


def query_labels(frame: pd.DataFrame) -> pd.Series:
    """The query name, or `database/container/query` when the frame spans several containers (vectorised:
    a row-wise join over a million Arrow-backed strings took seconds)."""
    names = frame["query_name"].astype(str)
    if frame[["database", "container"]].drop_duplicates().shape[0] <= 1:
        return names
    return frame["database"].astype(str) + "/" + frame["container"].astype(str) + "/" + names


def partition_labels(frame: pd.DataFrame) -> pd.Series:
    """`container/pkrange` of each row (`database/container/pkrange` when the frame spans several
    databases), "gateway" for RU not charged by a data page: two containers' ranges never share a label."""
    container = frame["container"].astype(str)
    if frame["database"].nunique(dropna=False) > 1:
        container = frame["database"].astype(str) + "/" + container
    labels = container + "/" + frame["pkrange_id"].astype(str)
    return labels.where(frame["pkrange_id"].ne(GATEWAY), GATEWAY_LABEL)


def partition_colors(labels: Iterable[str]) -> dict[str, str]:
    """A colour per partition label, keyed on the label: the labels in order (container, then pkrange in
    numeric order) take the palette's colours in turn, so no two share one until the palette runs out.
    Give two figures the colours of the union of their labels and a partition looks the same in both."""
    labels = set(labels) - {GATEWAY_LABEL}
    folded = {label for label in labels if label.endswith("/" + OTHER)}
    ordered = sorted(labels - folded, key=_partition_order)
    colors = {label: PARTITION_PALETTE[n % len(PARTITION_PALETTE)] for n, label in enumerate(ordered)}
    return {**colors, **dict.fromkeys(folded, OTHER_COLOR), GATEWAY_LABEL: GATEWAY_COLOR}


def _partition_order(label: str) -> tuple[str, tuple[int, int, str]]:
    container, _, pkrange_id = label.rpartition("/")
    return container, pkrange_sort_key(pkrange_id)


@readable
def build_ru_over_time_figure(series: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """One line per query: its mean RU per execution per run (or window) at the run's start
    (`analysis.queries.runs.ru_over_time`); the y axis from zero."""
    figure = go.Figure()
    figure.update_layout(
        title=title,
        xaxis_title="run start (UTC)",
        yaxis_title="mean RU per execution",
        legend_title_text="query",
        hovermode="closest",
    )
    figure.update_yaxes(rangemode="tozero")
    if series.empty:
        return empty_note(figure, "No successful executions to draw.")
    labels = query_labels(series)
    times = utc_naive(series["time"]).to_numpy()
    values = series["mean_ru"].to_numpy(dtype=float)
    counts = series[["runs", "executions"]].to_numpy(dtype=float)  # numbers: sent packed, not as text
    codes, names = pd.factorize(labels, sort=True)
    for code, label in enumerate(names):
        mine = codes == code
        figure.add_trace(
            go.Scatter(
                x=times[mine],
                y=values[mine],
                name=label,
                mode=line_mode(int(mine.sum())),
                customdata=counts[mine],
                hovertemplate="%{x}<br>%{y:.2f} RU<br>runs: %{customdata[0]}, executions: %{customdata[1]}"
                + f"<extra>{label}</extra>",
            )
        )
    return with_time_range(figure, times)


@readable
def build_pkrange_breakdown_figure(
    breakdown: pd.DataFrame,
    *,
    title: str | None = None,
    y_title: str = "RU per execution",
    colors: dict[str, str] | None = None,
    y_range: list[float] | None = None,
) -> go.Figure:
    """Stacked bars: one bar per query, one segment per partition (`analysis.queries.costs.pkrange_breakdown`).

    Bars keep the frame's query order (most expensive first); segments stack in partition order with the
    gateway on top; one trace per `container/pkrange` label, coloured by `colors` (default: this frame's
    `partition_colors`), so a partition has the same colour in every bar. The y axis starts at zero and
    spans `y_range` when given (`stacked_range` of the runs drawn side by side). A query is ticked by its
    own name (`short_names`), so two runs side by side keep room for their bars; the legend may reach
    below the plot, beside the names, and the figure grows with it, so no partition scrolls out of view.
    """
    figure = go.Figure()
    figure.update_layout(
        title=title,
        barmode="stack",
        xaxis_title="query",
        yaxis_title=y_title,
        legend_title_text="served by",
    )
    figure.update_yaxes(rangemode="tozero", range=y_range)
    if breakdown.empty:
        return empty_note(figure, "No requests recorded for this run.")
    labels = query_labels(breakdown).to_numpy(dtype=object)
    partitions = partition_labels(breakdown)
    legend_px = LEGEND_ROW_PX * (partitions.nunique() + 2)  # the entries and the legend's title
    figure.update_layout(height=max(BREAKDOWN_HEIGHT, legend_px), legend={"maxheight": legend_px})
    colors = colors or partition_colors(partitions)
    queries = list(dict.fromkeys(labels))
    ticks = short_names(breakdown)
    figure.update_xaxes(
        categoryorder="array", categoryarray=queries, tickvals=queries, ticktext=[ticks[q] for q in queries]
    )
    values = breakdown["ru"].to_numpy(dtype=float)
    for name in sorted(partitions.unique(), key=lambda label: (label == GATEWAY_LABEL, _partition_order(label))):
        mine = partitions.eq(name).to_numpy()
        figure.add_trace(
            go.Bar(
                x=labels[mine],
                y=values[mine],
                name=name,
                marker_color=colors.get(name, GATEWAY_COLOR),
                hovertemplate="%{x}<br>%{y:.2f} RU<extra>" + name + "</extra>",
            )
        )
    return figure


def short_names(frame: pd.DataFrame) -> dict[str, str]:
    """Each query label's tick text: the query's own name where no two containers' queries share it (the
    container is in the hover and in the partitions' legend), else the whole label. Half a page wide, a
    `database/container/query` label rotated under its bar took more height than the bars."""
    pairs = pd.DataFrame({"label": query_labels(frame), "name": frame["query_name"].astype(str)}).drop_duplicates()
    shared = pairs["name"].duplicated(keep=False)
    return dict(zip(pairs["label"], pairs["name"].where(~shared, pairs["label"])))


def stacked_range(*breakdowns: pd.DataFrame) -> list[float] | None:
    """[0, the tallest stacked bar of any of `breakdowns` + 5%]: one y scale for runs drawn side by side, so a
    bar twice as tall costs twice as much in both (None when none has a bar)."""
    tops = [float(b["ru"].groupby(query_labels(b).to_numpy()).sum().max()) for b in breakdowns if not b.empty]
    return [0.0, max(tops) * 1.05] if tops and max(tops) > 0 else None
