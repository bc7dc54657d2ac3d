"""The Throttling page through the frame (AppTest on a temp store) and its figure builders on frames."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from analysis import throttling
from dashboard.figures import throttling as figures_throttling
from store import store_location, write_frame
from tests.analysis.test_throttling import LOG_ROWS, METRIC_ROWS, T0
from tests.collected import CollectedStore
from tests.dashboard.apptest import chart, new_app, store_rows, write_rows
from tests.dashboard.test_storage_page import shown, table, values

THROTTLING = "views/throttling.py"


def open_throttling() -> AppTest:
    app = new_app()
    app.switch_page(THROTTLING).run()  # straight to the page: the default page's run is not this test's
    assert not app.exception, [e.message for e in app.exception]
    assert app.title[0].value == "Throttling"
    return app


def write_throttled_replay(store: Path) -> None:
    """Run r1: "hot" gets two 429s on pkrange 1 (retry-after 100 ms each) between two pages; "calm" none."""
    plan = [
        ("r1", 0, "hot", 0, "as-is", "single", [[("page", "1", 2.0), ("page", "1", 0.0), ("page", "1", 0.0)]]),
        ("r1", 1, "calm", 0, "as-is", "single", [[("page", "0", 1.0)]]),
    ]
    executions, requests = store_rows(plan)
    for row in requests:
        if row["request_charge"] == 0.0:
            row.update(status=429, retry_after_ms=100.0)
    for row in executions:
        if row["query_name"] == "hot":
            row.update(throttled=2, retry_after_ms_total=200.0)
    write_rows(store, executions, requests, part="0")


def drawn(app: AppTest, key: str) -> bool:
    return any(c.proto.id.endswith(f"-{key}") for c in app.get("plotly_chart"))


def test_two_replayed_containers_say_their_labels_carry_the_container(store: Path) -> None:
    write_throttled_replay(store)
    write_rows(store, *store_rows([("r2", 2, "calm", 0, "as-is", "single", [[("page", "0", 1.0)]])]), part="1")
    executions, requests = store_rows([("r3", 3, "carts", 0, "as-is", "single", [[("page", "0", 1.0)]])])
    for row in executions + requests:
        row.update(container="carts")
    write_rows(store, executions, requests, part="2")
    app = open_throttling()
    assert list(shown(app, "throttling_retry_after"))[0] == "container/pkrange"
    assert table(app, "throttling_retry_after")["label"].tolist()[0] == "orders/1"
    [pkrange] = chart(app, "throttling_pkranges_chart")["data"]
    assert pkrange["name"] == "orders/1"
    assert chart(app, "throttling_pkranges_chart")["layout"]["legend"]["title"]["text"] == "container/pkrange"


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_throttling()
    [info] = app.info
    assert "No requests or metrics in" in info.value and f"--store {store}" in info.value
    assert not app.dataframe and not app.get("plotly_chart")


def test_a_replay_only_store_shows_the_replays_429s(store: Path) -> None:
    write_throttled_replay(store)
    app = open_throttling()
    [info] = app.info
    assert "no Azure Monitor metrics or diagnostic logs" in info.value and "ruscope metrics" in info.value
    summary = table(app, "throttling_summary")
    assert summary[["source", "requests", "throttled", "rate", "verdict"]].values.tolist() == [
        ["replay", 4.0, 2.0, 50.0, "above the healthy 1%-5%"]
    ]  # the rate in percent, as the Overview and Fleet show it
    assert shown(app, "throttling_summary")["429 rate"].tolist() == ["50.00%"]
    retry = table(app, "throttling_retry_after")
    assert retry[["label", "requests", "throttled", "retry_after_s"]].values.tolist() == [
        ["1", 3, 2, 0.2],
        ["0", 1, 0, 0.0],
    ]
    queries = table(app, "throttling_queries")
    assert queries[["query_name", "run_id", "throttled", "retry_after_s"]].values.tolist() == [["hot", "r1", 2, 0.2]]
    [pkrange] = chart(app, "throttling_pkranges_chart")["data"]
    assert pkrange["name"] == "1" and values(pkrange["y"]) == [2.0]
    assert chart(app, "throttling_pkranges_chart")["layout"]["legend"]["title"]["text"] == "pkrange"
    assert list(shown(app, "throttling_retry_after"))[0] == "pkrange"  # the labels are ids
    band, line = chart(app, "throttling_rate_chart")["data"]
    assert band["name"] == figures_throttling.BAND_NAME and values(line["y"]) == pytest.approx(
        [200 / 3, 0.0], abs=1e-4
    )  # per minute
    assert not [c for c in app.get("plotly_chart") if c.proto.id.endswith("-throttling_operations_chart")]


def test_metrics_show_the_rate_and_the_429s_by_operation(store: Path) -> None:
    write_frame(store_location(store), "metrics", METRIC_ROWS, run_id="m1", part="0")
    app = open_throttling()
    assert not app.info
    summary = table(app, "throttling_summary")
    assert summary[["source", "requests", "throttled", "rate"]].values.tolist() == [
        ["Azure Monitor", 300.0, 60.0, 20.0]
    ]
    operations = {t["name"]: values(t["y"]) for t in chart(app, "throttling_operations_chart")["data"]}
    assert operations == {"Create": [50.0], "Query": [10.0]}
    assert not drawn(app, "throttling_partitions_chart") and not drawn(app, "throttling_pkranges_chart")
    captions = [c.value for c in app.caption]
    assert any("No 429s in the diagnostic logs" in c for c in captions)  # no logs: said in words, no empty axes
    assert any("The replay got no 429s" in c for c in captions)
    assert not [d for d in app.get("download_button") if d.proto.id.endswith("-throttling_queries_download")]


def test_the_rate_per_operation_is_the_analysis_one_in_percent(store: Path) -> None:
    """orders from Azure Monitor, carts (no metrics) from its logs: the page's table is `operation_rates`,
    and each container's operations add up to the rate its summary row shows for that source."""
    write_frame(store_location(store), "metrics", METRIC_ROWS, run_id="m1", part="0")
    write_frame(store_location(store), "log_throttles", LOG_ROWS, run_id="l1", part="0")
    app = open_throttling()
    shown_rates = table(app, "throttling_operation_rates")
    expected = throttling.operation_rates(METRIC_ROWS, LOG_ROWS)
    columns = ["label", "source", "operation", "requests", "throttled"]
    assert shown_rates[columns].values.tolist() == expected[columns].values.tolist()
    assert shown_rates["rate"].tolist() == pytest.approx((expected["rate"] * 100).tolist())
    summary = table(app, "throttling_summary").set_index(["label", "source"])
    for (container, source), rows in shown_rates.groupby(["label", "source"]):
        assert 100 * rows["throttled"].sum() / rows["requests"].sum() == pytest.approx(
            summary.loc[(container, source), "rate"]
        )
    assert summary.loc[("carts", throttling.LOGS), ["requests", "throttled"]].tolist() == [250.0, 45.0]


