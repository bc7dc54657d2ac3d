"""Readable figures (issue 23, point 5), asserted on the pure builders of `dashboard.figures`: every
`build_*_figure` (found by name, so a new one without a case here fails) sets its text at 11 px or more, with
data and without; the logical-key heatmap's colour scale is clipped at a percentile or logarithmic; two runs
side by side share a y scale; one point in time is not drawn on an axis ticked in fractions of a second."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import dashboard.figures
from analysis.hot.partitions import Heatmap
from analysis.overview import FILLS
from dashboard.figures import advisor, canvas, cost, fleet, hot_partitions, overview, query_costs, storage, throttling

T0 = pd.Timestamp("2026-05-01 10:00")
KEY = {"account": "a", "database": "shop", "container": "orders"}
MIN_PX = 11


def times(n: int, step: str = "5min") -> pd.Series:
    return pd.Series(pd.date_range(T0, periods=n, freq=step, tz="UTC"))


def key_heatmap(z: np.ndarray, *, step: str = "5min") -> Heatmap:
    rows = pd.DataFrame({"label": [f'["k{i}"]' for i in range(z.shape[0])], "pkranges": ["0"] * z.shape[0]})
    stamps = pd.date_range(T0, periods=z.shape[1], freq=step).to_numpy()
    return Heatmap(z=z.astype(float), times=stamps, rows=rows, bin=pd.Timedelta(step))


def normalized_heatmap(columns: int = 3) -> Heatmap:
    return Heatmap(
        z=np.linspace(10, 100, 2 * columns).reshape(2, columns),
        times=pd.date_range(T0, periods=columns, freq="1min").to_numpy(),
        rows=pd.DataFrame({"label": ["0", "1"]}),
        bin=pd.Timedelta("1min"),
    )


def breakdown(ru: dict[str, float], pkrange: str = "0") -> pd.DataFrame:
    return pd.DataFrame([{**KEY, "query_name": q, "pkrange_id": pkrange, "ru": v} for q, v in ru.items()])


def fleet_frame() -> pd.DataFrame:
    return pd.DataFrame(
        [{**KEY, "risk": 0.8, "waste": 0.1}, {**KEY, "container": "people", "risk": 0.2, "waste": None}]
    )


def fills_frame() -> pd.DataFrame:
    return pd.DataFrame([{**KEY, **dict.fromkeys(FILLS.values(), 0.0004)}, {**KEY, "container": "people", **dict.fromkeys(FILLS.values(), 100.0)}])  # fmt: skip


def units_frame() -> pd.DataFrame:
    return pd.DataFrame([{**KEY, "unit": "shop / orders", "monthly": 58.4, "storage_monthly": 2.5, "currency": "USD"},
                         {**KEY, "unit": "shop (shared)", "monthly": 5.0, "storage_monthly": None, "currency": "USD"}])  # fmt: skip


def curve_frame() -> pd.DataFrame:
    return pd.DataFrame({"ru_s": [0.0, 100.0, 200.0], "hours_fully_used": [1.0, 0.9, 0.1], "monthly": [6.0, 5.5, 5.8]})


# every builder with a representative frame (drawn) and an empty one (the note): name -> (drawn, empty)
CASES: dict[str, tuple[Callable[[], go.Figure], Callable[[], go.Figure]]] = {
    "build_ru_per_query_figure": (
        lambda: advisor.build_ru_per_query_figure(pd.DataFrame({"/id": [1.0, 2.0], "/tenantId": [3.0, 4.0]}, index=["q1", "q2"]), title="t"),
        lambda: advisor.build_ru_per_query_figure(pd.DataFrame()),
    ),
    "build_skew_heatmap_figure": (
        lambda: advisor.build_skew_heatmap_figure(pd.DataFrame({0: [0.5, 0.9], 1: [0.5, 0.1]}, index=["/id", "/t"]), pd.Series({"/id": 0.5, "/t": 0.5})),
        lambda: advisor.build_skew_heatmap_figure(pd.DataFrame(), pd.Series(dtype=float)),
    ),
    "build_limit_projection_figure": (
        lambda: advisor.build_limit_projection_figure(pd.DataFrame({"design": ["/id"] * 2, "day": [0, 30], "gb": [1.0, 4.0], "limit_gb": [20.0] * 2})),
        lambda: advisor.build_limit_projection_figure(pd.DataFrame()),
    ),
    "build_unit_bill_figure": (lambda: cost.build_unit_bill_figure(units_frame()), lambda: cost.build_unit_bill_figure(units_frame().iloc[:0])),
    "build_reservation_figure": (
        lambda: cost.build_reservation_figure(curve_frame(), best_ru_s=100.0, currency="USD", held_monthly=5.0),
        lambda: cost.build_reservation_figure(curve_frame().iloc[:0], best_ru_s=0.0, currency="USD"),
    ),
    "build_fleet_figure": (lambda: fleet.build_fleet_figure(fleet_frame(), title="t"), lambda: fleet.build_fleet_figure(fleet_frame().iloc[:0])),
    "build_limits_figure": (lambda: overview.build_limits_figure(fills_frame()), lambda: overview.build_limits_figure(fills_frame().iloc[:0])),
    "build_ru_over_time_figure": (
        lambda: query_costs.build_ru_over_time_figure(pd.DataFrame({**KEY, "query_name": "q", "time": times(3), "mean_ru": [1.0, 2.0, 3.0], "runs": 1, "executions": 2})),
        lambda: query_costs.build_ru_over_time_figure(pd.DataFrame()),
    ),
    "build_pkrange_breakdown_figure": (
        lambda: query_costs.build_pkrange_breakdown_figure(breakdown({"q1": 3.0, "q2": 1.0})),
        lambda: query_costs.build_pkrange_breakdown_figure(breakdown({}).reindex(columns=["ru"])),
    ),
    "build_partition_fill_figure": (
        lambda: storage.build_partition_fill_figure(pd.DataFrame({"label": ["0", "1"], "size_kb": [10.0, 5.0]}), limit_bytes=50 * 1024**3),
        lambda: storage.build_partition_fill_figure(pd.DataFrame(columns=["label", "size_kb"]), limit_bytes=50 * 1024**3),
    ),
    "build_key_fill_figure": (
        lambda: storage.build_key_fill_figure(pd.DataFrame({"label": ['["a"]'], "statistics_kb": [9e6], "logs_kb": [8e6]}), limit_bytes=20 * 1024**3),
        lambda: storage.build_key_fill_figure(pd.DataFrame(columns=["label", "statistics_kb"]), limit_bytes=20 * 1024**3),
    ),
    "build_container_growth_figure": (
        lambda: storage.build_container_growth_figure(pd.DataFrame({"label": "orders", "time": times(2), "size_kb": [1.0, 2.0]})),
        lambda: storage.build_container_growth_figure(pd.DataFrame(columns=["label", "time", "size_kb"])),
    ),
    "build_throttle_rate_figure": (
        lambda: throttling.build_throttle_rate_figure(pd.DataFrame({"label": "orders", "source": "replay", "time": times(2), "throttled": [1.0, 0.0], "requests": [10.0, 10.0], "rate": [0.1, 0.0]})),
        lambda: throttling.build_throttle_rate_figure(pd.DataFrame()),
    ),
    "build_throttle_series_figure": (
        lambda: throttling.build_throttle_series_figure(pd.DataFrame({"time": times(2), "series": "Read", "throttled": [3.0, 1.0]}), legend="operation"),
        lambda: throttling.build_throttle_series_figure(pd.DataFrame(columns=["time", "series", "throttled"])),
    ),
    "build_normalized_heatmap_figure": (
        lambda: hot_partitions.build_normalized_heatmap_figure(normalized_heatmap()),
        lambda: hot_partitions.build_normalized_heatmap_figure(key_heatmap(np.empty((0, 0)))),
    ),
    "build_key_heatmap_figure": (
        lambda: hot_partitions.build_key_heatmap_figure(key_heatmap(np.array([[1000.0, 1.0, 2.0], [3.0, 4.0, 5.0]]))),
        lambda: hot_partitions.build_key_heatmap_figure(key_heatmap(np.empty((0, 0)))),
    ),
    "build_skew_figure": (
        lambda: hot_partitions.build_skew_figure(pd.DataFrame({"label": ["0", "1"], "share": [0.7, 0.3], "even_share": [0.5, 0.5]})),
        lambda: hot_partitions.build_skew_figure(pd.DataFrame()),
    ),
    "build_demand_figure": (
        lambda: hot_partitions.build_demand_figure(pd.DataFrame({"label": ["0", "1"], "ru_s": [300.0, 10.0], "utilization_pct": [150.0, 5.0], "budget_ru_s": [200.0, 200.0]})),
        lambda: hot_partitions.build_demand_figure(pd.DataFrame()),
    ),
}  # fmt: skip


def builders() -> set[str]:
    """Every `build_*_figure` defined in a module of `dashboard.figures`."""
    found = set()
    for module in pkgutil.iter_modules(dashboard.figures.__path__):
        loaded = importlib.import_module(f"dashboard.figures.{module.name}")
        found |= {
            name
            for name, function in inspect.getmembers(loaded, inspect.isfunction)
            if name.startswith("build_") and name.endswith("_figure") and function.__module__ == loaded.__name__
        }
    return found


def font_sizes(node: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """(path, size) of every font size set anywhere in a figure's JSON (template included)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}"
            font = key == "size" and "font" in path.rsplit(".", 1)[-1]
            if (font or (key == "minsize" and path.endswith("uniformtext"))) and isinstance(value, int | float):
                yield here, float(value)
            else:
                yield from font_sizes(value, here)
    elif isinstance(node, list | tuple):
        for n, value in enumerate(node):
            yield from font_sizes(value, f"{path}[{n}]")


