"""The Cost page through the frame (AppTest): an empty store says what to collect, a replay-only store says
a bill needs metrics, and a small store of hand-computed numbers shows its month as billed, its alternatives,
the recommendation, the reservation and the price note; $RUSCOPE_PRICING (what `ruscope dashboard --config`
passes) prices it in EUR with the reservations held, on this page and the Reports page."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from collectors.config.pricing import PricingSettings
from cosmoscore import billing
from dashboard.display import MISSING_NUMBER
from dashboard.environment import PRICING_ENV
from store import store_location, write_frame
from tests.analysis.test_overview import KB_PER_GB, frame, metric, row
from tests.dashboard.apptest import chart, minutes_ago, run_app, shown, values, write_plan

COST = "views/cost.py"
HOURS = 24


def open_cost() -> AppTest:
    app = run_app(COST)
    return app


def tables(app: AppTest) -> dict[str, pd.DataFrame]:
    """Each table by its key (render_table draws a table, then its download keyed `<key>_download`)."""
    keys = [b.proto.id.rsplit("-", 1)[-1].removesuffix("_download") for b in app.get("download_button")]
    return {key: element.value for key, element in zip(keys, app.dataframe, strict=True)}


def cards(app: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def captions(app: AppTest) -> str:
    return "\n".join(shown(c.value) for c in app.caption)


def write_quiet_orders(store: Path) -> None:
    """shop/orders: 1,000 RU/s manual for 24 hours, consuming 60 RU in one minute of each (the 1,440 RU a
    day that serverless would bill), 10 GB of data and index."""
    rows = [metric("ProvisionedThroughput", 1000.0, minute=0)]
    rows += [metric("TotalRequestUnits", 60.0, minute=60 * h) for h in range(HOURS)]
    sized = [row("partitions", pkrange_id="0", size_kb=10 * KB_PER_GB, document_count=1000)]
    for table, found in (("metrics", frame("metrics", *rows)), ("partitions", frame("partitions", *sized))):
        write_frame(store_location(store), table, found.drop(columns="run_id"), run_id="m1", part="000")


def test_an_empty_store_says_what_to_collect(store: Path) -> None:
    app = open_cost()
    assert app.title[0].value == "Cost"
    [info] = app.info
    assert "No throughput to bill in" in info.value and str(store) in info.value
    assert "ruscope metrics --config ruscope.toml" in info.value and "ruscope storage" in info.value
    assert not app.dataframe and not app.get("plotly_chart")


def test_a_replay_only_store_says_a_bill_needs_metrics(store: Path) -> None:
    write_plan(store, [("r1", minutes_ago(30), "wide", 0, "as-is", "fan-out", [[("page", "0", 9.0)]])], part="0")
    app = open_cost()
    [info] = app.info
    assert "no Azure Monitor throughput metrics yet" in info.value and "ProvisionedThroughput" in info.value
    assert not app.dataframe


def test_the_month_as_billed_the_alternatives_and_the_recommendation(store: Path) -> None:
    """At the list price example ($0.008 per 100 RU/s an hour): 1,000 RU/s is $0.08 an hour, $58.40 a month
    (730 hours); 10 GB at $0.25 is $2.50. Manual at the 400 RU/s minimum: $23.36; autoscale at its 1,000
    max bills its 100 RU/s floor at 1.5x: $8.76; serverless bills 1,440 RU a day: 1,440 / 1e6 x $0.25 / 24
    x 730 = $0.01 and fits, but serverless is the account's mode (B16): it is weighed per account (saving
    $58.39), and the unit's recommendation is autoscale, saving $58.40 - $8.76 = $49.64 a month."""
    write_quiet_orders(store)
    app = open_cost()
    assert billing.LIST_PRICE_NOTE in captions(app) and "Money in USD per month" in captions(app)
    assert cards(app) == {
        "Throughput a month": "58.40 USD",
        "Storage a month": "2.50 USD",
        "Total a month": "60.90 USD",
        "Best reservation": "1,000 RU/s",  # every hour uses all 1,000 RU/s: at 20% off it all pays
        "Throughput with it": "46.72 USD",  # 730 x 10 units x $0.008 x 0.8
        "Pay-as-you-go": "58.40 USD",
        "Saving": "11.68 USD",
    }
    assert "the last 7 days up to the latest measured hour, 2026-04-25 10:00 - 2026-05-02 10:00 UTC" in captions(app)
    found = tables(app)
    [unit] = found["cost_units"].to_dict("records")
    assert (unit["unit"], unit["unit_kind"], unit["offer"], unit["hours"]) == (
        "shop / orders",
        "container",
        "manual",
        24,
    )
    assert (unit["monthly"], unit["storage_monthly"], unit["total_monthly"]) == pytest.approx((58.40, 2.50, 60.90))
    [account] = found["cost_accounts"].to_dict("records")
    assert (account["account"], account["units"], account["total_monthly"]) == ("127.0.0.1", 1, pytest.approx(60.90))
    [choice] = found["cost_alternatives"].to_dict("records")
    assert choice["manual_ru_s"] == 400 and choice["manual_right"] == pytest.approx(23.36)
    assert choice["autoscale_max"] == 1000 and choice["autoscale_right"] == pytest.approx(8.76)
    assert choice["serverless"] == pytest.approx(1440 / 1e6 * 0.25 / 24 * 730)
    assert choice["serverless_note"].startswith("fits") and choice["recommendation"] == "autoscale at max 1,000 RU/s"
    assert choice["monthly_saving"] == pytest.approx(49.64) and choice["throttled_hours"] == 0
    [account_serverless] = found["cost_serverless_accounts"].to_dict("records")
    assert account_serverless["fits"] and account_serverless["monthly_saving"] == pytest.approx(58.39)
    assert account_serverless["serverless"] == pytest.approx(1440 / 1e6 * 0.25 / 24 * 730)
    assert app.radio(key="cost_window").options == ["last 7 days"]  # a day of data: the longer would repeat it
    bars = {t["name"]: values(t["x"]) for t in chart(app, "cost_units_chart")["data"]}
    assert bars == {"throughput, as billed": [pytest.approx(58.40)], "storage": [pytest.approx(2.50)]}
    curve = chart(app, "cost_reservation_chart")["data"]
    best = next(t for t in curve if t["name"].startswith("best"))
    assert best["name"] == "best: 1,000 RU/s" and values(best["y"]) == [pytest.approx(46.72)]
    # the report's findings in money, the largest saving first: autoscale's 58.40 - 8.76, manual's 58.40 - 23.36
    findings = found["cost_findings"]
    assert findings["measure"].tolist() == ["move_to_autoscale", "lower_throughput"]
    assert findings["monthly_saving"].tolist() == [pytest.approx(49.64), pytest.approx(35.04)]
    assert findings["command"].str.startswith("az cosmosdb sql container throughput").all()


