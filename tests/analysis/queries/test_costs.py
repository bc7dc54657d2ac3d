"""analysis.queries.costs, analysis.report and dashboard.figures.query_costs on frames built here (the schema's columns)."""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis.queries import costs as qc
from analysis.queries import runs as qr
from analysis.report import to_csv_bytes
from analysis.scope import Scope, select_scope
from dashboard.figures import query_costs as figures
from store import EXECUTIONS, REQUESTS, store_location

T0 = pd.Timestamp("2026-05-01T10:00:00Z")


def execution(
    run: str = "r1",
    query: str = "q",
    *,
    minute: float = 0,
    repeat: int = 0,
    ru: float = 1.0,
    status: str = "ok",
    mode: str = "as-is",
    feed_range: str = "",
    pkranges: str = "0",
    routing: str = "single",
    predicted: str | None = None,
    mismatch: bool = False,
    throttled: int = 0,
    database: str = "shop",
    container: str = "orders",
    execution_id: str | None = None,
) -> dict[str, Any]:
    """One `executions` row with every schema column."""
    row = dict.fromkeys(EXECUTIONS.columns)
    row.update(
        run_id=run,
        time=T0 + pd.Timedelta(minutes=minute),
        account="127.0.0.1",
        database=database,
        container=container,
        query_name=query,
        execution_id=execution_id or f"{query}-{repeat}-{feed_range}",
        repeat=repeat,
        mode=mode,
        feed_range=feed_range,
        sql="SELECT * FROM c",
        partition_key="",
        status=status,
        error="" if status == "ok" else f"{status}: it failed",
        total_ru=ru,
        pages=1,
        round_trips=1,
        items=1,
        pkranges=pkranges,
        pkrange_count=len([p for p in pkranges.split(",") if p]),
        routing_predicted=predicted or routing,
        routing_observed=routing,
        routing_mismatch=mismatch,
        throttled=throttled,
        retry_after_ms_total=0.0,
        duration_ms=5.0,
    )
    return row


def request(
    run: str,
    query: str,
    execution_id: str,
    kind: str,
    pkrange: str,
    charge: float,
    *,
    seq: int = 0,
    minute: float = 0,
    database: str = "shop",
    container: str = "orders",
) -> dict[str, Any]:
    """One `requests` row with every schema column."""
    row = dict.fromkeys(REQUESTS.columns)
    row.update(
        run_id=run,
        time=T0 + pd.Timedelta(minutes=minute),
        account="127.0.0.1",
        database=database,
        container=container,
        query_name=query,
        execution_id=execution_id,
        seq=seq,
        request_kind=kind,
        method="POST",
        resource=f"dbs/{database}/colls/{container}/docs",
        pkrange_id=pkrange,
        status=400 if kind == "refused" else 200,
        substatus=1004 if kind == "refused" else 0,
        request_charge=charge,
        item_count=0,
        duration_ms=1.0,
        activity_id="a",
        correlated_activity_id="",
    )
    return row


def executions_frame(*rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=EXECUTIONS.columns)


def requests_frame(*rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=REQUESTS.columns)


def per_feed_range(
    run: str, query: str, *, minute: float, repeat: int, parts: list[tuple[str, float, str]], **kwargs: Any
) -> list[dict[str, Any]]:
    """The parts of one per-feed-range execution: (pkrange id, RU, status) each."""
    return [
        execution(
            run,
            query,
            minute=minute,
            repeat=repeat,
            ru=ru,
            status=status,
            mode="per-feed-range",
            feed_range=f"range{n}",
            pkranges=pk,
            execution_id=f"{query}-{repeat}-{n}",
            **kwargs,
        )
        for n, (pk, ru, status) in enumerate(parts)
    ]


@pytest.fixture
def two_runs() -> pd.DataFrame:
    """r1 at 10:00 and r2 at 11:00; "point" as-is, "scan" per feed range over 2 partitions, "wide" fan-out."""
    return executions_frame(
        execution("r1", "point", minute=0, repeat=0, ru=2.5),
        execution("r1", "point", minute=1, repeat=1, ru=3.5),
        *per_feed_range("r1", "scan", minute=2, repeat=0, parts=[("0", 2.0, "ok"), ("1", 2.0, "ok")]),
        execution(
            "r1",
            "wide",
            minute=3,
            ru=9.0,
            pkranges="0,1",
            routing="fan-out",
            predicted="targeted",
            mismatch=True,
            throttled=2,
        ),
        execution("r2", "point", minute=60, ru=3.3),
        *per_feed_range("r2", "scan", minute=61, repeat=0, parts=[("0", 2.0, "ok"), ("1", 3.0, "ok")]),
        *per_feed_range("r2", "scan", minute=62, repeat=1, parts=[("0", 2.0, "ok"), ("1", 1.0, "error")]),
        execution("r2", "wide", minute=63, ru=10.5, pkranges="0,1", routing="fan-out"),
    )


