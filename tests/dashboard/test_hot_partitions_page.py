"""The Hot partitions page through the frame (AppTest): an empty store, a replay-only store, a store with
Azure Monitor metrics, storage snapshots and logs written with `write_frame`, and the collected store."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.display import MISSING_NUMBER
from store import store_location, write_frame
from tests.analysis.queries.test_costs import T0
from tests.collected import CollectedStore
from tests.dashboard.apptest import PLAN, chart, run_app, store_rows, write_plan, write_rows

PAGE = "views/hot_partitions.py"
WHERE = {"account": "127.0.0.1", "database": "shop", "container": "orders"}


def open_page() -> AppTest:
    app = run_app(PAGE)
    assert app.title[0].value == "Hot partitions"
    return app


def values(data: object) -> np.ndarray:
    """A trace's array as plotly writes it: a list, or base64 typed bytes for a numpy array."""
    if isinstance(data, dict) and "bdata" in data:
        array = np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
        shape = [int(n) for n in str(data.get("shape", len(array))).split(",")]
        return array.reshape(shape)
    return np.array(data, dtype=float)


def keys(app: AppTest, kind: str) -> set[str]:
    return {e.proto.id.rsplit("-", 1)[-1] for e in app.get(kind)}


def replay_only(store: Path, *, rate: float | None = 10.0) -> None:
    """PLAN's runs r1 and r2 in shop/orders, "wide" at `rate` executions per second, the others without one."""
    executions, requests = store_rows(PLAN)
    for row in executions:
        row["rate_per_s"] = rate if row["query_name"] == "wide" else None
    write_rows(store, executions, requests, part="0")


def with_monitor(store: Path) -> None:
    """Replay, plus an hour of normalized RU (pkrange 1 at 100% in minute 30, split at minute 40 into 2 and 3),
    the storage snapshot after the split, and the logs' RU per key."""
    minutes = np.arange(60)
    rows = []
    for pk, values in {"0": np.full(60, 20.0), "1": np.where(minutes == 30, 100.0, 40.0)}.items():
        for minute, value in zip(minutes, values):
            if pk == "1" and minute >= 40:
                continue
            rows.append({"pkrange_id": pk, "minute": minute, "value": value})
    rows += [{"pkrange_id": pk, "minute": m, "value": 30.0} for pk in ("2", "3") for m in range(40, 60)]
    metrics = pd.DataFrame(rows).assign(
        **WHERE,
        time=lambda f: T0 + pd.to_timedelta(f.pop("minute"), unit="min"),
        metric="NormalizedRUConsumption",
        aggregation="Maximum",
        unit="Percent",
        grain="PT1M",
    )
    write_frame(store_location(store), "metrics", metrics, run_id="m1", part="0")
    snapshot = pd.DataFrame(
        {
            "pkrange_id": ["0", "2", "3"],
            "parents": ["", "1", "1"],
            "min_epk": ["", "20", "30"],
            "max_epk": ["20", "30", "FF"],
            "size_kb": 10,
            "document_count": 5,
            "throughput_share": 100.0,
        }
    ).assign(**WHERE, time=T0 + pd.Timedelta(minutes=50))
    write_frame(store_location(store), "partitions", snapshot, run_id="s1", part="0")
    key_ru = pd.DataFrame(
        {
            "pkrange_id": ["1", "1", "0"],
            "partition_key": ['["hot"]', '["warm"]', '["cold"]'],
            "request_charge": [900.0, 100.0, 50.0],
            "bin_minutes": 5,
            "partial": False,
        }
    ).assign(**WHERE, time=T0 + pd.Timedelta(minutes=30))
    write_frame(store_location(store), "log_key_ru", key_ru, run_id="l1", part="0")
    replay_only(store)


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_page()
    [info] = app.info
    assert f"ruscope replay --config ruscope.toml --store {store}" in info.value and "ruscope metrics" in info.value
    assert not app.get("plotly_chart") and not app.dataframe


