"""The load model of one view's frames, built once (`build`): the per-pkrange minutes, the consumed intervals,
the layout, and their per-container summaries.

Why: the figures of one view all read the same few derivations of the same frames. A capacity report built
the per-pkrange minutes five times (the fleet's ranking, the hottest range, the autoscale needs, the
saturation finding, the burst rule) and the consumed intervals eight; on a month of one-minute points for 100
pkranges each build took seconds. A caller (a page's loader, the report) builds a `LoadModel` of its frames,
once the window, scope and region are cut, and hands it to every figure function it calls with those frames;
a function given none builds what it needs from its frames, so each stays a pure function of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis import spans
from analysis.load.consumed import consumed_intervals, summarize_consumed
from analysis.load.frames import KEY
from analysis.load.layout import partition_layout
from analysis.load.minutes import partition_minutes
from analysis.load.stored import OWN_MINUTE_COLUMNS, reported_layout, window_cells
from analysis.load.summary import SUSTAINED_QUANTILE, summarize_cells


@dataclass(frozen=True)
class LoadModel:
    """What `build` derived from one (metrics, requests, partitions); the frames are shared, not copied: a
    reader that changes one copies it first."""

    # `partition_minutes`: NormalizedRUConsumption per pkrange and interval, marked own; None for a model of
    # stored span cells (`build(..., span_cells=)`), which never holds every minute (`require_minutes`)
    minutes: pd.DataFrame | None
    cells: spans.SpanCells  # the span cells `ranges` and `load` are computed from (`analysis.spans`)
    own_minutes: pd.DataFrame  # the minutes that were ruscope's own: KEY, region, pkrange_id, time
    ranges: pd.DataFrame  # `analysis.spans.range_spans` of `minutes` at `SUSTAINED_QUANTILE`: per pkrange
    consumed: pd.DataFrame  # `consumed_intervals`: TotalRequestUnits per interval, the replay's RU beside it
    layout: pd.DataFrame  # `partition_layout`: each container's physical partitions now
    load: pd.DataFrame  # `summarize_cells` of `cells`: peak minute, sustained load, own minutes
    consumed_summary: pd.DataFrame  # `summarize_consumed` of `consumed`: peak and p95 RU/s, own RU subtracted

    @property
    def reporting(self) -> pd.DataFrame:
        """The containers whose NormalizedRUConsumption (split by pkrange, by name) the model holds: what a
        page that read cells instead of those points still knows of them (`analysis.fleet.shared_offer_members`)."""
        return self.cells.ranges[KEY].drop_duplicates()

    def require_minutes(self) -> pd.DataFrame:
        """The per-minute frame, for a figure that needs every minute (the autoscale needs, the burst rule)."""
        if self.minutes is None:
            raise ValueError("this load model was built from stored span cells; build it from the raw minutes")
        return self.minutes


def build(
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None = None,
    partitions: pd.DataFrame | None = None,
    *,
    span_cells: pd.DataFrame | None = None,
) -> LoadModel:
    """The model of these frames (the metrics of the view's region: `analysis.regions.select_region`). With
    `span_cells` (the `span_cells` rows of the window's whole days, `analysis.load.stored`), `metrics` holds
    NormalizedRUConsumption points only for the other days: the same figures, from a read that does not grow
    with the window."""
    consumed = consumed_intervals(metrics, requests)
    if span_cells is None:
        every = partition_minutes(metrics, requests, partitions)
        minutes: pd.DataFrame | None = every
        cells = spans.span_cells(every, spans.BIN)
        own = every[every["own"].astype(bool)][OWN_MINUTE_COLUMNS].reset_index(drop=True)
        layout = partition_layout(partitions, metrics)
    else:
        minutes, (cells, own) = None, window_cells(span_cells, metrics, requests, partitions)
        layout = partition_layout(partitions, metrics, reported=reported_layout(cells))
    ranges = spans.span_statistics(cells, SUSTAINED_QUANTILE)
    return LoadModel(
        minutes=minutes,
        cells=cells,
        own_minutes=own,
        ranges=ranges,
        consumed=consumed,
        layout=layout,
        load=summarize_cells(cells, ranges),
        consumed_summary=summarize_consumed(consumed),
    )