def test_every_builder_has_a_case() -> None:
    assert builders() == set(CASES), "add the new build_*_figure to CASES with a representative frame"


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("drawn", [True, False], ids=["drawn", "empty"])
def test_every_figure_sets_its_text_at_11_px_or_more(name: str, drawn: bool) -> None:
    figure = CASES[name][0 if drawn else 1]()
    assert bool(figure.data) == drawn, "the case draws what its id says"
    spec = figure.to_plotly_json()
    small = [(path, size) for path, size in font_sizes(spec) if size < MIN_PX]
    assert not small, small
    layout = figure.layout
    sizes = {
        "font": layout.font.size,
        "title": layout.title.font.size,
        "x ticks": layout.xaxis.tickfont.size,
        "y ticks": layout.yaxis.tickfont.size,
        "x title": layout.xaxis.title.font.size,
        "y title": layout.yaxis.title.font.size,
        "legend": layout.legend.font.size,
        "legend title": layout.legend.title.font.size,
        "hover": layout.hoverlabel.font.size,
        "bar text (shrunk to fit)": layout.uniformtext.minsize,
    }
    assert {what: size for what, size in sizes.items() if size is None or size < MIN_PX} == {}
    assert layout.uniformtext.mode == "show"  # a bar's label held at the minimum, never hidden
    assert layout.xaxis.automargin and layout.yaxis.automargin  # tick labels push the margins, never cut
    for annotation in layout.annotations:  # the empty note, a split's, a limit's
        assert annotation.font.size is not None and annotation.font.size >= MIN_PX, annotation.text
    for trace in figure.data:
        if isinstance(trace, go.Heatmap):
            assert trace.colorbar.tickfont.size >= MIN_PX and trace.colorbar.title.font.size >= MIN_PX


