"""The frame (app.py): store, time range and scope picked once in the sidebar, published in st.session_state,
and applied by every page; plus a smoke run of every page in `dashboard/views/`."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.scope import Scope, Window
from tests.dashboard.apptest import APP, PLAN, bars, minutes_ago, run_app, store_rows, write_plan, write_store
from tests.dashboard.test_storage_page import table

VIEWS = sorted(p.relative_to(APP.parent).as_posix() for p in (APP.parent / "views").glob("*.py"))


@pytest.fixture
def old_and_fresh(two_runs: Path) -> Path:
    """The two May runs in shop/orders, crm/people in May too, and run r3 an hour ago: "fresh" in shop/carts."""
    write_plan(
        two_runs,
        [("r2", 70, "people", 0, "as-is", "single", [[("page", "0", 1.0)]])],
        database="crm",
        container="people",
        part="1",
    )
    fresh = [("r3", minutes_ago(60), "fresh", 0, "as-is", "single", [[("page", "0", 7.0)]])]
    write_plan(two_runs, fresh, container="carts", part="0")
    return two_runs


def queries(app: AppTest) -> list[str]:
    return app.dataframe[0].value["query_name"].tolist()


def test_the_frame_publishes_its_choices_in_session_state(two_runs: Path) -> None:
    app = run_app()
    assert app.session_state["store"] == str(two_runs)
    assert app.session_state["window"] == Window()
    assert app.session_state["scope"] == Scope()
    assert app.selectbox(key="frame_time_range").value == "All time"
    app.selectbox(key="frame_database").select("shop").run()
    assert app.session_state["scope"] == Scope(database="shop")
    app.selectbox(key="frame_time_range").select("Last 7 days").run()
    window = app.session_state["window"]
    since = window.start
    assert window.end is None and window.label == "Last 7 days"
    assert since.tzinfo is not None and since.utcoffset() == dt.timedelta(0) and since.second == 0
    assert dt.timedelta(days=7) <= dt.datetime.now(dt.UTC) - since < dt.timedelta(days=7, minutes=2)
    assert app.session_state["scope"] == Scope()  # shop has no data in the last 7 days: back to all


def test_the_time_range_filters_the_page(old_and_fresh: Path) -> None:
    app = run_app("views/query_costs.py")
    assert sorted(queries(app)) == ["fresh", "people", "point", "scan", "wide"]
    runs = app.selectbox(key="query_costs_run")
    assert (runs.value, len(runs.options)) == ("r3", 3)  # shown as their start times, newest first
    app.selectbox(key="frame_time_range").select("Last 24 hours").run()
    assert not app.exception
    assert queries(app) == ["fresh"]
    assert app.dataframe[0].value["executions"].tolist() == [1]
    assert (app.selectbox(key="query_costs_run").value, len(app.selectbox(key="query_costs_run").options)) == ("r3", 1)
    assert app.selectbox(key="frame_database").options == ["(all)", "shop"]  # only what has data in the range
    assert app.selectbox(key="frame_container").options == ["(all)", "carts"]
    assert bars(app) == {"carts/0": (["fresh"], [7.0])}
    app.selectbox(key="frame_time_range").select("All time").run()
    assert len(queries(app)) == 5


@pytest.fixture
def three_ages(two_runs: Path) -> Path:
    """The two May runs in shop/orders; r3 20 minutes ago in shop/carts ("recent"); r4 3 hours ago in
    crm/people ("earlier")."""
    write_plan(two_runs, [("r3", minutes_ago(20), "recent", 0, "as-is", "single", [[("page", "0", 7.0)]])], container="carts", part="0")  # fmt: skip
    write_plan(two_runs, [("r4", minutes_ago(180), "earlier", 0, "as-is", "single", [[("page", "0", 5.0)]])], database="crm", container="people", part="1")  # fmt: skip
    return two_runs


def page_rows(app: AppTest) -> dict[str, list[str]]:
    """What each page shows of the three ages: Query costs' queries, the Overview's and the Fleet's containers."""
    shown = {}
    for page, key, column in (
        ("views/query_costs.py", "query_costs_table", "query_name"),
        ("views/overview.py", "overview_containers", "container"),
        ("views/fleet.py", "fleet_table", "container"),
    ):
        app.switch_page(page).run()
        assert not app.exception, [e.message for e in app.exception]
        shown[page] = sorted(table(app, key)[column].astype(str).unique())
    return shown


def test_one_and_six_hours_narrow_every_page(three_ages: Path) -> None:
    app = run_app()
    app.selectbox(key="frame_time_range").select("Last 1 hour").run()
    hour = page_rows(app)
    assert hour == {"views/query_costs.py": ["recent"], "views/overview.py": ["carts"], "views/fleet.py": ["carts"]}
    app.selectbox(key="frame_time_range").select("Last 6 hours").run()
    six = page_rows(app)
    assert six["views/query_costs.py"] == ["earlier", "recent"]
    assert six["views/overview.py"] == six["views/fleet.py"] == ["carts", "people"]
    assert any(c.value.startswith("Showing since ") for c in app.sidebar.caption)


