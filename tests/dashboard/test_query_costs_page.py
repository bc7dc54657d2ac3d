"""AppTest runs of the Query costs page, through the frame (app.py), against a store in a temp directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.runtime.memory_media_file_storage import _calculate_file_id  # cross-check of the download only

from collectors.store import write_frame
from tests.analysis.test_query_costs import execution, executions_frame
from tests.dashboard.apptest import bars, chart, run_app, store_rows

EXPECTED_CSV = """\
database,container,query_name,mode,executions,mean_ru,median_ru,max_ru,latest_run,latest_mean_ru,\
previous_mean_ru,change_pct,latest_pkrange_count,latest_pkranges,routing,routing_predicted,routing_mismatch,\
throttled,errors,last_seen
shop,orders,wide,as-is,2,9.75,9.75,10.5,r2,10.5,9.0,16.7,2,"0,1",fan-out,fan-out,false,0,0,2026-05-01T11:03:00.000Z
shop,orders,scan,per-feed-range,2,4.5,4.5,5.0,r2,5.0,4.0,25.0,2,"0,1",fan-out,fan-out,false,0,0,\
2026-05-01T11:01:00.000Z
shop,orders,point,as-is,3,3.1,3.3,3.5,r2,3.3,3.0,10.0,1,0,single,single,false,0,0,2026-05-01T11:00:00.000Z
"""


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
    assert summary["query_name"].tolist() == ["wide", "scan", "point"]
    assert summary["executions"].tolist() == [2, 2, 3]
    assert summary["mean_ru"].tolist() == [9.75, 4.5, 3.1]
    assert summary["latest_mean_ru"].tolist() == [10.5, 5.0, 3.3]
    assert summary["change_pct"].tolist() == [16.7, 25.0, 10.0]
    assert summary["routing"].tolist() == ["fan-out", "fan-out", "single"]
    [download] = app.get("download_button")
    assert download.proto.url.endswith(
        _calculate_file_id(EXPECTED_CSV.encode(), "text/csv", "query-costs.csv") + ".csv"
    )
    over_time = {t["name"]: t["y"] for t in chart(app, "query_costs_over_time")["data"]}
    assert over_time == {"point": [2.5, 3.5, 3.3], "scan": [4.0, 5.0], "wide": [9.0, 10.5]}
    assert app.selectbox(key="query_costs_run").value == "r2"  # the latest run by default
    assert bars(app) == {
        "pkrange 0": (["wide", "scan", "point"], [3.0, 2.0, 3.3]),
        "pkrange 1": (["wide", "scan"], [6.0, 3.0]),
        "gateway": (["wide"], [1.5]),
    }
    assert not app.warning
    assert any("fan-out" in m.value for m in app.markdown)  # the routing classes are explained


def test_the_run_selector_changes_the_breakdown(two_runs: Path) -> None:
    app = run_app()
    app.selectbox(key="query_costs_run").select("r1").run()
    assert not app.exception
    assert bars(app) == {
        "pkrange 0": (["wide", "scan", "point"], [3.0, 2.0, 3.0]),
        "pkrange 1": (["wide", "scan"], [4.5, 2.0]),
        "gateway": (["wide"], [1.5]),
    }
    assert chart(app, "query_costs_breakdown")["layout"]["title"]["text"] == "run r1"


def test_the_scope_filter_narrows_the_table(two_runs: Path) -> None:
    other = [("r2", 70, "people", 0, "as-is", "single", [[("page", "0", 1.0)]])]
    executions, requests = store_rows(other)
    for row in executions + requests:
        row.update(database="crm", container="people")
    write_frame(two_runs, "executions", executions_frame(*executions), run_id="r2", part="001")
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
    write_frame(store, "executions", executions_frame(*failed), run_id="r1", part="000")
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
            config, store=store, credential=emulator.key, progress=False, out=lambda _: None, err=lambda _: None
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
