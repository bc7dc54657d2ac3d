"""The span cells in the store (`span_cells`, a derived table: `store.rollups.derived`), and the cells of a window
from them: the stored days' cells and the raw points of the window's partial days, with ruscope's own minutes
left out by the same rule as ever (`analysis.load`).

**What is stored** (`DERIVATION`, refreshed by `ruscope compact` and after `collect`): per UTC day, the span
cells (`analysis.spans.cells`) of the day's NormalizedRUConsumption points in daily bins, with every minute
the replay sent a request to (`own_peak_second_ru` > 0: a *candidate*) counted as own, and each candidate's
figure and the replay's RU in it. Why not the rule's marks: the rule compares the replay's busiest second
with the partition's budget in force, which the window's throughput rows and storage snapshots decide (the
budget a page computes today), so the stored day must not bake one in. A candidate the rule finds to be the
workload's is given back at read time (`cells.reclaimed`), exactly. Whether a range is retired (the latest
snapshot no longer lists it) is decided at read time too.

**Which days come from cells** (`cell_days`): the window's days with stored cells that no source changed
since the last refresh (`store.rollups.derived.stale_spans`) and no period boundary cuts.

**A window's cells** (`window_cells`): the stored cells of the window's whole days, the cells of the raw
points of its partial days, the candidates of both marked by the rule (`analysis.load.minutes.marked`, with
the layout the cells report when no snapshot does), the workload's given back.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from analysis import regions
from analysis.load.frames import KEY, METRIC_COLUMNS, REQUEST_COLUMNS
from analysis.load.minutes import (
    OWN_COLUMNS,
    POINT_COLUMNS,
    marked,
    normalized_points,
    retired_ranges,
    with_own_traffic,
)
from analysis.spans.cells import (
    HISTOGRAM_COLUMNS,
    RANGE,
    RANGE_CELL_COLUMNS,
    REGION,
    REGION_CELL_COLUMNS,
    SpanCells,
    empty_cells,
    reclaimed,
    span_cells,
    typed,
)
from cosmoscore.monitor.metrics import NORMALIZED_RU
from store.records import METRICS, REQUESTS, SPAN_CELLS
from store.rollups.derived import Derivation, Source
from store.rollups.periods import Period

DAY = dt.timedelta(days=1)
TIER = "1d"
APP_ID = "ruscope-span-cells"
CANDIDATE_COLUMNS = [*RANGE, *SPAN_CELLS.pick("time", "minute", "value", "grain_s"), *OWN_COLUMNS]


def day_rows(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The `span_cells` rows of some whole days from their metrics' and requests' rows (pure)."""
    metrics = regions.without_combined_duplicates(frames[METRICS.name])  # as a page's read of them (`regions`)
    points = with_own_traffic(normalized_points(metrics), frames.get(REQUESTS.name))
    if points.empty:
        return pd.DataFrame(columns=SPAN_CELLS.columns)
    candidate = points["own_peak_second_ru"].gt(0).to_numpy()
    cells = span_cells(points.assign(own=candidate, retired=False), DAY)
    chosen = points[candidate]
    candidates = chosen[RANGE].assign(
        time=chosen["time"].dt.floor("D"),
        minute=chosen["time"],
        value=chosen["normalized_ru"],
        grain_s=chosen["grain_s"],
        **{name: chosen[name] for name in OWN_COLUMNS},
    )
    parts = [
        cells.ranges.drop(columns="retired").assign(kind="range"),
        cells.regions.assign(kind="region", pkrange_id=None),
        cells.histogram.assign(kind="value"),
        candidates.assign(kind="candidate"),
    ]
    out = pd.concat([part for part in parts if not part.empty], ignore_index=True)
    out = out.assign(tier=TIER).reindex(columns=[c for c in SPAN_CELLS.columns if c != "run_id"])
    times = [field.name for field in SPAN_CELLS.schema if pa.types.is_timestamp(field.type)]
    return out.assign(**{name: pd.to_datetime(out[name], utc=True) for name in times if name in out})


DERIVATION = Derivation(
    table=SPAN_CELLS,
    sources=(
        Source(METRICS, tuple(METRIC_COLUMNS), keep=lambda frame: frame["metric"].eq(NORMALIZED_RU)),
        Source(REQUESTS, tuple(REQUEST_COLUMNS)),
    ),
    compute=day_rows,
    app_id=APP_ID,
)


def in_region(rows: pd.DataFrame, region: str | None) -> pd.DataFrame:
    """The rows of one region's cells (None: every region's, as `analysis.regions.select_region` keeps the
    metrics of every region for the account in total)."""
    if region is None or rows.empty:
        return rows
    return rows[rows["region"].astype(object).eq(region).fillna(False).astype(bool)].reset_index(drop=True)


def stored_cells(rows: pd.DataFrame) -> tuple[SpanCells, pd.DataFrame]:
    """The cells (candidates counted own, none retired) and the candidates (`CANDIDATE_COLUMNS`) of `span_cells`
    rows."""
    if rows.empty:
        return empty_cells(), pd.DataFrame(columns=CANDIDATE_COLUMNS)
    kind = rows["kind"]
    region = rows["region"].astype(object).fillna("")
    rows = rows.assign(region=region, **{name: rows[name].astype(str) for name in KEY})
    ranges = rows[kind.eq("range")].assign(retired=False)
    cells = SpanCells(
        ranges[RANGE_CELL_COLUMNS].astype({"pkrange_id": str}).reset_index(drop=True),
        rows[kind.eq("region")][REGION_CELL_COLUMNS].reset_index(drop=True),
        rows[kind.eq("value")][HISTOGRAM_COLUMNS].astype({"pkrange_id": str}).reset_index(drop=True),
    )
    candidates = rows[kind.eq("candidate")][CANDIDATE_COLUMNS].astype({"pkrange_id": str}).reset_index(drop=True)
    return typed(cells), candidates


