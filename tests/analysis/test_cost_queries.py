"""analysis.cost.queries on frames built here: what a query and a logical key cost a month (their share of the
month as billed, their RU/s at the manual rate, serverless), and what a query finding saves, each to the cent."""

from __future__ import annotations

import base64
import json
import math

import pandas as pd
import pytest

from analysis import overview
from analysis.capacity import actions, review, rules
from analysis.cost import bill
from analysis.cost import queries as qcost
from analysis.queries import runs as qr
from cosmoscore import billing
from tests.analysis.queries.test_costs import execution, request
from tests.analysis.test_overview import frame, metric, row, shop_frames

LIST = billing.Prices()
COMPOSITE_MISSING = {
    "PotentialCompositeIndexes": [{"IndexSpecs": ["/foodGroup ASC", "/_ts ASC"], "IndexImpactScore": "High"}]
}


def day_of_metrics() -> pd.DataFrame:
    """orders: manual 1,000 RU/s for 24 hours, one measured minute an hour of 6,000 RU (100 RU/s while
    measured): billed 24 x $0.08, $58.40 a month (B1, B3)."""
    rows = [metric("ProvisionedThroughput", 1000.0, minute=0)]
    rows += [metric("TotalRequestUnits", 6000.0, minute=60 * h) for h in range(24)]
    return frame("metrics", *rows)


def rated(rows: list[dict], rates: dict[str, float]) -> pd.DataFrame:
    for r in rows:
        r["rate_per_s"] = rates.get(r["query_name"])
    return frame("executions", *rows)


def costs_of(executions: pd.DataFrame, logged: pd.DataFrame | None = None) -> pd.DataFrame:
    metrics = day_of_metrics()
    bills = bill.main_bills(bill.container_bills(metrics, None, None, LIST))
    return qcost.query_costs(
        overview.query_stats(executions), executions, logged, bills, qcost.consumed_ru_s(metrics), LIST
    ).set_index("query")


def test_a_rated_query_pays_its_share_of_the_month_as_billed() -> None:
    """q: 5 RU per execution x 4 a second = 20 RU/s of the container's 100: 20% of $58.40 = $11.68; its RU/s
    at the manual rate 20 / 100 x $0.008 x 730 = $1.17; serverless 20 x 3,600 x 730 = 52.56 M RU x $0.25 =
    $13.14. A query without a rate gets no RU/s and no money, and says why."""
    executions = rated([execution("r1", "q", ru=5.0), execution("r1", "other", ru=3.0)], {"q": 4.0})
    found = costs_of(executions)
    q = found.loc["q"]
    assert (q["ru_per_execution"], q["rate_per_s"], q["ru_s"], q["consumed_ru_s"]) == (5.0, 4.0, 20.0, 100.0)
    assert q["bill_share_pct"] == pytest.approx(20.0) and round(q["monthly"], 2) == 11.68
    assert round(q["manual_rate_monthly"], 2) == 1.17 and round(q["serverless_monthly"], 2) == 13.14
    assert q["currency"] == "USD" and q["source"] == qcost.REPLAY_SOURCE and q["note"] == ""
    assert q["window"] == "2026-05-01 10:00 - 2026-05-02 09:00 UTC"
    other = found.loc["other"]
    assert math.isnan(other["ru_s"]) and math.isnan(other["monthly"]) and other["note"] == qcost.NO_RATE


def test_rates_claiming_more_than_the_container_consumed_share_the_bill_by_their_sum() -> None:
    """q claims 50 x 4 = 200 RU/s and r 10 x 20 = 200 of the 100 consumed: each is half of their 400, $29.20 of
    the $58.40 billed; the shares add up to the bill, never twice it."""
    found = costs_of(rated([execution("r1", "q", ru=50.0), execution("r1", "r", ru=10.0)], {"q": 4.0, "r": 20.0}))
    assert found.loc["q", "bill_share_pct"] == pytest.approx(50.0) and found.loc["q", "monthly"] == pytest.approx(29.20)
    assert found["monthly"].sum() == pytest.approx(58.40) and set(found["note"]) == {qcost.OVER_BILL}


def logged_rows() -> pd.DataFrame:
    """Two 60-minute bins of logs (a 2-hour window): a workload text of 72,000 RU, ruscope's own 9,000."""
    text = "SELECT * FROM c WHERE c.x = @x"
    rows = [
        row("log_query_ru", minute=0, pkrange_id="0", query_text=text, own_traffic=False, request_charge=36_000.0,
            requests=100, throttled=0, bin_minutes=60),
        row("log_query_ru", minute=60, pkrange_id="1", query_text=text, own_traffic=False, request_charge=36_000.0,
            requests=100, throttled=0, bin_minutes=60),
        row("log_query_ru", minute=60, pkrange_id="1", query_text="SELECT 1", own_traffic=True,
            request_charge=9_000.0, requests=10, throttled=0, bin_minutes=60),
    ]  # fmt: skip
    return frame("log_query_ru", *rows)


