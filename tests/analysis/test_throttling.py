"""analysis.throttling on small hand-built frames: the 429 rate per bin, the series, retry-after, throttled queries."""

from __future__ import annotations

from typing import Any

import pandas as pd

from analysis import alerts, fleet, overview
from analysis import throttling as th
from analysis.capacity import review
from analysis.scope import window_text
from store import REQUESTS, TABLES
from tests.analysis.queries.test_costs import execution, executions_frame

T0 = pd.Timestamp("2026-05-01T10:00:00Z")
METRICS, LOG_THROTTLES = TABLES["metrics"], TABLES["log_throttles"]


def metric(minute: int, operation: str, status: str, value: float, *, container: str = "orders") -> dict[str, Any]:
    row = dict.fromkeys(METRICS.columns)
    row.update(run_id="m1", time=T0 + pd.Timedelta(minutes=minute), account="a", database="shop", container=container,
               metric="TotalRequests", aggregation="Count", operation_type=operation, status_code=status,
               value=value, unit="Count", grain="PT1M")  # fmt: skip
    return row


def replayed(minute: int, pkrange: str, status: int, *, retry_ms: float | None = None) -> dict[str, Any]:
    row = dict.fromkeys(REQUESTS.columns)
    row.update(run_id="r1", time=T0 + pd.Timedelta(minutes=minute), account="a", database="shop", container="orders",
               pkrange_id=pkrange, status=status, retry_after_ms=retry_ms)  # fmt: skip
    return row


# minute 0: 90 reads ok, 10 reads throttled; minute 7: 50 writes ok, 50 throttled; minute 20: 100 reads ok
METRIC_ROWS = pd.DataFrame(
    [
        metric(0, "Query", "200", 90), metric(0, "Query", "429", 10),
        metric(7, "Create", "201", 50), metric(7, "Create", "429", 50),
        metric(20, "Query", "200", 100),
    ],
    columns=METRICS.columns,
)  # fmt: skip
REQUEST_ROWS = pd.DataFrame(
    [replayed(0, "0", 200), replayed(0, "1", 429, retry_ms=120.0), replayed(1, "1", 429, retry_ms=80.0),
     replayed(1, "", 200)],
    columns=REQUESTS.columns,
)  # fmt: skip
NO_REQUESTS = pd.DataFrame(columns=REQUESTS.columns)


def test_pick_bin_keeps_the_bins_under_the_cap() -> None:
    minutes = pd.Series([T0, T0 + pd.Timedelta(hours=1)])
    assert th.pick_bin(minutes) == pd.Timedelta(minutes=1)
    assert th.pick_bin(minutes, max_bins=10) == pd.Timedelta(minutes=15)
    month = pd.Series([T0, T0 + pd.Timedelta(days=30)])
    assert th.pick_bin(month) == pd.Timedelta(hours=3)  # 240 bins
    assert th.pick_bin(pd.Series([], dtype="datetime64[ns, UTC]")) == pd.Timedelta(minutes=1)


def test_throttle_rate_per_bin_from_both_sources() -> None:
    rate = th.throttle_rate(METRIC_ROWS, REQUEST_ROWS, bin=pd.Timedelta(minutes=15))
    assert rate.columns.tolist() == th.RATE_COLUMNS
    assert rate[["source", "time", "requests", "throttled", "rate"]].values.tolist() == [
        [th.MONITOR, T0, 200.0, 60.0, 0.3],
        [th.MONITOR, T0 + pd.Timedelta(minutes=15), 100.0, 0.0, 0.0],
        [th.REPLAY, T0, 4.0, 2.0, 0.5],
    ]
    assert rate["label"].unique().tolist() == ["orders"]


def test_throttle_summary_names_the_healthy_band() -> None:
    rows = pd.concat([METRIC_ROWS, pd.DataFrame([metric(0, "Query", "200", 980, container="carts"),
                                                  metric(0, "Query", "429", 20, container="carts")])])  # fmt: skip
    summary = th.throttle_summary(rows, NO_REQUESTS)
    assert summary[["container", "requests", "throttled", "rate", "verdict"]].values.tolist() == [
        ["orders", 300.0, 60.0, 0.2, "above the healthy 1%-5%"],
        ["carts", 1000.0, 20.0, 0.02, "within the healthy 1%-5%"],
    ]
    assert th.verdict(0.0) == "no 429s" and th.verdict(float("nan")) == ""
    assert th.HEALTHY_429_RATE == (0.01, 0.05)


