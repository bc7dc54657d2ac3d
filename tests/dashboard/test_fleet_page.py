"""The Fleet page through the frame (AppTest, a temp store) and its figure builder on frames."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from analysis import fleet, throttling
from analysis.scope import Scope
from dashboard.figures import fleet as figures
from store import read_table, store_location
from tests.collected import CollectedStore
from tests.dashboard.apptest import chart, minutes_ago, run_app, store_rows, write_plan, write_rows
from tests.dashboard.apptest import table as shown_table
from tests.dashboard.test_storage_page import shown

FLEET = "views/fleet.py"
QUERY_COSTS = "views/query_costs.py"
THROTTLED = ("page", "0", 0.0)  # a data page of RU 0; its status is made 429 below


@pytest.fixture
def two_accounts(store: Path) -> Path:
    """east: shop/orders (even over two pkranges) in May; west, an hour ago: shop/orders (one hot pkrange,
    run r2) and crm/people (run r3)."""
    even = [("r1", 0, "wide", 0, "as-is", "fan-out", [[("page", "0", 3.0), ("page", "1", 3.0)]])]
    write_plan(store, even, account="east", part="0")
    hot = [("r2", minutes_ago(60), "wide", 0, "as-is", "fan-out", [[("page", "0", 9.0), ("page", "1", 1.0)]])]
    write_plan(store, hot, account="west", part="0")
    people = [("r3", minutes_ago(59), "people", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    write_plan(store, people, account="west", database="crm", container="people", part="1")
    return store


def open_fleet() -> AppTest:
    app = run_app(FLEET)
    return app


def ranked_keys(app: AppTest) -> list[list[str]]:
    return app.dataframe[0].value[fleet.FLEET_KEY].values.tolist()


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_fleet()
    assert app.title[0].value == "Fleet"
    [info] = app.info
    assert f"ruscope replay --config ruscope.toml --store {store}" in info.value
    assert not app.dataframe and not app.get("plotly_chart") and not app.warning
    assert not app.selectbox(key="frame_database").options[1:]  # nothing but (all)


def test_two_accounts_ranked_with_the_account_picker(two_accounts: Path) -> None:
    app = open_fleet()
    assert ranked_keys(app) == [["west", "shop", "orders"], ["east", "shop", "orders"], ["west", "crm", "people"]]
    table = shown_table(app)
    assert table["risk"].tolist() == [0.8, 0.0, 0.0]
    assert table["risk_driver"].tolist() == ["hot partition", "", ""]
    assert table["hot_range_share"].tolist() == [0.9, 0.5, 1.0]
    assert table["skew_source"].tolist() == ["replay"] * 3  # no Azure Monitor rows: the replay's view
    assert table["total_ru"].tolist() == [10.0, 6.0, 1.0]  # equal risk and no waste: the RU decides
    assert table["waste"].isna().all() and table["provisioned_ru_s"].isna().all()  # no metrics table yet
    assert app.selectbox(key="frame_account").options == ["(all)", "east", "west"]
    assert app.selectbox(key="fleet_open").options == [
        "west / shop / orders",
        "east / shop / orders",
        "west / crm / people",
    ]
    [download] = app.get("download_button")
    assert download.proto.id.endswith("-fleet_table_download") and download.proto.url.endswith(".csv")
    bars = {t["name"]: t for t in chart(app, "fleet_chart")["data"]}
    assert bars["risk"]["x"] == [0.8, 0.0, 0.0] and bars["risk"]["y"][0] == "west / shop / orders"
    assert any("hot partition" in m.value for m in app.markdown)  # the columns are explained
    app.selectbox(key="frame_account").select("east").run()
    assert ranked_keys(app) == [["east", "shop", "orders"]]


def test_one_account_has_no_account_picker(store: Path) -> None:
    write_plan(store, [("r1", 0, "q", 0, "as-is", "single", [[("page", "0", 1.0)]])], part="0")
    app = open_fleet()
    assert not [s for s in app.selectbox if s.key == "frame_account"]
    assert app.selectbox(key="fleet_open").options == ["shop / orders"]


def test_the_time_range_filters_the_fleet(two_accounts: Path) -> None:
    app = open_fleet()
    app.selectbox(key="frame_time_range").select("Last 24 hours").run()
    assert not app.exception
    assert ranked_keys(app) == [["west", "shop", "orders"], ["west", "crm", "people"]]
    assert not [s for s in app.selectbox if s.key == "frame_account"]  # one account in the range
    app.selectbox(key="frame_time_range").select("Last 30 days").run()
    assert len(ranked_keys(app)) == 2


def test_choosing_a_container_opens_its_query_costs(two_accounts: Path) -> None:
    app = open_fleet()
    app.selectbox(key="fleet_open").select_index(1).run()
    assert not app.exception, [e.message for e in app.exception]
    assert app.title[0].value == "Query costs"
    assert app.session_state["scope"] == Scope(database="shop", container="orders", account="east")
    assert app.selectbox(key="frame_account").value == "east"
    assert app.selectbox(key="frame_database").value == "shop"
    assert app.selectbox(key="frame_container").value == "orders"
    assert app.dataframe[0].value["mean_ru"].tolist() == [6.0]  # east's wide, not west's
    app.switch_page(FLEET).run()
    assert app.title[0].value == "Fleet"  # back on the Fleet page, narrowed to the scope
    assert ranked_keys(app) == [["east", "shop", "orders"]]
    app.button(key="fleet_show_all").click().run()
    assert app.session_state["scope"] == Scope() and len(ranked_keys(app)) == 3


def test_the_429_rate_comes_from_the_requests(store: Path) -> None:
    plan = [("r1", 0, "q", 0, "as-is", "single", [[("page", "0", 2.0), THROTTLED, THROTTLED, ("page", "0", 2.0)]])]
    executions, requests = store_rows(plan)
    for row in requests:
        row.update(status=429 if row["request_charge"] == 0.0 else row["status"])
    write_rows(store, executions, requests, part="0")
    app = open_fleet()
    table = app.dataframe[0].value
    assert table["throttle_rate"].tolist() == [50.0] and table["risk_driver"].tolist() == ["429s"]  # in percent
    read = shown(app, "fleet_table")
    assert read[["429 rate", "429s from", "requests"]].values.tolist() == [["50.00%", "replay", "4"]]


def test_the_collected_store_shows_monitors_429_rate_and_no_waste_for_a_hot_partition(
    collected: CollectedStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store the real collectors wrote (tests/collected.py): the hot tenant's range at 100% normalized RU
    and Azure Monitor's 429s on its reads, while the replay's own requests were never throttled."""
    copy = tmp_path / "collected"
    shutil.copytree(collected.store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = open_fleet()
    [row] = shown_table(app).to_dict("records")
    metrics = read_table(store_location(copy), "metrics", columns=throttling.METRIC_COLUMNS)
    monitor = throttling.throttle_summary(metrics, pd.DataFrame(columns=throttling.REQUEST_COLUMNS))
    assert row["throttle_source"] == throttling.MONITOR and row["requests"] == monitor["requests"][0]
    assert row["throttle_rate"] == pytest.approx(100 * round(monitor["rate"][0], 4))  # the Throttling page's rate
    assert row["throttle_rate"] > 5  # not the replay's 0
    assert row["max_normalized_ru"] >= fleet.HOT_NORMALIZED_RU and (row["risk"], row["risk_driver"]) == (
        1.0,
        "hot partition",
    )
    assert math.isnan(row["waste"]) and row["waste_note"] == fleet.HOT_WASTE_NOTE  # never risk 1 and waste 1
    read = shown(app, "fleet_table")
    assert read["waste"].tolist() == [""] and read["429 rate"].tolist() == [f"{100 * monitor['rate'][0]:.2f}%"]
    assert list(read)[3:7] == ["risk", "driver", "429 rate", "429s from"]  # where a narrow window shows them
    waste = {t["name"]: t for t in chart(app, "fleet_chart")["data"]}["waste"]
    assert waste["x"] == [None]  # no waste bar
    assert any(fleet.HOT_WASTE_NOTE in m.value for m in app.markdown)  # the help says the rule


def test_build_fleet_figure_draws_risk_and_waste_in_ranking_order() -> None:
    ranked = pd.DataFrame(
        {"account": ["a", "a"], "database": ["d", "d"], "container": ["x", "y"], "risk": [0.5, math.nan],
         "waste": [math.nan, 0.25]}
    ).reindex(columns=fleet.FLEET_COLUMNS)  # fmt: skip
    figure = figures.build_fleet_figure(ranked, title="t")
    risk, waste = figure.data
    assert (risk.name, list(risk.y), list(risk.x)) == ("risk", ["d / x", "d / y"], [0.5, None])
    assert (waste.name, list(waste.x)) == ("waste", [None, 0.25])
    assert list(figure.layout.yaxis.categoryarray) == ["d / y", "d / x"]  # the first ranked on top
    assert len(figures.build_fleet_figure(ranked, top=1).data[0].y) == 1
    empty = figures.build_fleet_figure(ranked.iloc[:0])
    assert not empty.data and empty.layout.annotations[0].text == "No containers in this view."
