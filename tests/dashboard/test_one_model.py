"""One definition of every figure (issue 23), as a property over generated stores: for containers of any
partition count, load, throttling and storage layout, the numbers the Overview, Fleet and Hot partitions pages
show (through AppTest, as a user reads them) equal the container model's (`analysis.overview.
summarize_containers`), and the capacity report's rows equal the pages'. Hypothesis draws the stores; a few
examples each run, since every one opens three pages."""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as strats
from streamlit.testing.v1 import AppTest

from analysis import overview
from analysis.capacity import review
from store import store_location, write_frame
from tests.analysis.test_overview import KB_PER_GB, frame, metric, row
from tests.dashboard.apptest import new_app, table


@dataclass(frozen=True)
class Container:
    """One generated container: its layout, throughput, per-minute load per range and its 429s."""

    name: str
    ranges: int
    provisioned: float
    normalized: tuple[tuple[float | None, ...], ...]  # per range, per minute (None: no point that minute)
    requests: int
    throttled: int
    snapshot: bool  # whether a storage snapshot (the layout) was collected


@strats.composite
def containers(draw: strats.DrawFn, name: str) -> Container:
    ranges = draw(strats.integers(1, 5))
    minutes = draw(strats.integers(3, 12))
    value = strats.one_of(strats.none(), strats.floats(0, 100, allow_nan=False).map(lambda v: round(v, 1)))
    normalized = tuple(tuple(draw(value) for _ in range(minutes)) for _ in range(ranges))
    requests = draw(strats.integers(1, 5000))
    return Container(
        name=name,
        ranges=ranges,
        provisioned=float(draw(strats.sampled_from([400, 1000, 6000, 18000]))),
        normalized=normalized,
        requests=requests,
        throttled=draw(strats.integers(0, requests)),
        snapshot=draw(strats.booleans()),
    )


def store_frames(fleet: list[Container]) -> dict[str, pd.DataFrame]:
    """The store tables of the generated containers, in the schema's columns (the report's tables)."""
    metrics, partitions = [], []
    for c in fleet:
        metrics.append(metric("ProvisionedThroughput", c.provisioned, container=c.name))
        for pk, series in enumerate(c.normalized):
            for minute, v in enumerate(series):
                if v is not None:
                    metrics.append(
                        metric("NormalizedRUConsumption", v, container=c.name, minute=minute, pkrange_id=str(pk))
                    )
        for minute in range(len(c.normalized[0])):
            metrics.append(metric("TotalRequestUnits", 60.0 * (minute + 1), container=c.name, minute=minute))
        ok, throttled = c.requests - c.throttled, c.throttled
        metrics += [
            metric("TotalRequests", float(ok), container=c.name, status_code="200"),
            metric("TotalRequests", float(throttled), container=c.name, status_code="429"),
        ]
        if c.snapshot:
            partitions += [
                row("partitions", c.name, pkrange_id=str(pk), size_kb=KB_PER_GB / 4, document_count=10)
                for pk in range(c.ranges)
            ]
    empty = {name: frame(name) for name in review.REPORT_TABLES}
    return {**empty, "metrics": frame("metrics", *metrics), "partitions": frame("partitions", *partitions)}


def write_store(store: Path, frames: dict[str, pd.DataFrame]) -> None:
    for name, rows in frames.items():
        if not rows.empty:
            write_frame(store_location(store), name, rows.drop(columns="run_id"), run_id="p1", part="000")


def pages(store: Path) -> dict[str, pd.DataFrame]:
    """The Overview's and Fleet's container tables and the Hot partitions page's skew table as it opens."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RUSCOPE_STORE", str(store))
        st.cache_data.clear()
        app = new_app(timeout=60)
        shown = {}
        for page, pick in (
            ("views/overview.py", lambda a: table(a, 0)),
            ("views/fleet.py", lambda a: table(a, 0)),
            ("views/hot_partitions.py", skew_table),
        ):
            app.switch_page(page).run()
            assert not app.exception, [e.message for e in app.exception]
            shown[page] = pick(app).reset_index().set_index("container")
        st.cache_data.clear()
    return shown


def skew_table(app: AppTest) -> pd.DataFrame:
    """The Hot partitions page's skew table (none without any per-pkrange load: an empty one)."""
    found = [t.value for t in app.dataframe if "gini" in t.value.columns]
    return found[0] if found else pd.DataFrame(columns=["container", "pkranges", "hottest_pkrange", "hottest_pct"])


