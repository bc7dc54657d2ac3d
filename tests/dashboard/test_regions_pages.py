"""An account in two regions on the Fleet, Throttling, Hot partitions, Storage and Reports pages (AppTest),
from a store shaped as the metrics collector writes it (one row per region, docs/reference/azure-monitor.md
§7b R14, R40-R41): each figure is one region's, or the account's in total, picked in the sidebar; never a
sum over regions divided by one region's RU/s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from analysis import throttling
from analysis.regions import TOTAL_LABEL
from cosmoscore.monitor.metrics import NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS, TOTAL_REQUESTS
from store import store_location, write_frame
from tests.analysis.queries.test_costs import T0
from tests.analysis.test_throttling import LOG_ROWS
from tests.dashboard.apptest import PLAN, chart, run_app, values, write_plan
from tests.dashboard.test_shared_throughput_pages import captions, frame_of

WHERE = {"account": "127.0.0.1", "database": "shop", "container": "orders"}
WEST, EAST = "West US", "East US"


def _metric(metric: str, minute: int, value: float, region: str, **extra: object) -> dict[str, object]:
    aggregation = {TOTAL_REQUEST_UNITS: "Total", TOTAL_REQUESTS: "Count"}.get(metric, "Maximum")
    row = {**WHERE, "metric": metric, "aggregation": aggregation, "grain": "PT1M", "unit": "Count"}
    return {**row, "time": T0 + pd.Timedelta(minutes=minute), "value": value, "region": region, **extra}


def two_region_store(store: Path) -> None:
    """orders: 400 RU/s in each region; 200 RU/s consumed in West US, 100 in East US; pkrange 1 at 50% in
    West US and 85% in East US; East US answered 10 of its 10 requests a minute 429, West US none of 90."""
    rows = [_metric(PROVISIONED, 0, 400.0, region) for region in (WEST, EAST)]
    for minute in range(10):
        for region, ru_s, hot, requests in ((WEST, 200.0, 50.0, (90.0, "200")), (EAST, 100.0, 85.0, (10.0, "429"))):
            rows.append(
                _metric(TOTAL_REQUEST_UNITS, minute, ru_s * 60, region, operation_type="Query", status_code="200")
            )
            rows.append(
                _metric(TOTAL_REQUESTS, minute, requests[0], region, operation_type="Query", status_code=requests[1])
            )
            rows.append(_metric(NORMALIZED_RU, minute, 10.0, region, pkrange_id="0"))
            rows.append(_metric(NORMALIZED_RU, minute, hot, region, pkrange_id="1"))
    write_frame(store_location(store), "metrics", pd.DataFrame(rows), run_id="m1", part="0")
    snapshot = pd.DataFrame([{"pkrange_id": "0"}, {"pkrange_id": "1"}]).assign(
        **WHERE, time=T0 + pd.Timedelta(minutes=5), parents="", size_kb=10, document_count=5, throughput_ru=400.0
    )
    write_frame(store_location(store), "partitions", snapshot, run_id="s1", part="0")
    write_plan(store, PLAN[:1], part="0")  # a replayed query: the scope picker offers the container


def open_page(page: str, region: str | None = None) -> AppTest:
    app = run_app(page)
    if region is not None:
        app.selectbox(key="frame_region").select(region).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def fleet_row(app: AppTest) -> dict[str, object]:
    (row,) = frame_of(app, "fleet_table").to_dict("records")
    return row


def test_the_region_picker_offers_the_total_and_each_region(store: Path) -> None:
    two_region_store(store)
    app = open_page("views/fleet.py")
    assert app.selectbox(key="frame_region").options == [TOTAL_LABEL, EAST, WEST]
    assert "all 2 regions in total" in captions(app)


def test_fleet_compares_like_with_like(store: Path) -> None:
    two_region_store(store)
    total = fleet_row(open_page("views/fleet.py"))
    assert (total["provisioned_ru_s"], total["p95_ru_s"]) == (800.0, 300.0)  # both regions' RU/s and RU
    assert round(float(total["waste"]), 4) == 0.625
    west = fleet_row(open_page("views/fleet.py", WEST))
    assert (west["provisioned_ru_s"], west["p95_ru_s"], west["waste"]) == (400.0, 200.0, 0.5)
    assert west["max_normalized_ru"] == 50.0


def test_throttling_rates_per_region_or_in_total(store: Path) -> None:
    two_region_store(store)
    summary = frame_of(open_page("views/throttling.py"), "throttling_summary")
    assert summary["rate"].tolist()[0] == 10.0  # Azure Monitor's: 10 of 100 requests a minute, in percent
    east = frame_of(open_page("views/throttling.py", EAST), "throttling_summary")
    assert east["rate"].tolist()[0] == 100.0


def test_hot_partitions_show_one_region_at_a_time(store: Path) -> None:
    two_region_store(store)
    app = open_page("views/hot_partitions.py")
    assert "Showing East US" in captions(app).replace("**", "")
    heatmap = chart(app, "hot_heatmap")["data"][0]
    assert heatmap["y"] == ["0", "1"] and np.nanmax(values(heatmap["z"])) == 85.0
    app.selectbox(key="frame_region").select(WEST).run()
    assert not app.exception, [e.message for e in app.exception]
    heatmap = chart(app, "hot_heatmap")["data"][0]
    assert np.nanmax(values(heatmap["z"])) == 50.0


def test_storage_says_its_sizes_are_one_copy(store: Path) -> None:
    two_region_store(store)
    assert "one copy of the data" in captions(open_page("views/storage.py"))


def test_the_report_says_which_regions_a_figure_covers(store: Path) -> None:
    two_region_store(store)
    containers = frame_of(open_page("views/reports.py"), "reports_report")
    provisioned = containers[containers["measure"].eq("provisioned_ru_s")]
    assert provisioned[["value", "detail"]].values.tolist() == [[800.0, "manual, summed over 2 regions"]]
    west = frame_of(open_page("views/reports.py", WEST), "reports_report")
    provisioned = west[west["measure"].eq("provisioned_ru_s")]
    assert provisioned[["value", "detail"]].values.tolist() == [[400.0, "manual, region West US"]]


def test_a_one_region_store_has_no_region_picker(store: Path) -> None:
    rows = [_metric(PROVISIONED, 0, 400.0, WEST), _metric(TOTAL_REQUEST_UNITS, 0, 6000.0, WEST)]
    write_frame(store_location(store), "metrics", pd.DataFrame(rows), run_id="m1", part="0")
    write_plan(store, PLAN[:1], part="0")
    app = open_page("views/fleet.py")
    assert not [box for box in app.selectbox if box.key == "frame_region"]
    assert fleet_row(app)["provisioned_ru_s"] == 400.0 and "regions in total" not in captions(app)


def test_beside_one_region_the_log_derived_figures_say_all_regions(store: Path) -> None:
    """The store's diagnostic-log tables sum the regions: carts (logs only, no metrics) keeps its one 429
    rate, named "all regions" beside West US's figures, and the Throttling page says so of its log rows."""
    two_region_store(store)
    carts = LOG_ROWS[LOG_ROWS["container"].eq("carts")].assign(account=WHERE["account"])
    write_frame(store_location(store), "log_throttles", carts, run_id="l1", part="0")
    sources = {}
    for region in (None, WEST):
        rows = frame_of(open_page("views/fleet.py", region), "fleet_table").set_index("container")
        sources[region] = rows.loc["carts", ["throttle_source", "throttle_rate"]].tolist()
    assert sources == {None: [throttling.LOGS, 18.0], WEST: [f"{throttling.LOGS} (all regions)", 18.0]}
    note = f"The rows from {throttling.LOGS} and the 429s by physical partition: all regions in total"
    assert note in captions(open_page("views/throttling.py", WEST))
    assert note not in captions(open_page("views/throttling.py"))  # the total: every region's on both sides