def test_the_pricing_env_var_prices_the_page_and_the_report_in_its_currency(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[pricing] in EUR, 0.01 per 100 RU/s an hour, 0.30 a GB-month, 500 RU/s reserved at 30% off: 10 units
    x 0.01 x 730 = 73.00 EUR a month, 10 GB = 3.00 EUR; with the reservation held each hour pays its 0.035
    and the 0.05 beyond its credit: 0.085 x 730 = 62.05 EUR."""
    settings = PricingSettings(
        currency="EUR", manual_per_100_ru_s_hour=0.01, multi_write_per_100_ru_s_hour=0.02,
        serverless_per_million_ru=0.3, storage_per_gb_month=0.3,
        reservations=[{"ru_s": 500, "discount": 0.3}],  # type: ignore[list-item]
    )  # fmt: skip
    monkeypatch.setenv(PRICING_ENV, settings.model_dump_json())
    write_quiet_orders(store)
    app = open_cost()
    assert billing.LIST_PRICE_NOTE not in captions(app) and "Money in EUR per month, at your [pricing]" in captions(app)
    found = cards(app)
    assert (found["Throughput a month"], found["Storage a month"]) == ("73.00 EUR", "3.00 EUR")
    assert found["With yours held"] == "62.05 EUR"
    assert tables(app)["cost_units"]["monthly"].tolist() == [pytest.approx(73.0)]
    held = [s for s in chart(app, "cost_reservation_chart")["layout"]["shapes"]]
    assert [s["y0"] for s in held] == [pytest.approx(62.05)]
    app.switch_page("views/reports.py").run()
    assert not app.exception, [e.message for e in app.exception]
    cost = next(t.value for t in app.dataframe if "measure" in t.value and "monthly_cost" in set(t.value["measure"]))
    billed = cost.set_index("measure").loc["monthly_cost"]
    assert (billed["value"], billed["unit"]) == (pytest.approx(73.0), "EUR") and "your [pricing]" in billed["detail"]


def test_a_broken_pricing_env_var_is_said_not_priced_at_the_list(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICING_ENV, json.dumps({"currency": "EUR"}))
    write_quiet_orders(store)
    app = run_app(COST, check=False)
    assert any(f"${PRICING_ENV} is not a valid [pricing]" in e.message for e in app.exception)


def test_each_query_s_money_is_the_report_s(store: Path) -> None:
    """A replayed query of 5 RU at 4 executions a second is 20 RU/s of the container's 100 consumed: 20% of the
    $58.40 billed, $11.68 a month, and its RU/s at the manual rate 20 / 100 x $0.008 x 730 = $1.17; the same
    figures as the report's query rows (`analysis.cost.queries`, one definition)."""
    from tests.analysis.test_cost_queries import day_of_metrics, rated
    from tests.analysis.test_overview import execution

    executions = rated([execution("r1", "q", ru=5.0), execution("r1", "other", ru=3.0)], {"q": 4.0})
    for table, found in (("metrics", day_of_metrics()), ("executions", executions)):
        write_frame(store_location(store), table, found.drop(columns="run_id"), run_id="m1", part="000")
    app = open_cost()
    queries = tables(app)["cost_queries"].set_index("query")
    assert round(queries.loc["q", "monthly"], 2) == 11.68 and round(queries.loc["q", "manual_rate_monthly"], 2) == 1.17
    assert queries.loc["other", "monthly"] == MISSING_NUMBER and "rate" in queries.loc["other", "note"]  # blank
    assert "By query and by logical key" in [h.value for h in app.subheader]