# -- logical executions --------------------------------------------------------------------------------


def test_per_feed_range_parts_are_one_logical_execution(two_runs: pd.DataFrame) -> None:
    logical = qc.logical_executions(two_runs)
    scan = logical[logical["query_name"].eq("scan")].set_index(["run_id", "repeat"])
    assert scan.loc[("r1", 0), ["parts", "total_ru", "ok", "pkranges", "pkrange_count"]].tolist() == [
        2,
        4.0,
        True,
        "0,1",
        2,
    ]
    assert scan.loc[("r2", 1), ["total_ru", "ok"]].tolist() == [3.0, False]  # one part failed: all failed
    # every partition reached, one part per partition: a fan-out, as predicted for running each feed range
    assert scan.loc[("r1", 0), ["routing", "routing_predicted"]].tolist() == ["fan-out", "fan-out"]
    assert len(logical) == 8
    assert logical["time"].is_monotonic_increasing


def test_per_feed_range_reaching_some_partitions_is_targeted() -> None:
    frame = executions_frame(
        *per_feed_range("r1", "scan", minute=0, repeat=0, parts=[("0", 1.0, "ok"), ("0", 1.0, "ok"), ("1", 1.0, "ok")])
    )
    assert qc.logical_executions(frame)[["routing", "pkrange_count"]].values.tolist() == [["targeted", 2]]


# -- the summary ---------------------------------------------------------------------------------------


def test_summary_numbers(two_runs: pd.DataFrame) -> None:
    summary = qc.summarize_query_costs(two_runs)
    assert summary.columns.tolist() == qc.SUMMARY_COLUMNS
    assert summary["query_name"].tolist() == ["wide", "scan", "point"]  # most expensive latest run first
    rows = summary.set_index("query_name")
    point, scan, wide = rows.loc["point"], rows.loc["scan"], rows.loc["wide"]
    assert (point["executions"], point["mean_ru"], point["median_ru"], point["max_ru"]) == (3, 3.1, 3.3, 3.5)
    assert (point["latest_run"], point["latest_mean_ru"], point["previous_mean_ru"]) == ("r2", 3.3, 3.0)
    assert point["change_pct"] == 10.0
    # scan: r1 4.0, r2 5.0 (repeat 1 failed: not averaged, counted as an error)
    assert (scan["executions"], scan["mean_ru"], scan["max_ru"], scan["latest_mean_ru"]) == (2, 4.5, 5.0, 5.0)
    assert (scan["change_pct"], scan["errors"], scan["mode"]) == (25.0, 1, "per-feed-range")
    assert (scan["latest_pkrange_count"], scan["latest_pkranges"], scan["routing"]) == (2, "0,1", "fan-out")
    assert wide["change_pct"] == pytest.approx(16.7)
    assert wide["throttled"] == 2 and wide["errors"] == 0
    # the latest run describes routing: r1's mismatch is history
    assert (wide["routing"], wide["routing_predicted"], bool(wide["routing_mismatch"])) == ("fan-out", "fan-out", False)
    assert point["last_seen"] == T0 + pd.Timedelta(minutes=60)
    assert scan["last_seen"] == T0 + pd.Timedelta(minutes=62)


def test_summary_marks_a_routing_mismatch_of_the_latest_run(two_runs: pd.DataFrame) -> None:
    wide = qc.summarize_query_costs(two_runs[two_runs["run_id"].eq("r1")]).set_index("query_name").loc["wide"]
    assert (wide["routing"], wide["routing_predicted"], bool(wide["routing_mismatch"])) == ("fan-out", "targeted", True)
    assert math.isnan(wide["change_pct"]) and math.isnan(wide["previous_mean_ru"])  # no previous run


