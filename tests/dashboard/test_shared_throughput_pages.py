"""A shared-throughput database on the Fleet, Storage, Hot partitions and Reports pages (AppTest) and in the
capacity report, from a store shaped as the collectors write what Azure reports (docs/reference/azure-monitor.md
§7b R2, R30-R32): the offer's throughput and partitions under `container` = SHARED_OFFER_CONTAINER, the request
totals and storage snapshots per container. The database shows as one throughput unit with its containers
inside, and no container named "", `<empty>` or `__Empty` appears anywhere."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from analysis.capacity import review
from analysis.fleet import SHARED_UNIT
from cosmoscore.monitor.metrics import NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS
from store import read_table, store_location, write_frame
from store.records import SHARED_OFFER_CONTAINER
from tests.analysis.queries.test_costs import T0
from tests.dashboard.apptest import PLAN, chart, run_app, write_plan

PHANTOMS = {SHARED_OFFER_CONTAINER, "<empty>", "__Empty"}
WHERE = {"account": "127.0.0.1", "database": "shop"}


def _metric(container: str, metric: str, minute: int, value: float, **extra: object) -> dict[str, object]:
    aggregation, grain = ("Total", "PT1M") if metric == TOTAL_REQUEST_UNITS else ("Maximum", "PT1M")
    row = {**WHERE, "container": container, "metric": metric, "aggregation": aggregation, "grain": grain}
    return {**row, "time": T0 + pd.Timedelta(minutes=minute), "value": value, "unit": "Count", **extra}


def shared_store(store: Path) -> None:
    """shop: 800 RU/s shared by a and b (partition 0 of the offer at 95% in minute 3), own with 400 RU/s."""
    rows = [_metric(SHARED_OFFER_CONTAINER, PROVISIONED, 0, 800.0), _metric("own", PROVISIONED, 0, 400.0)]
    for minute in range(10):
        rows += [
            _metric(SHARED_OFFER_CONTAINER, NORMALIZED_RU, minute, 95.0 if minute == 3 else 30.0, pkrange_id="0"),
            _metric(SHARED_OFFER_CONTAINER, NORMALIZED_RU, minute, 10.0, pkrange_id="1"),
            _metric("own", NORMALIZED_RU, minute, 20.0, pkrange_id="0"),
        ]
        rows += [_metric(c, TOTAL_REQUEST_UNITS, minute, ru, operation_type="Query", status_code="200") for c, ru in
                 (("a", 600.0), ("b", 120.0), ("own", 60.0))]  # fmt: skip
    write_frame(store_location(store), "metrics", pd.DataFrame(rows), run_id="m1", part="0")
    snapshot = pd.DataFrame(
        [
            {"container": "a", "throughput_ru": None, "database_throughput_ru": 800.0},
            {"container": "b", "throughput_ru": None, "database_throughput_ru": 800.0},
            {"container": "own", "throughput_ru": 400.0, "database_throughput_ru": None},
        ]
    ).assign(**WHERE, time=T0 + pd.Timedelta(minutes=5), pkrange_id="0", parents="", size_kb=10, document_count=5)
    write_frame(store_location(store), "partitions", snapshot, run_id="s1", part="0")
    for n, container in enumerate(("a", "b", "own")):  # replayed queries: the scope picker offers the containers
        write_plan(store, PLAN[:1], container=container, part=str(n))


def open_page(page: str) -> AppTest:
    app = run_app(page)
    return app


def frame_of(app: AppTest, key: str) -> pd.DataFrame:
    """The frame of the table `widgets.render_table` drew with `key` (each table has its download, in order)."""
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    return app.dataframe[downloads.index(f"{key}_download")].value


def captions(app: AppTest) -> str:
    return "\n".join(c.value for c in app.caption)


def test_fleet_shows_one_throughput_unit_with_its_containers(store: Path) -> None:
    shared_store(store)
    app = open_page("views/fleet.py")
    fleet_table = frame_of(app, "fleet_table")
    assert set(fleet_table["container"]) == {"a", "b", "own"}
    units = dict(zip(fleet_table["container"], fleet_table["throughput_unit"], strict=True))
    assert units == {"a": SHARED_UNIT, "b": SHARED_UNIT, "own": "container"}
    assert not any(option.endswith("/ ") or "<empty>" in option for option in app.selectbox(key="fleet_open").options)
    throughput = frame_of(app, "fleet_units")
    by_unit = dict(zip(throughput["unit"], throughput["provisioned_ru_s"], strict=True))
    assert by_unit == {"shop (shared by a, b)": 800.0, "shop / own": 400.0}
    assert any(label == "Throughput units" for label in (h.value for h in app.subheader))


def test_storage_names_the_shared_database(store: Path) -> None:
    shared_store(store)
    app = open_page("views/storage.py")
    shared = frame_of(app, "storage_shared")
    assert shared[["database", "containers", "database_throughput_ru"]].values.tolist() == [["shop", "a, b", 800.0]]
    assert not set(frame_of(app, "storage_partitions")["label"]) & PHANTOMS


def test_hot_partitions_show_the_databases_partitions(store: Path) -> None:
    shared_store(store)
    app = open_page("views/hot_partitions.py")
    labels = chart(app, "hot_heatmap")["data"][0]["y"]
    assert set(labels) == {"own/0", "shop (shared)/0", "shop (shared)/1"}
    assert "shared-throughput database's partitions" in captions(app)
    app.selectbox(key="frame_database").select("shop").run()
    app.selectbox(key="frame_container").select("a").run()
    assert not app.exception, [e.message for e in app.exception]
    assert chart(app, "hot_heatmap")["data"][0]["y"] == ["0", "1"]  # a's partitions are the database's
    assert "spends database shop's shared throughput" in captions(app).replace("**", "")


def test_the_report_has_the_offer_and_no_phantom_container(store: Path) -> None:
    shared_store(store)
    frames = {
        table: read_table(store_location(store), table, columns=list(columns))
        for table, columns in review.REPORT_TABLES.items()
    }
    report = review.build_capacity_report(**frames)
    # the database's offer is the offer section's and, billed as one unit, the cost section's: no other's
    assert not set(report.loc[~report["section"].isin(["offer", "cost"]), "container"]) & PHANTOMS
    billed = report[(report["section"] == "cost") & (report["container"] == SHARED_OFFER_CONTAINER)]
    account = billed[billed["database"] == ""]  # the account as one new serverless account (B16): not with an offer
    assert (
        account["measure"].tolist() == ["serverless_account_monthly_cost"]
        and "does not fit" in account["detail"].iloc[0]
    )
    billed = billed[billed["database"] != ""]
    assert set(billed["database"]) == {"shop"} and "monthly_cost" in billed["measure"].tolist()
    assert set(billed.loc[billed["measure"] == "monthly_cost", "subject"]) == {"shared database offer"}
    offer = report[report["section"] == "offer"]
    assert set(offer["container"]) == {SHARED_OFFER_CONTAINER} and set(offer["database"]) == {"shop"}
    measures = {(m, s): v for m, s, v in zip(offer["measure"], offer["subject"], offer["value"], strict=True)}
    assert measures[("containers", "")] == 2 and measures[("provisioned_ru_s", "")] == 800.0
    assert measures[("max_normalized_ru", "0")] == 95.0 and measures[("max_normalized_ru", "1")] == 10.0
    assert offer.loc[offer["measure"] == "containers", "detail"].tolist() == ["a, b"]
    provisioned = report[(report["section"] == "container") & (report["measure"] == "provisioned_ru_s")]
    assert dict(zip(provisioned["container"], provisioned["value"], strict=True)) == {"own": 400.0}
    ratios = report[report["measure"].isin(["autoscale_cost_ratio", "move_to_autoscale", "lower_throughput"])]
    assert set(ratios["container"]) <= {"own"}  # a and b have no RU/s of their own to change

    app = open_page("views/reports.py")
    assert "a, b" in frame_of(app, "reports_offer")["detail"].tolist()
    assert not set(frame_of(app, "reports_containers")["container"]) & PHANTOMS