def test_the_key_heatmap_is_clipped_at_the_99th_percentile_of_its_cells() -> None:
    z = np.vstack([np.r_[2000.0, np.arange(1.0, 200.0)], np.r_[np.nan, np.arange(1.0, 200.0)]])  # a bulk-load column
    figure = hot_partitions.build_key_heatmap_figure(key_heatmap(z))
    [trace] = figure.data
    top = float(np.nanpercentile(z, 99))
    assert trace.zmin == 0 and trace.zmax == pytest.approx(top) and top < 200  # not 2,000: the other cells have colours
    assert trace.colorbar.title.text == f"RU/s (clipped at p99 = {top:,.0f})"
    assert np.array_equal(np.asarray(trace.customdata), z, equal_nan=True)  # the hover says the cell's own RU/s
    assert "%{customdata:.2f} RU/s" in trace.hovertemplate
    assert np.array_equal(np.asarray(trace.z), z, equal_nan=True)  # above the clip: the top colour, same value
    even = hot_partitions.build_key_heatmap_figure(key_heatmap(np.full((2, 3), 5.0)))
    assert even.data[0].zmax is None and even.data[0].colorbar.title.text == "RU/s"  # nothing above: no clip said
    p90 = hot_partitions.build_key_heatmap_figure(key_heatmap(z), percentile=90).data[0]
    assert p90.zmax == pytest.approx(np.nanpercentile(z, 90)) and "p90 = " in p90.colorbar.title.text
    assert hot_partitions.color_clip(np.array([[np.nan]])) == 0.0


