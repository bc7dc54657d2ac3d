"""analysis.fleet on frames built here: per-container stats, NaN where a table has no rows, the ranking."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from analysis import fleet, throttling
from cosmoscore.limits import GB, Limits
from tests.analysis.queries.test_costs import T0, execution, executions_frame, request, requests_frame

METRIC_NAN = ["provisioned_ru_s", "p95_ru_s", "waste", "max_normalized_ru", "largest_partition_gb", "storage_headroom"]


def pages(container: str, charges: dict[str, float], *, account: str = "127.0.0.1", throttled: int = 0) -> list[dict]:
    """Data-page requests of one execution in shop/<container>, then `throttled` 429s."""
    rows = [request("r1", "q", f"{container}-q", "page", pk, ru, container=container) for pk, ru in charges.items()]
    rows += [{**request("r1", "q", f"{container}-q", "page", "", 0.0, container=container), "status": 429}] * throttled
    return [{**row, "account": account} for row in rows]


def run(container: str, ru: float, *, account: str = "127.0.0.1", routing: str = "single") -> dict[str, Any]:
    return {**execution("r1", "q", ru=ru, routing=routing, container=container), "account": account}


def metric(container: str, name: str, value: float, *, minute: int = 0, **extra: Any) -> dict[str, Any]:
    row = dict.fromkeys(fleet.FLEET_METRIC_COLUMNS)
    row.update(account="127.0.0.1", database="shop", container=container, time=T0 + pd.Timedelta(minutes=minute))
    row.update({"metric": name, "aggregation": "Total", "value": value, "grain": "PT1M", **extra})
    return row


def by_container(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["container"]: row for row in frame.to_dict("records")}


def test_replay_only_stats_and_nan_without_metrics() -> None:
    executions = executions_frame(run("a", 4.0, routing="fan-out"), run("a", 2.0), run("b", 1.0))
    executions["execution_id"] = ["e1", "e2", "e3"]
    executions["repeat"] = [0, 1, 0]
    requests = requests_frame(*pages("a", {"0": 3.0, "1": 1.0}, throttled=1), *pages("b", {"0": 1.0}))
    ranked = fleet.summarize_fleet(executions, requests)
    assert ranked.columns.tolist() == fleet.FLEET_COLUMNS
    rows = by_container(ranked)
    assert rows["a"]["executions"] == 2 and rows["a"]["total_ru"] == 6.0 and rows["a"]["mean_ru"] == 3.0
    assert rows["a"]["fan_out_share"] == 0.5
    assert rows["a"]["requests"] == 3 and rows["a"]["throttle_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert rows["a"]["throttle_source"] == throttling.REPLAY and rows["a"]["waste_note"] == ""
    assert (rows["a"]["pkranges_seen"], rows["a"]["hot_pkrange"], rows["a"]["hot_pkrange_share"]) == (2, "0", 0.75)
    assert rows["b"]["hot_pkrange_share"] == 1.0 and rows["b"]["risk"] == 0.0  # one pkrange: no skew
    assert all(math.isnan(rows[c][name]) for c in "ab" for name in METRIC_NAN)
    assert ranked["container"].tolist() == ["a", "b"]
    assert rows["a"]["risk"] == 1.0 and rows["a"]["risk_driver"] == "429s"  # a third throttled: over 5%


def test_the_replay_skew_drives_risk_without_metrics() -> None:
    requests = requests_frame(*pages("even", {"0": 1.0, "1": 1.0}), *pages("skewed", {"0": 9.0, "1": 1.0}))
    ranked = fleet.summarize_fleet(executions_frame(), requests)
    assert ranked["container"].tolist() == ["skewed", "even"]
    assert ranked["risk"].tolist() == [0.8, 0.0]  # (0.9 * 2 - 1) / (2 - 1)
    assert ranked["risk_driver"].tolist() == ["hot partition", ""]
    assert ranked["executions"].isna().all()


def test_metrics_give_provisioned_p95_waste_and_the_hot_partition() -> None:
    minutes = [metric("a", "TotalRequestUnits", 60.0 * ru, minute=m) for m, ru in enumerate(range(1, 101))]
    split = [metric("a", "TotalRequestUnits", 600.0, minute=100, StatusCode="200")] * 2  # one minute, two rows
    metrics = pd.DataFrame(
        [
            *minutes,
            *split,
            metric("a", "ProvisionedThroughput", 400.0, minute=0),
            metric("a", "ProvisionedThroughput", 1000.0, minute=50),
            metric("b", "ProvisionedThroughput", 400.0),
            metric("b", "AutoscaleMaxThroughput", 4000.0),
            metric("b", "NormalizedRUConsumption", 30.0, pkrange_id="0"),
            metric("b", "NormalizedRUConsumption", 100.0),  # not split by pkrange: not the hot-partition signal
            metric("b", "NormalizedRUConsumption", 45.0, pkrange_id="1"),
        ]
    )
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), metrics)
    rows = by_container(ranked)
    assert rows["a"]["provisioned_ru_s"] == 1000.0 and rows["b"]["provisioned_ru_s"] == 4000.0
    consumed = pd.Series([*range(1, 101), 20.0]).quantile(0.95)
    assert rows["a"]["p95_ru_s"] == round(consumed, 2)
    assert rows["a"]["waste"] == round(1 - round(consumed, 2) / 1000, 4)
    assert math.isnan(rows["a"]["risk"]) and math.isnan(rows["a"]["max_normalized_ru"])
    assert rows["b"]["max_normalized_ru"] == 45.0 and rows["b"]["risk"] == 0.45
    assert math.isnan(rows["b"]["waste"])  # provisioned, but no consumption recorded
    assert ranked["container"].tolist() == ["b", "a"]  # risk first; a has no risk signal at all


def test_the_429_rate_is_azure_monitors_where_it_counted_the_container() -> None:
    """a: Monitor counted 900 requests, 100 answered 429 (11.1%) while the replay's 2 requests were not
    throttled; b: no Monitor rows, the replay's 1 of 2. Fleet shows what the Throttling page shows."""
    counted = [metric("a", "TotalRequests", 800.0, aggregation="Count", status_code="200"),
               metric("a", "TotalRequests", 100.0, aggregation="Count", status_code="429")]  # fmt: skip
    requests = requests_frame(*pages("a", {"0": 1.0, "1": 1.0}), *pages("b", {"0": 1.0}, throttled=1))
    metrics = pd.DataFrame(counted, columns=fleet.FLEET_METRIC_COLUMNS)
    ranked = fleet.summarize_fleet(executions_frame(), requests, metrics)
    rows = by_container(ranked)
    assert (rows["a"]["throttle_source"], rows["a"]["requests"], rows["a"]["throttle_rate"]) == (
        throttling.MONITOR,
        900,
        round(100 / 900, 4),
    )
    assert (rows["b"]["throttle_source"], rows["b"]["requests"], rows["b"]["throttle_rate"]) == (
        throttling.REPLAY,
        2,
        0.5,
    )
    assert rows["a"]["risk"] == 1.0 and rows["a"]["risk_driver"] == "429s"  # 11% is over the 5% full risk
    shared = throttling.preferred_rate(metrics, requests).set_index("container")["rate"].round(4)
    assert ranked.set_index("container")["throttle_rate"].to_dict() == shared.to_dict()  # one computation