def test_a_logged_query_pays_by_its_logged_ru_over_the_logs_window() -> None:
    """72,000 RU over 2 hours = 10 RU/s of 100: 10% of $58.40 = $5.84; at the manual rate $0.58; ruscope's own
    text is not the workload's."""
    found = costs_of(rated([], {}), logged_rows())
    assert found.index.tolist() == ["SELECT * FROM c WHERE c.x = @x"]
    text = found.iloc[0]
    assert (text["logged_ru"], text["window_hours"], text["ru_s"]) == (72_000.0, 2.0, 10.0)
    assert round(text["monthly"], 2) == 5.84 and round(text["manual_rate_monthly"], 2) == 0.58
    assert text["source"] == qcost.LOGS_SOURCE and math.isnan(text["rate_per_s"])
    assert text["window"] == "2026-05-01 10:00-12:00 UTC"


def test_a_logical_key_pays_its_share_of_the_bill() -> None:
    """["t1"]: 36,000 RU over the logs' 2 hours = 5 RU/s of 100: 5% of $58.40 = $2.92; ["t2"] 1 RU/s: $0.58."""
    rows = [
        row("log_key_ru", minute=0, pkrange_id="0", partition_key='["t1"]', request_charge=18_000.0, bin_minutes=60),
        row("log_key_ru", minute=60, pkrange_id="1", partition_key='["t1"]', request_charge=18_000.0, bin_minutes=60),
        row("log_key_ru", minute=60, pkrange_id="1", partition_key='["t2"]', request_charge=7_200.0, bin_minutes=60),
    ]
    metrics = day_of_metrics()
    bills = bill.main_bills(bill.container_bills(metrics, None, None, LIST))
    found = qcost.key_costs(frame("log_key_ru", *rows), bills, qcost.consumed_ru_s(metrics), LIST)
    assert found.columns.tolist() == qcost.KEY_COST_COLUMNS
    assert found["partition_key"].tolist() == ['["t1"]', '["t2"]']
    assert found["ru_s"].tolist() == [5.0, 1.0]
    assert [round(m, 2) for m in found["monthly"]] == [2.92, 0.58]
    assert [round(m, 3) for m in found["manual_rate_monthly"]] == [0.292, 0.058]


def test_without_a_bill_there_is_no_share_but_serverless_still_prices_it() -> None:
    executions = rated([execution("r1", "q", ru=5.0)], {"q": 4.0})
    found = qcost.query_costs(overview.query_stats(executions), executions, None, pd.DataFrame(), pd.DataFrame(), LIST)
    q = found.iloc[0]
    assert math.isnan(q["monthly"]) and q["note"] == qcost.NO_BILL and round(q["serverless_monthly"], 2) == 13.14


def test_a_fan_out_s_saving_measured_or_estimated_and_priced() -> None:
    """Measured: 40 RU, its costliest partition 30: saves 10 RU x 2/s = 20 RU/s = $1.17 a month. Estimated
    (no breakdown): 4 partitions, 2.5 RU each of the other 3 = 7.5 RU x 10/s = 75 RU/s = $4.38; autoscale 1.5x
    = $6.57, in 2 regions twice that."""
    measured = rules.fan_out_action(
        "wide", "fan-out", 2, "SELECT * FROM c", ru=40.0, single_partition_ru=30.0, rate_per_s=2
    )
    assert measured.saved_ru_s == 20.0 and "saves 10.00 of its 40.00 RU per execution (measured" in measured.detail
    manual = {"regions": 1, "autoscale": False, "monthly": 58.4}
    assert actions._saving(measured, manual, LIST) == {"monthly_saving": 1.17, "saving_unit": "USD a month"}
    estimated = rules.fan_out_action("wide", "fan-out", 4, "SELECT * FROM c", ru=20.0, rate_per_s=10)
    assert estimated.saved_ru_s == 75.0 and "estimate: about 2.5 RU for each other partition" in estimated.detail
    assert actions._saving(estimated, manual, LIST)["monthly_saving"] == 4.38
    assert actions._saving(estimated, {"regions": 2, "autoscale": True}, LIST)["monthly_saving"] == 13.14
    unrated = rules.fan_out_action("wide", "fan-out", 4, "SELECT * FROM c", ru=20.0)
    assert unrated.saved_ru_s is None and unrated.detail.endswith("no rate_per_s in the config, so no RU/s or money.")
    assert math.isnan(actions._saving(unrated, manual, LIST)["monthly_saving"])