def test_a_replay_only_store_shows_the_demand_and_what_monitor_data_would_add(store: Path) -> None:
    replay_only(store)
    app = open_page()
    missing = " ".join(i.value for i in app.info)
    assert "no Azure Monitor metrics (NormalizedRUConsumption by pkrange)" in missing
    assert "ruscope metrics --config ruscope.toml" in missing and "diagnostic logs" in missing
    assert keys(app, "plotly_chart") == {"hot_skew_chart", "hot_demand_chart"}
    bars = chart(app, "hot_demand_chart")["data"]
    assert [t["name"] for t in bars] == ["demand RU/s"]  # no budget known: no budget bars
    # the latest run (r2): wide 3.0 at 10/s on pkrange 0, 6.0 on 1; point and scan have no rate: no demand
    assert bars[0]["x"] == ["0", "1"] and values(bars[0]["y"]).tolist() == pytest.approx([30.0, 60.0])
    sentence = next(m.value for m in app.markdown if "**shop/orders**" in m.value)
    assert "budget is unknown" in sentence and "2 of 3 queries have no `rate_per_s` and are left out" in sentence
    assert app.radio(key="hot_skew_source").options == ["Replay: RU per pkrange of the replayed queries"]
    assert {"hot_demand_table_download", "hot_headroom_download", "hot_skew_download"} <= keys(app, "download_button")
    assert not [m for m in app.multiselect if m.key == "hot_pkranges"]  # no logical keys to list


def test_monitor_data_draws_the_heatmap_in_key_space_order_and_lists_the_keys_of_a_chosen_range(
    store: Path,
) -> None:
    with_monitor(store)
    app = open_page()
    [heatmap] = chart(app, "hot_heatmap")["data"]
    assert heatmap["y"] == ["0", "1", "2", "3"] and (heatmap["zmin"], heatmap["zmax"]) == (0, 100)
    assert np.nanmax(values(heatmap["z"])[1]) == 100.0  # the hot minute survives the bins
    assert [a["text"] for a in chart(app, "hot_heatmap")["layout"]["annotations"]] == ["split: 1 → 2, 3"]
    pkranges = app.multiselect(key="hot_pkranges")
    assert pkranges.options == ["0", "1", "2", "3"]
    assert pkranges.value == ["2"]  # the hottest that exists: 1 (100% once) split into 2 and 3 (30%, a tie)
    pkranges.set_value(["1"]).run()
    table = next(t.value for t in app.dataframe if "partition_key" in t.value.columns)
    assert "pkrange_id" not in table.columns and "account" not in table.columns  # one pkrange column: its label
    assert table["partition_key"].tolist() == ['["hot"]', '["warm"]'] and table["ru_share_pct"].tolist() == [90, 10]
    pkranges.set_value(["0"]).run()
    table = next(t.value for t in app.dataframe if "partition_key" in t.value.columns)
    assert table["partition_key"].tolist() == ['["cold"]']
    [keys_heatmap] = chart(app, "hot_keys_heatmap")["data"]
    assert keys_heatmap["y"] == ['["hot"]', '["warm"]', '["cold"]']
    app.selectbox(key="hot_top_keys").select(10).run()
    assert not app.exception
    skew_sources = app.radio(key="hot_skew_source")
    # the model's source first (Azure Monitor's workload share: what the Overview, Fleet and the report show)
    assert skew_sources.value == "Azure Monitor: mean normalized RU % (the workload's)"
    assert skew_sources.options[1:] == [
        "Diagnostic logs: RU per pkrange",
        "Replay: RU per pkrange of the replayed queries",
    ]
    skew_sources.set_value("Replay: RU per pkrange of the replayed queries").run()
    skew = next(t.value for t in app.dataframe if "gini" in t.value.columns)
    assert skew["pkranges"].tolist() == [3]  # the layout's 3: the replay reached 0 and 1, so 2 carries 0 of it
    bars = {t["name"]: t for t in chart(app, "hot_demand_chart")["data"]}
    assert values(bars["budget RU/s"]["y"])[0] == 100.0  # the snapshot's throughput share of pkrange 0