def test_monitor_throttles_by_operation() -> None:
    series = th.monitor_throttles(METRIC_ROWS, bin=pd.Timedelta(minutes=5))
    assert series.values.tolist() == [
        [T0 + pd.Timedelta(minutes=5), "Create", 50.0],
        [T0, "Query", 10.0],
    ]
    assert th.monitor_throttles(METRIC_ROWS, bin=pd.Timedelta(minutes=5), top=1)["series"].tolist() == [
        "Create",
        th.OTHER,
    ]


def test_log_throttles_by_partition_and_operation_in_several_containers() -> None:
    rows = []
    for minute, container, partition, throttled in [(0, "orders", "p-1", 3), (5, "orders", "p-1", 4),
                                                    (5, "carts", "p-2", 1)]:  # fmt: skip
        row = dict.fromkeys(LOG_THROTTLES.columns)
        row.update(time=T0 + pd.Timedelta(minutes=minute), account="a", database="shop", container=container,
                   partition_id=partition, operation_name="Query", throttled=throttled, bin_minutes=5)  # fmt: skip
        rows.append(row)
    series = th.log_throttles(pd.DataFrame(rows, columns=LOG_THROTTLES.columns), bin=pd.Timedelta(minutes=15))
    assert series.values.tolist() == [
        [T0, "carts/partition p-2 · Query", 1.0],
        [T0, "orders/partition p-1 · Query", 7.0],
    ]
    one = th.log_throttles(pd.DataFrame(rows[:2], columns=LOG_THROTTLES.columns), bin=pd.Timedelta(minutes=15))
    assert one["series"].tolist() == ["partition p-1 · Query"]  # never "p-1 Query": the id read as a count


def test_replay_throttles_and_retry_after_per_pkrange() -> None:
    series = th.replay_throttles(REQUEST_ROWS, bin=pd.Timedelta(minutes=1))
    assert series.values.tolist() == [[T0, "1", 1.0], [T0 + pd.Timedelta(minutes=1), "1", 1.0]]
    totals = th.retry_after_totals(REQUEST_ROWS)
    assert totals[["pkrange_id", "requests", "throttled", "rate", "retry_after_s"]].values.tolist() == [
        ["1", 2, 2, 1.0, 0.2],
        ["0", 1, 0, 0.0, 0.0],
        ["gateway", 1, 0, 0.0, 0.0],
    ]


def test_replay_throttles_are_named_as_the_retry_after_table_names_them() -> None:
    """Two containers replayed, only orders throttled: its series says `orders/1`, as its table row does."""
    both = pd.concat([REQUEST_ROWS, REQUEST_ROWS.iloc[:1].assign(container="carts")], ignore_index=True)
    assert th.replay_throttles(both, bin=pd.Timedelta(minutes=5))["series"].tolist() == ["orders/1"]
    assert th.retry_after_totals(both)["label"].tolist()[0] == "orders/1"


def test_preferred_rate_is_monitors_where_it_counted_else_the_replays() -> None:
    carts = REQUEST_ROWS.assign(container="carts")  # no Monitor rows for carts: the replay's 2 of 4
    rate = th.preferred_rate(METRIC_ROWS, pd.concat([REQUEST_ROWS, carts], ignore_index=True))
    assert rate.columns.tolist() == th.PREFERRED_COLUMNS
    assert rate[["container", "source", "requests", "throttled", "rate"]].values.tolist() == [
        ["carts", th.REPLAY, 4.0, 2.0, 0.5],
        ["orders", th.MONITOR, 300.0, 60.0, 0.2],  # Monitor's 60 of 300, not the replay's 2 of 4
    ]
    assert th.preferred_rate(METRIC_ROWS.iloc[:0], NO_REQUESTS).columns.tolist() == th.PREFERRED_COLUMNS


