"""analysis.queries.runs (over time per run, routing multiplier, index use, two runs compared) and the
vectorised pkrange union of analysis.queries.costs, on frames built here."""

from __future__ import annotations

import base64
import json
import random

import numpy as np
import pandas as pd
import pytest

from analysis import pkrange_ids
from analysis.queries import costs as qc
from analysis.queries import runs as qr
from tests.analysis.queries.test_costs import T0, execution, executions_frame, per_feed_range, request, requests_frame


def over_time(executions: pd.DataFrame, **kwargs: int) -> pd.DataFrame:
    return qr.ru_over_time(qc.logical_executions(executions), qc.run_starts(executions), **kwargs)


# -- over time -------------------------------------------------------------------------------------------


def test_one_point_per_query_per_run_at_the_run_start() -> None:
    frame = executions_frame(
        execution("r1", "q", minute=0, ru=2.0),
        execution("r1", "q", minute=5, repeat=1, ru=4.0),
        execution("r1", "late", minute=9, ru=1.0),  # at r1's start, not at its own time
        execution("r2", "q", minute=60, ru=5.0),
        execution("r2", "q", minute=61, repeat=1, status="error", ru=99.0),  # failures are not averaged
    )
    series = over_time(frame)
    assert series.columns.tolist() == qr.OVER_TIME_COLUMNS
    assert series[["query_name", "mean_ru", "executions", "runs", "run_id"]].values.tolist() == [
        ["late", 1.0, 1, 1, "r1"],
        ["q", 3.0, 2, 1, "r1"],
        ["q", 5.0, 1, 1, "r2"],
    ]
    assert series["time"].tolist() == [T0, T0, T0 + pd.Timedelta(minutes=60)]


def test_many_runs_are_drawn_as_windows() -> None:
    """Ten hourly runs (540 minutes) in at most four points per query: windows of 540 // 4 + 1 = 136 minutes."""
    frame = executions_frame(*(execution(f"r{n}", "q", minute=60 * n, ru=float(n)) for n in range(10)))
    series = over_time(frame, max_points=4)
    assert series["time"].tolist() == [T0 + pd.Timedelta(minutes=136 * k) for k in range(4)]
    assert series["runs"].tolist() == [3, 2, 2, 3]  # runs at 0,1,2 h | 3,4 h | 5,6 h | 7,8,9 h
    assert series["mean_ru"].tolist() == [1.0, 3.5, 5.5, 8.0]
    assert series["run_id"].tolist() == ["", "", "", ""]
    assert len(over_time(frame, max_points=10)) == 10  # no more runs than points: one per run


def test_over_time_of_nothing_successful_is_empty() -> None:
    assert over_time(executions_frame(execution(status="error"))).columns.tolist() == qr.OVER_TIME_COLUMNS
    assert over_time(executions_frame()).empty


# -- the routing multiplier ------------------------------------------------------------------------------


@pytest.fixture
def run_requests() -> pd.DataFrame:
    """r1: "wide" refused, planned and served by 3 partitions; "point" by one, twice; "lost" by none."""
    return requests_frame(
        request("r1", "wide", "w0", "refused", "", 1.0, seq=0),
        request("r1", "wide", "w0", "query_plan", "", 0.5, seq=1),
        request("r1", "wide", "w0", "page", "0", 2.5, seq=2),
        request("r1", "wide", "w0", "page", "1", 6.0, seq=3),
        request("r1", "wide", "w0", "page", "2", 2.5, seq=4),
        request("r1", "point", "p0", "page", "1", 3.0, seq=5),
        request("r1", "point", "p1", "page", "1", 5.0, seq=6),
        request("r1", "lost", "l0", "query_plan", "", 0.5, seq=7),
    )


