"""analysis.hot (partitions, keys, replay) and dashboard.figures.hot_partitions, on small frames built here."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis.hot import bins
from analysis.hot import keys as hk
from analysis.hot import partitions as hp
from analysis.hot import replay as hr
from dashboard.figures import hot_partitions as figures_hot
from tests.analysis.queries.test_costs import T0, executions_frame, requests_frame
from tests.dashboard.apptest import store_rows

C = {"account": "127.0.0.1", "database": "shop", "container": "orders"}
NO_PARTITIONS = pd.DataFrame(columns=hp.PARTITION_COLUMNS)
NO_METRICS = pd.DataFrame(columns=hp.METRIC_COLUMNS)


def point(pk: str, minute: float, value: float, *, metric: str = hp.NORMALIZED, **where: Any) -> dict[str, Any]:
    """One `metrics` row (the columns the page reads)."""
    row = {**C, "time": T0 + pd.Timedelta(minutes=minute), "metric": metric, "aggregation": "Maximum"}
    return {**row, "pkrange_id": pk, "value": value, **where}


def partition(pk: str, parents: str, lo: str | None, hi: str | None, *, minute: float = 10, **more: Any) -> dict:
    """One `partitions` row of a storage snapshot taken at `minute`."""
    row = {**C, "pkrange_id": pk, "time": T0 + pd.Timedelta(minutes=minute), "parents": parents}
    return {**row, "min_epk": lo, "max_epk": hi, "size_kb": 1, "document_count": 1, "throughput_share": None, **more}


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=columns)


# pkranges 0 [""..20) and 1 [20..FF) until minute 2; then 0 splits into 2 ["".."10") and 3 ["10".."20")
SPLIT_METRICS = [
    point("0", 0, 10),
    point("1", 0, 20),
    point("0", 1, 100),
    point("1", 1, 30),
    point("2", 2, 50),
    point("3", 2, 60),
    point("1", 2, 40),
]
AFTER_SPLIT = [partition("1", "", "20", "FF"), partition("2", "0", "", "10"), partition("3", "0", "10", "20")]


def test_after_a_split_the_children_sit_where_their_parent_was_and_the_split_is_marked() -> None:
    heatmap = hp.summarize_normalized_heatmap(
        frame(SPLIT_METRICS, hp.METRIC_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS)
    )
    rows = heatmap.rows
    assert rows[["label", "min_epk", "max_epk", "parent"]].fillna("-").values.tolist() == [
        ["0", "", "20", "-"],  # the parent, gone from the snapshot: the span of its children
        ["2", "", "10", "0"],
        ["3", "10", "20", "0"],
        ["1", "20", "FF", "-"],
    ]
    assert rows["peak"].tolist() == [100.0, 50.0, 60.0, 40.0] and rows["mean"].tolist() == [55.0, 50.0, 60.0, 30.0]
    np.testing.assert_array_equal(
        heatmap.z, [[10, 100, np.nan], [np.nan, np.nan, 50], [np.nan, np.nan, 60], [20, 30, 40]]
    )
    assert heatmap.bin == pd.Timedelta("1min")
    assert pd.DatetimeIndex(heatmap.times).equals(pd.date_range("2026-05-01 10:00", periods=3, freq="min"))
    splits = heatmap.splits
    assert splits.drop(columns="time").values.tolist() == [["127.0.0.1", "shop", "orders", "0", "2, 3", 0, 2]]
    assert splits["time"].tolist() == [T0 + pd.Timedelta(minutes=2)]


def test_without_epk_bounds_rows_follow_the_lineage_and_without_partitions_the_ids() -> None:
    metrics = frame(SPLIT_METRICS, hp.METRIC_COLUMNS)
    old_store = frame([{**row, "min_epk": None, "max_epk": None} for row in AFTER_SPLIT], hp.PARTITION_COLUMNS)
    assert hp.summarize_normalized_heatmap(metrics, old_store).labels == ["0", "2", "3", "1"]
    assert hp.summarize_normalized_heatmap(metrics, NO_PARTITIONS).labels == ["0", "1", "2", "3"]
    assert hp.summarize_normalized_heatmap(metrics, NO_PARTITIONS).splits.empty
    ids = frame([point(pk, 0, 1) for pk in ("10", "9", "2")], hp.METRIC_COLUMNS)
    assert hp.summarize_normalized_heatmap(ids, NO_PARTITIONS).labels == ["2", "9", "10"]  # numeric, not text


def test_a_grandchild_and_the_latest_snapshot_win() -> None:
    """0 split into 2 and 3, then 3 into 4 and 5; an older snapshot still had 0 and 3 with their bounds."""
    older = [
        partition("0", "", "", "20", minute=0),
        partition("1", "", "20", "FF", minute=0),
        partition("3", "0", "10", "20", minute=5),
    ]
    latest = [
        partition("1", "", "20", "FF"),
        partition("2", "0", "", "10"),
        partition("4", "0,3", "10", "18"),
        partition("5", "0,3", "18", "20"),
    ]
    metrics = frame([point(pk, 0, 1) for pk in "012345"], hp.METRIC_COLUMNS)
    heatmap = hp.summarize_normalized_heatmap(metrics, frame(older + latest, hp.PARTITION_COLUMNS))
    assert heatmap.labels == ["0", "2", "3", "4", "5", "1"]
    assert heatmap.rows["parent"].fillna("-").tolist() == ["-", "0", "0", "3", "3", "-"]
    assert heatmap.splits[["parent", "children", "first_row", "last_row"]].values.tolist() == [
        ["0", "2, 3", 0, 2],
        ["3", "4, 5", 2, 4],
    ]


def test_several_containers_never_share_a_row_label() -> None:
    rows = [point("0", 0, 5), point("0", 0, 7, container="people"), point("1", 0, 9, container="people")]
    heatmap = hp.summarize_normalized_heatmap(frame(rows, hp.METRIC_COLUMNS), NO_PARTITIONS)
    assert heatmap.labels == ["orders/0", "people/0", "people/1"]
    same_name = [point("0", 0, 5), point("0", 0, 7, database="crm")]
    labels = hp.summarize_normalized_heatmap(frame(same_name, hp.METRIC_COLUMNS), NO_PARTITIONS).labels
    assert labels == ["crm/orders/0", "shop/orders/0"]


def test_only_the_normalized_maximum_by_pkrange_is_drawn() -> None:
    rows = [
        point("0", 0, 50),
        point("0", 0, 99, aggregation="Average"),
        point(None, 0, 80),
        point("0", 0, 70, metric="TotalRequestUnits"),
    ]
    heatmap = hp.summarize_normalized_heatmap(frame(rows, hp.METRIC_COLUMNS), NO_PARTITIONS)
    assert heatmap.labels == ["0"] and heatmap.z.tolist() == [[50.0]]
    assert hp.summarize_normalized_heatmap(NO_METRICS, NO_PARTITIONS).empty


def test_downsampling_keeps_the_hot_minute() -> None:
    values = np.full(600, 20.0)
    values[377] = 100.0  # one hot minute in ten hours
    rows = [point("0", minute, value) for minute, value in enumerate(values)]
    heatmap = hp.summarize_normalized_heatmap(frame(rows, hp.METRIC_COLUMNS), NO_PARTITIONS, max_columns=60)
    assert heatmap.bin == pd.Timedelta("10min") and heatmap.z.shape == (1, 60)
    assert heatmap.z[0, 37] == 100.0 and np.nanmax(np.delete(heatmap.z[0], 37)) == 20.0


def test_heatmap_bin_keeps_the_cells_in_bounds() -> None:
    month = pd.Timedelta(days=30)
    assert bins.heatmap_bin(month, 100) == pd.Timedelta("3h")  # 240 columns x 100 rows <= 50,000 cells
    assert bins.heatmap_bin(month, 1) == pd.Timedelta("3h")  # at most 300 columns
    assert bins.heatmap_bin(pd.Timedelta(hours=2), 6) == pd.Timedelta("1min")
    assert bins.heatmap_bin(month, 100_000) == pd.Timedelta("7D")  # no round bin is enough: the widest
    assert bins.heatmap_bin(pd.Timedelta(hours=2), 6, smallest=pd.Timedelta("5min")) == pd.Timedelta("5min")


def test_gini_and_the_hottest_share_on_whole_examples() -> None:
    assert hr.gini(np.array([5.0, 5.0, 5.0, 5.0])) == 0.0
    assert hr.gini(np.array([0.0, 0.0, 0.0, 8.0])) == pytest.approx(0.75)  # (n-1)/n
    assert hr.gini(np.array([7.0])) == 0.0
    assert math.isnan(hr.gini(np.zeros(3))) and math.isnan(hr.gini(np.array([])))
    assert hr.gini(np.array([1.0, 3.0])) == pytest.approx(0.25)  # the pairs' gaps (|1-3| twice) / (2 n^2 mean) = 4 / 16
    assert hr.hottest_share(np.array([1.0, 3.0])) == 0.75 and hr.hottest_share(np.array([2.0])) == 1.0
    assert math.isnan(hr.hottest_share(np.zeros(2)))


def test_summarize_skew_per_container() -> None:
    load = pd.DataFrame(
        {
            "account": "a",
            "database": "shop",
            "container": ["orders", "orders", "orders", "one", "idle", "idle"],
            "pkrange_id": ["0", "1", "2", "0", "0", "1"],
            "ru": [10.0, 30.0, 60.0, 4.0, 0.0, 0.0],
        }
    )
    skew = hr.summarize_skew(load, column="ru")
    assert skew.columns.tolist() == hr.SKEW_COLUMNS
    expected = pd.DataFrame(
        [
            ["a", "shop", "idle", 2, None, math.nan, 50.0, math.nan, math.nan],
            ["a", "shop", "one", 1, "0", 100.0, 100.0, 1.0, 0.0],
            ["a", "shop", "orders", 3, "2", 60.0, 33.33, 1.8, 0.3333],
        ],
        columns=hr.SKEW_COLUMNS,
    ).astype({"pkranges": "Int64"})
    pd.testing.assert_frame_equal(skew, expected, check_dtype=False)


def replay(rates: dict[str, float | None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two runs: "hot" (pkrange 0) twice in r1 and once in r2, and "wide" (both pkranges), per feed range in r2."""
    plan = [
        ("r1", 0, "hot", 0, "as-is", "single", [[("page", "0", 4.0)]]),
        ("r1", 1, "hot", 1, "as-is", "single", [[("page", "0", 6.0)]]),
        ("r1", 2, "wide", 0, "as-is", "fan-out", [[("query_plan", "", 1.0), ("page", "0", 2.0), ("page", "1", 3.0)]]),
        ("r2", 60, "hot", 0, "as-is", "single", [[("page", "0", 10.0), ("page", "0", 2.0)]]),
        ("r2", 61, "wide", 0, "per-feed-range", "single", [[("page", "0", 1.0)], [("page", "1", 3.0)]]),
    ]
    executions, requests = store_rows(plan)
    for row in executions:
        row["rate_per_s"] = rates.get(row["query_name"])
    return requests_frame(*requests), executions_frame(*executions)