def test_a_query_that_failed_in_the_latest_run_keeps_its_last_success() -> None:
    frame = executions_frame(execution("r1", "q", minute=0, ru=2.0), execution("r2", "q", minute=60, status="error"))
    row = qc.summarize_query_costs(frame).iloc[0]
    assert (row["latest_run"], row["latest_mean_ru"], row["errors"], row["executions"]) == ("r1", 2.0, 1, 1)


def test_summary_of_only_failures_has_a_row_per_query_with_no_ru() -> None:
    frame = executions_frame(
        execution("r1", "q", status="error"), execution("r1", "q", minute=1, repeat=1, status="budget")
    )
    summary = qc.summarize_query_costs(frame)
    assert summary[["query_name", "executions", "errors"]].values.tolist() == [["q", 0, 2]]
    assert summary[["mean_ru", "latest_mean_ru"]].isna().all(axis=None)
    assert qc.ru_per_execution(frame).empty
    assert qc.failed_executions(frame)["status"].tolist() == ["budget", "error"]


def test_summary_of_nothing_has_the_columns() -> None:
    empty = executions_frame()
    assert qc.summarize_query_costs(empty).columns.tolist() == qc.SUMMARY_COLUMNS
    assert qc.summarize_query_costs(empty).empty and qc.ru_per_execution(empty).empty


def test_queries_of_the_same_name_in_two_containers_are_two_rows() -> None:
    frame = executions_frame(execution(query="q", container="a", ru=1.0), execution(query="q", container="b", ru=5.0))
    summary = qc.summarize_query_costs(frame)
    assert summary[["container", "mean_ru"]].values.tolist() == [["b", 5.0], ["a", 1.0]]


# -- series, failures, runs, scope -----------------------------------------------------------------------


def test_ru_per_execution_sums_the_parts_and_skips_failures(two_runs: pd.DataFrame) -> None:
    series = qc.ru_per_execution(two_runs)
    assert series.columns.tolist() == qc.SERIES_COLUMNS
    scan = series[series["query_name"].eq("scan")]
    assert scan["total_ru"].tolist() == [4.0, 5.0]
    assert scan["time"].tolist() == [T0 + pd.Timedelta(minutes=2), T0 + pd.Timedelta(minutes=61)]
    assert series["total_ru"].sum() == pytest.approx(2.5 + 3.5 + 4.0 + 9.0 + 3.3 + 5.0 + 10.5)


def test_failed_executions_lists_each_failed_part(two_runs: pd.DataFrame) -> None:
    failed = qc.failed_executions(two_runs)
    assert failed.columns.tolist() == qc.ERROR_COLUMNS
    assert failed[["query_name", "feed_range", "status"]].values.tolist() == [["scan", "range1", "error"]]


def test_the_parts_pkranges_merge_in_numeric_order() -> None:
    parts = per_feed_range("r1", "scan", minute=0, repeat=0, parts=[(pk, 1.0, "ok") for pk in ("10,2", "2,1", "")])
    parts.append({**parts[0], "pkranges": None, "execution_id": "scan-0-3", "feed_range": "range3"})
    [logical] = qc.logical_executions(executions_frame(*parts)).to_dict("records")
    assert logical["pkranges"] == "1,2,10"


def test_the_declared_columns_are_all_the_analysis_reads(two_runs: pd.DataFrame, wide_requests: pd.DataFrame) -> None:
    """A view loads only EXECUTION_COLUMNS and REQUEST_COLUMNS: every answer must be the same on those."""
    narrow = two_runs[qc.EXECUTION_COLUMNS]
    pd.testing.assert_frame_equal(qc.summarize_query_costs(narrow), qc.summarize_query_costs(two_runs))
    pd.testing.assert_frame_equal(qc.ru_per_execution(narrow), qc.ru_per_execution(two_runs))
    pd.testing.assert_frame_equal(qc.failed_executions(narrow), qc.failed_executions(two_runs))
    executions = executions_frame(
        execution("r1", "wide", ru=9.0, pkranges="0,1", routing="fan-out", execution_id="w0"),
        execution("r1", "point", ru=2.0, execution_id="p0"),
    )
    whole = qc.pkrange_breakdown(wide_requests, "r1", executions=executions)
    assert len(whole) == 4
    pd.testing.assert_frame_equal(
        qc.pkrange_breakdown(wide_requests[qc.REQUEST_COLUMNS], "r1", executions=executions[qc.EXECUTION_COLUMNS]),
        whole,
    )


# -- the pkrange breakdown -------------------------------------------------------------------------------