def test_the_collected_store_shows_the_hot_partition_at_100_percent(
    collected: CollectedStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = tmp_path / "collected"
    shutil.copytree(collected.store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = open_page()
    heatmap, *marks = chart(app, "hot_heatmap")["data"]
    # the replay's minutes are marked where they were its own (the cold ranges' replay minutes); the hot
    # tenant's 100% is the workload's: no mark there
    [own] = marks
    assert own["y"] and not set(own["y"]) & set(collected.hot_pkranges)
    z = values(heatmap["z"])
    peaks = dict(zip(heatmap["y"], np.nanmax(z, axis=1)))
    assert {pk: peaks[pk] for pk in collected.hot_pkranges} == dict.fromkeys(collected.hot_pkranges, 100.0)
    assert max(v for pk, v in peaks.items() if pk not in collected.hot_pkranges) < 50
    assert len(chart(app, "hot_heatmap")["layout"]["shapes"]) == 1  # the split is marked
    sentence = next(m.value for m in app.markdown if "**shop/orders**" in m.value)
    assert "throttles already at the configured rates" in sentence  # the hot tenant's query exceeds its budget
    parent, child = collected.hot_pkranges  # the hot tenant's range split: the parent is gone
    assert app.multiselect(key="hot_pkranges").value == [child]  # the hottest range that exists
    table = next(t.value for t in app.dataframe if "min_epk" in t.value.columns)
    assert "pkrange_id" not in table.columns and table["label"].tolist() == heatmap["y"]
    assert table["min_epk"].iloc[0] == "(start)" and table["max_epk"].iloc[-1] == "(end)"
    assert dict(zip(table["label"], table["current"]))[parent] == False  # noqa: E712 (a numpy bool)
    live = sum(1 for label, current in zip(table["label"], table["current"]) if current)
    for source in app.radio(key="hot_skew_source").options:  # every source counts the ranges that exist
        app.radio(key="hot_skew_source").set_value(source).run()
        skew = next(t.value for t in app.dataframe if "gini" in t.value.columns)
        assert skew["pkranges"].tolist() == [live] and skew["hottest_pkrange"].tolist() == [child], source
    # the logs collector's RU by operation (LogsQueryClient from the stand-in): the hottest key's, summing to its RU
    keys_table = next(t.value for t in app.dataframe if "peak_verdict" in t.value.columns)
    operations = next(t.value for t in app.dataframe if "operation_name" in t.value.columns)
    assert app.selectbox(key="hot_key_operations_key").value == 0 and "Read" in operations["operation_name"].tolist()
    assert operations["ru"].sum() == pytest.approx(keys_table["ru"].iloc[0], rel=1e-3)


def test_the_replay_s_own_minutes_are_marked_on_the_heatmap(store: Path) -> None:
    """200 RU/s over 2 ranges; ruscope's replay spent 100 RU in one second on pkrange 0 in minute 5, the minute
    Azure Monitor reports it at 100%: the heatmap keeps the 100% and marks that cell, and the page says so."""
    minutes = range(10)
    rows = [
        {"pkrange_id": pk, "minute": m, "value": 100.0 if (pk, m) == ("0", 5) else 50.0} for pk in "01" for m in minutes
    ]
    normalized = pd.DataFrame(rows).assign(metric="NormalizedRUConsumption", aggregation="Maximum", unit="Percent")
    provisioned = pd.DataFrame(
        [{"minute": 0, "value": 200.0, "metric": "ProvisionedThroughput", "aggregation": "Maximum"}]
    )
    metrics = pd.concat([normalized, provisioned], ignore_index=True).assign(
        **WHERE, time=lambda f: T0 + pd.to_timedelta(f.pop("minute"), unit="min"), grain="PT1M"
    )
    write_frame(store_location(store), "metrics", metrics, run_id="m1", part="0")
    request = {**WHERE, "time": T0 + pd.Timedelta(minutes=5, seconds=10), "pkrange_id": "0", "request_charge": 100.0}
    request |= {"status": 200, "request_kind": "page", "query_name": "wide"}
    write_frame(store_location(store), "requests", pd.DataFrame([request]), run_id="r1", part="0")
    app = open_page()
    heatmap = chart(app, "hot_heatmap")
    [cells, crosses] = heatmap["data"]
    assert crosses["name"] == "ruscope's replay (left out of risk)" and list(crosses["y"]) == ["0"]
    assert np.nanmax(values(cells["z"])) == 100.0  # Azure Monitor's figure, kept
    assert any("× marks 1 minute of ruscope's own replay" in c.value for c in app.caption)


def test_two_containers_label_their_pkranges_and_the_default_choice_is_found(store: Path) -> None:
    with_monitor(store)  # shop/orders: metrics, logs and replay
    write_plan(store, [("r9", 0, "people", 0, "as-is", "single", [[("page", "0", 5.0)]])], container="people", part="1")
    app = open_page()
    assert chart(app, "hot_heatmap")["data"][0]["y"] == ["0", "1", "2", "3"]  # the metrics know one container
    pkranges = app.multiselect(key="hot_pkranges")
    assert pkranges.options == ["orders/0", "orders/1", "orders/2", "orders/3", "people/0"]
    assert pkranges.value == ["orders/2"]  # orders/1 split: the hottest existing one
    assert chart(app, "hot_demand_chart")["data"][0]["x"] == ["orders/0", "orders/1", "people/0"]


def with_key_peaks(store: Path) -> None:
    """Pkranges 0 and 1 at 100 RU/s each (the snapshot's throughput share) and the logs' RU per key: "hot" on 1
    spent its partition's whole 100 RU/s in one second of a bin whose mean was 3 RU/s, "warm" 20 RU in its busiest
    second, and "cold" on 0 comes from a store written before the busiest second was collected (no peak)."""
    snapshot = pd.DataFrame(
        {
            "pkrange_id": ["0", "1"],
            "parents": ["", ""],
            "min_epk": ["", "80"],
            "max_epk": ["80", "FF"],
            "size_kb": 10,
            "document_count": 5,
            "throughput_share": 100.0,
        }
    ).assign(**WHERE, time=T0 + pd.Timedelta(minutes=50))
    write_frame(store_location(store), "partitions", snapshot, run_id="s1", part="0")
    key_ru = pd.DataFrame(
        {
            "pkrange_id": ["1", "1", "1", "0"],
            "partition_key": ['["hot"]', '["hot"]', '["warm"]', '["cold"]'],
            "request_charge": [900.0, 300.0, 100.0, 50.0],
            "peak_request_charge": [100.0, 40.0, 20.0, None],
            "bin_minutes": 5,
            "partial": False,
            "time": [T0 + pd.Timedelta(minutes=m) for m in (30, 35, 30, 30)],
        }
    ).assign(**WHERE)
    write_frame(store_location(store), "log_key_ru", key_ru, run_id="l1", part="0")


def test_a_key_whose_busiest_second_reached_its_partitions_budget_is_named_beside_its_per_minute_ru(
    store: Path,
) -> None:
    with_key_peaks(store)
    app = open_page()
    pkranges = app.multiselect(key="hot_pkranges")
    pkranges.set_value(["0", "1"]).run()
    table = next(t.value for t in app.dataframe if "partition_key" in t.value.columns)
    rows = table.set_index("partition_key")
    assert rows.index.tolist() == ['["hot"]', '["warm"]', '["cold"]']
    assert rows.loc['["hot"]', "busiest_bin_ru_s"] == pytest.approx(3.0)  # 900 RU over the 300 s of its bin
    assert rows.loc['["hot"]', "peak_ru_s"] == 100.0 and rows.loc['["hot"]', "budget_ru_s"] == 100.0
    assert rows.loc['["hot"]', "peak_verdict"] == "reached the partition's budget"
    assert rows.loc['["warm"]', "peak_budget_pct"] == 20.0
    assert rows.loc['["warm"]', "peak_verdict"] == "below the partition's budget"
    cold = rows.loc['["cold"]']  # no peak stored: unknown, never 0
    assert cold["peak_verdict"] == "unknown: no busiest second collected"
    assert cold["peak_ru_s"] == MISSING_NUMBER and cold["peak_budget_pct"] == MISSING_NUMBER  # drawn blank
    assert cold["peak_source"].startswith("unknown")
    [warning] = [m for m in app.markdown if m.value.startswith("**At its budget**")]
    assert '["hot"]' in warning.value.replace("\\", "") and "pkrange 1" in warning.value
    assert "100.0 RU, 100% of its partition's budget of 100 RU/s" in warning.value
    assert "2026-05-01 10:30 UTC" in warning.value and "averaged 3.00 RU/s" in warning.value


def test_the_operations_that_heat_the_chosen_key(store: Path) -> None:
    with_key_peaks(store)
    operations = pd.DataFrame(
        {
            "pkrange_id": ["1", "1", "1", "1"],
            "partition_key": ['["hot"]', '["hot"]', '["hot"]', '["warm"]'],
            "operation_name": ["Read", "Query", "Read", "Create"],
            "request_charge": [600.0, 300.0, 300.0, 100.0],
            "peak_request_charge": [80.0, 20.0, 40.0, 20.0],
            "bin_minutes": 5,
            "partial": False,
            "time": [T0 + pd.Timedelta(minutes=m) for m in (30, 30, 35, 30)],
        }
    ).assign(**WHERE)
    write_frame(store_location(store), "log_key_operation_ru", operations, run_id="l2", part="0")
    app = open_page()
    app.multiselect(key="hot_pkranges").set_value(["0", "1"]).run()
    chooser = app.selectbox(key="hot_key_operations_key")
    assert chooser.options == ['["hot"] (pkrange 1)', '["warm"] (pkrange 1)', '["cold"] (pkrange 0)']
    table = next(t.value for t in app.dataframe if "operation_name" in t.value.columns)
    assert "partition_key" not in table.columns  # the key is the one chosen above
    assert table["operation_name"].tolist() == ["Read", "Query"]  # the costliest first
    assert table["ru"].tolist() == [900.0, 300.0] and table["ru_share_pct"].tolist() == [75.0, 25.0]
    assert table["peak_ru_s"].tolist() == [80.0, 20.0]  # each operation's busiest second on the key
    chooser.set_value(1).run()
    table = next(t.value for t in app.dataframe if "operation_name" in t.value.columns)
    assert table["operation_name"].tolist() == ["Create"] and table["ru_share_pct"].tolist() == [100.0]
    app.selectbox(key="hot_key_operations_key").set_value(2).run()  # "cold": stored before operations were
    assert not [t for t in app.dataframe if "operation_name" in t.value.columns]
    assert any("No RU by operation for this key" in i.value for i in app.info)


def test_the_logical_keys_heatmap_is_clipped_and_turns_to_a_log_scale(store: Path) -> None:
    with_monitor(store)
    app = open_page()
    [clipped] = chart(app, "hot_keys_heatmap")["data"]
    assert clipped["colorbar"]["title"]["text"].startswith("RU/s")  # linear, from 0 to the cells' p99 at most
    assert clipped["zmin"] == 0 and "log" not in clipped["colorbar"]["title"]["text"]
    app.toggle(key="hot_keys_log_scale").set_value(True).run()
    assert not app.exception
    [log] = chart(app, "hot_keys_heatmap")["data"]
    assert log["colorbar"]["title"]["text"] == "RU/s (log scale)"
    raw = values(log["customdata"])
    assert np.allclose(values(log["z"])[raw > 0], np.log10(raw[raw > 0]))  # the colour: log10 of the cell's RU/s