def test_replay_demand_per_pkrange_weighted_by_the_rates_of_the_latest_run() -> None:
    requests, executions = replay({"hot": 20.0, "wide": None})
    by_query = hr.query_demand(requests, executions)
    shown = by_query.drop(columns=["account", "database", "container"]).fillna({"rate_per_s": -1.0, "ru_s": -1.0})
    assert shown.values.tolist() == [
        ["hot", "0", 1, 12.0, 20.0, False, 240.0],  # r2 only: the latest run
        ["wide", "0", 1, 1.0, -1.0, True, -1.0],  # both feed ranges are one execution; no rate: no demand
        ["wide", "1", 1, 3.0, -1.0, True, -1.0],
    ]
    # where the replayed queries land, rate or none: the skew's replay source
    assert hr.replay_pkrange_ru(by_query)["ru"].tolist() == [13.0, 3.0]
    budget = frame(
        [partition("0", "", "", "20", throughput_share=200.0), partition("1", "", "20", "FF", throughput_share=200.0)],
        hp.PARTITION_COLUMNS,
    )
    demand = hr.summarize_demand(requests, executions, budget, NO_METRICS)
    assert demand.columns.tolist() == hr.DEMAND_COLUMNS
    shown = demand[["label", "ru_s", "share_pct", "budget_ru_s", "utilization_pct", "multiplier"]].fillna(-1.0)
    assert shown.values.tolist() == [
        ["0", 240.0, 100.0, 200.0, 120.0, 0.83],  # "hot" alone: "wide" has no rate, so no invented demand
        ["1", -1.0, -1.0, 200.0, -1.0, -1.0],  # only "wide" reached it: its demand is unknown
    ]
    headroom = hr.summarize_headroom(demand, by_query)
    assert headroom.drop(columns=["account", "database", "container"]).values.tolist() == [[2, 1, 2, 240.0, "0", 0.83]]