OWN_MINUTE_COLUMNS = [*RANGE, "time"]


def window_cells(
    stored: pd.DataFrame,
    metrics: pd.DataFrame,
    requests: pd.DataFrame | None,
    partitions: pd.DataFrame | None,
) -> tuple[SpanCells, pd.DataFrame]:
    """The cells of a window: `stored` (`span_cells` rows of its whole days) and `metrics` (the window's rows:
    its throughput, and its NormalizedRUConsumption points outside those days), the replay's minutes marked
    by the rule with the budgets `metrics` and `partitions` give, and given back where they were the
    workload's; ranges the latest snapshot no longer lists retired (the module docstring). And the minutes
    that were ruscope's own (`OWN_MINUTE_COLUMNS`: what a heatmap marks)."""
    own = pd.DataFrame(columns=OWN_MINUTE_COLUMNS)
    kept, candidates = stored_cells(stored)
    raw = normalized_points(metrics)
    points = with_own_traffic(raw, _on_days(requests, raw["time"]))
    chosen = points["own_peak_second_ru"].gt(0).to_numpy() if len(points) else np.zeros(0, dtype=bool)
    edges = span_cells(points.assign(own=chosen, retired=False), DAY)
    cells = SpanCells.concat([kept, edges])
    if cells.ranges.empty:
        return cells, own
    found = pd.concat(
        [
            candidates.rename(columns={"time": "bin", "minute": "time", "value": "normalized_ru"}),
            points[chosen].assign(bin=pd.to_datetime(points["time"][chosen], utc=True).dt.floor("D")),
        ],
        ignore_index=True,
    )
    if len(found):
        found = found.assign(time=pd.to_datetime(found["time"], utc=True).astype("datetime64[ns, UTC]"))
        marks = marked(found[[*POINT_COLUMNS, *OWN_COLUMNS]], metrics, partitions, reported=reported_layout(cells))
        mine = marks["own"].to_numpy(dtype=bool)
        cells, own = reclaimed(cells, found[~mine]), found[mine][OWN_MINUTE_COLUMNS].reset_index(drop=True)
    retired = retired_ranges(cells.ranges[[*KEY, "pkrange_id"]], partitions)
    cells = SpanCells(cells.ranges.assign(retired=retired.to_numpy(dtype=bool)), cells.regions, cells.histogram)
    return cells, own


def _on_days(requests: pd.DataFrame | None, times: pd.Series) -> pd.DataFrame | None:
    """The requests of the days `times` meet: the replay's minutes among the raw points are theirs alone (the
    stored days' candidates carry theirs), and a month of requests is a million rows."""
    if requests is None or requests.empty:
        return requests
    days = pd.to_datetime(times, utc=True).dt.floor("D").unique() if len(times) else []
    at = pd.to_datetime(requests["time"], utc=True).dt.floor("D")
    return requests[at.isin(days).to_numpy(dtype=bool)]


def reported_layout(cells: SpanCells) -> pd.DataFrame:
    """Per container: how many ranges reported in its latest minute (the most of any region): the layout
    without a storage snapshot (`analysis.load.layout`), from the cells' last points."""
    ranges = cells.ranges
    if ranges.empty:
        return pd.DataFrame(columns=[*KEY, "partitions"])
    last = pd.to_datetime(cells.regions["last_minute"], utc=True)
    latest = cells.regions.assign(_last=last).groupby(REGION)["_last"].max().rename("_latest").reset_index()
    ends = ranges.groupby(RANGE)["last_time"].max().reset_index().merge(latest, on=REGION)
    at_latest = ends[pd.to_datetime(ends["last_time"], utc=True).eq(ends["_latest"])]
    counts = at_latest.groupby(REGION).size().groupby(KEY).max().astype(float)
    return counts.rename("partitions").reset_index()


def cell_days(
    stored: Collection[dt.date],
    stale: Sequence[Period] | None,
    boundaries: Sequence[dt.datetime | pd.Timestamp | None],
) -> list[dt.date]:
    """The days a window reads from its stored cells: of the days with `stored` cells, those no `stale` span
    (`store.rollups.derived.stale_spans`, None: everything) meets and none of the periods' `boundaries` cuts
    (a period that starts or ends inside a day reads that day's points: a cell is a whole day)."""
    if stale is None:
        return []
    cut = {pd.Timestamp(b).tz_convert("UTC").date() for b in boundaries if b is not None and not _midnight(b)}
    out = []
    for day in sorted(stored):
        start = dt.datetime.combine(day, dt.time(), dt.UTC)
        if day in cut or any(span.start < start + DAY and span.end > start for span in stale):
            continue
        out.append(day)
    return out


def _midnight(moment: dt.datetime | pd.Timestamp) -> bool:
    stamp = pd.Timestamp(moment)
    return bool(stamp == stamp.floor("D"))