def test_the_key_heatmap_offers_a_log_scale_ticked_in_ru_s() -> None:
    z = np.array([[0.0, 0.05, 3.0], [40.0, np.nan, 2500.0]])
    [trace] = hot_partitions.build_key_heatmap_figure(key_heatmap(z), scale="log").data
    colors = np.asarray(trace.z, dtype=float)
    assert colors[0, 0] == pytest.approx(np.log10(0.05))  # 0 RU/s: the palest colour (log 0 has none)
    assert colors[1, 2] == pytest.approx(np.log10(2500)) and np.isnan(colors[1, 1])  # no point: still no cell
    steps = [m * 10.0**p for p in range(-2, 5) for m in (1, 2, 5)]  # the decades of 0.05 to 2,500
    assert np.allclose(10 ** np.asarray(trace.colorbar.tickvals), steps)
    assert list(trace.colorbar.ticktext)[:4] == ["0.01", "0.02", "0.05", "0.1"]
    assert list(trace.colorbar.ticktext)[-3:] == ["10,000", "20,000", "50,000"]
    assert trace.colorbar.title.text == "RU/s (log scale)" and trace.zmax is None
    assert np.array_equal(np.asarray(trace.customdata), z, equal_nan=True)  # the hover: RU/s, not its log
    assert hot_partitions.KEY_SCALES == ("clipped", "log")


def test_the_normalized_heatmap_keeps_its_fixed_scale_and_does_not_say_throttles() -> None:
    [trace] = hot_partitions.build_normalized_heatmap_figure(normalized_heatmap()).data
    assert (trace.zmin, trace.zmax) == (0, 100)  # a percentage of the budget means one colour everywhere
    assert list(trace.colorbar.ticktext)[-1] == "100: saturated"  # 100% is not by itself a 429 (azure-monitor R10)


def test_two_runs_side_by_side_share_one_y_scale() -> None:
    a = pd.concat([breakdown({"q1": 30.0, "q2": 5.0}), breakdown({"q1": 10.0}, pkrange="1")])
    b = breakdown({"q1": 12.0, "q2": 4.0})
    shared = query_costs.stacked_range(a, b)
    assert shared == pytest.approx([0.0, 40.0 * 1.05])  # q1 stacks 30 + 10 in run A: the tallest bar of both
    ranges = [query_costs.build_pkrange_breakdown_figure(x, y_range=shared).layout.yaxis.range for x in (a, b)]
    assert ranges[0] == ranges[1] == pytest.approx((0.0, 42.0))
    assert query_costs.stacked_range(breakdown({}).reindex(columns=["ru"])) is None
    assert query_costs.build_pkrange_breakdown_figure(b).layout.yaxis.range is None  # alone: plotly's own