def test_the_budget_from_monitor_then_unknown() -> None:
    requests, executions = replay({"hot": 1.0, "wide": 1.0})
    provisioned = frame(
        [point(None, 0, 1000.0, metric="ProvisionedThroughput"), point(None, 5, 600.0, metric="ProvisionedThroughput")],
        hp.METRIC_COLUMNS,
    )
    demand = hr.summarize_demand(requests, executions, NO_PARTITIONS, provisioned)
    assert demand["budget_ru_s"].tolist() == [300.0, 300.0]  # the latest 600 RU/s over the 2 pkranges seen
    assert demand["multiplier"].tolist() == [23.08, 100.0]  # 300 / 13 and 300 / 3
    assert set(demand["budget_source"]) == {"Azure Monitor provisioned RU/s / pkranges"}
    unknown = hr.summarize_demand(requests, executions, NO_PARTITIONS, NO_METRICS)
    assert unknown["budget_ru_s"].isna().all() and set(unknown["budget_source"]) == {"unknown"}
    headroom = hr.summarize_headroom(unknown, hr.query_demand(requests, executions))
    assert headroom["first_to_throttle"].isna().all() and headroom["multiplier"].isna().all()
    assert hr.summarize_demand(requests.iloc[:0], executions, NO_PARTITIONS, NO_METRICS).empty