def test_the_routing_multiplier_is_ru_over_the_costliest_partition(run_requests: pd.DataFrame) -> None:
    executions = executions_frame(
        execution("r1", "wide", ru=12.5, pkranges="0,1,2", routing="fan-out", execution_id="w0"),
        execution("r1", "point", ru=3.0, execution_id="p0"),
        execution("r1", "point", repeat=1, ru=5.0, execution_id="p1"),
        execution("r1", "lost", ru=0.5, pkranges="", execution_id="l0"),
    )
    multipliers = qr.routing_multiplier(qc.pkrange_breakdown(run_requests, "r1", executions=executions))
    assert multipliers.columns.tolist() == qr.MULTIPLIER_COLUMNS
    rows = multipliers[["query_name", "ru", "costliest_pkrange_ru", "pkranges", "routing_multiplier"]]
    assert rows.fillna(-1).values.tolist() == [
        ["wide", 12.5, 6.0, 3, 2.08],  # 12.5 / 6.0: the gateway's 1.5 and two partitions' minimums on top
        ["point", 4.0, 4.0, 1, 1.0],  # one partition: per execution (3 + 5) / 2 on both sides
        ["lost", 0.5, -1, 0, -1],  # no data page: no multiplier
    ]
    assert qr.routing_multiplier(qc.pkrange_breakdown(run_requests, "nope")).empty


def test_the_summary_takes_each_querys_latest_run_multiplier() -> None:
    summary = pd.DataFrame({"database": ["s", "s"], "container": ["c", "c"], "query_name": ["a", "b"]})
    summary["latest_run"] = ["r2", "r1"]
    multipliers = pd.DataFrame(
        {"database": "s", "container": "c", "query_name": ["a", "a", "b"], "run_id": ["r1", "r2", "r2"]}
    ).assign(routing_multiplier=[9.0, 2.0, 7.0])
    out = qr.with_multipliers(summary, multipliers)
    assert out["routing_multiplier"].fillna(-1).tolist() == [2.0, -1]  # b's multiplier is of r2, not its latest
    assert qr.with_multipliers(summary, pd.DataFrame())["routing_multiplier"].isna().all()


# -- index use -------------------------------------------------------------------------------------------


def test_index_use_from_the_query_metrics_and_the_index_header() -> None:
    info = {
        "UtilizedSingleIndexes": [{"IndexSpec": "/tenantId/?"}],
        "PotentialSingleIndexes": [{"IndexSpec": "/total/?"}],
        "UtilizedCompositeIndexes": [],
        "PotentialCompositeIndexes": [{"IndexSpec": "/a ASC, /b ASC"}],
    }
    plain, encoded = json.dumps(info), base64.b64encode(json.dumps(info).encode()).decode()
    rows = [
        request("r1", "q", "e", "page", "0", 1.0, seq=0) | {"index_hit_ratio": 0.5, "index_utilization": plain},
        request("r1", "q", "e", "page", "1", 1.0, seq=1) | {"index_hit_ratio": 1.0, "index_utilization": encoded},
        request("r1", "q", "e", "query_plan", "", 1.0, seq=2) | {"index_hit_ratio": 0.0},  # not a data page
        request("r1", "bare", "f", "page", "0", 1.0, seq=3) | {"index_utilization": "not json"},
    ]
    index = qr.index_use(requests_frame(*rows))
    assert index.columns.tolist() == qr.INDEX_COLUMNS
    q, bare = index.set_index("query_name").loc["q"], index.set_index("query_name").loc["bare"]
    assert (q["index_hit_ratio"], q["indexes_used"], q["indexes_missing"]) == (
        0.75,
        "/tenantId/?",
        "/a ASC, /b ASC, /total/?",
    )
    assert np.isnan(bare["index_hit_ratio"]) and bare["indexes_used"] == bare["indexes_missing"] == ""
    assert qr.index_use(requests_frame()).empty


# -- two runs --------------------------------------------------------------------------------------------


def test_two_runs_compared_per_query() -> None:
    def run(rows: list[tuple[str, float, int, float]]) -> pd.DataFrame:
        frame = pd.DataFrame(rows, columns=["query_name", "ru", "pkranges", "routing_multiplier"])
        return frame.assign(database="s", container="c", costliest_pkrange_ru=1.0)[qr.MULTIPLIER_COLUMNS]

    a = run([("wide", 12.0, 4, 3.0), ("new", 2.0, 1, 1.0)])
    b = run([("gone", 5.0, 1, 1.0), ("wide", 10.0, 2, 2.5)])
    index = pd.DataFrame({"database": ["s"], "container": ["c"], "query_name": ["wide"], "index_hit_ratio": [0.9]})
    compared = qr.compare_runs(a, b, index=index.assign(indexes_used="/x/?", indexes_missing=""))
    assert compared.columns.tolist() == qr.COMPARE_COLUMNS
    got = compared[["query_name", "ru_a", "ru_b", "change_pct", "pkranges_a", "pkranges_b", "index_hit_ratio"]]
    assert got.astype(object).where(got.notna(), None).values.tolist() == [
        ["wide", 12.0, 10.0, 20.0, 4, 2, 0.9],
        ["new", 2.0, None, None, 1, None, None],
        ["gone", None, 5.0, None, None, 1, None],
    ]