@pytest.fixture
def wide_requests() -> pd.DataFrame:
    """r1: "wide" refused at the gateway, a plan, a page from each partition; "point" one page."""
    return requests_frame(
        request("r1", "wide", "w0", "refused", "", 1.0, seq=0),
        request("r1", "wide", "w0", "query_plan", "", 0.5, seq=1),
        request("r1", "wide", "w0", "pkranges", "", 0.0, seq=2),
        request("r1", "wide", "w0", "page", "1", 4.5, seq=3),
        request("r1", "wide", "w0", "page", "0", 3.0, seq=4),
        request("r1", "point", "p0", "page", "0", 2.0, seq=5),
        request("r1", "point", "p1", "page", "0", 4.0, seq=6),
        request("r2", "point", "p0", "page", "0", 99.0, seq=0),
    )


def test_breakdown_attributes_pages_to_pkranges_and_the_rest_to_the_gateway(wide_requests: pd.DataFrame) -> None:
    breakdown = qc.pkrange_breakdown(wide_requests, "r1")
    assert breakdown.columns.tolist() == qc.BREAKDOWN_COLUMNS
    assert breakdown[["query_name", "pkrange_id", "ru"]].values.tolist() == [
        ["wide", "0", 3.0],
        ["wide", "1", 4.5],
        ["wide", "", 1.5],
        ["point", "0", 6.0],
    ]  # run totals
    assert qc.pkrange_breakdown(wide_requests, "nope").empty


def test_breakdown_per_execution_equals_the_latest_mean_ru(wide_requests: pd.DataFrame) -> None:
    executions = executions_frame(
        execution("r1", "wide", ru=9.0, pkranges="0,1", routing="fan-out", execution_id="w0"),
        execution("r1", "point", ru=2.0, execution_id="p0"),
        execution("r1", "point", repeat=1, ru=4.0, execution_id="p1"),
    )
    breakdown = qc.pkrange_breakdown(wide_requests, "r1", executions=executions)
    assert breakdown[["query_name", "pkrange_id", "ru"]].values.tolist() == [
        ["wide", "0", 3.0],
        ["wide", "1", 4.5],
        ["wide", "", 1.5],
        ["point", "0", 3.0],
    ]
    stacked = breakdown.groupby("query_name")["ru"].sum()
    latest = qc.summarize_query_costs(executions).set_index("query_name")["latest_mean_ru"]
    assert stacked.sort_index().tolist() == latest.sort_index().tolist()


def test_breakdown_leaves_out_failed_executions(wide_requests: pd.DataFrame) -> None:
    executions = executions_frame(
        execution("r1", "point", ru=2.0, execution_id="p0"),
        execution("r1", "point", repeat=1, ru=4.0, status="error", execution_id="p1"),
    )
    breakdown = qc.pkrange_breakdown(wide_requests, "r1", executions=executions)
    assert breakdown[["query_name", "pkrange_id", "ru"]].values.tolist() == [["point", "0", 2.0]]


# -- the CSV path ----------------------------------------------------------------------------------------


def test_csv_bytes_format() -> None:
    frame = pd.DataFrame(
        {
            "name": ["crème", None],
            "when": pd.to_datetime(["2026-05-01T12:00:00.123456+02:00", None], utc=True),
            "ru": [1.5, float("nan")],
            "count": pd.array([3, None], dtype="Int64"),
            "flag": pd.array([True, None], dtype="boolean"),
            "ids": ["0,1", ""],
        }
    )
    expected = 'name,when,ru,count,flag,ids\ncrème,2026-05-01T10:00:00.123Z,1.5,3,true,"0,1"\n,,,,,\n'
    assert to_csv_bytes(frame) == expected.encode("utf-8")
    assert to_csv_bytes(frame, columns=["ru", "name", "missing"]) == "ru,name,missing\n1.5,crème,\n,,\n".encode()