KEY_RU = [
    {**C, "time": T0, "pkrange_id": "0", "partition_key": '["hot"]', "request_charge": 600.0},
    {**C, "time": T0 + pd.Timedelta(minutes=5), "pkrange_id": "0", "partition_key": '["hot"]', "request_charge": 300.0},
    {**C, "time": T0, "pkrange_id": "0", "partition_key": '["warm"]', "request_charge": 100.0},
    {**C, "time": T0, "pkrange_id": "1", "partition_key": '["cold"]', "request_charge": 30.0},
]


def test_the_top_keys_heatmap_is_in_ru_per_second() -> None:
    heatmap = hk.summarize_key_heatmap(frame(KEY_RU, hk.KEY_RU_COLUMNS), top=2)
    assert heatmap.labels == ['["hot"]', '["warm"]'] and heatmap.rows["pkranges"].tolist() == ["0", "0"]
    assert heatmap.bin == pd.Timedelta("5min")  # the logs' bin, not four empty minutes between
    np.testing.assert_array_equal(heatmap.z, [[2.0, 1.0], [100 / 300, np.nan]])
    first = hk.top_keys(heatmap, 1)
    assert first.labels == ['["hot"]'] and first.z.tolist() == [[2.0, 1.0]] and first.bin == heatmap.bin
    assert hk.summarize_key_heatmap(frame([], hk.KEY_RU_COLUMNS)).empty


def test_the_keys_inside_chosen_pkranges_with_their_sizes() -> None:
    totals = hk.key_totals(frame(KEY_RU, hk.KEY_RU_COLUMNS))
    sizes = hk.latest_key_sizes(
        frame(
            [
                {**C, "time": T0, "pkrange_id": "0", "partition_key": '["hot"]', "size_kb": 5},
                {**C, "time": T0 + pd.Timedelta(hours=1), "pkrange_id": "0", "partition_key": '["hot"]', "size_kb": 9},
                {**C, "time": T0 + pd.Timedelta(hours=1), "pkrange_id": "0", "partition_key": '["big"]', "size_kb": 50},
            ],
            hk.LOGICAL_KEY_COLUMNS,
        )
    )
    chosen = pd.DataFrame([{**C, "pkrange_id": "0", "label": "0"}])
    keys = hk.keys_in_pkranges(totals, sizes, chosen)
    assert keys.columns.tolist() == hk.KEYS_IN_RANGE_COLUMNS
    expected = pd.DataFrame(
        [
            ['["hot"]', 900.0, 90.0, 9.0],
            ['["warm"]', 100.0, 10.0, math.nan],
            ['["big"]', math.nan, math.nan, 50.0],
        ],  # the storage snapshot knows it; the logs saw no RU
        columns=["partition_key", "ru", "ru_share_pct", "size_kb"],
    )
    pd.testing.assert_frame_equal(keys[expected.columns], expected, check_dtype=False)
    assert hk.keys_in_pkranges(totals, sizes, chosen.assign(pkrange_id="7")).empty