def test_the_report_prices_a_rated_fan_out_from_its_measured_partitions() -> None:
    """shop: wide costs 40 RU, 30 of it on pkrange 1; at 2 a second the key filter saves 20 RU/s: $1.17 a month
    against orders' manual bill; its cost rows are in the query section."""
    frames = shop_frames()
    frames["executions"] = frames["executions"].assign(
        rate_per_s=[2.0 if q == "wide" else None for q in frames["executions"]["query_name"]]
    )
    report = review.build_capacity_report(**frames)
    action = review.section(report, "action").set_index("measure").loc["query_fans_out"]
    assert (action["monthly_saving"], action["saving_unit"]) == (1.17, "USD a month")
    rows = review.section(report, "query")
    wide = rows[rows["subject"].eq("wide")].set_index("measure")
    assert wide.loc["ru_s", "value"] == 80.0 and wide.loc["ru_s", "unit"] == "RU/s"  # 40 RU x 2/s
    # orders consumed 2,100 RU over 3 measured minutes: 11.67 RU/s; 80 claims more: the only rated query, all of it
    assert (
        wide.loc["monthly_cost", "value"] == 58.4 and "each share is of their sum" in wide.loc["monthly_cost", "detail"]
    )
    assert wide.loc["manual_rate_monthly_cost", "value"] == round(80 / 100 * 0.008 * 730, 2)


def composite_frames() -> dict[str, pd.DataFrame]:
    """shop with an ORDER BY query whose index metrics name a missing composite index, 44.28 RU, 1 a second."""
    frames = shop_frames()
    sql = "SELECT * FROM c WHERE c.foodGroup = @g ORDER BY c._ts"
    ordered = execution("r1", "by-time", minute=1, ru=44.28)
    ordered.update(sql=sql, rate_per_s=1.0)
    frames["executions"] = pd.concat([frames["executions"], frame("executions", ordered)], ignore_index=True)
    page = request("r1", "by-time", "by-time-0-", "page", "0", 44.28)
    page["index_utilization"] = base64.b64encode(json.dumps(COMPOSITE_MISSING).encode()).decode()
    frames["requests"] = pd.concat([frames["requests"], frame("requests", page)], ignore_index=True)
    return frames


def test_an_order_by_without_its_composite_index_is_a_finding_with_its_estimated_saving() -> None:
    """Q11's x5: 44.28 RU to about 8.86; saves 35.42 RU x 1/s: 35.42 / 100 x $0.008 x 730 = $2.07 a month; the
    command adds the composite index to the current policy."""
    report = review.build_capacity_report(**composite_frames())
    found = review.section(report, "action").set_index("measure").loc["order_by_needs_composite_index"]
    assert (found["subject"], found["value"], found["unit"]) == ("by-time", 44.3, "RU")  # RU to 0.1
    assert (found["target"], found["target_unit"]) == (8.86, "RU per execution (estimate)")
    assert found["monthly_saving"] == 2.07 and found["severity"] == "info"
    assert "Estimate (ru-cost-model.md Q11" in found["detail"]
    entry = '[{"path":"/foodGroup","order":"ascending"},{"path":"/_ts","order":"ascending"}]'
    assert entry in found["command"] and "--idx @policy.json" in found["command"]
    assert found["command"].startswith("az cosmosdb sql container show --account-name 127.0.0.1")


def test_a_filter_only_query_or_a_single_path_is_not_an_order_by_finding() -> None:
    assert rules.composite_index_action("q", "SELECT * FROM c WHERE c.a = 1", 10.0, '[{"path":"/a"}]') is None
    assert rules.composite_index_action("q", "SELECT * FROM c ORDER BY c.a", 10.0, "") is None


def test_missing_composite_indexes_read_the_service_s_list_and_a_joined_spec() -> None:
    """The service writes a composite as `IndexSpecs` (a list; the .NET SDK's CompositeIndexIndexMetrics);
    a joined `IndexSpec` string is read too."""
    listed = request("r1", "a", "a-0-", "page", "0", 1.0)
    listed["index_utilization"] = json.dumps(COMPOSITE_MISSING)
    joined = request("r1", "b", "b-0-", "page", "0", 1.0)
    joined["index_utilization"] = json.dumps({"PotentialCompositeIndexes": [{"IndexSpec": "/a ASC, /b DESC"}]})
    found = qr.missing_composite_indexes(frame("requests", listed, joined))
    assert found[["query_name", "composite_spec"]].values.tolist() == [
        ["a", "/foodGroup ASC, /_ts ASC"],
        ["b", "/a ASC, /b DESC"],
    ]
    assert (
        qcost.composite_json("/a ASC, /b DESC")
        == '[{"path":"/a","order":"ascending"},{"path":"/b","order":"descending"}]'
    )
    use = qr.index_use(frame("requests", listed)).iloc[0]
    assert use["indexes_missing"] == "/foodGroup ASC, /_ts ASC"  # not "None"
