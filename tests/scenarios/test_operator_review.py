"""Issue 23's operator scenario: an experienced Cosmos DB operator's own account (tests/scenarios/operator.py:
`events` at 18,000 RU/s manual on 3 physical partitions, tenant contoso with 40% of the documents and RU, its
pkrange at ~97% normalized RU minute after minute; `sessions` keyed on /id with uniform traffic), collected by
the real collectors through the unmodified SDKs, then read as a capacity review reads it: the report
(`analysis.capacity.review.build_capacity_report`, what `ruscope report` writes), the overview and fleet
figures, and the Overview, Fleet and Hot partitions pages (AppTest). Every number an operator would check is
checked against the traffic the scenario drove (the engine's charges) and the layout the SDK sees."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from analysis import overview, own_traffic
from analysis.capacity.review import REPORT_TABLES, build_capacity_report
from cosmoscore.monitor.metrics import NORMALIZED_RU, TOTAL_REQUESTS
from store import read_table, store_location
from tests.dashboard.apptest import new_app, table
from tests.scenarios.operator import (
    EVENTS,
    EVENTS_RU_S,
    HOT_SHARE,
    HOT_TENANT,
    SESSIONS,
    OperatorStore,
    build_operator_store,
)

PARTITIONS = {EVENTS: 3, SESSIONS: 4}  # ceil(RU/s / 6,000) at creation (ru-cost-model.md P6)
BUDGET = 6_000.0  # RU/s of each partition: 18,000 / 3 and 24,000 / 4 (P4)
SKEW_ACTIONS = ("range_share", "skewed_key")
SHARE_TOLERANCE = 0.03  # the report's share (mean normalized RU) against the traffic's (RU charged)
UNIFORM_TOLERANCE = 0.05  # random ids: the hottest of 4 ranges within 5 points of 25%
COUNTED = re.compile(r"(\d+) (?:partitions|ranges)\b|partitions: (\d+)")  # a detail's partition count


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> OperatorStore:
    workdir = tmp_path_factory.mktemp("operator")
    return build_operator_store(workdir / "store", workdir)


@pytest.fixture(scope="module")
def frames(scenario: OperatorStore) -> dict[str, pd.DataFrame]:
    """The store's tables as `ruscope report` reads them (all time)."""
    location = store_location(scenario.store)
    return {name: read_table(location, name, columns=columns) for name, columns in REPORT_TABLES.items()}