def set_custom(app: AppTest, start: dt.datetime, end: dt.datetime) -> AppTest:
    app.selectbox(key="frame_time_range").select("Custom").run()
    for name, moment in (("start", start), ("end", end)):
        app.date_input(key=f"frame_custom_{name}_date").set_value(moment.date())
        app.time_input(key=f"frame_custom_{name}_time").set_value(moment.time())
    return app.run()


def test_a_custom_range_has_an_end_too(three_ages: Path) -> None:
    """Custom 4 hours ago to 1 hour ago: r4 (3 hours ago) only; the May runs and r3 (20 minutes ago) are out."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    app = set_custom(run_app(), now - dt.timedelta(hours=4), now - dt.timedelta(hours=1))
    assert not app.exception and not app.error
    window = app.session_state["window"]
    assert window.label == "Custom" and window.span == dt.timedelta(hours=3)
    assert page_rows(app) == {
        "views/query_costs.py": ["earlier"],
        "views/overview.py": ["people"],
        "views/fleet.py": ["people"],
    }
    app.switch_page("views/overview.py").run()
    assert any("compare this range with the 3 hours before it" in c.value for c in app.caption)


def test_a_custom_range_that_ends_before_it_starts_says_so(three_ages: Path) -> None:
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    app = set_custom(run_app(), now - dt.timedelta(hours=1), now - dt.timedelta(hours=4))
    assert not app.exception
    [error] = app.error
    assert "before or when it starts" in error.value and "choose an end after the start" in error.value
    assert not app.dataframe and not app.metric  # no page ran on a window that cannot be
    app.switch_page("views/query_costs.py").run()
    assert not app.exception and app.error and not app.dataframe


def test_the_scope_filters_the_table_runs_and_breakdown(old_and_fresh: Path) -> None:
    app = run_app("views/query_costs.py")
    app.selectbox(key="frame_database").select("shop").run()
    assert sorted(queries(app)) == ["fresh", "point", "scan", "wide"]
    assert app.selectbox(key="frame_container").options == ["(all)", "carts", "orders"]
    app.selectbox(key="frame_container").select("orders").run()
    assert queries(app) == ["wide", "scan", "point"]
    assert app.selectbox(key="query_costs_run").options == ["2026-05-01 11:00 UTC", "2026-05-01 10:00 UTC"]
    assert set(bars(app)["orders/0"][0]) == {"wide", "scan", "point"}  # crm's "people" (also in r2) is out
    app.selectbox(key="frame_database").select("crm").run()
    assert queries(app) == ["people"]
    assert app.selectbox(key="frame_container").value == "(all)"  # orders is not a crm container


def test_a_range_with_nothing_in_it_says_so(two_runs: Path) -> None:
    app = run_app("views/query_costs.py")
    app.selectbox(key="frame_time_range").select("Last 30 days").run()
    [info] = app.info
    assert "No query executions" in info.value and "since" in info.value
    assert "Choose a longer time range" in info.value
    assert f"ruscope replay --config ruscope.toml --store {two_runs}" in info.value
    assert not app.dataframe and not app.get("plotly_chart")


def test_the_store_picker_switches_every_read(two_runs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RUSCOPE_ANY_STORE", "1")  # ruscope dashboard --allow-any-store
    other = tmp_path / "other"
    write_store(other, *store_rows([row for row in PLAN if row[2] == "point"]))
    app = run_app("views/query_costs.py")
    assert app.text_input(key="frame_store").value == str(two_runs)
    app.text_input(key="frame_store").input(str(other)).run()
    assert app.session_state["store"] == str(other)
    assert queries(app) == ["point"]


def test_without_allow_any_store_the_store_is_the_one_named_at_start(two_runs: Path, tmp_path: Path) -> None:
    """The dashboard reads with the server's files and credentials: a visitor cannot point it elsewhere."""
    other = tmp_path / "other"
    write_store(other, *store_rows([row for row in PLAN if row[2] == "point"]))
    app = run_app("views/query_costs.py")
    picker = app.text_input(key="frame_store")
    assert picker.disabled and picker.value == str(two_runs)
    app.session_state["frame_store"] = str(other)  # as a forged widget message would set it
    app.run()
    assert app.session_state["store"] == str(two_runs)
    assert queries(app) != ["point"]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("filled", [False, True], ids=["empty", "two-runs"])
def test_every_page_runs_through_the_frame(view: str, filled: bool, store: Path) -> None:
    """Smoke: each file in views/ is routed by the frame (switch_page fails for an unrouted one) and runs."""
    if filled:
        write_store(store, *store_rows(PLAN))
    app = run_app(view)
    assert app.title and app.text_input(key="frame_store").value == str(store)
    if filled:  # a replay-only store shows its data, or says which collector would fill this page
        assert app.dataframe or app.get("plotly_chart") or any("ruscope " in box.value for box in app.info)
    else:  # an empty store says how to collect, and where it looked
        assert app.info and str(store) in app.info[0].value and not app.dataframe


def test_every_view_is_a_page_of_the_frame() -> None:
    routed = re.findall(r'st\.Page\(\s*"([^"]+)"', APP.read_text())
    assert sorted(routed) == VIEWS and "views/overview.py" in VIEWS