def test_the_figure_builders() -> None:
    rate = pd.DataFrame({"label": ["orders", "orders"], "source": ["replay", "replay"], "time": [T0, T0 + pd.Timedelta(minutes=1)],
                         "requests": [10.0, 4.0], "throttled": [1.0, 0.0], "rate": [0.1, 0.0]})  # fmt: skip
    band, line = figures_throttling.build_throttle_rate_figure(rate).data
    assert list(band.y) == [1.0, 1.0, 5.0, 5.0] and line.name == "orders (replay)" and list(line.y) == [10.0, 0.0]
    two = pd.concat([rate, rate.assign(label="carts", throttled=[0.0, 0.0], rate=[0.0, 0.0])], ignore_index=True)
    assert [t.name for t in figures_throttling.build_throttle_rate_figure(two, top=1).data[1:]] == ["orders (replay)"]
    assert len(figures_throttling.build_throttle_rate_figure(two).data) == 3
    series = throttling.monitor_throttles(METRIC_ROWS, bin=pd.Timedelta(minutes=5))
    figure = figures_throttling.build_throttle_series_figure(series, legend="operation")
    assert [(t.name, list(t.y)) for t in figure.data] == [("Create", [50.0]), ("Query", [10.0])]
    assert figure.layout.barmode == "stack" and figure.layout.yaxis.rangemode == "tozero"
    one = figures_throttling.build_throttle_series_figure(series[series["series"].eq("Query")], legend="operation")
    assert one.layout.showlegend is True and one.data[0].name == "Query"  # a lone trace is still named
    empty = figures_throttling.build_throttle_series_figure(series.iloc[:0], empty="none here")
    assert not empty.data and empty.layout.annotations[0].text == "none here"


def test_the_page_on_the_collected_store(
    collected: CollectedStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store the real collectors wrote (tests/collected.py): the hot tenant reads past its partition's
    budget every minute, so Azure Monitor counts 429s on reads and the logs name the hot pkranges; the
    replay's own queries ran unthrottled."""
    copy = tmp_path / "collected"
    shutil.copytree(collected.store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = open_throttling()
    assert not app.info and not app.warning
    summary = table(app, "throttling_summary").set_index("source")
    assert summary.loc["Azure Monitor", "rate"] > 100 * throttling.HEALTHY_429_RATE[1]  # in percent
    # the logs count the same requests and 429s as the metric (one log row per request, retries apart)
    logged = summary.loc[throttling.LOGS, ["requests", "throttled"]].tolist()
    assert logged == summary.loc["Azure Monitor", ["requests", "throttled"]].tolist()
    operations_rates = table(app, "throttling_operation_rates")
    assert set(operations_rates["source"]) == {"Azure Monitor"} and "Read" in set(operations_rates["operation"])
    assert summary.loc["Azure Monitor", "verdict"] == "above the healthy 1%-5%"
    assert summary.loc["replay", "verdict"] == "no 429s"
    by_operation = chart(app, "throttling_operations_chart")
    operations = {t["name"]: sum(values(t["y"])) for t in by_operation["data"]}
    assert list(operations) == ["Read"] and operations["Read"] == summary.loc["Azure Monitor", "throttled"]
    assert by_operation["layout"]["showlegend"] is True  # the one trace is named in a legend
    names = [t["name"] for t in chart(app, "throttling_partitions_chart")["data"]]
    assert {f"partition {p} · Read" for p in collected.hot_pkranges} == set(names)  # before and after the split
    assert not drawn(app, "throttling_pkranges_chart")  # the replay got no 429s: said, not drawn empty
    assert any("The replay got no 429s" in c.value for c in app.caption)
    assert list(shown(app, "throttling_retry_after"))[0] == "pkrange"
    rate = chart(app, "throttling_rate_chart")["data"]
    assert [t["name"] for t in rate] == [
        figures_throttling.BAND_NAME, "orders (Azure Monitor)", "orders (Log Analytics)", "orders (replay)"
    ]  # fmt: skip
    assert len(values(rate[1]["y"])) <= throttling.MAX_BINS
    assert table(app, "throttling_retry_after")["throttled"].sum() == 0
    assert any("No replayed query was answered 429" in c.value for c in app.caption)