def test_csv_cells_a_spreadsheet_would_run_stay_text() -> None:
    cells = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\ry", "SELECT * FROM c", "a=b", None]
    frame = pd.DataFrame({"text": cells, "delta": [-1.5, 2.0, -3.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]})
    frame["key"] = pd.array(["-k", "k", "=k", "k", "k", "k", "k", "k", None], dtype="string")
    rows = pd.read_csv(io.BytesIO(to_csv_bytes(frame)), keep_default_na=False).to_dict("list")
    assert rows["text"] == ["'=1+1", "'+SUM(A1)", "'-2+3", "'@cmd", "'\tx", "'\ny", "SELECT * FROM c", "a=b", ""]
    assert rows["delta"][:3] == [-1.5, 2.0, -3.0]  # numbers are not text: a negative stays a number
    assert rows["key"][:3] == ["'-k", "k", "'=k"]
    sql = pd.DataFrame({"sql": ["SELECT *\r\nFROM c\rWHERE c.a = 1"], "n": [1]})
    assert to_csv_bytes(sql) == b'sql,n\n"SELECT *\nFROM c\nWHERE c.a = 1",1\n'  # one row, line breaks quoted


def test_summary_csv(two_runs: pd.DataFrame) -> None:
    text = to_csv_bytes(qc.summarize_query_costs(two_runs)).decode()
    assert text.splitlines()[0] == ",".join(qc.SUMMARY_COLUMNS)
    assert text.splitlines()[3] == (
        "shop,orders,point,as-is,3,3.1,3.3,3.5,r2,2026-05-01T11:00:00.000Z,3.3,3.0,10.0,1,0,single,single,false,0,0,"
        "2026-05-01T11:00:00.000Z,1.0,1.0,1.0,,,3.3,SELECT * FROM c"
    )


# -- figures ---------------------------------------------------------------------------------------------


def over_time(executions: pd.DataFrame) -> pd.DataFrame:
    return qr.ru_over_time(qc.logical_executions(executions), qc.run_starts(executions))


def test_ru_over_time_figure(two_runs: pd.DataFrame) -> None:
    figure = figures.build_ru_over_time_figure(over_time(two_runs))
    assert [trace.name for trace in figure.data] == ["point", "scan", "wide"]
    point, scan = figure.data[0], figure.data[1]
    assert list(point.y) == [3.0, 3.3]  # per run: r1's two executions' mean, then r2's one
    assert list(scan.y) == [4.0, 5.0]
    assert [pd.Timestamp(x) for x in scan.x] == [pd.Timestamp("2026-05-01T10:00"), pd.Timestamp("2026-05-01T11:00")]
    assert scan.customdata.tolist() == [[1, 1], [1, 1]]  # runs and executions behind each point
    assert isinstance(scan.y, np.ndarray) and isinstance(scan.x, np.ndarray)  # arrays, not Python lists
    assert figure.layout.yaxis.title.text == "mean RU per execution"
    assert figure.layout.yaxis.rangemode == "tozero"


def test_ru_over_time_figure_names_containers_when_there_are_several() -> None:
    frame = executions_frame(execution(query="q", container="a"), execution(query="q", container="b"))
    figure = figures.build_ru_over_time_figure(over_time(frame))
    assert [trace.name for trace in figure.data] == ["shop/a/q", "shop/b/q"]


def test_query_labels_are_names_or_whole_paths() -> None:
    one = pd.DataFrame({"database": ["d", "d"], "container": ["c", "c"], "query_name": ["x", "y"]}, dtype="string")
    assert figures.query_labels(one).tolist() == ["x", "y"]
    two = one.assign(container=pd.array(["c", "k"], dtype="string[pyarrow]"))
    assert figures.query_labels(two).tolist() == ["d/c/x", "d/k/y"]


def test_pkrange_breakdown_figure(wide_requests: pd.DataFrame) -> None:
    figure = figures.build_pkrange_breakdown_figure(qc.pkrange_breakdown(wide_requests, "r1"), title="run r1")
    assert figure.layout.barmode == "stack"
    assert figure.layout.yaxis.rangemode == "tozero"
    assert list(figure.layout.xaxis.categoryarray) == ["wide", "point"]
    bars = {trace.name: trace for trace in figure.data}
    assert list(bars) == ["orders/0", "orders/1", "gateway"]  # container/pkrange, the gateway on top
    assert (list(bars["orders/0"].x), list(bars["orders/0"].y)) == (["wide", "point"], [3.0, 6.0])
    assert (list(bars["orders/1"].x), list(bars["orders/1"].y)) == (["wide"], [4.5])
    assert (list(bars["gateway"].x), list(bars["gateway"].y)) == (["wide"], [1.5])
    assert bars["gateway"].marker.color == figures.GATEWAY_COLOR
    assert bars["orders/0"].marker.color != bars["orders/1"].marker.color