def test_a_keys_busiest_second_is_its_largest_logged_peak_and_unknown_without_one() -> None:
    rows = [
        {**C, "time": T0, "pkrange_id": "0", "partition_key": '["hot"]', "request_charge": 600.0, "bin_minutes": 5},
        {**C, "time": T0 + pd.Timedelta(minutes=5), "pkrange_id": "0", "partition_key": '["hot"]'},
        {**C, "time": T0, "pkrange_id": "1", "partition_key": '["old"]', "request_charge": 60.0, "bin_minutes": 1},
    ]
    rows[0]["peak_request_charge"] = 80.0
    rows[1].update(request_charge=300.0, peak_request_charge=120.0, bin_minutes=5)
    totals = hk.key_totals(frame(rows, hk.KEY_RU_COLUMNS)).set_index("partition_key")
    hot, old = totals.loc['["hot"]'], totals.loc['["old"]']
    assert (hot["ru"], hot["busiest_bin_ru_s"], hot["peak_ru_s"]) == (900.0, 2.0, 120.0)
    assert hot["peak_time"] == T0 + pd.Timedelta(minutes=5) and hot["peak_window"] == "1 s"
    assert hot["peak_source"] == hk.PEAK_SOURCE
    assert math.isnan(old["peak_ru_s"]) and old["peak_source"] == hk.PEAK_NONE and old["busiest_bin_ru_s"] == 1.0
    budgets = pd.DataFrame(
        [{**C, "pkrange_id": "0", "budget_ru_s": 100.0, "budget_source": "storage snapshot (throughput share)"}]
    )
    judged = hk.against_budget(totals.reset_index(), budgets).set_index("partition_key")
    assert judged.loc['["hot"]', "peak_budget_pct"] == 120.0 and judged.loc['["hot"]', "peak_verdict"] == hk.REACHED
    assert judged.loc['["old"]', "peak_verdict"] == hk.NO_PEAK and judged.loc['["old"]', "budget_source"] == "unknown"
    no_budget = hk.against_budget(totals.reset_index(), budgets.iloc[0:0]).set_index("partition_key")
    assert no_budget.loc['["hot"]', "peak_verdict"] == hk.NO_BUDGET
    chosen = pd.DataFrame([{**C, "pkrange_id": p, "label": p} for p in ("0", "1")])
    at_budget = hk.keys_at_budget(hk.keys_in_pkranges(judged.reset_index(), frame([], hk.KEY_SIZE_COLUMNS), chosen))
    assert at_budget["partition_key"].tolist() == ['["hot"]']


def test_a_keys_ru_by_operation_with_each_operations_busiest_second() -> None:
    def row(minute: float, key: str, operation: str, ru: float, peak: float | None) -> dict[str, Any]:
        at = {"time": T0 + pd.Timedelta(minutes=minute), "pkrange_id": "0", "partition_key": key}
        return {**C, **at, "operation_name": operation, "request_charge": ru, "peak_request_charge": peak}

    rows = [row(0, '["a"]', "Read", 30, 2), row(5, '["a"]', "Read", 30, 5), row(0, '["a"]', "Upsert", 20, None)]
    totals = hk.operation_totals(frame([*rows, row(0, '["b"]', "Query", 9, 9)], hk.KEY_OPERATION_COLUMNS))
    assert totals.columns.tolist() == hk.OPERATION_TOTAL_COLUMNS
    mine = hk.operations_of(totals, pd.Series({**C, "pkrange_id": "0", "partition_key": '["a"]'}))
    assert mine["operation_name"].tolist() == ["Read", "Upsert"] and mine["ru_share_pct"].tolist() == [75.0, 25.0]
    assert mine["peak_ru_s"].iloc[0] == 5.0 and math.isnan(mine["peak_ru_s"].iloc[1])  # unknown, never 0
    assert hk.operation_totals(frame([], hk.KEY_OPERATION_COLUMNS)).empty