@pytest.fixture(scope="module")
def report(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The report as `ruscope report` builds it from those tables."""
    names = ("executions", "requests", "metrics", "partitions", "logical_keys", "log_key_ru", "log_throttles")
    return build_capacity_report(*(frames[name] for name in names))


@pytest.fixture(scope="module")
def app(scenario: OperatorStore) -> Iterator[AppTest]:
    """The dashboard on the scenario's store (read only), not run yet: each page test switches to its page and
    runs it, the loaders' cache shared. A fresh cache for this store, dropped after."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RUSCOPE_STORE", str(scenario.store))
        st.cache_data.clear()
        st.cache_resource.clear()
        yield new_app()
        st.cache_data.clear()
        st.cache_resource.clear()


def open_page(app: AppTest, page: str) -> AppTest:
    app.switch_page(page).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def rows(report: pd.DataFrame, container: str, section: str, measure: str | None = None) -> pd.DataFrame:
    mine = report[report["container"].eq(container) & report["section"].eq(section)]
    return mine[mine["measure"].eq(measure)] if measure is not None else mine


def value(report: pd.DataFrame, container: str, measure: str) -> float:
    [number] = rows(report, container, "container", measure)["value"].astype(float).tolist()
    return number


def snapshot(scenario: OperatorStore, container: str) -> pd.DataFrame:
    """The latest storage snapshot of `container`'s pkranges."""
    partitions = read_table(store_location(scenario.store), "partitions")
    mine = partitions[partitions["container"].eq(container)]
    return mine[mine["time"].eq(mine["time"].max())].sort_values("min_epk")


def hot_pkrange(scenario: OperatorStore) -> str:
    """The pkrange holding contoso, found from the SDK's routing: its key's feed range
    (`feed_range_from_partition_key`) inside the EPK bounds of one pkrange of the storage snapshot."""
    epk = scenario.hot_feed_range["Range"]["min"]
    latest = snapshot(scenario, EVENTS)
    [pkrange] = [
        pk
        for pk, low, high in zip(latest["pkrange_id"], latest["min_epk"], latest["max_epk"])
        if low <= epk and (high == "FF" or epk < high)
    ]
    return str(pkrange)


def traffic_share(scenario: OperatorStore, container: str) -> dict[str, float]:
    """Each pkrange's share of the RU the workload was charged (what the traffic says)."""
    ru = scenario.ru_by_pkrange[container]
    total = sum(ru.values())
    return {pk: spent / total for pk, spent in ru.items()}


def test_the_account_is_the_operators(scenario: OperatorStore) -> None:
    """The scenario as the operator described it, seen through the SDK and the storage collector: 3 and 4
    partitions whose EPK bounds are the SDK's feed ranges; contoso on the pkrange the engine routed it to, with
    40% of the documents and of the RU, and its pkrange carrying 60% of the RU."""
    for container, n in PARTITIONS.items():
        latest = snapshot(scenario, container)
        bounds = [(r["Range"]["min"], r["Range"]["max"]) for r in scenario.feed_ranges[container]]
        assert len(bounds) == n and list(zip(latest["min_epk"], latest["max_epk"])) == bounds
        assert latest["throughput_ru"].astype(float).tolist() == [BUDGET * n] * n
    hot = hot_pkrange(scenario)
    assert hot == scenario.tenants[HOT_TENANT]
    keys = read_table(store_location(scenario.store), "logical_keys")
    keys = keys[keys["container"].eq(EVENTS) & keys["time"].eq(keys["time"].max())]
    sizes = keys.set_index("partition_key")["size_kb"].astype(float)
    assert len(sizes) == len(scenario.tenants)  # every tenant's key (documents of one size: size share = count share)
    assert sizes[f'["{HOT_TENANT}"]'] / sizes.sum() == pytest.approx(HOT_SHARE, abs=0.02)
    logged = read_table(store_location(scenario.store), "log_key_ru")
    key_ru = logged[logged["container"].eq(EVENTS)].groupby("partition_key")["request_charge"].sum()
    assert key_ru[f'["{HOT_TENANT}"]'] / key_ru.sum() == pytest.approx(HOT_SHARE, abs=0.02)  # the logs' RU per key
    assert traffic_share(scenario, EVENTS)[hot] == pytest.approx(0.6, abs=0.01)


def test_the_hot_range_is_saturated_in_azure_monitor(scenario: OperatorStore, frames: dict[str, pd.DataFrame]) -> None:
    """What the metrics collector stored: the hot pkrange's per-minute NormalizedRUConsumption near 97% (p95
    at 90% or more, the saturation threshold), never a 429; the other ranges about a third of it."""
    metrics = frames["metrics"]
    normalized = metrics[metrics["metric"].eq(NORMALIZED_RU) & metrics["container"].eq(EVENTS)]
    per_range = normalized.groupby("pkrange_id")["value"]
    hot = hot_pkrange(scenario)
    assert per_range.quantile(0.95)[hot] >= 90 and per_range.max()[hot] < 100
    assert per_range.median()[hot] == pytest.approx(97, abs=2.5)
    assert all(peak < 40 for pk, peak in per_range.max().items() if pk != hot)
    statuses = set(metrics[metrics["metric"].eq(TOTAL_REQUESTS)]["status_code"].astype(str))
    assert "200" in statuses and "429" not in statuses


def test_no_lower_throughput_while_the_hot_range_is_saturated(scenario: OperatorStore, report: pd.DataFrame) -> None:
    """The dangerous recommendation of the issue: the container's busiest minute used ~1% of its 18,000 RU/s,
    but its hot pkrange is at its per-second budget; lowering the RU/s would throttle it. The report says the
    range is saturated instead; and any lowered target (sessions) leaves every partition its measured peak."""
    actions = rows(report, EVENTS, "action")
    assert "lower_throughput" not in actions["measure"].tolist(), actions[["measure", "detail"]].values.tolist()
    [saturated] = rows(report, EVENTS, "action", "partition_saturated").to_dict("records")
    assert saturated["subject"] == hot_pkrange(scenario) and float(saturated["value"]) >= 90
    assert value(report, EVENTS, "provisioned_ru_s") == EVENTS_RU_S
    assert value(report, EVENTS, "p95_utilization") < 5  # the per-minute average that misled the old rule
    # throttling is another finding: with no 429s neither the hot-partition 429 rule nor a raise fires
    assert not {"skewed_key", "raise_throughput"} & set(actions["measure"])
    for target in rows(report, SESSIONS, "action", "lower_throughput")["value"].astype(float):
        hottest = float(rows(report, SESSIONS, "partition", "max_normalized_ru")["value"].max())
        assert target / PARTITIONS[SESSIONS] >= hottest / 100 * BUDGET


def test_the_partition_count_is_the_layout(
    scenario: OperatorStore, report: pd.DataFrame, frames: dict[str, pd.DataFrame]
) -> None:
    """3 partitions for events (4 for sessions) in the report's partition rows, in every detail that counts
    partitions, and in the overview's figures."""
    for container, n in PARTITIONS.items():
        subjects = set(rows(report, container, "partition")["subject"])
        assert subjects == set(snapshot(scenario, container)["pkrange_id"]) and len(subjects) == n
        mine = report[report["container"].eq(container)]
        counts = {int(a or b) for detail in mine["detail"] for a, b in COUNTED.findall(str(detail))}
        assert counts <= {n}, [d for d in mine["detail"] if COUNTED.search(str(d))]
    assert {int(a or b) for d in rows(report, EVENTS, "action")["detail"] for a, b in COUNTED.findall(d)} == {3}
    containers = overview.summarize_containers(
        frames["executions"], frames["requests"], frames["metrics"], frames["partitions"], frames["logical_keys"],
        frames["log_throttles"],
    ).set_index("container")  # fmt: skip
    assert containers["pkranges"].astype(int).to_dict() == PARTITIONS


def test_the_uniform_id_container_shows_no_skew(report: pd.DataFrame) -> None:
    """`sessions` (/id, uniform random reads over 4 ranges): no skew finding, its hottest share near 1/4."""
    actions = rows(report, SESSIONS, "action")
    assert not set(SKEW_ACTIONS) & set(actions["measure"]), actions[["measure", "detail"]].values.tolist()
    share = value(report, SESSIONS, "hot_range_share") / 100
    assert share == pytest.approx(1 / PARTITIONS[SESSIONS], abs=UNIFORM_TOLERANCE)


def test_the_skew_finding_names_the_hot_pkrange(scenario: OperatorStore, report: pd.DataFrame) -> None:
    """The share finding (`range_share`) is on contoso's pkrange (from the SDK's routing), at about the share of
    the RU the traffic put there (60%: 40% contoso + 4 of 12 small tenants at 5%), and points at the key."""
    hot = hot_pkrange(scenario)
    [skew] = rows(report, EVENTS, "action", "range_share").to_dict("records")
    expected = traffic_share(scenario, EVENTS)[hot]
    assert skew["subject"] == hot and f"pkrange {hot} " in skew["detail"]
    assert float(skew["value"]) / 100 == pytest.approx(expected, abs=SHARE_TOLERANCE)
    assert HOT_TENANT in skew["detail"]  # one key carries most of that range: change the key, not the RU/s
    assert rows(report, EVENTS, "container", "hot_range_share")["subject"].tolist() == [hot]
    assert value(report, EVENTS, "hot_range_share") == float(skew["value"])


def test_the_replays_own_ru_is_reported_apart(report: pd.DataFrame, frames: dict[str, pd.DataFrame]) -> None:
    """What ruscope's replay spent on the operator's account is a row of its own per container, equal to the
    RU its requests were charged (`analysis.own_traffic`), and a small part of what the container consumed."""
    spend = own_traffic.summarize_replay_spend(frames["requests"].reindex(columns=own_traffic.REQUEST_COLUMNS))
    spent = {str(c): float(ru) for c, ru in zip(spend["container"], spend["ru"]) if c}
    assert set(spent) == set(PARTITIONS) and all(ru > 0 for ru in spent.values())
    for container, ru in spent.items():
        replay = rows(report, container, "container", "replay_ru")
        assert replay["value"].astype(float).tolist() == [pytest.approx(ru, abs=0.1)], container
        assert ru < 0.05 * value(report, container, "ru_consumed")


def report_counts(report: pd.DataFrame) -> dict[str, int]:
    """Per container: the report's partition count (its partition rows: the layout)."""
    return {container: len(set(rows(report, container, "partition")["subject"])) for container in PARTITIONS}


def report_shares(report: pd.DataFrame) -> dict[str, float]:
    """Per container: the report's hottest share of the RU, in %."""
    return {container: value(report, container, "hot_range_share") for container in PARTITIONS}


def test_the_overview_page_shows_the_reports_partition_count_and_share(app: AppTest, report: pd.DataFrame) -> None:
    shown = table(open_page(app, "views/overview.py"), 0).set_index("container")
    assert shown["pkranges"].astype(int).to_dict() == report_counts(report)
    shares = (100 * shown["hot_range_share"].astype(float)).to_dict()
    assert shares == pytest.approx(report_shares(report), abs=0.01)


def test_the_fleet_page_shows_the_reports_partition_count_and_share(app: AppTest, report: pd.DataFrame) -> None:
    shown = table(open_page(app, "views/fleet.py"), 0).set_index("container")
    assert shown["pkranges"].astype(int).to_dict() == report_counts(report)
    shares = (100 * shown["hot_range_share"].astype(float)).to_dict()
    assert shares == pytest.approx(report_shares(report), abs=0.01)


def test_the_hot_partitions_page_shows_the_reports_partition_count_and_share(
    app: AppTest, report: pd.DataFrame, scenario: OperatorStore
) -> None:
    """The skew table as it opens (its default source: the one the model picks) has the report's count and
    share; every other source, a cross-check, counts the same partitions."""
    open_page(app, "views/hot_partitions.py")
    radio = app.radio(key="hot_skew_source")
    default, first = radio.value, skew_table(app)
    assert first["hottest_pkrange"].to_dict()[EVENTS] == hot_pkrange(scenario)
    assert first["pkranges"].astype(int).to_dict() == report_counts(report), default
    assert first["hottest_pct"].astype(float).to_dict() == pytest.approx(report_shares(report), abs=0.01), default
    counts = {}
    for source in radio.options:
        app.radio(key="hot_skew_source").set_value(source).run()
        counts[source] = skew_table(app)["pkranges"].astype(int).to_dict()
    assert counts == dict.fromkeys(radio.options, report_counts(report))


def skew_table(app: AppTest) -> pd.DataFrame:
    """The Hot partitions page's skew table (per container: pkranges, hottest pkrange and share)."""
    return next(t.value for t in app.dataframe if "gini" in t.value.columns).set_index("container")