def test_throttled_queries_by_query_and_run() -> None:
    rows = [
        execution("r1", "hot", minute=0, ru=5.0, throttled=2, execution_id="h0"),
        execution("r1", "hot", minute=1, ru=7.0, throttled=1, execution_id="h1"),
        execution("r2", "hot", minute=60, ru=5.0, throttled=0, execution_id="h2"),
        execution("r2", "cold", minute=61, ru=1.0, throttled=4, execution_id="c0"),
        execution("r2", "calm", minute=62, ru=1.0, execution_id="k0"),
    ]
    frame = executions_frame(*rows)
    frame.loc[frame["query_name"].eq("hot"), "retry_after_ms_total"] = 250.0
    queries = th.throttled_queries(frame)
    assert queries.columns.tolist() == th.QUERY_COLUMNS
    assert queries[
        ["query_name", "run_id", "executions", "throttled", "retry_after_s", "total_ru"]
    ].values.tolist() == [
        ["cold", "r2", 1, 4, 0.0, 1.0],
        ["hot", "r1", 2, 3, 0.5, 12.0],
    ]
    assert queries["time"].tolist() == [T0 + pd.Timedelta(minutes=61), T0]
    assert th.throttled_queries(frame.iloc[:0]).columns.tolist() == th.QUERY_COLUMNS


def test_nothing_to_show_is_empty_with_columns() -> None:
    no_metrics = pd.DataFrame(columns=METRICS.columns)
    assert th.throttle_rate(no_metrics, NO_REQUESTS).columns.tolist() == th.RATE_COLUMNS
    assert th.throttle_summary(no_metrics, NO_REQUESTS).empty
    assert th.monitor_throttles(no_metrics).columns.tolist() == th.SERIES_COLUMNS
    assert th.retry_after_totals(NO_REQUESTS).columns.tolist() == th.RETRY_COLUMNS


def logged(minute: int, container: str, partition: str, operation: str, requests: int | None, throttled: int) -> Any:
    row = dict.fromkeys(LOG_THROTTLES.columns)
    row.update(time=T0 + pd.Timedelta(minutes=minute), account="a", database="shop", container=container,
               partition_id=partition, operation_name=operation, requests=requests, throttled=throttled,
               bin_minutes=1)  # fmt: skip
    return row


# carts has logs only: minute 0, two partitions of Upsert (40 of 100 and 0 of 100); a row stored before
# requests were counted (None) gives no rate; orders has logs too, but Monitor counted its requests
LOG_ROWS = pd.DataFrame(
    [logged(0, "carts", "p-1", "Upsert", 100, 40), logged(0, "carts", "p-2", "Upsert", 100, 0),
     logged(0, "carts", "p-1", "Read", 50, 5), logged(3, "carts", "p-1", "Read", None, 9),
     logged(0, "orders", "p-9", "Query", 1000, 1000)],
    columns=LOG_THROTTLES.columns,
)  # fmt: skip


def test_operation_rates_are_the_429s_over_the_requests_of_each_operation_and_minute() -> None:
    rates = th.operation_rates(METRIC_ROWS, LOG_ROWS, bin=pd.Timedelta(minutes=1))
    assert rates.columns.tolist() == th.OPERATION_COLUMNS
    assert rates[["container", "source", "operation", "time", "requests", "throttled", "rate"]].values.tolist() == [
        ["orders", th.MONITOR, "Create", T0 + pd.Timedelta(minutes=7), 100.0, 50.0, 0.5],
        ["carts", th.LOGS, "Upsert", T0, 200.0, 40.0, 0.2],  # the partitions summed, not their rates averaged
        ["carts", th.LOGS, "Read", T0, 50.0, 5.0, 0.1],  # ties: in container order
        ["orders", th.MONITOR, "Query", T0, 100.0, 10.0, 0.1],
        ["orders", th.MONITOR, "Query", T0 + pd.Timedelta(minutes=20), 100.0, 0.0, 0.0],
    ]  # orders' logs (1000 of 1000) are not shown: Monitor counted its requests, as its one rate says


def test_a_container_s_rate_is_its_operations_summed_from_the_same_source() -> None:
    """One definition: the page's per-operation rows add up to the container's one rate (`preferred_rate`),
    which the alerts fire on, too."""
    rates = th.operation_rates(METRIC_ROWS, LOG_ROWS)
    preferred = th.preferred_rate(METRIC_ROWS, NO_REQUESTS, LOG_ROWS).set_index("container")
    for container, rows in rates.groupby("container"):
        assert rows["source"].unique().tolist() == [preferred.loc[container, "source"]]
        summed = rows["throttled"].sum() / rows["requests"].sum()
        assert round(summed, 6) == preferred.loc[container, "rate"]
    assert preferred.loc["carts", ["source", "requests", "throttled"]].tolist() == [th.LOGS, 250.0, 45.0]
    fired = alerts.throttle_rate_alerts(METRIC_ROWS, NO_REQUESTS, percent=20, window_minutes=30)
    assert fired["value"].tolist() == [round(preferred.loc["orders", "rate"] * 100, 4)] == [20.0]


