"""The Overview page through the frame (AppTest): the default page; an empty store, a replay-only store, a
store with metrics, storage and alerts, and the collected store; and its figure builder on frames."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.proto.Metric_pb2 import Metric
from streamlit.testing.v1 import AppTest

from analysis import overview, units
from dashboard.figures import overview as figures_overview
from store import store_location, write_frame
from tests.analysis.test_overview import frame, row, shop_frames
from tests.dashboard.apptest import chart, minutes_ago, run_app, store_rows, write_plan, write_rows

OVERVIEW = "views/overview.py"


def open_overview() -> AppTest:
    app = run_app()  # the default page: no switch needed
    assert not app.exception, [e.message for e in app.exception]
    return app


def limit_bars(app: AppTest) -> dict[str, list[float | None]]:
    """The limits figure's bars as drawn (plotly sends arrays as typed binary: decoded here)."""
    traces = chart(app, "overview_limits")["data"]
    return {t["name"]: [None if math.isnan(v) else v for v in values(t["x"])] for t in traces}


def values(data: list | dict) -> list[float]:
    """A trace's numbers: a list, or numpy's bytes in base64 ({"dtype", "bdata"})."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).astype(float).tolist()
    return [math.nan if v is None else float(v) for v in data]


def write_shop(store: Path) -> None:
    for table, rows in shop_frames().items():
        write_frame(store_location(store), table, rows.drop(columns="run_id"), run_id="r1", part="000")


def test_the_default_page_on_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_overview()
    assert app.title[0].value == "Overview"
    [info] = app.info
    assert "ruscope collect --config ruscope.toml" in info.value and str(store) in info.value
    assert not app.dataframe and not app.get("plotly_chart")


def test_a_replay_only_store_shows_what_replay_gives(store: Path) -> None:
    write_plan(store, [("r1", minutes_ago(30), "wide", 0, "as-is", "fan-out", [[("page", "0", 9.0), ("page", "1", 1.0)]])], part="0")  # fmt: skip
    app = open_overview()
    [info] = app.info
    assert "no Azure Monitor metrics yet" in info.value and "replayed queries' RU" in info.value
    table = app.dataframe[0].value
    assert table[["container", "ru_consumed", "ru_source", "hot_pkrange", "hot_range_share"]].values.tolist() == [
        ["orders", 10.0, "replay", "0", 0.9]
    ]
    assert app.dataframe[1].value["query_name"].tolist() == ["wide"]
    fills = limit_bars(app)
    assert fills["429 rate of the healthy 5%"] == [0.0]
    assert fills["p95 RU/s of provisioned"] == [None]  # no metrics: no bar
    assert any("None open" in c.value for c in app.caption)


def test_metrics_storage_and_alerts(store: Path) -> None:
    write_shop(store)
    alert = dict(rule="hot_partition", subject="1", value=100.0, threshold=90.0, unit="%", message="pkrange 1 hot")
    evaluated = dict(rule="evaluated", subject="", value=1.0, threshold=0.0, unit="alerts", message="1 alert(s) fired")
    rows = [row("alerts", **alert), row("alerts", container="", **evaluated)]
    write_frame(store_location(store), "alerts", frame("alerts", *rows).drop(columns="run_id"), run_id="a1", part="000")
    app = open_overview()
    assert not app.info  # metrics present: nothing missing to explain
    assert "changes compare the 7 days up to the newest data (2026-05-01 10:02 UTC)" in app.caption[0].value
    orders = app.dataframe[0].value.iloc[0]
    assert (orders["peak_ru_s"], orders["hot_pkrange"], orders["largest_key_gb"]) == (20.0, "1", 18.0)
    assert orders["peak_ru_s_change"] == -math.inf  # nothing in the 7 days before: a blank cell (display.py)
    metrics: dict[str, str] = {}
    for card in app.metric:  # orders' cards come first (the riskier container)
        metrics.setdefault(card.label, card.value)
    assert metrics["Peak RU/s"] == "20.0" and metrics["429 rate"] == "5.00%"
    # the sustained load (p95 of the busiest range's per-minute normalized RU), the peak minute in its help
    assert metrics["Hottest range"] == "99%"
    assert (metrics["Largest range"], metrics["Largest key"]) == ("45 GB", "18 GB")
    helps: dict[str, str] = {}
    for card in app.metric:  # orders' first
        helps.setdefault(card.label, card.proto.help)
    assert "provisioned: 1,000 RU/s" in helps["Peak RU/s"] and helps["Hottest range"].startswith("pkrange 1: ")
    assert "the busiest minute of any range: 100% (pkrange 1)" in helps["Hottest range"]
    assert all(len(card.label) <= figures_overview.MAX_LABEL for card in app.metric)  # none is cut off
    [alerts] = [t.value for t in app.dataframe if "rule" in t.value.columns]
    assert alerts[["rule", "subject", "message"]].values.tolist() == [["hot_partition", "1", "pkrange 1 hot"]]
    app.selectbox(key="frame_container").select("people").run()
    assert app.dataframe[0].value["container"].tolist() == ["people"]


def test_the_collected_store(collected_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_STORE", str(collected_store))
    app = open_overview()
    orders = app.dataframe[0].value.iloc[0]
    assert orders["ru_source"] == "monitor" and orders["provisioned_ru_s"] > 0
    assert orders["hot_normalized_ru"] == 100.0 and orders["throttle_flag"]  # the hot tenant throttles
    assert orders["largest_partition_gb"] >= 0 and orders["largest_key_gb"] > 0  # tiny, but collected (not blank)
    assert any(v is not None and v > 0 for values in limit_bars(app).values() for v in values)
    app.selectbox(key="frame_time_range").select("Last 24 hours").run()
    assert not app.exception and "the 24 hours before it" in app.caption[0].value


def test_the_limits_figure_on_frames() -> None:
    containers = overview.summarize_containers(**shop_frames())
    figure = figures_overview.build_limits_figure(overview.limit_fills(containers))
    bars = {trace.name: (list(trace.y), values(list(trace.x))) for trace in figure.data}
    names, hot = bars["busiest range's sustained normalized RU (p95)"]
    assert names == ["shop / orders", "shop / people"] and hot[0] == 99.0 and math.isnan(hot[1])  # the card's 99%
    assert bars["largest partition of 50 GB"][1][0] == 90.0 and bars["largest key of 20 GB"][1][0] == 90.0
    assert bars["429 rate of the healthy 5%"][1] == [100.0, 0.0]
    assert figure.layout.xaxis.range == (0, 110.0)
    cards = figures_overview.overview_cards(containers.iloc[1])  # people: replay only
    assert [(label, value, delta) for label, value, delta, *_ in cards][1:3] == [
        ("Peak RU/s", "", None),
        ("p95 RU/s", "", None),
    ]
    sizes = [0.5, 0.0001, 2.25, 36 / 1024**2, None]
    assert [units.size_text(gb) for gb in sizes] == ["512 MB", "105 KB", "2.25 GB", "36 KB", ""]  # never 0.00 GB
    texts = {trace.name: list(trace.text) for trace in figure.data}
    assert (
        texts["429 rate of the healthy 5%"] == ["100%", "0%"]
        and texts["busiest range's sustained normalized RU (p95)"][1] == ""
    )
    tiny = figures_overview.build_limits_figure(overview.limit_fills(containers.assign(p95_utilization=0.00001)))
    assert (
        next(t for t in tiny.data if t.name == "p95 RU/s of provisioned").text[0] == "0.0010%"
    )  # a bar too thin to see
    empty = figures_overview.build_limits_figure(overview.limit_fills(containers.iloc[0:0]))
    assert (
        not empty.data
        and json.loads(empty.to_json())["layout"]["annotations"][0]["text"] == "No containers in this view."
    )


def test_a_card_per_container_on_a_store_of_five(store: Path) -> None:
    """Five containers (the issue saw cards for 3 of 5): a row of cards each, in the table's (risk) order."""
    names = ["a1", "b2", "c3", "d4", "e5"]
    for n, name in enumerate(names):
        plan = [(f"r{n}", minutes_ago(30), "point", 0, "as-is", "single", [[("page", "0", 1.0 + n)]])]
        write_plan(store, plan, container=name, part=str(n))
    app = open_overview()
    order = app.dataframe[0].value["container"].tolist()
    assert sorted(order) == names
    assert [h.value for h in app.subheader][: len(names)] == [f"shop / {name}" for name in order]
    assert len([m for m in app.metric if m.label == "RU consumed"]) == len(names)
    assert not any("Showing cards for" in c.value for c in app.caption)  # all shown: no cut to state
    assert any(c.value == figures_overview.CHANGE_UNITS for c in app.caption)