def test_a_breakdown_ticks_queries_by_name_and_grows_with_its_legend() -> None:
    two = pd.concat([breakdown({"q1": 1.0}), breakdown({"q1": 2.0}).assign(container="people"), breakdown({"q2": 1.0})])
    axis = query_costs.build_pkrange_breakdown_figure(two).layout.xaxis
    assert list(axis.tickvals) == ["shop/orders/q1", "shop/people/q1", "shop/orders/q2"]  # the categories
    assert list(axis.ticktext) == ["shop/orders/q1", "shop/people/q1", "q2"]  # q1 is in two containers
    many = pd.concat([breakdown({"q": 1.0}, pkrange=str(n)) for n in range(30)])
    layout = query_costs.build_pkrange_breakdown_figure(many).layout
    assert layout.height == layout.legend.maxheight == 20 * 32  # 30 partitions and the legend's title: no scroll


@pytest.mark.parametrize(
    "figure",
    [
        lambda t: query_costs.build_ru_over_time_figure(pd.DataFrame({**KEY, "query_name": "q", "time": t, "mean_ru": 1.0, "runs": 1, "executions": 1})),
        lambda t: storage.build_container_growth_figure(pd.DataFrame({"label": "orders", "time": t, "size_kb": 1.0})),
        lambda t: throttling.build_throttle_rate_figure(pd.DataFrame({"label": "o", "source": "replay", "time": t, "throttled": 1.0, "requests": 2.0, "rate": 0.5})),
        lambda t: throttling.build_throttle_series_figure(pd.DataFrame({"time": t, "series": "Read", "throttled": 1.0})),
    ],
    ids=["ru_over_time", "container_growth", "throttle_rate", "throttle_series"],
)  # fmt: skip
def test_one_point_in_time_is_drawn_on_an_axis_ticked_in_minutes(figure: Callable[[pd.Series], go.Figure]) -> None:
    one = figure(times(1))
    start, end = (pd.Timestamp(x) for x in one.layout.xaxis.range)
    assert end - start == canvas.MIN_TIME_SPAN and start < T0 < end  # not 2 ms wide (ticks "10:00:00.0005")
    assert figure(times(12)).layout.xaxis.range is None  # an hour: plotly's own range


def test_a_lone_bar_or_heatmap_column_is_a_bin_wide() -> None:
    bars = throttling.build_throttle_series_figure(pd.DataFrame({"time": times(1), "series": "Read", "throttled": 1.0}))
    assert bars.data[0].width == pytest.approx(0.8 * 60_000)  # pick_bin's smallest bin, in ms (plotly: 1 ms)
    two = throttling.build_throttle_series_figure(pd.DataFrame({"time": times(2), "series": "Read", "throttled": 1.0}))
    assert two.data[0].width is None
    [column] = hot_partitions.build_key_heatmap_figure(key_heatmap(np.array([[5.0], [1.0]]))).data
    assert [pd.Timestamp(x) for x in column.x] == [T0, T0 + pd.Timedelta("5min")]  # an empty column after it
    assert np.isnan(np.asarray(column.z, dtype=float)[:, 1]).all() and np.asarray(column.customdata)[0, 0] == 5.0


def test_time_range_leaves_a_long_span_alone_and_widens_a_short_one() -> None:
    assert canvas.time_range(pd.Series(pd.date_range(T0, periods=2, freq="1h"))) is None
    start, end = canvas.time_range(np.array([T0, T0 + pd.Timedelta("200ms")], dtype="datetime64[ns]")) or []
    assert end - start == canvas.MIN_TIME_SPAN and start + (end - start) / 2 == T0 + pd.Timedelta("100ms")
    assert canvas.time_range(pd.Series([pd.NaT])) is None