def test_operation_rates_without_counted_requests_are_empty_with_columns() -> None:
    old = LOG_ROWS.assign(requests=None)  # a store from before requests were counted
    assert th.operation_rates(METRIC_ROWS.iloc[:0], old).columns.tolist() == th.OPERATION_COLUMNS
    assert th.operation_rates(METRIC_ROWS.iloc[:0], old.drop(columns="requests")).empty


def test_logs_without_metrics_give_one_rate_and_source_on_fleet_overview_report_and_alert() -> None:
    """A store with diagnostic logs but no metrics: every reader of the one 429 rate (the Fleet, the Overview,
    the report's row, the alert) shows the logs' rate, named as the logs', with its window."""
    no_metrics, logs = pd.DataFrame(columns=METRICS.columns), LOG_ROWS
    one = th.preferred_rate(no_metrics, NO_REQUESTS, logs).set_index("container")
    assert one.loc["carts", ["source", "requests", "throttled", "rate"]].tolist() == [th.LOGS, 250.0, 45.0, 0.18]
    assert (one.loc["carts", "start"], one.loc["carts", "end"]) == (T0, T0)  # the row without requests: not counted
    frames = {name: pd.DataFrame(columns=TABLES[name].columns) for name in ("partitions", "logical_keys")}
    ranked = fleet.summarize_fleet(executions_frame(), NO_REQUESTS, no_metrics, log_throttles=logs)
    containers = overview.summarize_containers(
        executions_frame(), NO_REQUESTS, no_metrics, **frames, log_throttles=logs
    )
    report = review.build_capacity_report(executions_frame(), NO_REQUESTS, no_metrics, **frames, log_throttles=logs)
    fired = alerts.throttle_rate_alerts(no_metrics, NO_REQUESTS, logs, percent=1, window_minutes=60)
    rows = report[report["measure"].eq("throttle_rate")].set_index("container")
    for name, shown in (("fleet", ranked), ("overview", containers)):
        got = shown.set_index("container")[["throttle_rate", "throttle_source", "throttle_start", "throttle_end"]]
        assert got.to_dict("index") == {
            c: {"throttle_rate": round(r.rate, 4), "throttle_source": th.LOGS, "throttle_start": T0, "throttle_end": T0}
            for c, r in one.iterrows()
        }, name
    assert rows["value"].to_dict() == {"carts": 18.0, "orders": 100.0}
    assert rows["detail"].tolist() == [f"{th.LOGS}, 2026-05-01 10:00 UTC"] * 2
    assert fired.set_index("container")["value"].to_dict() == {"carts": 18.0, "orders": 100.0}
    assert all("from the diagnostic logs" in m and "in the last 1 hour" in m for m in fired["message"])


def test_beside_one_region_a_log_derived_rate_says_all_regions() -> None:
    """The logs have no region: a page of one region's Monitor figures names a log-derived rate "all regions",
    the account in total (every region's metrics, every region's logs) does not."""
    split = METRIC_ROWS.assign(region="West US")
    ranked = fleet.summarize_fleet(executions_frame(), NO_REQUESTS, split, region="West US", log_throttles=LOG_ROWS)
    sources = ranked.set_index("container")["throttle_source"].to_dict()
    assert sources == {"orders": th.MONITOR, "carts": f"{th.LOGS} (all regions)"}
    total = fleet.summarize_fleet(executions_frame(), NO_REQUESTS, split, log_throttles=LOG_ROWS)
    assert total.set_index("container")["throttle_source"].to_dict() == {"orders": th.MONITOR, "carts": th.LOGS}


def test_the_window_of_the_rates_is_their_first_and_last_counted_time() -> None:
    rates = th.preferred_rate(METRIC_ROWS, NO_REQUESTS, LOG_ROWS)
    window = th.rate_window(rates["start"], rates["end"])
    assert window == (T0, T0 + pd.Timedelta(minutes=20)) and window_text(*window) == "2026-05-01 10:00-10:20 UTC"
    assert window_text(T0, T0 + pd.Timedelta(days=1)) == "2026-05-01 10:00 - 2026-05-02 10:00 UTC"
    none = th.preferred_rate(METRIC_ROWS.iloc[:0], NO_REQUESTS)
    assert th.rate_window(none["start"], none["end"]) is None
