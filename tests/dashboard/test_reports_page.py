"""The Reports page through the frame (AppTest): an empty store, a replay-only store, a store with metrics,
storage and keys (its download is the bytes `ruscope report` writes), and the collected store."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis.capacity import review
from analysis.report import to_csv_bytes
from store import store_location, write_frame
from tests.analysis.test_overview import GOLDEN, frame, row, shop_frames
from tests.dashboard.apptest import minutes_ago, run_app, write_plan
from tests.dashboard.test_overview_page import write_shop

REPORTS = "views/reports.py"


def open_reports() -> AppTest:
    app = run_app(REPORTS)
    return app


def tables(app: AppTest) -> dict[str, object]:
    """Each table by its key: render_table draws a table, then its download (keyed `<key>_download`)."""
    keys = [name.removesuffix("_download") for name in downloads(app) if name.endswith("_download")]
    assert len(keys) == len(app.dataframe)
    return {key: element.value for key, element in zip(keys, app.dataframe)}


def downloads(app: AppTest) -> list[str]:
    return [button.proto.id.rsplit("-", 1)[-1] for button in app.get("download_button")]


def test_an_empty_store_says_how_to_collect(store: Path) -> None:
    app = open_reports()
    assert app.title[0].value == "Reports"
    [info] = app.info
    assert "No data to report in" in info.value and str(store) in info.value
    assert not app.dataframe and not downloads(app)


def test_a_replay_only_store_reports_its_queries(store: Path) -> None:
    wide = [("r1", minutes_ago(30), "wide", 0, "as-is", "fan-out", [[("page", "0", 9.0), ("page", "1", 1.0)]])]
    write_plan(store, wide, part="0")
    app = open_reports()
    found = tables(app)
    actions = found["reports_actions"]
    assert actions["measure"].tolist() == ["range_share", "query_fans_out"]
    assert "in the replayed queries" in actions["detail"].iloc[0]
    assert found["reports_query"]["subject"].tolist() == ["wide", "wide", "wide"]
    assert "reports_partition" not in found and any("No partitions" in c.value for c in app.caption)
    assert found["reports_containers"]["ru_consumed"].tolist() == [10.0]


def test_the_download_is_the_bytes_ruscope_report_writes(store: Path) -> None:
    write_shop(store)
    app = open_reports()
    found = tables(app)
    assert found["reports_containers"]["container"].tolist() == ["orders", "people"]
    assert found["reports_actions"]["measure"].tolist() == [
        "partition_saturated", "range_share", "query_fans_out", "key_near_limit"
    ]  # fmt: skip
    assert found["reports_actions"].columns.tolist()[:4] == ["severity", "database", "container", "detail"]
    assert found["reports_actions"]["severity"].tolist() == ["warning", "warning", "info", "warning"]
    about = found["reports_about"].set_index("measure")["detail"]
    assert about.index.tolist() == [
        "window_start", "window_end", "store", "generated_at", "region", "ruscope_version"
    ]  # fmt: skip
    assert about["store"] == str(store) and about["region"] == "all regions" and about["window_end"].endswith("Z")
    assert found["reports_key"]["subject"].tolist() == ['["t1"]', '["=cmd"]']
    assert downloads(app) == [
        "reports_actions_download",
        "reports_containers_download",
        "reports_about_download",
        "reports_cost_download",
        "reports_partition_download",
        "reports_key_download",
        "reports_query_download",
        "reports_report_download",
        "reports_xlsx",
    ]
    report = review.build_capacity_report(**shop_frames())
    assert to_csv_bytes(report) == (GOLDEN / "capacity_report.csv").read_bytes()  # what the CLI test writes
    shown = found["reports_report"]
    assert shown["section"].iloc[0] == "report"  # what the report is of, first
    shown = shown[shown["section"].ne("report")]
    assert (
        shown[["section", "subject", "measure"]].values.tolist()
        == report[["section", "subject", "measure"]].values.tolist()
    )


def test_the_collected_store(collected_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUSCOPE_STORE", str(collected_store))
    app = open_reports()
    found = tables(app)
    assert {"skewed_key", "query_fans_out"} <= set(found["reports_actions"]["measure"])
    assert len(found["reports_partition"]) > 0 and '["hot"]' in found["reports_key"]["subject"].tolist()
    actions = found["reports_actions"]
    assert "raise_throughput" not in actions["measure"].tolist()  # the 429s are the hot partition's, not the RU/s'
    hot = actions[actions["measure"].eq("skewed_key")]["detail"].iloc[0]
    assert "come from one hot partition" in hot and "raising them mostly pays for idle partitions" in hot
    assert 'spread the hot key ["hot"]' in hot  # the logs' costliest key on that range
    report = found["reports_report"]
    assert "share" not in set(report["unit"])  # shares are written in %
    csv = to_csv_bytes(report).decode()
    assert "e-0" not in csv and "e+0" not in csv  # plain decimals: no 3.6e-05, no 5.573e+04


SPACED, COMPACT = '["t1", "u1"]', '["t1","u1"]'  # an old storage collector's spelling, and the one spelling


def write_hierarchical_key(store: Path) -> None:
    """The shop store, plus one hierarchical key of orders on pkrange 1: its size written as the storage
    collector used to (`json.dumps`, spaced), its RU as the logs write it (compact)."""
    write_shop(store)
    sized = frame("logical_keys", row("logical_keys", pkrange_id="1", partition_key=SPACED, size_kb=19.0 * 1024**2))
    logged = row("log_key_ru", pkrange_id="1", partition_key=COMPACT, request_charge=500.0)
    write_frame(store_location(store), "logical_keys", sized.drop(columns="run_id"), run_id="k1", part="000")
    logs = frame("log_key_ru", logged).drop(columns="run_id")
    write_frame(store_location(store), "log_key_ru", logs, run_id="k2", part="000")


def test_a_hierarchical_key_is_spelled_one_way_in_the_report_and_the_pages(store: Path) -> None:
    write_hierarchical_key(store)
    report = tables(open_reports())["reports_report"]
    spelled = set(report.loc[report["subject"].str.startswith('["t1",'), "subject"])
    assert spelled == {COMPACT}  # its size, its RU and its action: one key a pivot joins
    assert COMPACT in set(report.loc[report["measure"].eq("key_near_limit"), "subject"])
    hot = run_app("views/hot_partitions.py")
    picker = hot.multiselect(key="hot_pkranges")
    picker.set_value(list(picker.options)).run()
    assert not hot.exception, [e.message for e in hot.exception]
    [keyed] = [t.value for t in hot.dataframe if "partition_key" in t.value.columns]
    assert {k for k in keyed["partition_key"] if k.startswith('["t1",')} == {COMPACT}
    storage = run_app("views/storage.py")
    labels = {str(v) for t in storage.dataframe for c in t.value.columns for v in t.value[c] if "t1" in str(v)}
    assert any(COMPACT in label for label in labels) and not any(SPACED in label for label in labels)


def test_the_report_s_frames_are_its_signature_s_positional_ones() -> None:
    """Every caller passes `*(frames[t] for t in REPORT_TABLES)`: the tables' order is the signature's."""
    import inspect

    from analysis.capacity import review

    for build in (review.build_capacity, review.build_capacity_report):  # the report alone is the build's
        names = list(inspect.signature(build).parameters)
        assert names[: len(review.REPORT_TABLES)] == list(review.REPORT_TABLES)