def test_a_hot_partition_is_not_called_waste() -> None:
    """Both provision 1,000 RU/s and use 100 RU/s a minute on average; hot's range 0 reached 100% of its share
    (a burst on one key), calm's ranges stayed under 90%: calm wastes 90%, hot wastes nothing."""
    metrics = pd.DataFrame(
        [
            *(metric(c, "TotalRequestUnits", 6000.0) for c in ("hot", "calm")),
            *(metric(c, "ProvisionedThroughput", 1000.0) for c in ("hot", "calm")),
            metric("hot", "NormalizedRUConsumption", 100.0, pkrange_id="0"),
            metric("hot", "NormalizedRUConsumption", 5.0, pkrange_id="1"),
            metric("calm", "NormalizedRUConsumption", 89.0, pkrange_id="0"),
        ]
    )
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), metrics)
    assert ranked[["container", "risk", "risk_driver", "waste", "waste_note"]].fillna(-1).values.tolist() == [
        ["hot", 1.0, "hot partition", -1, fleet.HOT_WASTE_NOTE],
        ["calm", 0.89, "hot partition", 0.9, ""],
    ]
    assert fleet.HOT_WASTE_NOTE == "a hot partition: the RU/s are not wasted, the key is skewed"


def test_a_tie_between_429s_and_a_hot_partition_names_the_hot_partition() -> None:
    metrics = pd.DataFrame(
        [
            metric("a", "NormalizedRUConsumption", 100.0, pkrange_id="0"),
            metric("a", "TotalRequests", 80.0, aggregation="Count", status_code="200"),
            metric("a", "TotalRequests", 20.0, aggregation="Count", status_code="429"),
        ]
    )
    [row] = fleet.summarize_fleet(executions_frame(), requests_frame(), metrics).to_dict("records")
    assert (row["risk"], row["risk_driver"], row["throttle_rate"]) == (1.0, "hot partition", 0.2)