# -- the pkrange union, vectorised ----------------------------------------------------------------------


def union_by_loop(groups: pd.api.typing.DataFrameGroupBy, pkranges: pd.Series) -> list[str]:
    """The per-row loop `_union_per_group` was before it was vectorised: the reference."""
    sets: list[set[str]] = [set() for _ in range(groups.ngroups)]
    for group, value in zip(groups.ngroup().tolist(), pkranges.tolist()):
        if isinstance(value, str):
            sets[group].update(part.strip() for part in value.split(","))
    return [",".join(sorted(ids - {""}, key=qc.pkrange_sort_key)) for ids in sets]


def test_the_vectorised_union_equals_the_loop() -> None:
    rng = random.Random(3)
    ids = ["0", "1", "2", "10", "x", " 3", ""]
    rows = [
        {"key": rng.randrange(40), "other": rng.choice("ab"), "pkranges": rng.choice([None, *ids, "0,1", "10,2", "2, 1", "x,0,"])}
        for _ in range(400)
    ]  # fmt: skip
    frame = pd.DataFrame(rows).astype({"pkranges": "string"})
    groups = frame.groupby(["key", "other"], sort=False)
    assert pkrange_ids.union_per_group(groups, frame["pkranges"]) == union_by_loop(groups, frame["pkranges"])
    empty = frame.iloc[:0].groupby(["key", "other"], sort=False)
    assert pkrange_ids.union_per_group(empty, frame["pkranges"].iloc[:0]) == []


def test_logical_executions_sum_the_parts_shape() -> None:
    parts = per_feed_range("r1", "scan", minute=0, repeat=0, parts=[("0", 1.0, "ok"), ("1", 2.0, "ok")])
    parts[0] |= {"pages": 2, "round_trips": 3, "items": 5, "retrieved_documents": 10, "output_documents": 5}
    parts[1] |= {"pages": 1, "round_trips": 1, "items": 0}
    [logical] = qc.logical_executions(executions_frame(*parts)).to_dict("records")
    assert [logical[k] for k in qc.SHAPE] == [3.0, 4.0, 5.0, 10.0, 5.0]
    summary = qc.summarize_query_costs(executions_frame(*parts)).iloc[0]
    assert (summary["latest_items"], summary["ru_per_item"], summary["sql"]) == (5.0, 0.6, "SELECT * FROM c")


# -- partitions folded for drawing -----------------------------------------------------------------------


def test_partitions_past_the_costliest_fold_into_other() -> None:
    a = pd.DataFrame(
        {"database": "s", "container": "c", "query_name": ["q", "q", "q", "q"], "pkrange_id": ["0", "1", "2", ""]}
    ).assign(ru=[5.0, 1.0, 2.0, 0.5])
    b = a.assign(query_name="p", ru=[1.0, 1.0, 9.0, 0.5])
    keep = qr.costliest_partitions(a, b, top=2)
    assert keep == {("s", "c", "2"), ("s", "c", "0")}  # 11 and 6 RU over both runs; pkrange 1 has 2
    folded = qr.fold_partitions(a, keep)
    assert folded[["pkrange_id", "ru"]].values.tolist() == [["0", 5.0], ["other", 1.0], ["2", 2.0], ["", 0.5]]
    assert folded["ru"].sum() == a["ru"].sum()  # the same total, fewer segments
    assert qr.fold_partitions(a, {("s", "c", p) for p in "012"}) is a  # nothing to fold
    assert qr.costliest_partitions(a.iloc[:0]) == set()
