"""analysis.alerts on small frames built here: each rule fires at its threshold and not below it, with its
whole rows (rule, subject, value, threshold, unit, message) as expected."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis import alerts
from analysis.scope import Scope
from cosmoscore.limits import GB, Limits
from tests.analysis.queries.test_costs import execution, executions_frame

T0 = pd.Timestamp("2026-05-01T10:00:00Z")
ACCOUNT = "127.0.0.1"
KEY_LIMIT = Limits().logical_partition_max_bytes
PARTITION_LIMIT = Limits().physical_partition_max_bytes


def metric(
    minute: float,
    value: float,
    *,
    pkrange: str | None = None,
    name: str = "NormalizedRUConsumption",
    aggregation: str = "Maximum",
    status: str | None = None,
    grain: str = "PT1M",
    container: str = "orders",
) -> dict[str, Any]:
    return {
        "account": ACCOUNT,
        "database": "shop",
        "container": container,
        "time": T0 + pd.Timedelta(minutes=minute),
        "metric": name,
        "aggregation": aggregation,
        "pkrange_id": pkrange,
        "status_code": status,
        "value": value,
        "grain": grain,
    }


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    assert list(frame.columns) == alerts.ALERT_COLUMNS
    return frame.to_dict("records")


def alert(rule: str, subject: str, value: float, threshold: float, unit: str, message: str, **where: str) -> dict:
    scope = {"account": ACCOUNT, "database": "shop", "container": "orders", **where}
    return {**scope, "rule": rule, "subject": subject, "value": value, "threshold": threshold, "unit": unit} | {
        "message": message
    }


# -- hot partition ----------------------------------------------------------------------------------------


def hot_metrics() -> pd.DataFrame:
    rows = [metric(m, 90.0 if m != 3 else 99.0, pkrange="0") for m in range(10)]  # 10 min at >= 90: fires
    rows += [metric(m, 95.0, pkrange="1") for m in range(9)]  # 9 min: not enough
    rows += [metric(m, 89.99 if m == 4 else 95.0, pkrange="2") for m in range(12)]  # a dip below splits it
    rows += [metric(m, 95.0, pkrange="3") for m in [*range(5), *range(6, 12)]]  # a missing minute splits it
    rows += [metric(m, v, pkrange="4", grain="PT5M") for m, v in [(0, 92.0), (5, 97.0), (10, 50.0)]]  # 2 x 5 min
    rows += [metric(m, 100.0) for m in range(20)]  # not split by pkrange: not a pkrange's signal
    rows += [metric(m, 100.0, pkrange="5", aggregation="Average") for m in range(20)]  # not the Maximum
    return pd.DataFrame(rows)


def test_hot_partition_fires_for_minutes_at_or_above_the_percent_consecutively() -> None:
    found = alerts.hot_partition_alerts(hot_metrics(), percent=90, minutes=10)
    assert records(found) == [
        alert(
            "hot_partition",
            "0",
            99.0,
            90.0,
            "%",
            "pkrange 0 of shop/orders at >= 90% normalized RU for 10 min, peak 99% (threshold 90% for 10 min)",
        ),
        alert(
            "hot_partition",
            "4",
            97.0,
            90.0,
            "%",
            "pkrange 4 of shop/orders at >= 90% normalized RU for 10 min, peak 97% (threshold 90% for 10 min)",
        ),
    ]


def test_the_replay_s_own_minutes_are_not_a_hot_partition() -> None:
    """200 RU/s over 2 ranges (100 each), both at 95% for 10 minutes; at minute 3 ruscope's replay sent pkrange
    0 a 95 RU request (its busiest second: 95% of the budget, all of the minute's figure): that minute is the
    replay's, so pkrange 0's stretch is 3 + 6 minutes and only pkrange 1 fires; a shorter rule counts it."""
    rows = [metric(m, 95.0, pkrange=pk) for pk in ("0", "1") for m in range(10)]
    rows.append(metric(0, 200.0, name="ProvisionedThroughput"))
    metrics = pd.DataFrame(rows)
    replay = {"account": ACCOUNT, "database": "shop", "container": "orders", "pkrange_id": "0", "status": 200}
    requests = pd.DataFrame([{**replay, "time": T0 + pd.Timedelta(minutes=3, seconds=20), "request_charge": 95.0}])
    found = alerts.hot_partition_alerts(metrics, requests, percent=90, minutes=10)
    assert found["subject"].tolist() == ["1"]
    assert alerts.hot_partition_alerts(metrics, percent=90, minutes=10)["subject"].tolist() == ["0", "1"]
    shorter = alerts.hot_partition_alerts(metrics, requests, percent=90, minutes=6).set_index("subject")
    assert shorter.loc["0", "message"].endswith(
        "for 6 min, peak 95% (threshold 90% for 6 min); 1 minute of ruscope's replay left out"
    )
    assert "replay" not in shorter.loc["1", "message"]
    small = requests.assign(request_charge=10.0)  # 10% of the budget against the minute's 95%: the workload's
    assert alerts.hot_partition_alerts(metrics, small, percent=90, minutes=10)["subject"].tolist() == ["0", "1"]


def test_hot_partition_counts_the_longest_stretch() -> None:
    found = alerts.hot_partition_alerts(hot_metrics(), percent=90, minutes=7)
    assert found["subject"].tolist() == ["0", "1", "2", "4"]  # 3: 5 and 6 minutes around the missing one
    lengths = [m.split("RU for ")[1].split(" min")[0] for m in found["message"]]
    assert lengths == ["10", "9", "7", "10"]


def test_hot_partition_below_the_percent_never_fires() -> None:
    assert alerts.hot_partition_alerts(hot_metrics(), percent=99.5, minutes=1).empty
    assert alerts.hot_partition_alerts(pd.DataFrame(columns=alerts.METRIC_COLUMNS), percent=1, minutes=1).empty


# -- 429 rate ---------------------------------------------------------------------------------------------


def requests_rows(container: str, total: int, throttled: int) -> list[dict[str, Any]]:
    return [
        {
            "account": ACCOUNT,
            "database": "shop",
            "container": container,
            "time": T0,
            "status": 429 if i < throttled else 200,
        }
        for i in range(total)
    ]


def throttle_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        metric(0, 60, name="TotalRequests", aggregation="Count", status="200"),
        metric(1, 35, name="TotalRequests", aggregation="Count", status="200"),
        metric(1, 5, name="TotalRequests", aggregation="Count", status="429"),  # 5 of 100 in orders
        metric(0, 96, name="TotalRequests", aggregation="Count", status="200", container="customers"),
        metric(0, 4, name="TotalRequests", aggregation="Count", status="429", container="customers"),  # 4%
        metric(0, 1000, name="TotalRequestUnits", aggregation="Total", status="429", container="customers"),
    ]
    # the replay's requests: orders has Monitor rows (they win); carts has none: 1 of 20 throttled
    requests = requests_rows("orders", 10, 0) + requests_rows("carts", 20, 1) + requests_rows("", 5, 5)
    return pd.DataFrame(rows), pd.DataFrame(requests)


def test_throttle_rate_fires_at_the_rate_from_monitor_else_from_the_replay() -> None:
    metrics, requests = throttle_frames()
    found = alerts.throttle_rate_alerts(metrics, requests, percent=5, window_minutes=60)
    assert records(found) == [
        alert(
            "throttle_rate",
            "",
            5.0,
            5.0,
            "%",
            "429s were 5% of requests to shop/carts in the last 1 hour (1 of 20, from the replay's requests; "
            "threshold 5%)",
            container="carts",
        ),
        alert(
            "throttle_rate",
            "",
            5.0,
            5.0,
            "%",
            "429s were 5% of requests to shop/orders in the last 1 hour (5 of 100, from Azure Monitor "
            "TotalRequests; threshold 5%)",
        ),
    ]
    assert alerts.throttle_rate_alerts(metrics, requests, percent=4, window_minutes=60)["container"].tolist() == [
        "carts",
        "customers",
        "orders",
    ]
    assert alerts.throttle_rate_alerts(metrics, requests, percent=5.01, window_minutes=60).empty


# -- storage ----------------------------------------------------------------------------------------------


def sized(run: str, minute: int, key: str, size_kb: float, column: str = "partition_key") -> dict[str, Any]:
    time = T0 + pd.Timedelta(minutes=minute)
    return {"account": ACCOUNT, "database": "shop", "container": "orders", "run_id": run, "time": time} | {
        column: key,
        "size_kb": int(size_kb),
    }


def test_a_logical_key_fires_at_its_share_of_20_gb_in_the_latest_snapshot() -> None:
    half = KEY_LIMIT / 2 / 1024  # 50% of the limit, in KB
    statistics = pd.DataFrame(
        [
            sized("r1", 0, '["b"]', KEY_LIMIT / 1024),  # the older snapshot: not read
            sized("r2", 60, '["a"]', half),  # exactly 50%: fires
            sized("r2", 60, '["b"]', half - 1),  # just below
            sized("r2", 60, '["d"]', half * 1.5),  # the logs say otherwise, and they win
        ]
    )
    logs = pd.DataFrame([sized("l1", 30, '["c", "u1"]', half * 1.2), sized("l1", 30, '["d"]', half / 2)])
    found = alerts.logical_key_alerts(statistics, logs, percent=50, limit_bytes=KEY_LIMIT)
    assert KEY_LIMIT == 20 * GB
    assert records(found) == [
        alert(
            "logical_key_storage",
            '["a"]',
            50.0,
            50.0,
            "%",
            "logical key a of shop/orders holds 10 GB, 50% of the 20 GB limit (threshold 50%; from the storage "
            "statistics)",
        ),
        alert(
            "logical_key_storage",
            '["c", "u1"]',
            60.0,
            50.0,
            "%",
            "logical key c/u1 of shop/orders holds 12 GB, 60% of the 20 GB limit (threshold 50%; from the "
            "diagnostic logs)",
        ),
    ]
    assert alerts.logical_key_alerts(statistics, logs, percent=60.01, limit_bytes=KEY_LIMIT).empty


def test_a_physical_partition_fires_at_its_share_of_50_gb_in_the_latest_snapshot() -> None:
    fill = PARTITION_LIMIT * 0.8 / 1024
    partitions = pd.DataFrame(
        [
            sized("r1", 0, "1", PARTITION_LIMIT / 1024, column="pkrange_id"),
            sized("r2", 60, "0", fill, column="pkrange_id"),
            sized("r2", 60, "1", fill - 1, column="pkrange_id"),
        ]
    )
    found = alerts.partition_storage_alerts(partitions, percent=80, limit_bytes=PARTITION_LIMIT)
    assert records(found) == [
        alert(
            "partition_storage",
            "0",
            80.0,
            80.0,
            "%",
            "pkrange 0 of shop/orders holds 40 GB, 80% of the 50 GB limit (threshold 80%)",
        )
    ]
    assert alerts.partition_storage_alerts(partitions, percent=80.01, limit_bytes=PARTITION_LIMIT).empty


# -- query RU ---------------------------------------------------------------------------------------------


def query_runs() -> pd.DataFrame:
    rows = []
    for n, ru in enumerate([10.0, 10.0, 12.0]):  # the baseline runs of "q": median 10
        rows += [execution(f"r{n}", "q", minute=60 * n, ru=ru, repeat=r) for r in range(2)]
    rows += [execution("r3", "q", minute=180, ru=ru, repeat=r) for r, ru in enumerate([14.0, 16.0])]  # mean 15
    rows.append(execution("r3", "q", minute=181, ru=500.0, repeat=2, status="error"))  # failed: not counted
    rows.append(execution("r3", "new", minute=182, ru=99.0))  # no earlier run: no baseline
    return executions_frame(*rows)


def test_a_querys_ru_fires_at_its_increase_over_the_median_of_its_previous_runs() -> None:
    found = alerts.query_ru_alerts(query_runs(), percent=50, baseline_runs=10)
    assert records(found) == [
        alert(
            "query_ru_increase",
            "q",
            50.0,
            50.0,
            "%-change",
            "query q on shop/orders took 15.00 RU per execution in its latest run, up 50% on its baseline of "
            "10.00 RU (median of 3 previous run(s); threshold +50%)",
        )
    ]
    assert alerts.query_ru_alerts(query_runs(), percent=50.01, baseline_runs=10).empty
    # one run back only: 15 against 12 is +25%
    assert alerts.query_ru_alerts(query_runs(), percent=25, baseline_runs=1)["value"].tolist() == [25.0]
    assert alerts.query_ru_alerts(query_runs(), percent=25.01, baseline_runs=1).empty


# -- open alerts ------------------------------------------------------------------------------------------


def stored(run: str, minute: int, frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(run_id=run, time=T0 + pd.Timedelta(minutes=minute))


def test_latest_alerts_are_each_accounts_latest_evaluation() -> None:
    hot = alerts.hot_partition_alerts(hot_metrics(), percent=90, minutes=10)
    other = hot.assign(account="eu-2")
    first = pd.concat([hot, other, alerts.evaluated_rows([ACCOUNT, "eu-2"], pd.concat([hot, other]))])
    # the next evaluation covers only ACCOUNT and finds nothing: eu-2's alerts stay open, ACCOUNT's close
    second = alerts.evaluated_rows([ACCOUNT], hot.iloc[:0])
    frame = pd.concat([stored("e1", 0, first), stored("e2", 5, second)], ignore_index=True)
    assert first["rule"].tolist()[-2:] == ["evaluated", "evaluated"]
    assert first["value"].tolist()[-2:] == [2.0, 2.0]
    open_now = alerts.latest_alerts(frame)
    assert list(open_now.columns) == alerts.STORED_COLUMNS
    assert open_now[["run_id", "account", "subject"]].values.tolist() == [["e1", "eu-2", "0"], ["e1", "eu-2", "4"]]
    assert alerts.latest_alerts(frame.iloc[:0]).empty
    in_shop = alerts.open_alerts(frame, Scope(database="shop", container="orders"))
    assert in_shop.values.tolist() == open_now.values.tolist()
    assert alerts.open_alerts(frame, Scope(database="shop", container="carts")).empty


def test_a_shared_databases_hot_partition_fires_as_the_databases() -> None:
    """A shared-throughput database's partitions are stored under its offer (container ""): they throttle
    its containers, so they alert, named as the database's."""
    offer = pd.DataFrame([metric(m, 95.0, pkrange="0", container="") for m in range(10)])
    found = alerts.hot_partition_alerts(offer, percent=90, minutes=10)
    assert records(found) == [
        alert(
            "hot_partition",
            "0",
            95.0,
            90.0,
            "%",
            "pkrange 0 of database shop's shared throughput at >= 90% normalized RU for 10 min, peak 95% "
            "(threshold 90% for 10 min)",
            container="",
        )
    ]
