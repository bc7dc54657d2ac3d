"""AppTest runs of the Query costs page, through the frame (app.py), against a store in a temp directory."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import _calculate_file_id  # cross-check of the download only
from streamlit.testing.v1 import AppTest

from store import store_location, write_frame
from tests.analysis.queries.test_costs import execution, executions_frame
from tests.dashboard.apptest import PLAN, chart, new_app, store_rows, write_rows

EXPECTED_CSV = """\
database,container,query_name,mode,executions,mean_ru,median_ru,max_ru,latest_run,latest_run_start,latest_mean_ru,\
previous_mean_ru,change_pct,latest_pkrange_count,latest_pkranges,routing,routing_predicted,routing_mismatch,\
throttled,errors,last_seen,latest_pages,latest_round_trips,latest_items,latest_retrieved_documents,\
latest_output_documents,ru_per_item,sql,routing_multiplier
shop,orders,wide,as-is,2,9.75,9.75,10.5,r2,2026-05-01T11:00:00.000Z,10.5,9.0,16.7,2,"0,1",fan-out,fan-out,false,\
0,0,2026-05-01T11:03:00.000Z,1.0,1.0,1.0,,,10.5,SELECT * FROM c,1.75
shop,orders,scan,per-feed-range,2,4.5,4.5,5.0,r2,2026-05-01T11:00:00.000Z,5.0,4.0,25.0,2,"0,1",fan-out,fan-out,\
false,0,0,2026-05-01T11:01:00.000Z,2.0,2.0,2.0,,,2.5,SELECT * FROM c,1.67
shop,orders,point,as-is,3,3.1,3.3,3.5,r2,2026-05-01T11:00:00.000Z,3.3,3.0,10.0,1,0,single,single,false,0,0,\
2026-05-01T11:00:00.000Z,1.0,1.0,1.0,,,3.3,SELECT * FROM c,1.0
"""
FIRST_COLUMNS = ["query_name", "routing", "latest_mean_ru", "change_pct", "throttled", "errors"]
R1, R2 = "2026-05-01 10:00 UTC", "2026-05-01 11:00 UTC"  # the runs' starts, as the run pickers show them


def run_app() -> AppTest:
    """The app on the Query costs page (the frame's default page is another)."""
    app = new_app()
    app.switch_page("views/query_costs.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def values(data: Any) -> list:
    """A trace's values as plotly sends them: a list, or numpy's bytes in base64 ({"dtype", "bdata"})."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)


def bars(app: AppTest, key: str = "query_costs_breakdown") -> dict[str, tuple[list[str], list[float]]]:
    return {t["name"]: (values(t["x"]), values(t["y"])) for t in chart(app, key)["data"]}


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = run_app()
    [info] = app.info
    assert f"ruscope replay --config ruscope.toml --store {store}" in info.value
    assert f"ruscope dashboard --store {store}" in info.value
    assert not app.get("plotly_chart") and not app.dataframe and not app.warning


def test_two_runs_show_the_table_the_download_and_the_charts(two_runs: Path) -> None:
    app = run_app()
    assert app.title[0].value == "Query costs"
    summary = app.dataframe[0].value
    assert summary.columns[: len(FIRST_COLUMNS)].tolist() == FIRST_COLUMNS  # what it costs and its trouble first
    assert summary.columns[-1] == "latest_run"  # the run id last; its start is shown as a time
    assert summary["query_name"].tolist() == ["wide", "scan", "point"]
    assert summary["executions"].tolist() == [2, 2, 3]
    assert summary["mean_ru"].tolist() == [9.75, 4.5, 3.1]
    assert summary["latest_mean_ru"].tolist() == [10.5, 5.0, 3.3]
    assert summary["change_pct"].tolist() == [16.7, 25.0, 10.0]
    assert summary["routing"].tolist() == ["fan-out", "fan-out", "single"]
    assert summary["routing_multiplier"].tolist() == [1.75, 1.67, 1.0]  # 10.5 / 6.0 (pkrange 1), 5 / 3, 1
    assert summary["ru_per_item"].tolist() == [10.5, 2.5, 3.3]  # the scan's two parts return an item each
    download = next(b for b in app.get("download_button") if b.proto.id.endswith("query_costs_table_download"))
    assert download.proto.url.endswith(
        _calculate_file_id(EXPECTED_CSV.encode(), "text/csv", "query-costs.csv") + ".csv"
    )
    over_time = chart(app, "query_costs_over_time")
    assert {t["name"]: values(t["y"]) for t in over_time["data"]} == {
        "point": [3.0, 3.3],  # one point per run: r1's two executions' mean, then r2's
        "scan": [4.0, 5.0],
        "wide": [9.0, 10.5],
    }
    times = [pd.Timestamp(x) for x in values(over_time["data"][0]["x"])]
    assert times == [pd.Timestamp("2026-05-01T10:00"), pd.Timestamp("2026-05-01T11:00")]  # the runs' starts
    assert over_time["layout"]["yaxis"]["rangemode"] == "tozero"
    assert app.selectbox(key="query_costs_run").value == "r2"  # the latest run by default
    assert app.selectbox(key="query_costs_run").options == [R2, R1]  # shown as their start times
    assert app.selectbox(key="query_costs_run_b").value == "r1"  # beside the one before it
    assert bars(app) == {
        "orders/0": (["wide", "scan", "point"], [3.0, 2.0, 3.3]),
        "orders/1": (["wide", "scan"], [6.0, 3.0]),
        "gateway": (["wide"], [1.5]),
    }
    assert bars(app, "query_costs_breakdown_b") == {
        "orders/0": (["wide", "scan", "point"], [3.0, 2.0, 3.0]),
        "orders/1": (["wide", "scan"], [4.5, 2.0]),
        "gateway": (["wide"], [1.5]),
    }
    colours = [{t["name"]: t["marker"]["color"] for t in chart(app, k)["data"]} for k in ("query_costs_breakdown", "query_costs_breakdown_b")]  # fmt: skip
    assert colours[0] == colours[1]  # a partition looks the same in both runs
    compared = app.dataframe[1].value
    assert compared[["query_name", "ru_a", "ru_b", "change_pct"]].values.tolist() == [
        ["wide", 10.5, 9.0, 16.7],
        ["scan", 5.0, 4.0, 25.0],
        ["point", 3.3, 3.0, 10.0],
    ]
    assert not app.warning
    assert any("fan-out" in m.value for m in app.markdown)  # the routing classes are explained


def test_the_run_pickers_change_the_breakdowns(two_runs: Path) -> None:
    app = run_app()
    app.selectbox(key="query_costs_run").select("r1").run()
    assert not app.exception
    assert bars(app) == {
        "orders/0": (["wide", "scan", "point"], [3.0, 2.0, 3.0]),
        "orders/1": (["wide", "scan"], [4.5, 2.0]),
        "gateway": (["wide"], [1.5]),
    }
    assert chart(app, "query_costs_breakdown")["layout"]["title"]["text"] == f"run {R1}"
    app.selectbox(key="query_costs_run_b").select("r2").run()
    assert chart(app, "query_costs_breakdown_b")["layout"]["title"]["text"] == f"run {R2}"
    compared = app.dataframe[1].value.set_index("query_name")
    assert compared.loc["wide", ["ru_a", "ru_b", "change_pct"]].tolist() == [9.0, 10.5, -14.3]


def test_the_sql_of_a_query_is_one_pick_away(store: Path) -> None:
    executions, requests = store_rows(PLAN)
    for row in executions:
        row["sql"] = f"SELECT * FROM c WHERE c.kind = '{row['query_name']}'"
    write_rows(store, executions, requests, part="000")
    app = run_app()
    assert app.selectbox(key="query_costs_sql").options == ["wide", "scan", "point"]  # the table's order
    assert app.code[0].value == "SELECT * FROM c WHERE c.kind = 'wide'"
    app.selectbox(key="query_costs_sql").select("point").run()
    assert app.code[0].value == "SELECT * FROM c WHERE c.kind = 'point'"


def test_two_containers_ranges_have_their_own_labels_and_colours(store: Path) -> None:
    executions, requests = store_rows([r for r in PLAN if r[0] == "r2"])
    other, other_requests = store_rows([("r2", 70, "people", 0, "as-is", "single", [[("page", "0", 1.0)]])])
    for row in other + other_requests:
        row.update(container="people", execution_id=f"p-{row['execution_id']}")
    write_rows(store, executions + other, requests + other_requests, part="000")
    app = run_app()
    traces = {t["name"]: t["marker"]["color"] for t in chart(app, "query_costs_breakdown")["data"]}
    assert set(traces) == {"orders/0", "orders/1", "people/0", "gateway"}
    assert len(set(traces.values())) == 4  # pkrange 0 of each container: two colours
    assert "shop/people/people" in bars(app)["people/0"][0]


def test_the_scope_filter_narrows_the_table(two_runs: Path) -> None:
    other = [("r2", 70, "people", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    executions, requests = store_rows(other)
    for row in executions + requests:
        row.update(database="crm", container="people")
    write_frame(store_location(two_runs), "executions", executions_frame(*executions), run_id="r2", part="001")
    app = run_app()
    assert len(app.dataframe[0].value) == 4
    assert app.selectbox(key="frame_database").options == ["(all)", "crm", "shop"]
    app.selectbox(key="frame_database").select("crm").run()
    assert app.dataframe[0].value["query_name"].tolist() == ["people"]
    assert app.selectbox(key="frame_container").options == ["(all)", "people"]


def test_a_corrupt_file_is_skipped_with_a_warning(two_runs: Path) -> None:
    day = next((two_runs / "executions").iterdir())
    (day / "r3-000.parquet").write_bytes(b"not parquet at all")
    app = run_app()
    assert any("r3-000.parquet" in w.value for w in app.warning)
    assert app.dataframe[0].value["query_name"].tolist() == ["wide", "scan", "point"]
    assert app.get("plotly_chart")


def test_only_failed_executions_show_the_errors(store: Path) -> None:
    failed = [execution("r1", "broken", status="error", pkranges="", routing="unknown")]
    write_frame(store_location(store), "executions", executions_frame(*failed), run_id="r1", part="000")
    app = run_app()
    assert any("No execution succeeded" in w.value for w in app.warning)
    summary, errors = (frame.value for frame in app.dataframe)
    assert summary[["query_name", "executions", "errors"]].values.tolist() == [["broken", 0, 1]]
    assert errors[["query_name", "status", "error"]].values.tolist() == [["broken", "error", "error: it failed"]]
    assert not app.get("plotly_chart")


def test_the_whole_path_from_the_emulator_to_the_page(emulator, store: Path) -> None:
    """config -> replay collector (real SDK) -> store -> analysis -> page; the stacked bars add up to the table."""
    from azure.cosmos import CosmosClient, PartitionKey

    from collectors.config import parse_config
    from collectors.replay import replay

    database = CosmosClient(emulator.url, credential=emulator.key).create_database_if_not_exists("shop")
    orders = database.create_container("orders", PartitionKey("/tenantId"), offer_throughput=24_000)
    for i in range(60):
        orders.create_item({"id": f"o{i}", "tenantId": f"t{i % 6}", "n": i})
    queries = [
        {
            "name": "one-tenant",
            "container": "orders",
            "sql": "SELECT * FROM c WHERE c.tenantId = 't3'",
            "partition_key": "t3",
            "repeat": 2,
        },
        {"name": "count-all", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c"},
        {"name": "count-each", "container": "orders", "sql": "SELECT VALUE COUNT(1) FROM c", "mode": "per-feed-range"},
    ]
    config = parse_config(
        {"cosmos": {"endpoint": emulator.url, "database": "shop"}, "queries": queries}, Path("test.toml")
    )
    for _ in range(2):
        summary = replay(
            config,
            store=store_location(store),
            credential=emulator.key,
            progress=False,
            out=lambda _: None,
            err=lambda _: None,
        )
        assert summary.exit_code == 0
    app = run_app()
    table = app.dataframe[0].value.set_index("query_name")
    assert sorted(table.index) == ["count-all", "count-each", "one-tenant"]
    assert table["executions"].to_dict() == {"count-all": 2, "count-each": 2, "one-tenant": 4}
    partitions = table.loc["count-all", "latest_pkrange_count"]
    assert partitions > 1
    assert table.loc["count-each", "latest_pkrange_count"] == partitions
    assert table["routing"].to_dict() == {"count-all": "fan-out", "count-each": "fan-out", "one-tenant": "single"}
    stacked: dict[str, float] = {}
    for x, y in bars(app).values():
        for query, ru in zip(x, y):
            stacked[query] = stacked.get(query, 0.0) + ru
    assert stacked == pytest.approx(table["latest_mean_ru"].to_dict(), abs=0.02)
    assert not app.warning


def test_the_page_on_the_collected_store(
    collected_store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store the real collectors wrote against the emulator (tests/collected.py): a single-partition
    query, a targeted IN, a fan-out and a per-feed-range count on orders, five replays, a split between."""
    import shutil

    copy = tmp_path / "collected"
    shutil.copytree(collected_store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = run_app()
    table = app.dataframe[0].value.set_index("query_name")
    assert sorted(table.index) == ["big-orders", "count-each", "hot-tenant-orders", "two-tenants"]
    assert table.loc["hot-tenant-orders", "routing"] == "single"
    assert table.loc["hot-tenant-orders", "routing_multiplier"] == pytest.approx(1.0, abs=0.05)
    partitions = table.loc["big-orders", "latest_pkrange_count"]
    assert table.loc["big-orders", "routing"] == "fan-out" and partitions > 1
    # every partition probed charges its minimum: a fan-out costs more than its costliest partition alone
    assert table.loc["big-orders", "routing_multiplier"] > 1.5
    over_time = chart(app, "query_costs_over_time")["data"]
    assert sorted(t["name"] for t in over_time) == sorted(table.index)
    assert all(len(values(t["y"])) == 5 for t in over_time)  # five replays: a point per run
    assert {name.split("/")[0] for name in bars(app)} == {"orders", "gateway"}
    runs = app.selectbox(key="query_costs_run").options
    assert len(runs) == 5 and runs == sorted(runs, reverse=True)


def test_the_collected_store_s_logged_queries_are_ruscope_s_own_and_said_apart(
    collected_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collected store's workload reads by point reads; every query in its diagnostic logs is the
    replay's, told apart by ruscope's user agent (azure-monitor.md §7b R70, R71): no workload ranking, and the
    caption says what the replay's queries spent, as `log_query_ru` sums it."""
    from store import read_table

    logged = read_table(store_location(collected_store), "log_query_ru")
    assert not logged.empty and logged["own_traffic"].all()
    monkeypatch.setenv("RUSCOPE_STORE", str(collected_store))
    app = run_app()
    assert "The workload's queries (diagnostic logs)" in [s.value for s in app.subheader]
    assert any("No query of the workload" in i.value for i in app.info)
    spent = f"{logged['request_charge'].sum():,.1f} RU in {int(logged['requests'].sum()):,} request(s)"
    assert any(spent in c.value and "ruscope's own query requests" in c.value for c in app.caption), [
        c.value for c in app.caption
    ]


def test_a_long_line_over_time_is_drawn_without_a_marker_per_point() -> None:
    """A marker per point is one SVG path each: 50 lines of 240 runs took the browser seconds; a short line
    keeps its markers (one run's point would otherwise not be seen at all)."""
    from dashboard.figures.canvas import MARKED_POINTS
    from dashboard.figures.query_costs import build_ru_over_time_figure

    def series(points: int, query: str) -> pd.DataFrame:
        times = pd.date_range("2026-05-01", periods=points, freq="h", tz="UTC")
        return pd.DataFrame(
            {"account": "a", "database": "shop", "container": "orders", "query_name": query, "time": times,
             "mean_ru": np.arange(points, dtype=float), "runs": 1, "executions": 2}
        )  # fmt: skip

    both = pd.concat([series(MARKED_POINTS, "short"), series(MARKED_POINTS + 1, "long")], ignore_index=True)
    figure = build_ru_over_time_figure(both)
    assert sorted((len(trace.x), trace.mode) for trace in figure.data) == [
        (MARKED_POINTS, "lines+markers"),
        (MARKED_POINTS + 1, "lines"),
    ]