def test_more_containers_than_cards_says_how_many_are_shown(store: Path) -> None:
    plan = [("r0", minutes_ago(30), "point", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    write_rows(store, *containers_rows(plan, [f"c{n:02}" for n in range(13)]), part="0")
    app = open_overview()
    assert len(app.dataframe[0].value) == 13
    assert len([m for m in app.metric if m.label == "RU consumed"]) == 12
    assert any(c.value.startswith("Showing cards for 12 of 13 containers, the riskiest first") for c in app.caption)


def containers_rows(plan: list, names: list[str]) -> tuple[list[dict], list[dict]]:
    """One plan's rows copied into each container of `names` (one write for them all)."""
    executions, requests = store_rows(plan)
    out: tuple[list[dict], list[dict]] = ([], [])
    for name in names:
        out[0].extend({**row, "container": name} for row in executions)
        out[1].extend({**row, "container": name} for row in requests)
    return out


def test_every_change_says_its_unit_by_one_rule() -> None:
    """A rate or share changes in percentage points, a quantity in its own unit: "+5.82 pts" beside "+0 pts",
    never "+5.82%" beside "+0 pts"."""
    containers = overview.summarize_containers(**shop_frames())
    changed = containers.iloc[0].copy()
    changes = {
        "ru_consumed_change": 1050.0,
        "peak_ru_s_change": -2.5,
        "p95_ru_s_change": 0.0,
        "sustained_normalized_ru_change": 0.2,
        "throttle_rate_change": 0.0582,
        "largest_partition_gb_change": 36 / 1024**2,
        "largest_key_gb_change": -0.5,
    }
    for name, value in changes.items():
        changed[name] = value
    deltas = {label: delta for label, _, delta, *_ in figures_overview.overview_cards(changed)}
    assert deltas == {
        "RU consumed": "+1,050 RU",
        "Peak RU/s": "-2.5 RU/s",
        "p95 RU/s": "+0.0 RU/s",
        "Hottest range": "+0 pts",
        "429 rate": "+5.82 pts",
        "Largest range": "+36 KB",
        "Largest key": "-512 MB",
    }
    assert units.change_text(-0.00001, "share", decimals=2) == "+0.00 pts"  # a tiny fall is not "-0.00"
    assert units.change_text(float("nan"), "RU") is None


def test_a_large_number_is_written_to_fit_its_card_and_an_unchanged_one_has_no_arrow(store: Path) -> None:
    """Seven cards in a row cut "5,234,567" to "5,234…" (seen in Chromium on the 30-day store); a change of
    zero read "+0 pts" under a red up arrow, as if the range got hotter."""
    assert [units.compact_text(v) for v in (99_999, 100_000, 234_567, 5_234_567, 1.5e9, None)] == [
        "99,999", "100k", "235k", "5.23M", "1.5B", "",
    ]  # fmt: skip
    assert units.compact_text(1234.56, decimals=1) == "1,234.6"
    assert [units.reads_unchanged(t) for t in ("+0 pts", "+0.0 RU/s", "+0 KB", "+0.02 pts", "-512 MB", None)] == [
        True, True, True, False, False, False,
    ]  # fmt: skip
    write_shop(store)
    week_before = {
        table: rows.drop(columns="run_id").assign(time=rows["time"] - pd.Timedelta(days=7))
        for table, rows in shop_frames().items()
        if table in ("metrics", "requests", "executions")
    }  # the same minutes a week before: the compared period, so most changes are zero, the RU's is not
    for table, rows in week_before.items():
        write_frame(store_location(store), table, rows, run_id="r0", part="000")
    app = open_overview()
    shown = app.dataframe[0].value.iloc[0]
    big = shown.copy()
    big["ru_consumed"], big["ru_consumed_change"], big["sustained_normalized_ru_change"] = 5_234_567.0, 0.0, 0.0
    cards = {label: (value, delta, about) for label, value, delta, _, about in figures_overview.overview_cards(big)}
    assert cards["RU consumed"][0] == "5.23M" and "(5,234,567 RU)" in cards["RU consumed"][2]
    assert cards["Hottest range"][1] == "+0 pts" and units.reads_unchanged(cards["Hottest range"][1])
    drawn = [card.proto for card in app.metric if card.proto.delta]
    assert {units.reads_unchanged(card.delta) for card in drawn} == {True, False}, [c.delta for c in drawn]
    for card in drawn:
        same = units.reads_unchanged(card.delta)
        assert (card.direction == Metric.MetricDirection.NONE) == same, (card.label, card.delta)
        assert (card.color == Metric.MetricColor.GRAY) == (same or card.label == "RU consumed"), card.label