def test_two_containers_ranges_never_share_a_colour() -> None:
    requests = requests_frame(
        *(request("r1", "q", "e", "page", str(pk), 1.0, seq=pk) for pk in range(3)),
        *(request("r1", "p", "f", "page", str(pk), 1.0, seq=10 + pk, container="people") for pk in range(3)),
    )
    figure = figures.build_pkrange_breakdown_figure(qc.pkrange_breakdown(requests, "r1"))
    colours = {trace.name: trace.marker.color for trace in figure.data}
    assert sorted(colours) == ["orders/0", "orders/1", "orders/2", "people/0", "people/1", "people/2"]
    assert len(set(colours.values())) == 6


def test_a_partition_keeps_its_colour_across_figures() -> None:
    """Two runs' figures given the colours of the union of their partitions draw each partition alike."""
    one = qc.pkrange_breakdown(requests_frame(request("r1", "q", "e", "page", "1", 1.0)), "r1")
    both = qc.pkrange_breakdown(
        requests_frame(request("r2", "q", "e", "page", "0", 1.0), request("r2", "q", "e", "page", "1", 1.0, seq=1)),
        "r2",
    )
    colors = figures.partition_colors([*figures.partition_labels(one), *figures.partition_labels(both)])
    first = {t.name: t.marker.color for t in figures.build_pkrange_breakdown_figure(one, colors=colors).data}
    second = {t.name: t.marker.color for t in figures.build_pkrange_breakdown_figure(both, colors=colors).data}
    assert first["orders/1"] == second["orders/1"] != second["orders/0"]
    assert figures.partition_colors(["b/0", "a/10", "a/2"]) == figures.partition_colors(["a/2", "b/0", "a/10"])


def test_partition_labels_name_the_database_only_when_there_are_several() -> None:
    frame = pd.DataFrame({"database": ["d", "d"], "container": ["c", "c"], "pkrange_id": ["3", ""]})
    assert figures.partition_labels(frame).tolist() == ["c/3", "gateway"]
    assert figures.partition_labels(frame.assign(database=["d", "e"])).tolist() == ["d/c/3", "gateway"]


def test_empty_figures_say_so() -> None:
    empty = figures.build_ru_over_time_figure(over_time(executions_frame()))
    breakdown = figures.build_pkrange_breakdown_figure(qc.pkrange_breakdown(requests_frame(), "r1"))
    assert not empty.data and empty.layout.annotations[0].text.startswith("No successful")
    assert not breakdown.data and breakdown.layout.annotations[0].text.startswith("No requests")


# -- frames as the store returns them (nullable dtypes, pd.NA) ------------------------------------------


def test_frames_read_back_from_the_store(two_runs: pd.DataFrame, wide_requests: pd.DataFrame, tmp_path: Path) -> None:
    from store import read_table, write_frame

    gaps = two_runs.astype({"routing_mismatch": object, "throttled": object, "retrieved_documents": object})
    gaps.loc[gaps["query_name"].eq("point"), ["routing_mismatch", "throttled", "retrieved_documents"]] = None
    for run in ("r1", "r2"):
        write_frame(store_location(tmp_path), "executions", gaps[gaps["run_id"].eq(run)], run_id=run, part="0")
        write_frame(
            store_location(tmp_path), "requests", wide_requests[wide_requests["run_id"].eq(run)], run_id=run, part="0"
        )
    stored = read_table(store_location(tmp_path), "executions")
    assert stored["total_ru"].dtype == "Float64" and stored["routing_mismatch"].isna().any()
    expected = qc.summarize_query_costs(two_runs)
    pd.testing.assert_frame_equal(qc.summarize_query_costs(stored), expected, check_dtype=False)
    assert qc.ru_per_execution(stored)["total_ru"].tolist() == qc.ru_per_execution(two_runs)["total_ru"].tolist()
    breakdown = qc.pkrange_breakdown(read_table(store_location(tmp_path), "requests"), "r1")
    assert breakdown["ru"].tolist() == [3.0, 4.5, 1.5, 6.0]
    assert len(select_scope(stored, Scope(database="shop", container="orders"))) == len(stored)
    assert qc.failed_executions(stored)["status"].tolist() == ["error"]


def test_folded_partitions_are_one_light_segment() -> None:
    colors = figures.partition_colors(["c/0", "c/other", "k/other", "gateway"])
    assert colors["c/other"] == colors["k/other"] == figures.OTHER_COLOR != colors["c/0"]
    assert colors["gateway"] == figures.GATEWAY_COLOR