def test_the_normalized_heatmap_figure_has_a_fixed_scale_and_marks_the_split() -> None:
    heatmap = hp.summarize_normalized_heatmap(
        frame(SPLIT_METRICS, hp.METRIC_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS)
    )
    figure = figures_hot.build_normalized_heatmap_figure(heatmap)
    [trace] = figure.data
    assert (trace.zmin, trace.zmax) == (0, 100) and list(trace.y) == ["0", "2", "3", "1"]
    assert figure.layout.yaxis.autorange == "reversed" and figure.layout.yaxis.type == "category"
    assert trace.colorscale[-1][1] == trace.colorscale[-2][1] == figures_hot.TOP_COLOR  # 99.5-100%: one red
    assert trace.colorscale[-3][1] != figures_hot.TOP_COLOR
    [line] = figure.layout.shapes
    assert (line.y0, line.y1, pd.Timestamp(line.x0)) == (-0.5, 2.5, pd.Timestamp("2026-05-01 10:02"))
    assert figure.layout.annotations[0].text == "split: 0 → 2, 3"
    empty = figures_hot.build_normalized_heatmap_figure(hp.summarize_normalized_heatmap(NO_METRICS, NO_PARTITIONS))
    assert not empty.data and "No NormalizedRUConsumption" in empty.layout.annotations[0].text


def test_the_replay_s_own_minutes_are_marked_on_the_heatmap_and_keep_their_value() -> None:
    """Minute 1 of pkrange 0 (100%) was ruscope's replay: the cell keeps Azure Monitor's 100%, a cross marks it,
    its hover and the count say so; a minute of a range the heatmap does not draw is not counted."""
    heatmap = hp.summarize_normalized_heatmap(
        frame(SPLIT_METRICS, hp.METRIC_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS)
    )
    own = pd.DataFrame(
        [{**C, "pkrange_id": pk, "time": T0 + pd.Timedelta(minutes=m)} for pk, m in [("0", 1), ("9", 1)]]
    )
    marked = hp.with_own_minutes(heatmap, own)
    assert marked.own_minutes == 1 and heatmap.own_minutes == 0
    np.testing.assert_array_equal(marked.z, heatmap.z)  # the value is Azure Monitor's, not hidden
    [row] = np.flatnonzero(marked.rows["pkrange_id"].astype(str).eq("0"))
    assert marked.own is not None and marked.own[row].tolist() == [0, 1, 0]
    figure = figures_hot.build_normalized_heatmap_figure(marked)
    [cells, crosses] = figure.data
    assert crosses.name == figures_hot.OWN_NAME and list(crosses.y) == ["0"]
    assert (
        pd.Timestamp(crosses.x[0]) == pd.Timestamp("2026-05-01 10:01") and "ruscope's replay" in crosses.hovertemplate
    )
    assert len(figures_hot.build_normalized_heatmap_figure(hp.with_own_minutes(heatmap, own.iloc[0:0])).data) == 1


def test_the_demand_figure_reddens_a_partition_over_its_budget() -> None:
    requests, executions = replay({"hot": 20.0, "wide": None})
    budget = frame(
        [partition("0", "", "", "20", throughput_share=200.0), partition("1", "", "20", "FF", throughput_share=200.0)],
        hp.PARTITION_COLUMNS,
    )
    figure = figures_hot.build_demand_figure(hr.summarize_demand(requests, executions, budget, NO_METRICS))
    within, over, budgets = figure.data
    assert (within.name, over.name) == ("demand RU/s", "demand RU/s over budget")  # the legend says what red is
    assert (list(over.x), list(over.y), over.marker.color) == (["0"], [240.0], figures_hot.OVER_BUDGET_COLOR)
    assert list(within.x) == ["1"] and math.isnan(within.y[0]) and within.marker.color == figures_hot.DEMAND_COLOR
    assert within.offsetgroup == over.offsetgroup != budgets.offsetgroup  # one demand slot per pkrange
    assert list(budgets.y) == [200.0, 200.0]
    unknown = figures_hot.build_demand_figure(hr.summarize_demand(requests, executions, NO_PARTITIONS, NO_METRICS))
    assert len(unknown.data) == 1  # no budget bars when no budget is known


def test_the_hottest_label_is_found_by_key() -> None:
    rows = pd.DataFrame([{**C, "pkrange_id": "0", "peak": 40.0}, {**C, "pkrange_id": "1", "peak": 100.0}])
    pkranges = pd.DataFrame([{**C, "pkrange_id": pk, "label": f"orders/{pk}"} for pk in "01"])
    assert hp.hottest_label(rows, "peak", pkranges) == "orders/1"
    assert hp.hottest_label(rows.assign(peak=math.nan), "peak", pkranges) is None
    assert hp.hottest_label(rows, "peak", pkranges.iloc[:1]) is None  # not among the choices


