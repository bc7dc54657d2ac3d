"""One 429 rate on every page: a store with diagnostic logs but no metrics shows the logs' rate, named as
theirs and with its window, on the Fleet, the Overview and the Reports page, as the alert fires on it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from analysis import alerts, throttling
from store import REQUESTS, TABLES, store_location, write_frame
from tests.analysis.test_throttling import LOG_ROWS
from tests.dashboard.apptest import new_app
from tests.dashboard.test_reports_page import tables
from tests.dashboard.test_storage_page import shown, table

WINDOW = "2026-05-01 10:00 UTC"  # LOG_ROWS' counted bins: minute 0 (the row at minute 3 counted no requests)


def open_page(page: str) -> AppTest:
    app = new_app()
    app.switch_page(page).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def captions(app: AppTest) -> str:
    return "\n".join(c.value for c in app.caption)


def test_logs_without_metrics_give_the_alerts_rate_and_source_on_fleet_overview_and_reports(store: Path) -> None:
    write_frame(store_location(store), "log_throttles", LOG_ROWS, run_id="l1", part="0")
    no_metrics, no_requests = pd.DataFrame(columns=TABLES["metrics"].columns), pd.DataFrame(columns=REQUESTS.columns)
    fired = alerts.throttle_rate_alerts(no_metrics, no_requests, LOG_ROWS, percent=1, window_minutes=60)
    expected = fired.set_index("container")["value"].to_dict()  # the alert's rate, in percent
    assert expected == {"carts": 18.0, "orders": 100.0}

    fleet = open_page("views/fleet.py")
    rows = table(fleet, "fleet_table").set_index("container")
    assert rows["throttle_rate"].to_dict() == expected and set(rows["throttle_source"]) == {throttling.LOGS}
    assert shown(fleet, "fleet_table")["429 rate"].tolist() == ["18.00%", "100.00%"]  # both at full risk
    assert f"whole window, {WINDOW}" in captions(fleet)

    overview = open_page("views/overview.py")
    rows = table(overview, "overview_containers").set_index("container")
    assert rows["throttle_rate"].round(4).to_dict() == expected  # in %, as the Fleet's table and the cards
    assert set(rows["throttle_source"]) == {throttling.LOGS}
    assert f"whole window, {WINDOW}" in captions(overview)
    cards = [(m.value, m.help) for m in overview.metric if m.label == "429 rate"]
    assert [value for value, _ in cards] == ["18.00%", "100.00%"]  # a card per container, in the Fleet's order
    assert all(about.startswith(f"from {throttling.LOGS}, over the whole window") for _, about in cards)

    reports = open_page("views/reports.py")
    shown_tables = tables(reports)
    rows = shown_tables["reports_containers"].set_index("container")
    assert rows["throttle_rate"].to_dict() == expected
    report = shown_tables["reports_report"]
    details = report[report["measure"].eq("throttle_rate")]["detail"].tolist()
    assert details == [f"{throttling.LOGS}, {WINDOW}"] * 2