def count(value: object) -> int | None:
    """A partition count as a page, the model and the report carry it (None: no count)."""
    return None if value is None or pd.isna(value) else int(value)  # type: ignore[arg-type]


def report_value(report: pd.DataFrame, container: str, measure: str) -> float:
    rows = report[report["container"].eq(container) & report["measure"].eq(measure) & report["section"].eq("container")]
    return float(rows["value"].iloc[0]) if len(rows) else math.nan


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(strats.lists(strats.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True).flatmap(
    lambda names: strats.tuples(*(containers(name) for name in names))
))  # fmt: skip
def test_every_page_and_the_report_show_the_models_figures(fleet: tuple[Container, ...]) -> None:
    frames = store_frames(list(fleet))
    shown_tables = ("executions", "requests", "metrics", "partitions", "logical_keys", "log_throttles")
    model = overview.summarize_containers(**{name: frames[name] for name in shown_tables}).set_index("container")
    report = review.build_capacity_report(**frames)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        write_store(store, frames)
        shown = pages(store)
    over, fleet_page, skew = shown["views/overview.py"], shown["views/fleet.py"], shown["views/hot_partitions.py"]
    for c in fleet:
        want = model.loc[c.name]
        if c.snapshot:  # the layout; without one, the ranges metrics reported last (none: no count)
            assert count(want["pkranges"]) == c.ranges
        for page in (over, fleet_page):
            got = page.loc[c.name]
            assert count(got["pkranges"]) == count(want["pkranges"])
            assert got["hot_pkrange"] == want["hot_pkrange"]
            assert got["hot_range_share"] == pytest.approx(want["hot_range_share"], abs=1e-4, nan_ok=True)
        # the Overview table and Fleet show the 429 rate in %, the model and CSV keep the share
        for got_rate in (over.loc[c.name, "throttle_rate"], fleet_page.loc[c.name, "throttle_rate"]):
            assert got_rate == pytest.approx(100 * want["throttle_rate"], abs=1e-6)
        if c.name in skew.index and pd.notna(want["hot_range_share"]):  # the model's source opens the page
            assert skew.loc[c.name, "hottest_pkrange"] == want["hot_pkrange"]
            assert skew.loc[c.name, "hottest_pct"] == pytest.approx(100 * want["hot_range_share"], abs=0.01)
            if c.snapshot:
                assert count(skew.loc[c.name, "pkranges"]) == count(want["pkranges"])
        # the report's rows are the pages' numbers, in its units (shares in %)
        assert report_value(report, c.name, "throttle_rate") == pytest.approx(100 * want["throttle_rate"], abs=0.01)
        share = report_value(report, c.name, "hot_range_share")
        assert share == pytest.approx(100 * want["hot_range_share"], abs=0.01, nan_ok=True)
        partition_rows = report[report["container"].eq(c.name) & report["section"].eq("partition")]
        if c.snapshot:
            assert partition_rows["subject"].nunique() == count(want["pkranges"])
        # the peak names its own range (which need not be the hottest by share), on the page and in the report
        assert over.loc[c.name, "hot_peak_pkrange"] == want["hot_peak_pkrange"]
        shown_peak = pd.to_numeric(pd.Series([over.loc[c.name, "hot_normalized_ru"]]), errors="coerce").iloc[0]
        assert shown_peak == pytest.approx(want["hot_normalized_ru"], nan_ok=True)  # a blank cell: no peak
        peak_rows = report[report["container"].eq(c.name) & report["measure"].eq("hot_normalized_ru")]
        assert peak_rows["subject"].tolist() == ([want["hot_peak_pkrange"]] if want["hot_peak_pkrange"] else [])