def test_skew_counts_the_pkranges_that_exist_at_the_end_since_the_last_split() -> None:
    """SPLIT_METRICS: 0 split into 2 and 3 at minute 2; the snapshot lists 1, 2, 3. The skew's load is the
    mean normalized RU of 1, 2 and 3 from minute 2 on (40, 50, 60), not 0's history as a fourth range."""
    heatmap = hp.summarize_normalized_heatmap(
        frame(SPLIT_METRICS, hp.METRIC_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS)
    )
    rows = heatmap.rows.set_index("label")
    assert rows["current"].to_dict() == {"0": False, "2": True, "3": True, "1": True}
    assert rows["current_mean"].fillna(-1).to_dict() == {"0": -1, "2": 50.0, "3": 60.0, "1": 40.0}
    current = hp.current_pkrange_rows(heatmap.rows)
    skew = hr.summarize_skew(current, column="current_mean")
    assert skew[["pkranges", "hottest_pkrange", "even_pct"]].values.tolist() == [[3, "3", 33.33]]
    no_snapshot = hp.summarize_normalized_heatmap(frame(SPLIT_METRICS, hp.METRIC_COLUMNS), NO_PARTITIONS)
    latest = no_snapshot.rows.set_index("label")["current"].to_dict()  # without one: those in the latest minute
    assert latest == {"0": False, "1": True, "2": True, "3": True}


def test_the_logs_load_per_pkrange_counts_the_existing_ranges_since_the_layout_start() -> None:
    key_ru = [
        {**C, "time": T0, "pkrange_id": "0", "partition_key": '["hot"]', "request_charge": 900.0},
        {**C, "time": T0, "pkrange_id": "1", "partition_key": '["a"]', "request_charge": 50.0},
        {
            **C,
            "time": T0 + pd.Timedelta(minutes=5),
            "pkrange_id": "2",
            "partition_key": '["hot"]',
            "request_charge": 300.0,
        },
        {
            **C,
            "time": T0 + pd.Timedelta(minutes=5),
            "pkrange_id": "3",
            "partition_key": '["b"]',
            "request_charge": 20.0,
        },
        {
            **C,
            "time": T0 + pd.Timedelta(minutes=5),
            "pkrange_id": "1",
            "partition_key": '["a"]',
            "request_charge": 10.0,
        },
    ]
    totals = hk.pkrange_totals(frame(key_ru, hk.KEY_RU_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS))
    assert totals[["pkrange_id", "ru"]].values.tolist() == [["1", 10.0], ["2", 300.0], ["3", 20.0]]


def test_the_pkrange_table_has_one_pkrange_column_and_names_the_key_space_ends() -> None:
    heatmap = hp.summarize_normalized_heatmap(
        frame(SPLIT_METRICS, hp.METRIC_COLUMNS), frame(AFTER_SPLIT, hp.PARTITION_COLUMNS)
    )
    table = hp.pkrange_table(heatmap.rows)
    assert table.columns.tolist() == hp.PKRANGE_TABLE_COLUMNS and "pkrange_id" not in table.columns
    assert table[["label", "min_epk", "max_epk"]].values.tolist() == [
        ["0", "(start)", "20"],
        ["2", "(start)", "10"],
        ["3", "10", "20"],
        ["1", "20", "(end)"],
    ]
    assert heatmap.rows["min_epk"].tolist()[0] == ""  # the CSV keeps the EPK as stored


def test_a_heatmap_is_as_tall_as_its_rows() -> None:
    assert figures_hot.heatmap_height(1) == figures_hot.MIN_HEIGHT
    assert figures_hot.heatmap_height(20) == 20 * 28 + 120 and figures_hot.heatmap_height(100) == figures_hot.MAX_HEIGHT
    heatmap = hp.summarize_normalized_heatmap(frame(SPLIT_METRICS, hp.METRIC_COLUMNS), NO_PARTITIONS)
    layout = figures_hot.build_normalized_heatmap_figure(heatmap).layout
    assert layout.height == figures_hot.MIN_HEIGHT and layout.margin.t == 30  # no empty band above 4 rows
    shares = hr.load_shares(hp.current_pkrange_rows(heatmap.rows).assign(label="x"), column="current_mean")
    assert figures_hot.build_skew_figure(shares).layout.margin.t == 30  # the bars' too