def test_waste_breaks_ties_in_risk() -> None:
    metrics = pd.DataFrame(
        [
            *(metric(c, "TotalRequestUnits", 6000.0) for c in ("lean", "fat")),
            metric("lean", "ProvisionedThroughput", 200.0),
            metric("fat", "ProvisionedThroughput", 1000.0),
        ]
    )
    requests = requests_frame(*pages("lean", {"0": 1.0}), *pages("fat", {"0": 1.0}))
    ranked = fleet.summarize_fleet(executions_frame(), requests, metrics)
    assert ranked["container"].tolist() == ["fat", "lean"]
    # each replay page's 1 RU, sent in the metrics' minute, is the replay's, not the workload's: subtracted
    lean = round(1 - (6000.0 - 1.0) / 60 / 200, 4)
    assert ranked["waste"].tolist() == [round(1 - 5999.0 / 60 / 1000, 4), lean] and ranked["risk"].tolist() == [
        0.0,
        0.0,
    ]


def test_partitions_give_the_storage_headroom() -> None:
    partitions = pd.DataFrame(
        [
            {"account": "127.0.0.1", "database": "shop", "container": "a", "time": T0, "pkrange_id": "0",
             "size_kb": 40 * GB // 1024},
            {"account": "127.0.0.1", "database": "shop", "container": "a", "time": T0 + pd.Timedelta(hours=1),
             "pkrange_id": "0", "size_kb": 10 * GB // 1024},
            {"account": "127.0.0.1", "database": "shop", "container": "a", "time": T0 + pd.Timedelta(hours=1),
             "pkrange_id": "1", "size_kb": 5 * GB // 1024},
        ]
    )  # fmt: skip
    rows = by_container(fleet.summarize_fleet(executions_frame(), requests_frame(), None, partitions))
    assert rows["a"]["largest_partition_gb"] == 10.0 and rows["a"]["storage_headroom"] == 0.8
    assert rows["a"]["risk"] == pytest.approx(0.2) and rows["a"]["risk_driver"] == "storage"
    small = Limits(physical_partition_max_bytes=20 * GB)
    rows = by_container(fleet.summarize_fleet(executions_frame(), requests_frame(), None, partitions, limits=small))
    assert rows["a"]["storage_headroom"] == 0.5


def test_accounts_are_kept_apart_and_unnamed_containers_left_out() -> None:
    executions = executions_frame(run("a", 1.0), run("a", 3.0, account="west"))
    requests = requests_frame(*pages("a", {"0": 1.0}), *pages("", {"": 0.5}))  # the client's account read
    ranked = fleet.summarize_fleet(executions, requests)
    assert ranked[["account", "container", "total_ru"]].values.tolist() == [
        ["127.0.0.1", "a", 1.0],
        ["west", "a", 3.0],
    ]


def test_an_empty_fleet_has_the_columns() -> None:
    ranked = fleet.summarize_fleet(executions_frame(), requests_frame(), pd.DataFrame(columns=fleet.METRIC_COLUMNS))
    assert ranked.empty and ranked.columns.tolist() == fleet.FLEET_COLUMNS


def test_container_labels() -> None:
    assert fleet.container_label(("west", "shop", "a"), with_account=True) == "west / shop / a"
    assert fleet.container_label(("west", "shop", "a"), with_account=False) == "shop / a"


def test_the_columns_read_from_the_store_are_the_store_tables_columns() -> None:
    """The Fleet page reads `partitions` as the storage collector writes it (not a guessed schema)."""
    from store import EXECUTIONS, PARTITIONS, REQUESTS

    assert set(fleet.PARTITION_COLUMNS) <= set(PARTITIONS.schema.names)
    assert set(fleet.EXECUTION_COLUMNS) <= set(EXECUTIONS.schema.names)
    assert set(fleet.REQUEST_COLUMNS) <= set(REQUESTS.schema.names)
    from store import TABLES

    assert set(fleet.FLEET_METRIC_COLUMNS) <= set(TABLES["metrics"].schema.names)
    assert {"time", "status"} <= set(fleet.REQUEST_COLUMNS)  # what analysis.throttling's replay rate reads
