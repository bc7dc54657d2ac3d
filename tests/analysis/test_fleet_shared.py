"""analysis.fleet on a shared-throughput database (frames built here, shaped as the collectors store what
Azure reports: the offer's series under SHARED_OFFER_CONTAINER, the request totals per container): one
throughput unit with its containers inside, and no row for the offer as if it were a container."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis import fleet
from cosmoscore.monitor.metrics import NORMALIZED_RU, PROVISIONED, TOTAL_REQUEST_UNITS
from store.records import SHARED_OFFER_CONTAINER
from tests.analysis.queries.test_costs import T0, executions_frame, requests_frame
from tests.analysis.test_fleet import metric

OFFER = SHARED_OFFER_CONTAINER


def metrics_frame() -> pd.DataFrame:
    """shop: 800 RU/s shared by a and b (its hottest partition at 95%), own with 400 of its own."""
    rows: list[dict[str, Any]] = [
        metric(OFFER, PROVISIONED, 800.0, aggregation="Maximum", grain="PT5M"),
        metric(OFFER, NORMALIZED_RU, 95.0, aggregation="Maximum", pkrange_id="0"),
        metric(OFFER, NORMALIZED_RU, 40.0, aggregation="Maximum", pkrange_id="1"),
        metric("a", TOTAL_REQUEST_UNITS, 600.0),
        metric("b", TOTAL_REQUEST_UNITS, 300.0),
        metric("a", TOTAL_REQUEST_UNITS, 60.0, minute=1),
        metric("b", TOTAL_REQUEST_UNITS, 60.0, minute=1),
        metric("own", PROVISIONED, 400.0, aggregation="Maximum", grain="PT5M"),
        metric("own", NORMALIZED_RU, 20.0, aggregation="Maximum", pkrange_id="0"),
        metric("own", TOTAL_REQUEST_UNITS, 1200.0),
    ]
    return pd.DataFrame(rows, columns=fleet.FLEET_METRIC_COLUMNS)


def partitions_frame(*rows: tuple[str, str, float | None, float | None]) -> pd.DataFrame:
    """(database, container, throughput_ru, database_throughput_ru) rows of one snapshot at T0."""
    frame = [
        {"account": "127.0.0.1", "database": db, "container": c, "time": T0, "pkrange_id": "0", "size_kb": 10}
        | {"throughput_ru": own, "database_throughput_ru": shared}
        for db, c, own, shared in rows
    ]
    return pd.DataFrame(frame, columns=fleet.PARTITION_COLUMNS)


def test_a_shared_database_is_one_unit_with_its_containers_inside() -> None:
    metrics = metrics_frame()
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), metrics)
    assert sorted(ranked["container"]) == ["a", "b", "own"]  # no row for the offer
    rows = {row["container"]: row for row in ranked.to_dict("records")}
    for name in ("a", "b"):
        assert rows[name]["throughput_unit"] == fleet.SHARED_UNIT
        assert rows[name]["max_normalized_ru"] == 95.0  # the offer's partitions are what throttles it
        assert math.isnan(rows[name]["provisioned_ru_s"]) and math.isnan(rows[name]["waste"])
        assert rows[name]["waste_note"] == fleet.SHARED_WASTE_NOTE
        assert rows[name]["risk_driver"] == "hot partition" and rows[name]["risk"] == 0.95
    assert rows["a"]["p95_ru_s"] == round(0.95 * 10.0 + 0.05 * 1.0, 2)  # its own consumption: 10, then 1 RU/s
    assert rows["own"]["throughput_unit"] == fleet.OWN_UNIT and rows["own"]["provisioned_ru_s"] == 400.0

    units = fleet.summarize_throughput_units(ranked, metrics)
    assert units.columns.tolist() == fleet.UNIT_COLUMNS
    by_unit = {row["container"]: row for row in units.to_dict("records")}
    assert set(by_unit) == {OFFER, "own"}
    shop = by_unit[OFFER]
    assert shop["containers"] == "a, b" and shop["throughput_unit"] == fleet.SHARED_UNIT
    assert shop["provisioned_ru_s"] == 800.0 and shop["max_normalized_ru"] == 95.0
    assert shop["p95_ru_s"] == round(0.95 * 15.0 + 0.05 * 2.0, 2)  # a and b summed per interval
    assert math.isnan(shop["waste"]) and shop["waste_note"] == fleet.HOT_WASTE_NOTE
    assert by_unit["own"]["containers"] == "own" and by_unit["own"]["provisioned_ru_s"] == 400.0
    assert units["container"].tolist()[0] == OFFER  # where its first container ranks: a and b lead the fleet
    assert fleet.unit_label(("127.0.0.1", "shop", OFFER), shop["containers"]) == "shop (shared by a, b)"


def test_the_storage_snapshots_alone_name_a_shared_database() -> None:
    partitions = partitions_frame(("crm", "people", None, 1000.0), ("crm", "deals", 400.0, None))
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), None, partitions)
    units = {
        row["containers"]: row for row in fleet.summarize_throughput_units(ranked, None, partitions).to_dict("records")
    }
    assert units["people"]["container"] == OFFER and units["people"]["provisioned_ru_s"] == 1000.0
    assert units["deals"]["container"] == "deals"
    assert dict(zip(ranked["container"], ranked["throughput_unit"], strict=True)) == {
        "people": fleet.SHARED_UNIT,
        "deals": fleet.OWN_UNIT,
    }


def test_without_a_shared_offer_every_container_is_its_own_unit() -> None:
    metrics = metrics_frame()
    metrics = metrics[metrics["container"] == "own"]
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), metrics)
    assert ranked["throughput_unit"].tolist() == [fleet.OWN_UNIT]
    units = fleet.summarize_throughput_units(ranked, metrics)
    assert units["container"].tolist() == ["own"] and units["containers"].tolist() == ["own"]
